//! A pure simulator: runs a protocol's plans against a blackboard with
//! scripted model outputs, no I/O. How eagerly background work is applied
//! is a parameter, so tests can check that the result does not depend on
//! the interleaving.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use agon_core::{Blackboard, DebateAspect, DebateEvent, DebateStatus, Persona, PersonaId, Topic};
use agon_protocol::background::{self, AnalysisOutput};
use agon_protocol::{
    Answer, Answers, Ask, AspectSource, Background, CruxRules, DetectionRules, JUDGE_ID,
    ModelFailure, ModelOutput, Next, Plan, Protocol, Speak, Start, Step, StructuredDebate,
    StructuredRules, TextAnswer, TrustRead,
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

pub const T0: DateTime<Utc> = DateTime::UNIX_EPOCH;

/// 3 debaters (Mara, Theo, Priya) and the judge; `aspects` aspects.
pub fn rules(aspects: usize, minirounds: u32, crux: CruxRules, synthesis: bool) -> StructuredRules {
    let mut personas = vec![
        Persona::debater("mara", "Mara", "urbanist", "direct"),
        Persona::debater("theo", "Theo", "economist", "dry"),
        Persona::debater("priya", "Priya", "physician", "warm"),
    ];
    if synthesis {
        personas.push(Persona {
            id: PersonaId::new(JUDGE_ID),
            name: "Judge".into(),
            contract: "Impartial judge.".into(),
            voice: "measured".into(),
            role: agon_core::PersonaRole::Judge,
            specialty: None,
        });
    }
    StructuredRules {
        start: Start {
            weigh_by_trust: true,
            topic: Topic::new("Ban cars from city centres?"),
            personas,
            cast: None,
            aspects: AspectSource::Configured(
                (1..=aspects)
                    .map(|i| DebateAspect::new(format!("aspect-{i}"), format!("Aspect {i}"), "d"))
                    .collect(),
            ),
        },
        minirounds,
        crux,
        synthesis,
        detection: DetectionRules::default(),
        analysis: agon_protocol::AnalysisCadence::Message,
        reflection: agon_core::ReflectionTrigger::new(15),
        challenger: false,
    }
}

/// What the scripted models answer.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Convergence checks answer "converged" from this check on (1-based).
    pub converge_at_check: Option<usize>,
    /// Every structured call fails.
    pub broken: bool,
    /// Utterances of this persona are empty (skipped).
    pub mute: Option<&'static str>,
    /// The judge's confidence after each round (70 when not listed).
    pub confidence: Vec<u8>,
    /// The requirements the analysis model reads from the problem: (text,
    /// major).
    pub requirements: Vec<(&'static str, bool)>,
    /// A requirement id no contribution covers (every proposal and
    /// refinement covers the others); the judge calls it unmet only when
    /// `judge_admits_gaps`.
    pub never_covered: Option<&'static str>,
    /// The judge lists the requirements its context shows uncovered.
    pub judge_admits_gaps: bool,
    /// A round's analysis writes none of the summaries asked of it.
    pub no_folded_summaries: bool,
}

fn name(bb: &Blackboard, id: &str) -> String {
    bb.persona_name(&PersonaId::new(id)).to_owned()
}

impl Script {
    fn output(&self, value: Value) -> ModelOutput {
        if self.broken {
            Err(ModelFailure::other("scripted failure"))
        } else {
            Ok(value)
        }
    }

    /// A combined analysis: the speaker disagrees with Mara (or Theo), and
    /// Mara and Theo are judged as disagreeing at 90 %.
    fn analysis(
        &self,
        bb: &Blackboard,
        speaker: &PersonaId,
        round: u32,
        combined: bool,
    ) -> AnalysisOutput {
        // The first other debater (for Mara, Theo, Priya: Theo for Mara,
        // Mara for the others).
        let other = bb
            .debaters()
            .map(|p| p.id.as_str())
            .find(|p| p != &speaker.as_str())
            .unwrap_or("mara");
        let value = json!({
            "position": {
                "overallStance": format!("{speaker} holds their ground."),
                "aspectPosition": {"position": "a position", "evidence": ["a study"], "challenged": []},
                "newAgreement": null,
                "newDisagreement": {"withPersona": name(bb, other), "on": format!("the trade-off in round {round}"), "intensity": "mild"},
                "concession": null,
                "shift": null
            },
            "disagreements": [{"between": [name(bb, "mara"), name(bb, "theo")], "claim": "Mara and Theo disagree on the trade-off", "confidence": 90}]
        });
        let primary = if combined {
            value
        } else {
            value["position"].clone()
        };
        AnalysisOutput {
            primary: self.output(primary),
            window: None,
            combined,
        }
    }

    fn round_record(&self, bb: &Blackboard) -> ModelOutput {
        let takes: Vec<Value> = bb
            .debaters()
            .map(|p| json!({"persona": p.name, "position": "argued", "keyArgument": "costs", "evidenceCited": [], "targetedPersona": null}))
            .collect();
        self.output(json!({"takes": takes, "summary": "Each stated a position.", "newDisagreements": [], "shifts": []}))
    }

    fn reflection(&self, bb: &Blackboard) -> ModelOutput {
        self.output(json!({"reflections": [{
            "content": "Mara and Theo keep returning to the same trade-off.",
            "type": "pattern", "aboutPersonas": [name(bb, "mara"), name(bb, "theo")], "importance": 6
        }]}))
    }

    fn card(&self, bb: &Blackboard, claim: &agon_core::ClaimId, resolved: bool) -> ModelOutput {
        let parties = bb.claim(claim).unwrap().personas.clone();
        self.output(json!({
            "question": "Is the trade-off worth it?",
            "positions": [
                {"persona": bb.persona_name(&parties[0]), "position": "YES", "reasoning": "benefits", "falsifier": "data"},
                {"persona": bb.persona_name(&parties[1]), "position": "NO", "reasoning": "costs", "falsifier": "data"}
            ],
            "disagreementType": "values",
            "diagnosis": "They weigh costs and benefits differently.",
            "resolved": resolved
        }))
    }
}

/// How background work is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lag {
    /// All of it before every critical-path step.
    Eager,
    /// Only when the protocol waits for it.
    Lazy,
}

