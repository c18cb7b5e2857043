//! The dialectic protocol (seed 004): role agents propose, critique each
//! other's proposals and refine their own, round after round; a judge
//! synthesizes the solution.
//!
//! ## A round
//! 1. **Summaries**: an agent whose perspective (its proposals, the
//!    critiques it received, its refinements) reached its threshold by the
//!    end of the previous round gets a fresh summary, which replaces that
//!    history in its later prompts: written by the previous round's
//!    analysis when analysis is on (the critiques run meanwhile; fresh
//!    proposals and refinements wait for it), else by the agent in a call
//!    of its own at the round's start.
//! 2. **Proposals**: in round 1 every agent proposes (in parallel); from
//!    round 2 on an agent's proposal is its previous refinement, carried
//!    over without a model call (an agent with no refinement proposes anew).
//! 3. **Critiques**: every agent critiques every other agent's proposal,
//!    N×(N−1) calls in parallel; with a devil's advocate, one agent per
//!    round (in turn) critiques adversarially.
//! 4. **Refinements**: every agent refines its proposal from the critiques
//!    it received, in parallel.
//!
//! After the last round (with `convergence`, after every round) the judge
//! summarizes the final round when it is long, then synthesizes a
//! structured solution. With `convergence` the debate stops as soon as the
//! judge's confidence reaches the threshold.
//!
//! Before round 1, optionally, every agent asks clarifying questions and
//! the user's answers join every later context.
//!
//! When analysis is on, each round is analysed in the background in one
//! call (or several, when its contributions are longer than
//! `analysis_batch_chars`) once its refinements are in: every contribution
//! read whole, once
//! (carried-over proposals repeat a refinement and are skipped), with
//! `judge_impact`, which critiques each refinement took in, and the
//! summaries due for the next round (each in the call that reads the
//! agent's refinement). The judge waits until every analysis is applied.

use std::collections::BTreeMap;

use agon_context::Phase;
use agon_context::perspective::{
    SummarizationSettings, judge_final_round, needs_summary_before, total_chars,
};
use agon_context::prompts::Utterance;
use agon_core::{
    Blackboard, DebateEvent, DebateStatus, DialogueMessage, MessageKind, MessageMeta, PersonaId,
    StepId, SummaryScope, TurnKey,
};

use crate::protocol::Protocol;
use crate::question::{Ask, TrustRead};
use crate::rules::DetectionRules;
use crate::step::{AnalysisMode, Background, Next, Plan, Progress, ProgressUnit, Step};
use crate::turn::{Finish, Speak, Start, SummaryJob, Voice};

/// When a dialectic debate stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// After exactly `rounds` rounds.
    Fixed,
    /// After the first round whose solution has at least this confidence
    /// (0-100), or after `rounds` rounds.
    Convergence {
        /// The judge's confidence needed.
        threshold: u8,
    },
}

/// One summarizer's settings and its own prompt, if any.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SummaryRules {
    /// Threshold, length, method, on/off.
    pub settings: SummarizationSettings,
    /// A summary prompt replacing the built-in one (`{content}` receives the text).
    pub prompt: Option<String>,
}

