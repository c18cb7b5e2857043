//! A pure simulator: runs a protocol's plans against a blackboard with
//! scripted model outputs, no I/O. How eagerly background work is applied
//! is a parameter, so tests can check that the result does not depend on
//! the interleaving.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use agon_core::{Blackboard, DebateAspect, DebateEvent, DebateStatus, Persona, PersonaId, Topic};
use agon_protocol::background::{self, AnalysisOutput};
use agon_protocol::crux;
use agon_protocol::{
    AspectSource, Background, CruxRules, DetectionRules, JUDGE_ID, ModelFailure, ModelOutput, Next,
    Plan, Protocol, Speak, Start, Step, StructuredDebate, StructuredRules, start_event,
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
            Background::AnalyseBatch { messages, .. } => {
                let ids: Vec<String> = messages.iter().map(ToString::to_string).collect();
                format!("analyse [{}]", ids.join(" "))
            }
            Background::Detect { messages, .. } => format!("detect {}", messages.len()),
            Background::RoundRecord { aspect, .. } => format!("record {aspect}"),
            Background::Reflect { aspect, .. } => format!("reflect {aspect}"),
        })
        .collect();
    let next = match &plan.next {
        Next::Finished => "finished".into(),
        Next::Wait => "wait".into(),
        Next::Step(step) => describe_step(step),
    };
    format!("[{}] -> {next}", background.join(", "))
}