/// One line per plan: the background list and the next step.
pub fn describe(plan: &Plan) -> String {
    let background: Vec<String> = plan
        .background
        .iter()
        .map(|b| match b {
            Background::Analyse { message, .. } => format!("analyse {message}"),
            Background::AnalyseBatch {
                messages,
                summaries,
                ..
            } => {
                let ids: Vec<String> = messages.iter().map(ToString::to_string).collect();
                let writes: Vec<&str> = summaries.iter().map(|j| j.persona.as_str()).collect();
                if writes.is_empty() {
                    format!("analyse [{}]", ids.join(" "))
                } else {
                    format!(
                        "analyse [{}] + summaries of {}",
                        ids.join(" "),
                        writes.join(", ")
                    )
                }
            }
            Background::Detect { messages, .. } => format!("detect {}", messages.len()),
            Background::RoundRecord { aspect, .. } => format!("record {aspect}"),
            Background::Reflect { aspect, .. } => format!("reflect {aspect}"),
            Background::Requirements => "requirements".to_owned(),
        })
        .collect();
    let next = match &plan.next {
        Next::Finished => "finished".into(),
        Next::Wait => "wait".into(),
        Next::Paused => "paused".into(),
        Next::Step(step) => describe_step(step),
    };
    format!("[{}] -> {next}", background.join(", "))
}

pub fn describe_step(step: &Step) -> String {
    match step {
        Step::Speak(s) => format!("speak {}", s.key),
        Step::Parallel { turns, .. } => format!("speak {} in parallel", turns.len()),
        Step::Record { label, .. } => format!("record ({label})"),
        Step::Ask(ask) => match ask {
            Ask::Start(_) => "start".into(),
            Ask::Convergence {
                room, otherwise, ..
            } => format!("check {room} else speak {}", otherwise.key),
            Ask::CruxCard { room, .. } => format!("card {room}"),
            Ask::Clarify { agents, .. } => format!("clarify {}", agents.len()),
            Ask::Summaries(jobs) => {
                let whose: Vec<String> = jobs.iter().map(|j| j.step_id().to_string()).collect();
                format!("summarize {}", whose.join(", "))
            }
            Ask::Solution { round, .. } => format!("judge round {round}"),
            Ask::Listen { turn, agents, .. } => {
                format!("listen {} before turn {turn}", agents.len())
            }
            Ask::RollingSummary { fold, .. } => format!("summarize {}..{}", fold.start, fold.end),
        },
        Step::AskHuman(human) => format!("answer {} questions", human.questions.len()),
        Step::ReadTrust(TrustRead::DevilsAdvocate { round, .. }) => {
            format!("devil's advocate of round {round}")
        }
        Step::ReadTrust(TrustRead::Standings { agents }) => {
            format!("trust of {} agents", agents.len())
        }
        Step::ReadTrust(TrustRead::Rubric { name }) => format!("read the {name} rubric"),
        Step::Finish(_) => "finish".into(),
    }
}