/// The rules of a dialectic debate.
#[derive(Debug, Clone, PartialEq)]
pub struct DialecticRules {
    /// The problem (topic), its context, the agents and the judge.
    pub start: Start,
    /// The judge's persona id (one of the start's personas).
    pub judge: PersonaId,
    /// Rounds at most (at least 1).
    pub rounds: u32,
    /// When to stop.
    pub termination: Termination,
    /// Clarifying questions before round 1: most questions per agent
    /// (`None`: no clarification phase).
    pub clarify: Option<usize>,
    /// Clarification rounds at most: the first asking and the follow-ups
    /// after the answers (dialectic's `clarificationsMaxIterations`,
    /// default 3; 1: no follow-ups).
    pub clarify_rounds: u32,
    /// Each agent's summarization (agents not listed use `default_summary`).
    pub summaries: BTreeMap<PersonaId, SummaryRules>,
    /// The summarization of agents not listed in `summaries`.
    pub default_summary: SummaryRules,
    /// The judge's summarization of the final round.
    pub judge_summary: SummaryRules,
    /// Background analysis of every message into the position ledger
    /// (`None`: off).
    pub analysis: Option<DetectionRules>,
    /// With `analysis`: the same call also judges which critiques each
    /// refinement took in (seed 003's dissent impact).
    pub judge_impact: bool,
    /// Most characters of contributions in one analysis call (0: no
    /// limit). A round whose contributions are longer is analysed in
    /// several calls, in order, so a prompt fits a small model's window;
    /// a single longer message goes alone, whole.
    pub analysis_batch_chars: usize,
    /// Track the problem's requirements on the ledger: read once before
    /// round 1 (by the analysis model with `analysis`, by dialectic's
    /// keyword inference without), covered per contribution in each
    /// round's analysis.
    pub requirements: bool,
    /// One agent per round critiques as devil's advocate.
    pub devil_advocate: bool,
    /// Crux rooms between two agents whose critiques keep clashing (after
    /// a round's refinements; needs `analysis`). `None`: off.
    pub crux: Option<crate::rules::CruxRules>,
    /// Seconds a round's contributions may take (0: no limit); turns not
    /// done by then are recorded as skipped.
    pub round_timeout_secs: u64,
}

/// The dialectic protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Dialectic {
    rules: DialecticRules,
}

/// The three phases of a round whose turns the planner lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase3 {
    Proposals,
    Critiques,
    Refinements,
}

impl Phase3 {
    /// The phases in the order a round runs them.
    const ALL: [Phase3; 3] = [Self::Proposals, Self::Critiques, Self::Refinements];

    /// Whether a message of this kind belongs to the phase.
    fn holds(self, kind: &MessageKind) -> bool {
        match self {
            Self::Proposals => *kind == MessageKind::Proposal,
            Self::Critiques => matches!(kind, MessageKind::Critique { .. }),
            Self::Refinements => *kind == MessageKind::Refinement,
        }
    }
}

/// Whether `persona` said a message of `kind` in `round`.
fn said(board: &Blackboard, round: u32, persona: &PersonaId, kind: &MessageKind) -> bool {
    board
        .messages()
        .iter()
        .any(|m| m.round == round && &m.persona == persona && &m.kind == kind)
}

/// Whether a turn is taken: its message exists, or its skip is recorded.
fn taken(board: &Blackboard, round: u32, speak: &Speak) -> bool {
    said(board, round, &speak.persona, &speak.kind)
        || board.step_failed(&StepId::Utterance(speak.key.clone()))
}

impl Dialectic {
    /// A group of the round's turns, under the round's deadline.
    fn parallel(&self, round: u32, turns: Vec<Speak>) -> Step {
        Step::Parallel {
            turns,
            deadline: (self.rules.round_timeout_secs > 0).then_some(crate::Deadline {
                clock: round,
                secs: self.rules.round_timeout_secs,
            }),
        }
    }

    /// The protocol with these rules.
    pub fn new(rules: DialecticRules) -> Self {
        Self { rules }
    }

    /// Its rules.
    pub fn rules(&self) -> &DialecticRules {
        &self.rules
    }

    fn summary_rules(&self, persona: &PersonaId) -> &SummaryRules {
        self.rules
            .summaries
            .get(persona)
            .unwrap_or(&self.rules.default_summary)
    }

    /// The devil's advocate of `round`, if the slot is on: the one drawn
    /// from the trust memory for the round, else (logs from before the
    /// draw existed) the agents in turn.
    pub fn devil_of(
        &self,
        board: &Blackboard,
        agents: &[PersonaId],
        round: u32,
    ) -> Option<PersonaId> {
        if !self.rules.devil_advocate || agents.len() < 2 {
            return None;
        }
        if let Some(chosen) = board.devils_advocate(round) {
            return Some(chosen.clone());
        }
        let i = (round.saturating_sub(1) as usize) % agents.len();
        Some(agents[i].clone())
    }

