//! The live view of a running debate, the same for every protocol and
//! every screen (the terminal today, a web page next): [`LiveView`] folds
//! what a run reports (turns starting, tokens, events, progress) into what
//! to show, and [`notice`] is the one-line notice of an event.
//!
//! A turn that runs alone streams inline (its heading, then its text as it
//! is generated); turns that run side by side (a dialectic round's
//! critiques) are listed as active turns with their token counts, and each
//! is shown whole once it is recorded.

use std::collections::BTreeMap;

use agon_core::{
    Blackboard, DebateEvent, DialogueMessage, MessageKind, PersonaId, ProtocolKind, SummaryScope,
    TurnKey,
};
use agon_protocol::{Progress, is_contribution};

/// What to show next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A turn streams inline from now on: its heading.
    StreamStart(String),
    /// A piece of the streaming turn's text.
    StreamText(String),
    /// The streaming turn ended: recorded (`None`), or discarded (why).
    StreamEnd(Option<String>),
    /// A recorded message that was not streamed.
    Message {
        /// Who said what ("Ada — critique of Ben (round 2)").
        heading: String,
        /// What was said.
        text: String,
    },
    /// A one-line notice ([`notice`]).
    Notice(String),
}

/// A turn being generated beside others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveTurn {
    /// Who speaks.
    pub persona: PersonaId,
    /// What the turn is ("Ada critiquing Ben (round 2)").
    pub label: String,
    /// Tokens received so far.
    pub tokens: u64,
}

/// The live view's state: the debate's blackboard as the events arrive,
/// the turns being generated, and where the debate stands.
#[derive(Debug, Clone)]
pub struct LiveView {
    board: Blackboard,
    streaming: Option<(TurnKey, PersonaId)>,
    active: BTreeMap<TurnKey, ActiveTurn>,
    progress: Option<Progress>,
    verbose: bool,
}

impl LiveView {
    /// A view of the debate whose blackboard is `board` (as loaded before
    /// the run: empty for a new debate); `verbose` adds each message's
    /// model, latency and tokens to its heading.
    pub fn new(board: Blackboard, verbose: bool) -> Self {
        Self {
            board,
            streaming: None,
            active: BTreeMap::new(),
            progress: None,
            verbose,
        }
    }

    /// The blackboard as the events so far left it.
    pub fn board(&self) -> &Blackboard {
        &self.board
    }

    /// The turns being generated side by side.
    pub fn active(&self) -> impl Iterator<Item = (&TurnKey, &ActiveTurn)> {
        self.active.iter()
    }

    /// Contributions so far (see [`Progress::contributions`]).
    pub fn done(&self) -> u64 {
        self.board
            .messages()
            .iter()
            .filter(|m| is_contribution(m))
            .count() as u64
    }

    /// Contributions planned, once the protocol has said.
    pub fn planned(&self) -> Option<u64> {
        self.progress.as_ref().and_then(|p| p.contributions)
    }

    /// Where the debate stands, in one line.
    pub fn phase(&self) -> String {
        self.progress
            .as_ref()
            .map_or_else(|| "starting".to_owned(), Progress::describe)
    }

    /// The protocol's progress.
    pub fn progress(&mut self, progress: Progress) {
        self.progress = Some(progress);
    }

    /// A turn started (again, after an empty answer).
    pub fn turn_started(&mut self, key: TurnKey, persona: PersonaId) -> Vec<Shown> {
        if self.streaming.as_ref().is_some_and(|(k, _)| *k == key) || self.active.contains_key(&key)
        {
            return Vec::new();
        }
        let label = turn_label(&self.board, &key, &persona);
        if self.streaming.is_none() && self.active.is_empty() {
            self.streaming = Some((key, persona));
            return vec![Shown::StreamStart(label)];
        }
        self.active.insert(
            key,
            ActiveTurn {
                persona,
                label,
                tokens: 0,
            },
        );
        Vec::new()
    }

    /// A piece of a turn's text.
    pub fn token(&mut self, turn: &TurnKey, delta: &str) -> Vec<Shown> {
        if self.streaming.as_ref().is_some_and(|(k, _)| k == turn) {
            return vec![Shown::StreamText(delta.to_owned())];
        }
        if let Some(active) = self.active.get_mut(turn) {
            active.tokens += 1;
        }
        Vec::new()
    }