/// Runs a protocol to the end (or `max_steps` critical-path steps).
pub struct Sim {
    pub board: Blackboard,
    pub protocol: Box<dyn Protocol>,
    pub script: Script,
    pub lag: Lag,
    pub trace: Vec<String>,
    checks: usize,
    /// Whether the last convergence check converged (the card after it
    /// resolves the claim).
    converged: bool,
}

impl Sim {
    pub fn new(rules: StructuredRules, script: Script, lag: Lag) -> Self {
        Self::with(Box::new(StructuredDebate::new(rules)), script, lag)
    }

    /// A simulator of any protocol.
    pub fn with(protocol: Box<dyn Protocol>, script: Script, lag: Lag) -> Self {
        Self {
            board: Blackboard::new(),
            protocol,
            script,
            lag,
            trace: Vec::new(),
            checks: 0,
            converged: false,
        }
    }

    fn apply(&mut self, events: Vec<DebateEvent>) {
        for e in &events {
            self.board
                .apply(e)
                .unwrap_or_else(|err| panic!("{err}: {e:?}"));
        }
    }

    /// Applies the head of the background list; false when it is empty.
    pub fn apply_background(&mut self) -> bool {
        let plan = self.protocol.plan(&self.board);
        let Some(head) = plan.background.first().cloned() else {
            return false;
        };
        let bb = &self.board;
        let events = match &head {
            Background::Analyse { message, mode } => {
                let m = bb.message(message).unwrap();
                let out = self.script.analysis(bb, &m.persona, m.round, mode.combined);
                background::analysis(bb, message, out, mode, T0)
            }
            Background::AnalyseBatch {
                messages,
                mode,
                summaries,
            } => {
                // Each message as the script analyses it alone; a judging
                // batch takes the judgement of its last message's window.
                let mut judged = json!([]);
                let updates: Vec<Value> = messages
                    .iter()
                    .map(|id| {
                        let m = bb.message(id).unwrap();
                        let out = self.script.analysis(bb, &m.persona, m.round, mode.combined);
                        let value = out.primary.unwrap_or_default();
                        if mode.combined {
                            judged = value["disagreements"].clone();
                            json!({"message": id, "position": value["position"]})
                        } else if let agon_protocol::BatchShape::Contributions { impact } =
                            mode.shape
                        {
                            // A dialectic round's flat entry; a refinement
                            // took the first critique it answers in.
                            let mut entry = value.clone();
                            entry["message"] = json!(id);
                            let proposes = matches!(
                                m.kind,
                                agon_core::MessageKind::Proposal
                                    | agon_core::MessageKind::Refinement
                            );
                            entry["requirements"] = json!(
                                bb.requirements()
                                    .requirements
                                    .iter()
                                    .filter(|r| proposes
                                        && Some(r.id.as_str()) != self.script.never_covered)
                                    .map(|r| json!({"id": r.id, "status": "covers", "quote": "it is met"}))
                                    .collect::<Vec<_>>()
                            );
                            if impact && m.kind == agon_core::MessageKind::Refinement {
                                let answered = agon_protocol::trust_harvest::critiques_answered(
                                    bb, m, messages,
                                );
                                entry["tookIn"] = json!(
                                    answered
                                        .first()
                                        .map(ToString::to_string)
                                        .into_iter()
                                        .collect::<Vec<_>>()
                                );
                            }
                            entry
                        } else {
                            json!({"message": id, "position": value})
                        }
                    })
                    .collect();
                // The summaries asked for, unless the script leaves them out.
                let written: serde_json::Map<String, Value> = summaries
                    .iter()
                    .filter(|_| !self.script.no_folded_summaries)
                    .map(|j| {
                        let name = bb.persona_name(&j.persona);
                        (
                            name.to_owned(),
                            json!(format!("{name} sums up round {}.", j.round - 1)),
                        )
                    })
                    .collect();
                let output = self.script.output(
                    json!({"updates": updates, "disagreements": judged, "summaries": written}),
                );
                let answer = output.as_ref().ok().cloned();
                let out = background::AnalysisOutput {
                    primary: output,
                    window: None,
                    combined: mode.combined,
                };
                let mut events = background::batch_analysis(bb, messages, out, mode, T0);
                events.extend(agon_protocol::synthesis::folded_summaries(
                    bb,
                    summaries,
                    messages,
                    answer.as_ref(),
                    T0,
                ));
                events
            }
            Background::Detect { messages, .. } => {
                // The model reads nothing: only the marker.
                agon_protocol::deliberation::detect::model_events(
                    bb,
                    messages,
                    Ok(serde_json::json!({ "messages": [] })),
                    agon_protocol::DetectionSource::Model,
                    T0,
                )
            }
            Background::RoundRecord { aspect, round } => {
                background::round_record(bb, aspect, *round, self.script.round_record(bb), T0)
            }
            Background::Reflect { aspect, round } => {
                background::reflection(bb, aspect, *round, self.script.reflection(bb), T0)
            }
            Background::Requirements => {
                let listed: Vec<Value> = self
                    .script
                    .requirements
                    .iter()
                    .map(|(text, major)| json!({"text": text, "major": major, "source": "problem"}))
                    .collect();
                let output = self.script.output(json!({ "requirements": listed }));
                agon_protocol::requirements::events(bb, output, T0)
            }
        };
        self.apply(events);
        true
    }