    fn speak(
        key: TurnKey,
        persona: &PersonaId,
        kind: MessageKind,
        phase: Phase,
        instruction: Utterance,
    ) -> Speak {
        Speak {
            key,
            persona: persona.clone(),
            kind,
            phase: Some(phase),
            instruction,
            aspect: None,
            miniround: None,
            room: None,
            voice: Voice::Agent,
        }
    }

    fn proposal(round: u32, persona: &PersonaId) -> Speak {
        Self::speak(
            TurnKey::Proposal {
                round,
                persona: persona.clone(),
            },
            persona,
            MessageKind::Proposal,
            Phase::Propose { round },
            Utterance::Proposal,
        )
    }

    fn critique(round: u32, persona: &PersonaId, target: &PersonaId, adversarial: bool) -> Speak {
        Self::speak(
            TurnKey::Critique {
                round,
                target: target.clone(),
                persona: persona.clone(),
            },
            persona,
            MessageKind::Critique {
                target: target.clone(),
            },
            Phase::Critique {
                round,
                target: target.clone(),
            },
            Utterance::Critique {
                target: target.clone(),
                adversarial,
            },
        )
    }

    fn refinement(round: u32, persona: &PersonaId) -> Speak {
        Self::speak(
            TurnKey::Refinement {
                round,
                persona: persona.clone(),
            },
            persona,
            MessageKind::Refinement,
            Phase::Refine { round },
            Utterance::Refinement,
        )
    }

    /// How messages are analysed, when analysis is on: a round's
    /// contributions in one call (`round_analysis`), with no window judged
    /// (a critique is its own disagreement).
    fn mode(&self) -> Option<AnalysisMode> {
        let d = self.rules.analysis?;
        Some(AnalysisMode {
            combined: false,
            detector: false,
            window: d.window,
            context: 0,
            claims: None,
            shape: crate::step::BatchShape::Contributions {
                impact: self.rules.judge_impact,
            },
        })
    }

    /// Analyses not applied yet: one batch per round, listed once the
    /// round's proposals, critiques and refinements are all taken, in
    /// round order. Carried-over proposals repeat a refinement and are not
    /// analysed again.
    fn background(&self, board: &Blackboard, agents: &[PersonaId]) -> Vec<Background> {
        let Some(mode) = self.mode() else {
            return Vec::new();
        };
        // The requirements come first: a round's analysis records coverage
        // against them.
        if self.rules.requirements
            && board.current_round() >= 1
            && !board.requirements().is_recorded()
        {
            return vec![Background::Requirements];
        }
        let mut out = Vec::new();
        for round in 1..=board.current_round() {
            let messages = self.contributions(board, round, true);
            if messages.is_empty() {
                continue;
            }
            let open = Phase3::ALL
                .into_iter()
                .any(|phase| self.pending(board, agents, round, phase).next().is_some());
            if open {
                return out;
            }
            let runs = split_by_chars(board, messages, self.rules.analysis_batch_chars);
            // Each summary rides on the run that reads the agent's
            // refinement, found among all the round's runs: once that run
            // is applied (with or without the summary) no other carries it.
            let summaries = self.folded(board, agents, round);
            let whole = if summaries.is_empty() {
                Vec::new()
            } else {
                split_by_chars(
                    board,
                    self.contributions(board, round, false),
                    self.rules.analysis_batch_chars,
                )
            };
            let carriers: Vec<Option<&agon_core::MessageId>> = summaries
                .iter()
                .map(|job| {
                    whole
                        .get(carrier(board, &whole, &job.persona))
                        .and_then(|run| run.first())
                })
                .collect();
            for messages in runs {
                let summaries = summaries
                    .iter()
                    .zip(&carriers)
                    .filter(|(_, c)| **c == messages.first())
                    .map(|(job, _)| job.clone())
                    .collect();
                out.push(Background::AnalyseBatch {
                    messages,
                    mode,
                    summaries,
                });
            }
        }
        out
    }

