//! The deliberation protocol (seeds 001 + 002): a long free-form session
//! in which participants speak one turn at a time, with a three-tier memory.
//!
//! ## Turns
//! Turn `t` is taken when its message exists or its skip is recorded.
//! - `round-robin` (seed 001): the participants in order.
//! - `listen` (seed 002): before each turn after the first, every
//!   participant except the last speaker is asked from the brief context
//!   (decisions, active proposals, the last 5 messages) whether it wants to
//!   respond ([`Ask::Listen`]); the answers are recorded as
//!   `speakers_evaluated`. The speaker is the volunteer with the highest
//!   urgency, ties broken by who spoke least recently, then by order; when
//!   nobody volunteers, the participant after the last speaker. The last
//!   speaker is never asked, so nobody speaks twice in a row; two agents
//!   that always volunteer at the top urgency alternate (documented, not
//!   prevented).
//!
//! ## Memory
//! - The full transcript is the event log.
//! - A rolling summary ([`Ask::RollingSummary`]) is due when seed 001's
//!   planner ([`agon_context::rolling::plan`]) says so for the messages
//!   after the latest summary: every `resummarize_every` messages once
//!   `keep_recent_turns` are kept verbatim, or earlier once
//!   `resummarize_every` of them no longer fit the recent budget (long
//!   messages: the view has cut them already). Each summary folds the next
//!   `resummarize_every` messages after the previous one, so the recorded
//!   spans are equal, contiguous and never overlap. A failed summary
//!   is a warning; it is not retried until `resummarize_every` more
//!   messages, and meanwhile the speaker's view cuts the window to fit.
//! - Decisions, proposals and reactions come from each message by the
//!   patterns of [`detect`] (appended with the message) and/or by the
//!   analysis model ([`Background::Detect`], in batches of
//!   `analysis_every`); with `analysis` on, messages are also analysed in
//!   batches into the position ledger.
//!
//! ## Stopping
//! After the turn limit, or earlier at the first decision every
//! participant supports (`stop.consensus`), when the speaking turns and
//! summaries have used `stop.max_tokens`, or when `stop.max_minutes` have
//! passed between the start and the latest message.

pub mod detect;
pub(crate) mod listen;
mod volunteer;

use agon_context::Phase;
use agon_context::prompts::Utterance;
use agon_context::rolling::{DueReason, RollingSummaryPolicy, plan as rolling_plan};
use agon_context::{CachedCounter, TiktokenCounter, TokenCounter};
use agon_core::{
    Bid, Blackboard, DebateStatus, MessageKind, MessageSpan, PersonaId, StepId, TurnKey,
};

use crate::protocol::Protocol;
use crate::question::Ask;
use crate::rules::DetectionRules;
pub use crate::rules::DetectionSource;
use crate::step::{AnalysisMode, Background, Next, Plan, Progress, ProgressUnit, Step};
use crate::turn::{Speak, Start, Voice};
pub use detect::{PatternError, Patterns};
pub use listen::{Heard, bid_from_output, listen_events};
pub use volunteer::pick_volunteer;

/// How the next speaker is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TurnMode {
    /// The participants in order (seed 001).
    #[default]
    RoundRobin,
    /// Everyone but the last speaker says whether it wants to respond; the
    /// most urgent volunteer speaks (seed 002).
    Listen,
}

/// When a session stops before its turn limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StopRules {
    /// At the first decision every participant supports.
    pub consensus: bool,
    /// When the speaking turns and summaries have used this many tokens.
    pub max_tokens: Option<u64>,
    /// When this many minutes passed between the start and the latest message.
    pub max_minutes: Option<u32>,
}

/// Why a session stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The turn limit was reached.
    Turns,
    /// Every participant supports a decision.
    Consensus,
    /// The token budget is used up.
    Tokens,
    /// The wall-clock budget is used up.
    Time,
}

impl StopReason {
    /// A short description.
    pub fn label(self) -> &'static str {
        match self {
            Self::Turns => "turn limit reached",
            Self::Consensus => "consensus reached",
            Self::Tokens => "token budget used",
            Self::Time => "time budget used",
        }
    }
}