    fn speak(&mut self, speak: &Speak) {
        if self.script.mute == Some(speak.persona.as_str()) {
            self.apply(vec![agon_protocol::step_failed(
                agon_core::StepId::Utterance(speak.key.clone()),
                "empty utterance twice",
                T0,
            )]);
            return;
        }
        let message = speak.message(
            &self.board,
            format!("{} says {}", speak.persona, speak.key),
            T0,
        );
        let derived = self.protocol.message_events(&self.board, &message);
        let mut events = vec![DebateEvent::MessageAppended { message }];
        events.extend(derived);
        self.apply(events);
    }

    /// Executes one critical-path step, and the steps its answers lead to.
    pub fn execute(&mut self, step: Step) {
        let mut step = step;
        loop {
            let answers = match &step {
                Step::Speak(speak) => return self.speak(speak),
                Step::Parallel { turns: group, .. } => return self.speak_all(group),
                Step::Record { events, .. } => return self.apply(events.clone()),
                Step::Finish(_) => {
                    return self.apply(vec![DebateEvent::DebateFinished { time: T0 }]);
                }
                Step::Ask(ask) => Answers::Models(self.answers(ask)),
                // The person answers every question.
                Step::AskHuman(human) => {
                    Answers::Human(vec!["10k requests/s".into(); human.questions.len()])
                }
                // Agents with no trust memory yet.
                Step::ReadTrust(agon_protocol::TrustRead::Rubric { name }) => Answers::Rubric(
                    agon_core::rubric::Rubric::builtin(name)
                        .ok_or_else(|| format!("no rubric {name}")),
                ),
                Step::ReadTrust(read) => Answers::Trust(Ok(vec![None; read.agents().len()])),
            };
            let outcome = self
                .protocol
                .convert(&self.board, &"d-test".into(), &step, answers, T0)
                .unwrap_or_else(|e| panic!("{e}: {step:?}"));
            self.apply(outcome.events);
            match outcome.then {
                Some(next) => step = next,
                None => return,
            }
        }
    }