    /// The turns of a phase of `round` not taken yet.
    fn pending<'a>(
        &self,
        board: &'a Blackboard,
        agents: &'a [PersonaId],
        round: u32,
        phase: Phase3,
    ) -> impl Iterator<Item = Speak> + 'a {
        let has_proposal = move |p: &PersonaId| said(board, round, p, &MessageKind::Proposal);
        let devil = self.devil_of(board, agents, round);
        let speaks: Vec<Speak> = match phase {
            Phase3::Proposals => agents.iter().map(|p| Self::proposal(round, p)).collect(),
            Phase3::Critiques => agents
                .iter()
                .flat_map(|p| {
                    let adversarial = devil.as_ref() == Some(p);
                    agents
                        .iter()
                        .filter(move |t| *t != p && has_proposal(t))
                        .map(move |t| Self::critique(round, p, t, adversarial))
                })
                .collect(),
            Phase3::Refinements => agents
                .iter()
                .filter(|p| has_proposal(p))
                .map(|p| Self::refinement(round, p))
                .collect(),
        };
        speaks.into_iter().filter(move |s| !taken(board, round, s))
    }

    fn summaries(&self, board: &Blackboard, agents: &[PersonaId], round: u32) -> Vec<SummaryJob> {
        agents
            .iter()
            .filter_map(|p| {
                let rules = self.summary_rules(p);
                let done = board.summaries().iter().any(|s| {
                    s.round == Some(round)
                        && s.scope == SummaryScope::Persona { persona: p.clone() }
                });
                let job = SummaryJob {
                    persona: p.clone(),
                    scope: SummaryScope::Persona { persona: p.clone() },
                    round,
                    phase: Phase::PerspectiveSummary,
                    max_chars: rules.settings.max_length,
                    method: rules.settings.method.as_str().into(),
                    prompt: rules.prompt.clone(),
                };
                (!done
                    && !board.step_failed(&job.step_id())
                    && needs_summary_before(board, p, &rules.settings, round))
                .then_some(job)
            })
            .collect()
    }

    /// The summaries due at the start of round `round + 1` that round
    /// `round`'s analysis writes, from the same reading of the round: with
    /// analysis on, when there is a next round, and the agent has no
    /// summary prompt of its own (that one gets its own call, as
    /// configured). A round analysed in several calls writes each agent's
    /// in the call that reads its refinement ([`carrier`]).
    fn folded(&self, board: &Blackboard, agents: &[PersonaId], round: u32) -> Vec<SummaryJob> {
        if self.rules.analysis.is_none() || round >= self.rules.rounds {
            return Vec::new();
        }
        self.summaries(board, agents, round + 1)
            .into_iter()
            .filter(|job| job.prompt.is_none())
            .collect()
    }

    /// Whether round `round`'s summaries wait for the previous round's
    /// analysis, which writes some of them and is not applied yet. The
    /// critiques do not need them (they see the proposal under review);
    /// fresh proposals and refinements do.
    fn awaiting_folded(&self, board: &Blackboard, agents: &[PersonaId], round: u32) -> bool {
        let previous = round.saturating_sub(1);
        previous >= 1
            && !self.contributions(board, previous, true).is_empty()
            && !self.folded(board, agents, previous).is_empty()
    }

    /// The round's contributions a round analysis reads (carried-over
    /// proposals repeat a refinement and are left out); with `open`, only
    /// those not analysed yet.
    fn contributions(
        &self,
        board: &Blackboard,
        round: u32,
        open: bool,
    ) -> Vec<agon_core::MessageId> {
        board
            .messages()
            .iter()
            .filter(|m| {
                m.round == round
                    && Phase3::ALL.iter().any(|p| p.holds(&m.kind))
                    && !m.is_carried_proposal()
                    && !(open && board.is_analyzed(&m.id))
                    && board.persona(&m.persona).is_some_and(|p| p.is_debater())
            })
            .map(|m| m.id.clone())
            .collect()
    }

    fn judge_summary(&self, board: &Blackboard, round: u32) -> Option<SummaryJob> {
        let rules = &self.rules.judge_summary;
        let job = SummaryJob {
            persona: self.rules.judge.clone(),
            scope: SummaryScope::Judge,
            round,
            phase: Phase::JudgeSummary { round },
            max_chars: rules.settings.max_length,
            method: rules.settings.method.as_str().into(),
            prompt: rules.prompt.clone(),
        };
        let done = board
            .summaries()
            .iter()
            .any(|s| s.scope == SummaryScope::Judge && s.round == Some(round));
        let long = rules.settings.enabled
            && total_chars(&judge_final_round(board)) >= rules.settings.threshold;
        (long && !done && !board.step_failed(&job.step_id())).then_some(job)
    }

    /// Before the turns that show an agent its summary (fresh proposals,
    /// refinements): wait for the previous round's analysis when it writes
    /// summaries, then ask on their own those it did not write (a failed
    /// call, a missing entry). `None` when every due summary is made.
    fn summaries_ready(
        &self,
        board: &Blackboard,
        agents: &[PersonaId],
        round: u32,
        awaiting: bool,
        progress: &mut Progress,
    ) -> Option<Next> {
        if awaiting {
            progress.phase = "summaries".into();
            return Some(Next::Wait);
        }
        let jobs = self.summaries(board, agents, round);
        (!jobs.is_empty()).then(|| {
            progress.phase = "summaries".into();
            Next::step(Step::Ask(Ask::Summaries(jobs)))
        })
    }

    /// The critical path of `round`.
    fn round_step(
        &self,
        board: &Blackboard,
        agents: &[PersonaId],
        round: u32,
        idle: bool,
        progress: &mut Progress,
    ) -> Next {
        // 1. Summaries, before anything is said in the round, except when
        // the previous round's analysis writes them: then they wait for it
        // (see `summaries_ready`).
        let round_begun = board.messages().iter().any(|m| m.round == round);
        let awaiting = self.awaiting_folded(board, agents, round);
        if !round_begun && !awaiting {
            progress.phase = "summaries".into();
            let jobs = self.summaries(board, agents, round);
            if !jobs.is_empty() {
                return Next::step(Step::Ask(Ask::Summaries(jobs)));
            }
        }
        // 2. Proposals.
        progress.phase = "proposals".into();
        let mut carried_over = Vec::new();
        let mut fresh = Vec::new();
        for speak in self.pending(board, agents, round, Phase3::Proposals) {
            let p = &speak.persona;
            let previous = (round > 1)
                .then(|| {
                    board.messages().iter().rev().find(|m| {
                        m.round == round - 1 && &m.persona == p && m.kind == MessageKind::Refinement
                    })
                })
                .flatten();
            match previous {
                Some(r) => carried_over.push(r),
                None => fresh.push(speak),
            }
        }
        if !carried_over.is_empty() {
            let base = board.messages().len();
            let events = carried_over
                .iter()
                .enumerate()
                .map(|(i, r)| DebateEvent::MessageAppended {
                    message: DialogueMessage {
                        id: agon_core::MessageId::numbered(base + i + 1),
                        persona: r.persona.clone(),
                        kind: MessageKind::Proposal,
                        aspect: None,
                        round,
                        miniround: None,
                        crux_room: None,
                        content: r.content.clone(),
                        time: r.time,
                        reply_to: Some(r.id.clone()),
                        meta: Some(MessageMeta {
                            model: r
                                .meta
                                .as_ref()
                                .map_or_else(String::new, |m| m.model.clone()),
                            latency_ms: 0,
                            input_tokens: 0,
                            output_tokens: 0,
                            truncated: r.meta.as_ref().is_some_and(|m| m.truncated),
                        }),
                    },
                })
                .collect();
            return Next::step(Step::Record {
                label: format!("round {round}: proposals carried over from refinements"),
                events,
            });
        }
        if !fresh.is_empty() {
            if let Some(next) = self.summaries_ready(board, agents, round, awaiting, progress) {
                return next;
            }
            return Next::step(self.parallel(round, fresh));
        }
        // 3. Critiques, the devil's advocate drawn first (once per round,
        // before any critique of it).
        progress.phase = "critiques".into();
        let critiques: Vec<Speak> = self
            .pending(board, agents, round, Phase3::Critiques)
            .collect();
        let critiquing = board
            .messages()
            .iter()
            .any(|m| m.round == round && matches!(m.kind, MessageKind::Critique { .. }));
        if self.rules.devil_advocate
            && agents.len() >= 2
            && !critiques.is_empty()
            && !critiquing
            && board.devils_advocate(round).is_none()
        {
            return Next::step(Step::ReadTrust(TrustRead::DevilsAdvocate {
                round,
                candidates: agents.to_vec(),
            }));
        }
        if !critiques.is_empty() {
            return Next::step(self.parallel(round, critiques));
        }
        // 4. Refinements.
        progress.phase = "refinements".into();
        let refinements: Vec<Speak> = self
            .pending(board, agents, round, Phase3::Refinements)
            .collect();
        if !refinements.is_empty() {
            if let Some(next) = self.summaries_ready(board, agents, round, awaiting, progress) {
                return next;
            }
            return Next::step(self.parallel(round, refinements));
        }
        // 4b. Crux rooms, when on.
        if let Some(rules) = self.rules.crux
            && self.rules.analysis.is_some()
            && let Some(next) = self.crux(board, agents, round, rules, idle, progress)
        {
            return next;
        }
        // 5. The judge, after the last round or (convergence) every round.
        let last = round >= self.rules.rounds;
        let judged = matches!(self.rules.termination, Termination::Convergence { .. }) || last;
        if judged {
            progress.phase = "synthesis".into();
            if let Some(job) = self.judge_summary(board, round) {
                return Next::step(Step::Ask(Ask::Summaries(vec![job])));
            }
            if !idle {
                return Next::Wait;
            }
            let solution = board.solutions().iter().find(|s| s.round == round);
            let Some(solution) = solution else {
                return Next::step(self.solution_step(board, round));
            };
            let converged = match self.rules.termination {
                Termination::Convergence { threshold } => {
                    solution.confidence.is_some_and(|c| c >= threshold)
                }
                Termination::Fixed => false,
            };
            if last || converged {
                progress.phase = "finishing".into();
                return Next::step(Step::Finish(Finish {
                    critiques_judged_by_analysis: self.rules.analysis.is_some()
                        && self.rules.judge_impact,
                }));
            }
        }
        Next::step(Step::Record {
            label: format!("round {}", round + 1),
            events: vec![DebateEvent::RoundStarted { round: round + 1 }],
        })
    }
}