    /// A turn's text was discarded (empty, or the run was aborted).
    pub fn turn_discarded(&mut self, turn: &TurnKey, reason: &str) -> Vec<Shown> {
        if self.streaming.as_ref().is_some_and(|(k, _)| k == turn) {
            self.streaming = None;
            return vec![Shown::StreamEnd(Some(reason.to_owned()))];
        }
        match self.active.remove(turn) {
            Some(active) => vec![Shown::Notice(format!("({}: {reason})", active.label))],
            None => Vec::new(),
        }
    }

    /// An event was recorded.
    pub fn event(&mut self, event: &DebateEvent) -> Vec<Shown> {
        // A log that does not replay here was validated by the store; the
        // view shows what it can.
        let _ = self.board.apply(event);
        let mut shown = Vec::new();
        if let DebateEvent::MessageAppended { message } = event {
            shown.extend(self.message(message));
        }
        shown.extend(notice(&self.board, event).map(Shown::Notice));
        shown
    }

    fn message(&mut self, m: &DialogueMessage) -> Option<Shown> {
        if self
            .streaming
            .as_ref()
            .is_some_and(|(_, persona)| *persona == m.persona)
        {
            self.streaming = None;
            return Some(Shown::StreamEnd(None));
        }
        let answered = self
            .active
            .iter()
            .find(|(key, turn)| turn.persona == m.persona && answers(key, m))
            .map(|(key, _)| key.clone());
        if let Some(key) = answered {
            self.active.remove(&key);
        }
        // Carried proposals have their notice; clarifications were shown
        // when they were asked.
        let quiet = m.is_carried_proposal()
            || matches!(
                m.kind,
                MessageKind::ClarificationQuestion | MessageKind::ClarificationAnswer
            );
        (!quiet).then(|| Shown::Message {
            heading: heading(&self.board, m, self.verbose),
            text: m.content.trim().to_owned(),
        })
    }
}

/// Whether message `m` is the one turn `key` produces (its speaker is
/// already known to match): a critique answers the turn with its target.
fn answers(key: &TurnKey, m: &DialogueMessage) -> bool {
    match (key, &m.kind) {
        (TurnKey::Critique { target, .. }, MessageKind::Critique { target: t }) => target == t,
        (TurnKey::Critique { .. }, _) => false,
        _ => true,
    }
}

/// "Ada critiquing Ben (round 2)", "Ada (take/aspect-1/0/ada)": turn
/// `key` of `persona`.
pub fn turn_label(board: &Blackboard, key: &TurnKey, persona: &PersonaId) -> String {
    let name = |id: &PersonaId| board.persona_name(id).to_owned();
    match key {
        TurnKey::Proposal { round, persona } => {
            format!("{} proposing (round {round})", name(persona))
        }
        TurnKey::Critique {
            round,
            target,
            persona,
        } => format!(
            "{} critiquing {} (round {round})",
            name(persona),
            name(target)
        ),
        TurnKey::Refinement { round, persona } => {
            format!("{} refining (round {round})", name(persona))
        }
        other => format!("{} ({other})", name(persona)),
    }
}

/// "Ada — critique of Ben (round 2)", with the call's model, latency and
/// tokens when `verbose`.
fn heading(board: &Blackboard, m: &DialogueMessage, verbose: bool) -> String {
    let name = |id: &PersonaId| board.persona_name(id).to_owned();
    let what = match &m.kind {
        MessageKind::Critique { target } => format!("critique of {}", name(target)),
        k => k.label().to_owned(),
    };
    let mut s = format!("{} — {what} (round {})", name(&m.persona), m.round);
    if verbose && let Some(meta) = &m.meta {
        s.push_str(&format!(
            " [{} · {} ms · {} in / {} out tokens]",
            meta.model, meta.latency_ms, meta.input_tokens, meta.output_tokens
        ));
    }
    s
}