/// The rules of a deliberation session.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliberationRules {
    /// Topic and participants.
    pub start: Start,
    /// Turns at most (at least 1).
    pub turns: u32,
    /// How the speaker is chosen.
    pub mode: TurnMode,
    /// The rolling summary's cadence and the view's budget split.
    pub rolling: RollingSummaryPolicy,
    /// The decision, proposal and reaction patterns.
    pub patterns: Patterns,
    /// Early stops.
    pub stop: StopRules,
    /// Background analysis into the position ledger (`None`: off).
    pub analysis: Option<DetectionRules>,
    /// Where decisions, proposals and reactions are found.
    pub detection: DetectionSource,
    /// Messages per analysis batch (at least 1).
    pub analysis_every: usize,
    /// Tokens of a listening agent's brief context.
    pub listen_tokens: usize,
    /// A designated skeptic (listen mode, 2+ participants): drawn from the
    /// trust memory at the start like a devil's advocate; while the
    /// session drifts toward consensus its bid is raised to the top and
    /// it speaks with the skeptic's brief.
    pub skeptic: bool,
}

/// The deliberation protocol.
#[derive(Debug)]
pub struct Deliberation {
    rules: DeliberationRules,
    /// Memoized token counts of transcript lines (a cache, not state: the
    /// plan is the same with or without it).
    counter: CachedCounter<TiktokenCounter>,
}

/// The line a message is counted as (and shown as) in a view.
fn line_of(board: &Blackboard, m: &agon_core::DialogueMessage) -> String {
    format!("{}: {}", board.persona_name(&m.persona), m.content.trim())
}

impl Deliberation {
    /// The protocol with these rules.
    pub fn new(rules: DeliberationRules) -> Self {
        Self {
            rules,
            counter: CachedCounter::new(TiktokenCounter::default()),
        }
    }

    /// Its rules.
    pub fn rules(&self) -> &DeliberationRules {
        &self.rules
    }

    /// Turns taken: messages plus recorded skips.
    pub fn turns_taken(board: &Blackboard) -> usize {
        let skipped = board
            .warnings()
            .iter()
            .filter(|w| matches!(w.step, StepId::Utterance(TurnKey::Turn { .. })))
            .count();
        board.messages().len() + skipped
    }

    /// Why the session stops before `turn`, if it does.
    pub fn stop_reason(&self, board: &Blackboard, turn: u32) -> Option<StopReason> {
        if turn > self.rules.turns {
            return Some(StopReason::Turns);
        }
        let stop = &self.rules.stop;
        if stop.consensus && consensus(board) {
            return Some(StopReason::Consensus);
        }
        if let Some(max) = stop.max_tokens {
            let used: u64 = board
                .messages()
                .iter()
                .filter_map(|m| m.meta.as_ref())
                .map(|m| m.input_tokens + m.output_tokens)
                .chain(board.summaries().iter().filter_map(|s| s.tokens))
                .sum();
            if used >= max {
                return Some(StopReason::Tokens);
            }
        }
        if let (Some(minutes), Some(start), Some(last)) = (
            stop.max_minutes,
            board.started_at(),
            board.messages().last().map(|m| m.time),
        ) && last - start >= chrono::Duration::minutes(i64::from(minutes))
        {
            return Some(StopReason::Time);
        }
        None
    }

    /// The span the next rolling summary must fold and its most tokens, if
    /// one is due now.
    pub fn summary_due(&self, board: &Blackboard) -> Option<(MessageSpan, usize)> {
        let policy = &self.rules.rolling;
        let messages = board.messages();
        let covered = board
            .latest_rolling_summary()
            .map_or(0, |s| s.span.end)
            .min(messages.len());
        let tokens: Vec<usize> = messages[covered..]
            .iter()
            .map(|m| self.counter.count(&line_of(board, m)) + 1)
            .collect();
        let due = rolling_plan(&tokens, 0, policy).due?;
        let every = policy.resummarize_every.max(1);
        if due.reason == DueReason::Budget {
            // Messages that no longer fit the recent budget are summarized
            // a cadence at a time, not one per turn: the view cuts the
            // window meanwhile.
            let mut fit = 0usize;
            let unfit = tokens
                .iter()
                .rev()
                .skip_while(|t| {
                    fit += **t;
                    fit <= policy.recent_tokens
                })
                .count();
            if unfit < every {
                return None;
            }
        }
        // Every summary folds the next `every` messages: equal, contiguous
        // spans, and a catch-up after failures takes one cadence per step.
        let end = covered + every.min(tokens.len());
        let recently_failed = board.warnings().iter().any(|w| {
            matches!(w.step, StepId::RollingSummary { at }
                if at + policy.resummarize_every.max(1) > messages.len())
        });
        if recently_failed {
            return None;
        }
        Some((
            MessageSpan {
                start: covered,
                end,
            },
            due.max_tokens,
        ))
    }