impl Dialectic {
    /// The judge's solution of `round`. Each failed structured attempt is
    /// a warning in the log: a resumed run goes on from the attempts
    /// already made.
    fn solution_step(&self, board: &Blackboard, round: u32) -> Step {
        let failures = board
            .warnings()
            .iter()
            .filter(|w| w.step == StepId::Solution(round))
            .map(|w| w.reason.clone())
            .collect();
        Step::Ask(Ask::Solution {
            judge: self.rules.judge.clone(),
            round,
            failures,
        })
    }

    /// The crux phase after a round's refinements: the open room's next
    /// step; otherwise, once the round's analyses are applied, the next
    /// active claim into a room, or a claim for the next clashing pair.
    /// `None` when there is nothing (more) to dispute.
    fn crux(
        &self,
        board: &Blackboard,
        agents: &[PersonaId],
        round: u32,
        rules: crate::rules::CruxRules,
        idle: bool,
        progress: &mut Progress,
    ) -> Option<Next> {
        match crate::crux::rooms(board, rules, idle, progress) {
            crate::crux::Rooms::Open(step) | crate::crux::Rooms::Enter(step) => {
                return Some(Next::step(step));
            }
            crate::crux::Rooms::Busy => return Some(Next::Wait),
            crate::crux::Rooms::Full => return None,
            crate::crux::Rooms::Free { .. } => {}
        }
        let event = clash(board, agents, round)?;
        Some(Next::step(Step::Record {
            label: "a clash becomes a claim".into(),
            events: vec![event],
        }))
    }
}