pub fn describe_step(step: &Step) -> String {
    match step {
        Step::Start(_) => "start".into(),
        Step::Speak(s) => format!("speak {}", s.key),
        Step::Parallel { turns, .. } => format!("speak {} in parallel", turns.len()),
        Step::Record { label, .. } => format!("record ({label})"),
        Step::CheckConvergence {
            room, otherwise, ..
        } => {
            format!("check {room} else speak {}", otherwise.key)
        }
        Step::CruxCard { room, .. } => format!("card {room}"),
        Step::Clarify { agents, .. } => format!("clarify {}", agents.len()),
        Step::Summarize(jobs) => {
            let whose: Vec<String> = jobs.iter().map(|j| j.step_id().to_string()).collect();
            format!("summarize {}", whose.join(", "))
        }
        Step::Judge { round, .. } => format!("judge round {round}"),
        Step::ChooseDevilsAdvocate { round, .. } => format!("devil's advocate of round {round}"),
        Step::Listen { turn, agents, .. } => format!("listen {} before turn {turn}", agents.len()),
        Step::RollingSummary { fold, .. } => format!("summarize {}..{}", fold.start, fold.end),
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
            Background::AnalyseBatch { messages, mode } => {
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
                let output = self
                    .script
                    .output(json!({"updates": updates, "disagreements": judged}));
                let out = background::AnalysisOutput {
                    primary: output,
                    window: None,
                    combined: mode.combined,
                };
                background::batch_analysis(bb, messages, out, mode, T0)
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

    fn card(&mut self, claim: &agon_core::ClaimId, room: &agon_core::CruxRoomId, resolved: bool) {
        let out = self.script.card(&self.board, claim, resolved);
        let events = crux::card_events(&self.board, claim, room, out, T0);
        self.apply(events);
    }

    /// Executes one critical-path step.
    pub fn execute(&mut self, step: Step) {
        match step {
            Step::Start(start) => {
                let event = start_event(&"d-test".into(), &start, None, None, T0, None);
                self.apply(vec![event]);
            }
            Step::Speak(speak) => self.speak(&speak),
            Step::Parallel { turns: group, .. } => {
                // Generated from the board as it is when the group starts,
                // appended in the listed order.
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
            Step::Record { events, .. } => self.apply(events),
            Step::CheckConvergence {
                claim,
                room,
                otherwise,
            } => {
                self.checks += 1;
                let converged = self
                    .script
                    .converge_at_check
                    .is_some_and(|at| self.checks >= at);
                let out = if self.script.broken {
                    Err(ModelFailure::other("scripted failure"))
                } else {
                    Ok(json!({"converged": converged, "reason": "scripted"}))
                };
                let found = crux::convergence(&room, out, T0);
                if let Some(failure) = found.failure {
                    self.apply(vec![failure]);
                }
                if found.converged {
                    self.card(&claim, &room, true);
                } else {
                    self.speak(&otherwise);
                }
            }
            Step::CruxCard { claim, room } => self.card(&claim, &room, false),
            Step::Clarify { agents, .. } => {
                let mut events = Vec::new();
                for a in &agents {
                    let n = self.board.messages().len() + events.len();
                    let q = agon_core::DialogueMessage {
                        id: format!("msg-{}", n + 1).into(),
                        persona: a.clone(),
                        kind: agon_core::MessageKind::ClarificationQuestion,
                        aspect: None,
                        round: 0,
                        miniround: None,
                        crux_room: None,
                        content: format!("{a} asks about the load"),
                        time: T0,
                        reply_to: None,
                        meta: None,
                    };
                    let answer = agon_core::DialogueMessage {
                        id: format!("msg-{}", n + 2).into(),
                        kind: agon_core::MessageKind::ClarificationAnswer,
                        content: "10k requests/s".into(),
                        reply_to: Some(q.id.clone()),
                        ..q.clone()
                    };
                    events.push(DebateEvent::MessageAppended { message: q });
                    events.push(DebateEvent::MessageAppended { message: answer });
                }
                events.push(DebateEvent::RoundStarted { round: 1 });
                self.apply(events);
            }
            Step::Summarize(jobs) => {
                let events = jobs
                    .iter()
                    .map(|job| {
                        if self.script.broken {
                            return agon_protocol::step_failed(
                                job.step_id(),
                                "scripted failure",
                                T0,
                            );
                        }
                        DebateEvent::SummaryRecorded {
                            summary: agon_core::DebateSummary {
                                scope: job.scope.clone(),
                                span: agon_core::MessageSpan {
                                    start: 0,
                                    end: self.board.messages().len(),
                                },
                                text: format!("summary by {}", job.persona),
                                before_chars: 1_000,
                                after_chars: 20,
                                method: job.method.clone(),
                                round: Some(job.round),
                                temperature_centi: None,
                                latency_ms: None,
                                tokens: None,
                                model: None,
                                time: T0,
                            },
                        }
                    })
                    .collect();
                self.apply(events);
            }
            Step::Judge { judge, round } => {
                let confidence = self
                    .script
                    .confidence
                    .get(round as usize - 1)
                    .copied()
                    .unwrap_or(70);
                self.apply(vec![DebateEvent::SolutionRecorded {
                    solution: agon_core::Solution {
                        round,
                        description: format!("solution after round {round}"),
                        tradeoffs: vec![],
                        recommendations: vec![],
                        confidence: Some(confidence),
                        unfinished_requirements: vec![],
                        synthesized_by: judge,
                        time: T0,
                    },
                }]);
            }
            Step::ChooseDevilsAdvocate { round, candidates } => {
                // Agents with no trust memory: 0.6 and on probation.
                let pool: Vec<agon_core::trust::Candidate> = candidates
                    .iter()
                    .map(|p| agon_core::trust::Candidate {
                        name: p.to_string(),
                        trust: 0.6,
                        on_probation: true,
                    })
                    .collect();
                let chosen =
                    agon_core::trust::select_devils_advocate(&pool, u64::from(round)).unwrap();
                self.apply(vec![DebateEvent::DevilsAdvocateChosen {
                    round,
                    persona: chosen.chosen.as_str().into(),
                    pool: candidates.iter().map(|p| (p.clone(), 600)).collect(),
                    fallback: chosen.fallback,
                    seed: chosen.seed,
                }]);
            }
            Step::Listen { turn, agents, .. } => {
                // Everyone volunteers; urgency by the length of the id.
                let bids = agents
                    .iter()
                    .map(|p| agon_core::Bid {
                        persona: p.clone(),
                        respond: true,
                        urgency: (p.as_str().len() % 11) as u8,
                        reason: String::new(),
                    })
                    .collect();
                self.apply(vec![DebateEvent::SpeakersEvaluated { turn, bids }]);
            }
            Step::RollingSummary { fold, .. } => {
                self.apply(vec![DebateEvent::SummaryRecorded {
                    summary: agon_core::DebateSummary {
                        scope: agon_core::SummaryScope::Rolling,
                        span: fold,
                        text: format!("summary up to {}", fold.end),
                        before_chars: 0,
                        after_chars: 0,
                        method: "rolling".into(),
                        round: None,
                        temperature_centi: None,
                        latency_ms: None,
                        tokens: None,
                        model: None,
                        time: T0,
                    },
                }]);
            }
            Step::Finish(_) => self.apply(vec![DebateEvent::DebateFinished { time: T0 }]),
        }
    }

    /// Runs until finished or `max_steps` critical-path steps have run.
    pub fn run(&mut self, max_steps: usize) -> &mut Self {
        let mut steps = 0;
        while steps < max_steps {
            if self.lag == Lag::Eager {
                while self.apply_background() {}
            }
            let plan = self.protocol.plan(&self.board);
            self.trace.push(describe(&plan));
            match plan.next {
                Next::Finished => break,
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