/// What a live view says about `event`, given `board` with the event
/// already applied (so the names and labels it refers to are known);
/// `None` for an event a person need not be told of as it happens (a
/// message is shown by the view itself, as it streams).
pub fn notice(board: &Blackboard, event: &DebateEvent) -> Option<String> {
    let name = |id: &agon_core::PersonaId| board.persona_name(id).to_owned();
    match event {
        DebateEvent::DebateStarted { personas, .. }
            if board.protocol() != ProtocolKind::Dialectic =>
        {
            let cast: Vec<String> = personas
                .iter()
                .filter(|p| p.is_debater())
                .map(|p| format!("{} ({})", p.name, p.contract))
                .collect();
            Some(format!("Personas: {}", cast.join("; ")))
        }
        DebateEvent::AspectStarted { aspect, round } => Some(format!(
            "── aspect {round}: {} ──",
            board
                .aspect(aspect)
                .map_or_else(|| aspect.to_string(), |a| a.label.clone())
        )),
        DebateEvent::RoundStarted { round } => Some(format!("\n── round {round} ──")),
        DebateEvent::MessageAppended { message } if message.is_carried_proposal() => Some(format!(
            "↳ {}'s proposal for round {} is its refinement of round {}",
            name(&message.persona),
            message.round,
            message.round.saturating_sub(1)
        )),
        DebateEvent::ClaimOpened { claim, text, .. } => Some(format!("⚑ {claim} opened: {text}")),
        DebateEvent::CruxCardAdded { card } => {
            Some(format!("◆ crux card {}: {}", card.id, card.question))
        }
        DebateEvent::ReflectionAdded { reflection } => {
            Some(format!("✎ reflection: {}", reflection.content))
        }
        DebateEvent::RoundRecorded { record } => Some(format!("▣ round {} recorded", record.round)),
        DebateEvent::SummaryRecorded { summary } => match &summary.scope {
            SummaryScope::Rolling => Some(format!(
                "≡ summary of messages 1–{}: {}",
                summary.span.end,
                agon_extract::truncate_chars(&summary.text, 160)
            )),
            SummaryScope::Persona { persona } => Some(format!(
                "Σ {} summarized: {} → {} chars",
                name(persona),
                summary.before_chars,
                summary.after_chars
            )),
            SummaryScope::Judge => Some(format!(
                "Σ the judge summarized: {} → {} chars",
                summary.before_chars, summary.after_chars
            )),
        },
        DebateEvent::SolutionRecorded { solution } => Some(format!(
            "✓ solution after round {} (confidence {})",
            solution.round,
            solution
                .confidence
                .map_or_else(|| "—".to_owned(), |c| c.to_string())
        )),
        DebateEvent::DecisionRecorded { decision } => Some(format!(
            "✔ decision {} ({}): {}",
            decision.id, decision.topic, decision.outcome
        )),
        DebateEvent::ProposalRecorded {
            proposal, content, ..
        } => Some(format!("✚ proposal {proposal}: {content}")),
        DebateEvent::ProposalStatusChanged { proposal, status } => {
            Some(format!("  proposal {proposal} is now {status:?}").to_lowercase())
        }
        DebateEvent::StepFailed { step, reason, .. } => Some(format!("⚠ {step} failed: {reason}")),
        DebateEvent::NoteAdded { text, author, .. } => Some(match author {
            Some(author) => format!("✎ moderator ({author}): {text}"),
            None => format!("✎ moderator: {text}"),
        }),
        DebateEvent::DebatePaused { by, .. } => Some(match by {
            Some(by) => format!("⏸ paused by {by}"),
            None => "⏸ paused".to_owned(),
        }),
        DebateEvent::DebateResumed { .. } => Some("▶ resumed".to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_testkit::synthetic::small;

    use super::*;

    fn board_after(events: &[DebateEvent]) -> Blackboard {
        Blackboard::replay(events).unwrap()
    }

    #[test]
    fn notices_name_what_the_board_knows() {
        let log = small::log();
        let board = board_after(&log);
        let started = notice(&board, &log[0]).unwrap();
        assert!(started.starts_with("Personas: Ada ("), "{started}");
        assert!(!started.contains("Judge"), "only debaters: {started}");
        assert_eq!(
            notice(&board, &log[1]).unwrap(),
            "── aspect 1: Safety ──",
            "the aspect's label, not its id"
        );
        assert_eq!(notice(&board, &log[2]), None, "a message streams itself");
        let failed = DebateEvent::StepFailed {
            step: agon_core::StepId::TrustMemory,
            reason: "store down".into(),
            time: small::t(3),
        };
        assert_eq!(
            notice(&board, &failed).unwrap(),
            "⚠ trust_memory failed: store down"
        );
        let note = DebateEvent::NoteAdded {
            text: "Stay on safety.".into(),
            author: Some("Chair".into()),
            time: small::t(4),
        };
        assert_eq!(
            notice(&board, &note).unwrap(),
            "✎ moderator (Chair): Stay on safety."
        );
    }

    #[test]
    fn a_dialectic_debate_is_not_introduced_by_its_cast() {
        let mut log = small::log();
        if let DebateEvent::DebateStarted { protocol, .. } = &mut log[0] {
            *protocol = Some(ProtocolKind::Dialectic);
        }
        let board = board_after(&log[..1]);
        assert_eq!(notice(&board, &log[0]), None);
        let summary = DebateEvent::SummaryRecorded {
            summary: agon_core::DebateSummary {
                scope: SummaryScope::Persona {
                    persona: "ada".into(),
                },
                span: agon_core::MessageSpan { start: 0, end: 2 },
                text: "Ada's view.".into(),
                before_chars: 900,
                after_chars: 120,
                method: "perspective".into(),
                round: Some(1),
                temperature_centi: None,
                latency_ms: None,
                tokens: None,
                model: None,
                time: small::t(2),
            },
        };
        assert_eq!(
            notice(&board, &summary).unwrap(),
            "Σ Ada summarized: 900 → 120 chars"
        );
    }

    fn critique(id: &str, persona: &str, target: &str) -> agon_core::DialogueMessage {
        agon_core::DialogueMessage {
            kind: MessageKind::Critique {
                target: target.into(),
            },
            ..small::message(id, persona, &format!("{persona} on {target}"))
        }
    }

    fn critique_key(persona: &str, target: &str) -> TurnKey {
        TurnKey::Critique {
            round: 1,
            target: target.into(),
            persona: persona.into(),
        }
    }

    #[test]
    fn a_turn_that_runs_alone_streams_and_ends_with_its_message() {
        let log = small::log();
        let mut view = LiveView::new(board_after(&log[..2]), false);
        let key = TurnKey::Take {
            aspect: "safety".into(),
            miniround: 0,
            persona: "ada".into(),
        };
        assert_eq!(
            view.turn_started(key.clone(), "ada".into()),
            [Shown::StreamStart("Ada (take/safety/0/ada)".into())]
        );
        // A retry after an empty answer starts nothing new.
        assert!(view.turn_started(key.clone(), "ada".into()).is_empty());
        assert_eq!(
            view.token(&key, "Cars "),
            [Shown::StreamText("Cars ".into())]
        );
        assert_eq!(view.event(&log[2]), [Shown::StreamEnd(None)]);
        assert_eq!(view.done(), 1);
        assert_eq!(view.active().count(), 0);
        // A discarded turn ends its stream with the reason.
        let bo = TurnKey::Take {
            aspect: "safety".into(),
            miniround: 0,
            persona: "bo".into(),
        };
        view.turn_started(bo.clone(), "bo".into());
        assert_eq!(
            view.turn_discarded(&bo, "interrupted"),
            [Shown::StreamEnd(Some("interrupted".into()))]
        );
    }

    #[test]
    fn turns_side_by_side_count_tokens_and_show_each_message_once_recorded() {
        let log = small::log();
        let mut view = LiveView::new(board_after(&log[..2]), false);
        let first = critique_key("ada", "bo");
        let second = critique_key("bo", "ada");
        // The first streams until a second starts beside it; the second
        // is an active turn.
        view.turn_started(first.clone(), "ada".into());
        assert!(view.turn_started(second.clone(), "bo".into()).is_empty());
        view.token(&second, "x");
        view.token(&second, "y");
        let active: Vec<_> = view
            .active()
            .map(|(_, t)| (t.label.clone(), t.tokens))
            .collect();
        assert_eq!(active, [("Bo critiquing Ada (round 1)".to_owned(), 2)]);
        let shown = view.event(&DebateEvent::MessageAppended {
            message: critique("m3", "bo", "ada"),
        });
        assert_eq!(
            shown,
            [Shown::Message {
                heading: "Bo — critique of Ada (round 1)".into(),
                text: "bo on ada".into()
            }]
        );
        assert_eq!(view.active().count(), 0, "recorded: no longer running");
        assert_eq!(
            view.event(&DebateEvent::MessageAppended {
                message: critique("m4", "ada", "bo"),
            }),
            [Shown::StreamEnd(None)]
        );
    }

    #[test]
    fn progress_reads_the_same_for_every_protocol() {
        use agon_protocol::{Progress, ProgressUnit};
        let mut view = LiveView::new(Blackboard::new(), false);
        assert_eq!(view.phase(), "starting");
        assert_eq!(view.planned(), None);
        for (unit, phase, line) in [
            (ProgressUnit::Aspect, "takes", "aspect 2/3 · miniround 2"),
            (ProgressUnit::Round, "critiques", "round 2/3 · critiques"),
            (ProgressUnit::Turn, "turn 2 of 3", "turn 2 of 3"),
        ] {
            view.progress(Progress {
                unit,
                at: 2,
                of: 3,
                miniround: 1,
                phase: phase.into(),
                contributions: Some(27),
            });
            assert_eq!(view.phase(), line);
            assert_eq!(view.planned(), Some(27));
        }
    }
}