/// The run that writes `persona`'s summary of a round analysed in `runs`
/// (not empty): the one that reads its refinement (what the summary must
/// hold above all: the agent's current design), else its last message,
/// else the last run. Runs are cut greedily and applied in order, so the
/// runs not applied yet are the tail of the round's runs.
fn carrier(board: &Blackboard, runs: &[Vec<agon_core::MessageId>], persona: &PersonaId) -> usize {
    let holds = |kind: Option<&MessageKind>| {
        runs.iter().rposition(|run| {
            run.iter().any(|id| {
                board
                    .message(id)
                    .is_some_and(|m| &m.persona == persona && kind.is_none_or(|k| &m.kind == k))
            })
        })
    };
    holds(Some(&MessageKind::Refinement))
        .or_else(|| holds(None))
        .unwrap_or(runs.len().saturating_sub(1))
}

/// `messages` in order, cut into runs of at most `max_chars` characters of
/// content (`0`: one run); a message longer than that is a run of its own.
fn split_by_chars(
    board: &Blackboard,
    messages: Vec<agon_core::MessageId>,
    max_chars: usize,
) -> Vec<Vec<agon_core::MessageId>> {
    if max_chars == 0 {
        return vec![messages];
    }
    let mut runs: Vec<Vec<agon_core::MessageId>> = Vec::new();
    let mut used = 0;
    for id in messages {
        let chars = board
            .message(&id)
            .map_or(0, |m| m.content.trim().chars().count());
        match runs.last_mut() {
            Some(run) if used + chars <= max_chars => {
                used += chars;
                run.push(id);
            }
            _ => {
                used = chars;
                runs.push(vec![id]);
            }
        }
    }
    runs
}