    fn speak(turn: u32, persona: &PersonaId, skeptic: bool) -> Speak {
        Speak {
            key: TurnKey::Turn { turn },
            persona: persona.clone(),
            kind: MessageKind::Deliberation,
            phase: Some(Phase::Deliberate { turn }),
            instruction: Utterance::Deliberation { skeptic, turn },
            aspect: None,
            miniround: None,
            room: None,
            voice: Voice::Debater,
        }
    }

    /// The session's skeptic, once drawn (recorded as the devil's advocate
    /// of round 0).
    fn skeptic<'b>(&self, board: &'b Blackboard) -> Option<&'b PersonaId> {
        if self.rules.skeptic {
            board.devils_advocate(0)
        } else {
            None
        }
    }

    /// Whether the skeptic is still to be drawn (listen mode, two or more
    /// participants).
    fn skeptic_to_draw(&self, board: &Blackboard, agents: &[PersonaId]) -> bool {
        self.rules.skeptic
            && self.rules.mode == TurnMode::Listen
            && agents.len() >= 2
            && board.devils_advocate(0).is_none()
    }

    /// The next turn's step: the speaker's turn, or first the listening
    /// agents' evaluation.
    fn turn_step(&self, board: &Blackboard, agents: &[PersonaId], turn: u32) -> Step {
        let last = board.messages().last().map(|m| &m.persona);
        let after_last = || {
            let i = last
                .and_then(|l| agents.iter().position(|a| a == l))
                .map_or(0, |i| (i + 1) % agents.len());
            &agents[i]
        };
        match self.rules.mode {
            TurnMode::RoundRobin => Step::Speak(Self::speak(
                turn,
                &agents[(turn as usize - 1) % agents.len()],
                false,
            )),
            TurnMode::Listen if last.is_none() => {
                Step::Speak(Self::speak(turn, after_last(), false))
            }
            TurnMode::Listen => match board.bids(turn) {
                None => Step::Ask(Ask::Listen {
                    turn,
                    agents: agents
                        .iter()
                        .filter(|a| Some(*a) != last)
                        .cloned()
                        .collect(),
                    budget_tokens: self.rules.listen_tokens,
                }),
                Some(bids) => {
                    let last_spoke =
                        |p: &PersonaId| board.messages().iter().rposition(|m| &m.persona == p);
                    // While the group converges, the skeptic's bid is
                    // raised to the top (it may still tie with another
                    // top bid that spoke less recently).
                    let skeptic = self.skeptic(board).filter(|_| drifting_to_consensus(board));
                    let raised: Vec<Bid> = bids
                        .iter()
                        .map(|b| match skeptic {
                            Some(s) if &b.persona == s => Bid {
                                respond: true,
                                urgency: agon_core::MAX_URGENCY,
                                ..b.clone()
                            },
                            _ => b.clone(),
                        })
                        .collect();
                    let speaker = pick_volunteer(&raised, last_spoke).unwrap_or_else(after_last);
                    Step::Speak(Self::speak(turn, speaker, skeptic == Some(speaker)))
                }
            },
        }
    }

    /// Background work not applied yet, per `analysis_every` messages
    /// (listed once the batch is complete, or the session is over): the
    /// model's reading for decisions and proposals, then the ledger analysis.
    fn background(&self, board: &Blackboard, over: bool) -> Vec<Background> {
        let detect = self.rules.detection.model();
        if self.rules.analysis.is_none() && !detect {
            return Vec::new();
        }
        // Position and the batch's disagreements in one call; a pair that
        // disagrees in consecutive batches opens a claim, as in the
        // structured debate (the claims are shown; no crux room runs).
        let mode = self.rules.analysis.map(|d| AnalysisMode {
            combined: d.mode == crate::rules::DetectionMode::Combined,
            detector: d.mode == crate::rules::DetectionMode::Separate,
            window: d.window,
            context: 1,
            claims: (d.mode != crate::rules::DetectionMode::Off).then_some(d.detector),
            shape: crate::step::BatchShape::Positions,
        });
        let every = self.rules.analysis_every.max(1);
        let messages = board.messages();
        // Jobs are applied in list order, so the finished chunks are a
        // prefix: find its end by bisection (a chunk is finished when its
        // last message is), not by walking the whole transcript each plan.
        let finished = |k: usize| {
            let last = &messages[(k + 1) * every - 1].id;
            (!detect || board.is_detected(last)) && (mode.is_none() || board.is_analyzed(last))
        };
        let (mut lo, mut hi) = (0, messages.len() / every);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if finished(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        let mut start = lo * every;
        while start < messages.len() {
            let end = (start + every).min(messages.len());
            if end - start < every && !over {
                break;
            }
            let chunk = &messages[start..end];
            let unread: Vec<agon_core::MessageId> = chunk
                .iter()
                .filter(|m| detect && !board.is_detected(&m.id))
                .map(|m| m.id.clone())
                .collect();
            if !unread.is_empty() {
                out.push(Background::Detect {
                    messages: unread,
                    source: self.rules.detection,
                });
            }
            if let Some(mode) = mode {
                let pending: Vec<agon_core::MessageId> = chunk
                    .iter()
                    .filter(|m| !board.is_analyzed(&m.id))
                    .map(|m| m.id.clone())
                    .collect();
                if !pending.is_empty() {
                    out.push(Background::AnalyseBatch {
                        messages: pending,
                        mode,
                        summaries: Vec::new(),
                    });
                }
            }
            start = end;
        }
        out
    }
}