    /// Generated from the board as it is when the group starts, appended
    /// in the listed order.
    fn speak_all(&mut self, group: &[Speak]) {
        let board = self.board.clone();
        let mut n = board.messages().len();
        let events: Vec<_> = group
            .iter()
            .map(|s| {
                if self.script.mute == Some(s.persona.as_str()) {
                    return agon_protocol::step_failed(
                        agon_core::StepId::Utterance(s.key.clone()),
                        "empty utterance twice",
                        T0,
                    );
                }
                n += 1;
                let mut m = s.message(&board, format!("{} says {}", s.persona, s.key), T0);
                m.id = format!("msg-{n}").into();
                DebateEvent::MessageAppended { message: m }
            })
            .collect();
        for event in events {
            self.apply(vec![event]);
        }
    }

    /// The scripted answers to each call of `ask`.
    fn answers(&mut self, ask: &Ask) -> Vec<Answer> {
        let text = |s: &Script, text: String| {
            Answer::Text(if s.broken {
                Err(ModelFailure::other("scripted failure"))
            } else {
                Ok(TextAnswer {
                    text,
                    temperature: 0.0,
                    latency_ms: 0,
                    tokens: 0,
                    model: "scripted".into(),
                })
            })
        };
        match ask {
            Ask::Start(_) => Vec::new(),
            Ask::Convergence { .. } => {
                self.checks += 1;
                let converged = self
                    .script
                    .converge_at_check
                    .is_some_and(|at| self.checks >= at);
                self.converged = converged;
                vec![Answer::Json(self.script.output(
                    json!({"converged": converged, "reason": "scripted"}),
                ))]
            }
            Ask::CruxCard { claim, .. } => {
                let resolved = std::mem::take(&mut self.converged);
                vec![Answer::Json(self.script.card(&self.board, claim, resolved))]
            }
            Ask::Clarify { agents, .. } => agents
                .iter()
                .map(|a| {
                    Answer::Json(Ok(
                        json!({"questions": [format!("{a} asks about the load")]}),
                    ))
                })
                .collect(),
            Ask::Summaries(jobs) => jobs
                .iter()
                .map(|job| text(&self.script, format!("summary by {}", job.persona)))
                .collect(),
            Ask::Solution { round, .. } => {
                let confidence = self
                    .script
                    .confidence
                    .get(*round as usize - 1)
                    .copied()
                    .unwrap_or(70);
                let unmet: Vec<&str> = if self.script.judge_admits_gaps {
                    self.board
                        .requirements()
                        .uncovered()
                        .filter(|r| r.major)
                        .map(|r| r.id.as_str())
                        .collect()
                } else {
                    Vec::new()
                };
                vec![Answer::Json(Ok(json!({
                    "description": format!("solution after round {round}"),
                    "tradeoffs": [], "recommendations": [],
                    "confidence": confidence,
                    "unfulfilledMajorRequirements": unmet,
                    "openQuestions": []
                })))]
            }
            // Everyone volunteers; urgency by the length of the id.
            Ask::Listen { agents, .. } => agents
                .iter()
                .map(|p| {
                    Answer::Json(Ok(json!({
                        "respond": true,
                        "urgency": p.as_str().len() % 11,
                        "reason": ""
                    })))
                })
                .collect(),
            // Rolling summaries never fail here.
            Ask::RollingSummary { fold, .. } => vec![text(
                &Script::default(),
                format!("summary up to {}", fold.end),
            )],
        }
    }

    /// Runs until finished or `max_steps` critical-path steps have run.
    pub fn run(&mut self, max_steps: usize) -> &mut Self {
        let mut steps = 0;
        while steps < max_steps {
            if self.lag == Lag::Eager {
                while self.apply_background() {}
            }
            let plan = self.protocol.next(&self.board);
            self.trace.push(describe(&plan));
            match plan.next {
                // Nobody here resumes a paused debate.
                Next::Finished | Next::Paused => break,
                Next::Wait => {
                    assert!(self.apply_background(), "waiting with nothing pending");
                }
                Next::Step(step) => {
                    steps += 1;
                    self.execute(*step);
                }
            }
        }
        self
    }

    pub fn finished(&self) -> bool {
        self.board.status() == DebateStatus::Finished
    }
}

/// The blackboard as JSON without the event counter.
pub fn canonical(bb: &Blackboard) -> Value {
    let mut v = serde_json::to_value(bb).unwrap();
    if let Value::Object(map) = &mut v {
        map.remove("events_applied");
    }
    v
}