/// The claim of the first pair of agents whose critiques keep clashing:
/// from round 2 on, each one's ledger records a disagreement with the
/// other, they critiqued each other this round, and no claim names them
/// yet. Its text is the first one's latest disagreement with the second;
/// its sources, their critiques of each other this round.
fn clash(board: &Blackboard, agents: &[PersonaId], round: u32) -> Option<DebateEvent> {
    if round < 2 {
        return None;
    }
    let latest = |a: &PersonaId, b: &PersonaId| {
        board
            .position(a)?
            .disagreements
            .iter()
            .rev()
            .find(|d| &d.with == b)
            .map(|d| d.on.clone())
    };
    let critique = |a: &PersonaId, b: &PersonaId| {
        board.messages().iter().find(|m| {
            m.round == round
                && &m.persona == a
                && matches!(&m.kind, MessageKind::Critique { target } if target == b)
        })
    };
    for (i, a) in agents.iter().enumerate() {
        for b in &agents[i + 1..] {
            let named = board
                .claims()
                .iter()
                .any(|c| c.personas.contains(a) && c.personas.contains(b));
            if named {
                continue;
            }
            let (Some(text), Some(_)) = (latest(a, b), latest(b, a)) else {
                continue;
            };
            let (Some(ab), Some(ba)) = (critique(a, b), critique(b, a)) else {
                continue;
            };
            return Some(DebateEvent::ClaimOpened {
                claim: agon_core::ClaimId::new(format!("claim-{}", board.claims().len() + 1)),
                text,
                personas: [a.clone(), b.clone()],
                round,
                source_messages: vec![ab.id.clone(), ba.id.clone()],
            });
        }
    }
    None
}