/// Whether the session drifts toward consensus: some decision is supported
/// by more than half of the participants, or an active proposal has more
/// than half of them supporting and nobody opposing.
pub fn drifting_to_consensus(board: &Blackboard) -> bool {
    let everyone = board.debaters().count();
    let most = |n: usize| everyone >= 2 && n * 2 > everyone;
    board.decisions().iter().any(|d| most(d.supporting.len()))
        || board.proposals().iter().any(|p| {
            use agon_core::{ProposalStatus, Reaction};
            p.status == ProposalStatus::Active
                && most(
                    p.reactions
                        .values()
                        .filter(|r| **r == Reaction::Support)
                        .count(),
                )
                && !p.reactions.values().any(|r| *r == Reaction::Oppose)
        })
}

/// Whether some decision is supported by every participant.
pub fn consensus(board: &Blackboard) -> bool {
    let everyone: Vec<&PersonaId> = board.debaters().map(|p| &p.id).collect();
    !everyone.is_empty()
        && board
            .decisions()
            .iter()
            .any(|d| everyone.iter().all(|p| d.supporting.contains(p)))
}

impl Protocol for Deliberation {
    fn weighs_by_trust(&self) -> bool {
        self.rules.start.weigh_by_trust
    }

    fn kind(&self) -> Option<agon_core::ProtocolKind> {
        Some(agon_core::ProtocolKind::Deliberation)
    }

    fn plan(&self, board: &Blackboard) -> Plan {
        let agents: Vec<PersonaId> = board.debaters().map(|p| p.id.clone()).collect();
        let turn = u32::try_from(Self::turns_taken(board) + 1).unwrap_or(u32::MAX);
        let stop = if board.topic().is_some() {
            self.stop_reason(board, turn)
        } else {
            None
        };
        let background = self.background(board, stop.is_some());
        let mut progress = Progress {
            unit: ProgressUnit::Turn,
            at: turn.min(self.rules.turns) as usize,
            of: self.rules.turns as usize,
            contributions: Some(u64::from(self.rules.turns)),
            miniround: 0,
            phase: format!(
                "turn {} of {}",
                turn.min(self.rules.turns),
                self.rules.turns
            ),
        };
        let next = if board.topic().is_none() {
            progress.phase = "starting".into();
            Next::step(Step::start(self.rules.start.clone()))
        } else if board.status() == DebateStatus::Finished {
            progress.phase = "finished".into();
            Next::Finished
        } else if agents.is_empty() {
            Next::Wait
        } else if let Some(reason) = stop {
            progress.phase = reason.label().into();
            if background.is_empty() {
                Next::step(Step::Finish(crate::Finish::default()))
            } else {
                Next::Wait
            }
        } else if let Some((fold, max_tokens)) = self.summary_due(board) {
            progress.phase = format!("summarizing messages {}–{}", fold.start + 1, fold.end);
            Next::step(Step::Ask(Ask::RollingSummary { fold, max_tokens }))
        } else if self.skeptic_to_draw(board, &agents) {
            progress.phase = "drawing the skeptic".into();
            Next::step(Step::ReadTrust(crate::TrustRead::DevilsAdvocate {
                round: 0,
                candidates: agents.clone(),
            }))
        } else {
            Next::step(self.turn_step(board, &agents, turn))
        };
        Plan {
            background,
            next,
            progress,
        }
    }

    fn message_events(
        &self,
        board: &Blackboard,
        message: &agon_core::DialogueMessage,
    ) -> Vec<agon_core::DebateEvent> {
        if !self.rules.detection.patterns() {
            return Vec::new();
        }
        detect::message_events(board, &self.rules.patterns, message)
    }
}