impl Protocol for Dialectic {
    fn weighs_by_trust(&self) -> bool {
        self.rules.start.weigh_by_trust
    }

    fn rubric(&self) -> Option<&'static str> {
        self.kind().and_then(agon_core::rubric::rubric_of)
    }

    fn kind(&self) -> Option<agon_core::ProtocolKind> {
        Some(agon_core::ProtocolKind::Dialectic)
    }

    /// The judge's solution of the round the budget stopped in, unless
    /// one is recorded already (or nothing was proposed yet); then the
    /// finish.
    fn wrap_up(&self, board: &Blackboard) -> Step {
        let round = board.current_round();
        let proposed = board
            .messages()
            .iter()
            .any(|m| matches!(m.kind, MessageKind::Proposal | MessageKind::Refinement));
        let solved = board.solutions().iter().any(|s| s.round == round);
        if proposed && !solved && round > 0 {
            return self.solution_step(board, round);
        }
        Step::Finish(Finish {
            critiques_judged_by_analysis: false,
        })
    }

    fn plan(&self, board: &Blackboard) -> Plan {
        let agents: Vec<PersonaId> = board.debaters().map(|p| p.id.clone()).collect();
        let background = self.background(board, &agents);
        // Each round: a proposal, a critique of every other agent and a
        // refinement per agent.
        let n = if board.topic().is_some() {
            agents.len()
        } else {
            self.rules
                .start
                .personas
                .iter()
                .filter(|p| p.is_debater())
                .count()
        } as u64;
        let mut progress = Progress {
            unit: ProgressUnit::Round,
            at: board.current_round() as usize,
            of: self.rules.rounds as usize,
            miniround: 0,
            phase: String::new(),
            contributions: Some(u64::from(self.rules.rounds) * (n + n * n.saturating_sub(1) + n)),
        };
        let next = if board.topic().is_none() {
            progress.phase = "starting".into();
            Next::step(Step::start(self.rules.start.clone()))
        } else if board.status() == DebateStatus::Finished {
            Next::Finished
        } else {
            match (board.current_round(), self.rules.clarify) {
                // The first asking, then follow-ups while the last round
                // asked something and the limit allows: a round that asked
                // nothing, or the last allowed one, recorded round 1.
                (0, Some(max_questions)) => {
                    progress.phase = "clarifications".into();
                    let done = board.clarification_rounds().len() as u32;
                    Next::step(Step::Ask(Ask::Clarify {
                        agents,
                        max_questions,
                        round: done + 1,
                        max_rounds: self.rules.clarify_rounds.max(1),
                    }))
                }
                (0, None) => Next::step(Step::Record {
                    label: "round 1".into(),
                    events: vec![DebateEvent::RoundStarted { round: 1 }],
                }),
                (_, _)
                    if self.rules.requirements
                        && self.mode().is_none()
                        && !board.requirements().is_recorded() =>
                {
                    Next::step(Step::Record {
                        label: "requirements".into(),
                        events: vec![agon_extract::keyword_requirements(
                            &crate::requirements::problem(board),
                        )],
                    })
                }
                // The proposals are asked to cover the requirements by
                // id: they wait for the one call that reads them.
                (_, _) if self.rules.requirements && !board.requirements().is_recorded() => {
                    progress.phase = "requirements".into();
                    Next::Wait
                }
                (round, _) => {
                    self.round_step(board, &agents, round, background.is_empty(), &mut progress)
                }
            }
        };
        Plan {
            background,
            next,
            progress,
        }
    }
}
