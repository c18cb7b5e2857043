//! What is remembered (seed 000, Phase 5): position snapshots when a
//! persona's position changes, reflections, crux cards, and messages with
//! importance ≥ 7. Pure: a [`Harvester`] folds the debate's events (the same
//! log the blackboard is folded from) and yields [`MemoryDraft`]s with
//! deterministic ids, so harvesting a resumed debate again stores nothing twice.
//!
//! Message importance comes from the extraction that followed the message
//! (the position events its analysis recorded, which precede its
//! `turn_analyzed` marker): base 3; +4 when the speaker conceded or shifted;
//! +2 when it brought new evidence; +1 for a changed overall stance; +1 when
//! the analysis judged a disagreement involving the speaker; +1 for a crux
//! room message; clamped to 1-10. So a concession or a shift always makes a
//! message memorable (7), and so does new evidence with a stance change and
//! a live disagreement.

use std::collections::BTreeMap;

use agon_core::{
    ApplyError, Blackboard, DebateEvent, DebateId, DialogueMessage, PersonaId, SummaryScope,
};
use chrono::{DateTime, Utc};

use crate::index::DebateInfo;
use crate::record::{MemoryKind, MemoryMeta};
use crate::validity::subject_key;

/// Messages at or above this importance are remembered.
pub const MESSAGE_THRESHOLD: u8 = 7;
/// Importance of a crux card.
pub const CRUX_CARD_IMPORTANCE: u8 = 8;
/// Longest memory text kept (characters).
pub const MAX_CONTENT_CHARS: usize = 1_200;
/// Importance of a long session's message remembered when a rolling
/// summary compressed it (the middle of the scale: nothing judged it).
pub const SESSION_MESSAGE_IMPORTANCE: u8 = 5;

/// A memory before it is embedded: its metadata, turned into a
/// [`MemoryRecord`](crate::MemoryRecord) by [`MemoryMeta::into_record`].
pub type MemoryDraft = MemoryMeta;

/// What the position events of one analysis said about a persona.
#[derive(Debug, Default, Clone)]
struct Change {
    conceded_or_shifted: bool,
    evidence: bool,
    stance: bool,
    /// Aspects the persona took a (new) position on.
    positioned: Vec<agon_core::AspectId>,
}

/// Folds debate events into memory drafts.
#[derive(Debug, Default)]
pub struct Harvester {
    board: Blackboard,
    pending: BTreeMap<PersonaId, Change>,
    last_time: Option<DateTime<Utc>>,
    /// The text of each persona's latest snapshot on each subject (the
    /// topic, each aspect): unchanged ones are skipped.
    snapshots: BTreeMap<(PersonaId, String), String>,
    /// Messages before this index were remembered when a rolling summary
    /// compressed them.
    rolled: usize,
    /// Messages already remembered (for their importance), not drafted again.
    remembered: std::collections::HashSet<agon_core::MessageId>,
}

fn truncate(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(MAX_CONTENT_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// Importance of a message from what its analysis recorded.
pub fn message_importance(
    conceded_or_shifted: bool,
    evidence: bool,
    stance: bool,
    disputed: bool,
    crux: bool,
) -> u8 {
    let score = 3
        + 4 * u8::from(conceded_or_shifted)
        + 2 * u8::from(evidence)
        + u8::from(stance)
        + u8::from(disputed)
        + u8::from(crux);
    score.clamp(1, 10)
}

impl Harvester {
    /// A harvester at the start of a log.
    pub fn new() -> Self {
        Self::default()
    }

    /// The blackboard as of the last event observed.
    pub fn board(&self) -> &Blackboard {
        &self.board
    }

    /// The debate's topic and start, once `debate_started` was observed.
    pub fn debate_info(&self) -> Option<DebateInfo> {
        Some(DebateInfo {
            debate: self.board.debate()?.clone(),
            topic: self.board.topic()?.question.clone(),
            started: self.board.started_at()?,
        })
    }

    fn now(&self) -> DateTime<Utc> {
        self.last_time
            .or_else(|| self.board.started_at())
            .unwrap_or_default()
    }

    /// Applies `event` and returns the drafts it completes.
    pub fn observe(&mut self, event: &DebateEvent) -> Result<Vec<MemoryDraft>, ApplyError> {
        self.board.apply(event)?;
        let mut out = Vec::new();
        match event {
            DebateEvent::MessageAppended { message } => {
                self.flush_positions(&mut out);
                self.last_time = Some(message.time);
            }
            DebateEvent::PositionUpdated {
                persona,
                overall_stance,
                aspect,
                ..
            } => {
                let c = self.pending.entry(persona.clone()).or_default();
                c.stance |= overall_stance.is_some();
                c.evidence |= aspect.as_ref().is_some_and(|a| !a.evidence.is_empty());
                if let Some(a) = aspect.as_ref().filter(|a| a.position.is_some()) {
                    c.positioned.push(a.aspect.clone());
                }
            }
            DebateEvent::ConcessionRecorded { persona, .. }
            | DebateEvent::ShiftRecorded { persona, .. } => {
                self.pending
                    .entry(persona.clone())
                    .or_default()
                    .conceded_or_shifted = true;
            }
            DebateEvent::AgreementRecorded { persona, .. }
            | DebateEvent::DisagreementRecorded { persona, .. } => {
                self.pending.entry(persona.clone()).or_default();
            }
            DebateEvent::TurnAnalyzed {
                message,
                disagreements,
                importance: rated,
                contradiction,
                ..
            } => {
                if let Some(m) = self.board.message(message).cloned() {
                    let change = self.pending.get(&m.persona).cloned().unwrap_or_default();
                    let disputed = disagreements
                        .iter()
                        .any(|d| d.personas.contains(&m.persona));
                    // The analysis model's rating when it gave one (seed
                    // 000), else the heuristic over what the analysis found.
                    let importance = rated.map(|r| r.clamp(1, 10)).unwrap_or_else(|| {
                        message_importance(
                            change.conceded_or_shifted,
                            change.evidence,
                            change.stance,
                            disputed,
                            m.kind.is_crux(),
                        )
                    });
                    if importance >= MESSAGE_THRESHOLD {
                        let mut draft = self.message_draft(&m, importance);
                        draft.subject = self.stance_subject(&m, &change, contradiction.is_some());
                        out.push(draft);
                        self.remembered.insert(m.id.clone());
                    }
                }
                self.flush_positions(&mut out);
            }
            DebateEvent::ReflectionAdded { reflection } => {
                self.flush_positions(&mut out);
                let about: Vec<PersonaId> = if reflection.about.is_empty() {
                    self.board.debaters().map(|p| p.id.clone()).collect()
                } else {
                    reflection.about.clone()
                };
                for persona in about {
                    out.push(self.draft(
                        format!("reflection/{}/{persona}", reflection.id),
                        persona,
                        truncate(&reflection.content),
                        MemoryKind::Reflection,
                        reflection.importance.clamp(1, 10),
                        reflection.round,
                    ));
                }
            }
            // A long session's rolling summary compressed these messages
            // out of the verbatim window: each is remembered whole, so a
            // turn thousands of messages later can recall it (seed 001's
            // long-term tier; seed 000 Phase 5).
            DebateEvent::SummaryRecorded { summary } if summary.scope == SummaryScope::Rolling => {
                self.flush_positions(&mut out);
                let end = summary.span.end.min(self.board.messages().len());
                for i in self.rolled.max(summary.span.start)..end {
                    let m = &self.board.messages()[i];
                    if !self.remembered.contains(&m.id) {
                        out.push(self.message_draft(m, SESSION_MESSAGE_IMPORTANCE));
                    }
                }
                self.rolled = self.rolled.max(end);
            }
            DebateEvent::CruxCardAdded { card } => {
                self.flush_positions(&mut out);
                let mut text = format!("Crux: {}", card.question.trim());
                for p in &card.positions {
                    text.push_str(&format!(
                        " {} — {}: {}",
                        self.board.persona_name(&p.persona),
                        p.stance.label(),
                        p.reasoning.trim()
                    ));
                }
                text.push_str(&format!(
                    " ({} disagreement; {})",
                    card.disagreement_type.label(),
                    card.diagnosis.trim()
                ));
                let text = truncate(&text);
                for p in &card.positions {
                    out.push(self.draft(
                        format!("crux_card/{}/{}", card.id, p.persona),
                        p.persona.clone(),
                        text.clone(),
                        MemoryKind::CruxCard,
                        CRUX_CARD_IMPORTANCE,
                        card.round,
                    ));
                }
            }
            _ => self.flush_positions(&mut out),
        }
        Ok(out)
    }

    fn draft(
        &self,
        suffix: String,
        persona: PersonaId,
        content: String,
        kind: MemoryKind,
        importance: u8,
        round: u32,
    ) -> MemoryDraft {
        let debate = self
            .board
            .debate()
            .cloned()
            .unwrap_or_else(|| DebateId::new("?"));
        MemoryDraft {
            id: format!("{debate}/{suffix}"),
            debate,
            persona,
            content,
            kind,
            importance,
            round,
            created: self.now(),
            subject: None,
        }
    }

    /// The subject a message takes a stance on, when its analysis says it
    /// does: its aspect when the speaker took a position on it, conceded,
    /// shifted or contradicted itself there; the topic when the speaker's
    /// overall stance changed (or it changed without an aspect). `None` for
    /// a message that took no stance (evidence, a question): it never goes
    /// out of date.
    fn stance_subject(
        &self,
        m: &DialogueMessage,
        change: &Change,
        contradicted: bool,
    ) -> Option<String> {
        let changed = change.conceded_or_shifted || contradicted;
        let aspect = m
            .aspect
            .as_ref()
            .filter(|a| changed || change.positioned.contains(a));
        if let Some(aspect) = aspect {
            let label = self
                .board
                .aspect(aspect)
                .map_or_else(|| aspect.to_string(), |a| a.label.clone());
            return subject_key(&label);
        }
        if changed || change.stance {
            return self.board.topic().and_then(|t| subject_key(&t.question));
        }
        None
    }

    fn message_draft(&self, m: &DialogueMessage, importance: u8) -> MemoryDraft {
        let aspect = m
            .aspect
            .as_ref()
            .and_then(|a| self.board.aspect(a))
            .map(|a| format!(" on {}", a.label))
            .unwrap_or_default();
        let mut d = self.draft(
            format!("message/{}", m.id),
            m.persona.clone(),
            truncate(&format!(
                "{} ({}{aspect}): {}",
                self.board.persona_name(&m.persona),
                m.kind.label(),
                m.content.trim()
            )),
            MemoryKind::Message,
            importance,
            m.round,
        );
        d.created = m.time;
        d
    }

    fn flush_positions(&mut self, out: &mut Vec<MemoryDraft>) {
        let pending = std::mem::take(&mut self.pending);
        let n = self.board.events_applied();
        let topic = self
            .board
            .topic()
            .and_then(|t| subject_key(&t.question))
            .unwrap_or_default();
        for (persona, change) in pending {
            let Some(state) = self.board.position(&persona) else {
                continue;
            };
            let name = self.board.persona_name(&persona).to_owned();
            let round = state.last_updated_round;
            let importance = if change.conceded_or_shifted { 7 } else { 5 };
            // The stance on the topic, with the latest concession and shift.
            let mut stance = format!(
                "{name}'s position (round {round}): {}",
                state.overall_stance.trim()
            );
            if let Some(c) = state.concessions.last() {
                stance.push_str(&format!(" Conceded: {}", c.text.trim()));
            }
            if let Some(s) = state.shifts.last() {
                stance.push_str(&format!(" Shifted: {}", s.text.trim()));
            }
            // Nothing to remember of the topic before a stance, a
            // concession or a shift is recorded.
            let said = !state.overall_stance.trim().is_empty()
                || !state.concessions.is_empty()
                || !state.shifts.is_empty();
            let mut snapshots = Vec::new();
            if said {
                snapshots.push((format!("position/{persona}/{n}"), topic.clone(), stance));
            }
            // The position on each aspect, its subject the aspect's label
            // (so the same aspect in a later debate continues it).
            for (aspect, pos) in &state.aspects {
                let label = self
                    .board
                    .aspect(aspect)
                    .map(|a| a.label.clone())
                    .unwrap_or_else(|| aspect.to_string());
                let mut text = format!(
                    "{name}'s position on {label} (round {round}): {}",
                    pos.position.trim()
                );
                if !pos.evidence.is_empty() {
                    text.push_str(&format!(" (evidence: {})", pos.evidence.join("; ")));
                }
                let subject = subject_key(&label).unwrap_or_else(|| aspect.to_string());
                snapshots.push((format!("position/{persona}/{n}/{aspect}"), subject, text));
            }
            for (suffix, subject, text) in snapshots {
                let text = truncate(&text);
                let key = (persona.clone(), subject.clone());
                if self.snapshots.get(&key) == Some(&text) {
                    continue;
                }
                self.snapshots.insert(key, text.clone());
                let mut draft = self.draft(
                    suffix,
                    persona.clone(),
                    text,
                    MemoryKind::Position,
                    importance,
                    round,
                );
                draft.subject = (!subject.is_empty()).then_some(subject);
                out.push(draft);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::{DialogueMessage, JudgedDisagreement, MessageKind};

    fn harvest(events: &[DebateEvent]) -> Vec<MemoryDraft> {
        let mut h = Harvester::new();
        events
            .iter()
            .flat_map(|e| h.observe(e).expect("valid log"))
            .collect()
    }

    #[test]
    fn synthetic_debate_yields_positions_reflections_and_cards() {
        let events = agon_testkit::synthetic::debate(3, 400);
        let drafts = harvest(&events);
        let count = |k: MemoryKind| drafts.iter().filter(|d| d.kind == k).count();
        assert!(
            count(MemoryKind::Position) >= 100,
            "a snapshot per position change"
        );
        assert!(count(MemoryKind::Reflection) >= 1);
        assert!(count(MemoryKind::CruxCard) >= 2, "one per party");
        // No analysis markers in this log: no message is rated.
        assert_eq!(count(MemoryKind::Message), 0);
        let mut ids: Vec<&str> = drafts.iter().map(|d| d.id.as_str()).collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "ids are unique");
        assert!(drafts.iter().all(|d| (1..=10).contains(&d.importance)));
        assert!(drafts.iter().all(|d| !d.content.trim().is_empty()));
        // Deterministic: a replay (a resumed debate) gives the same drafts.
        assert_eq!(harvest(&events), drafts);
        let info = {
            let mut h = Harvester::new();
            h.observe(&events[0]).unwrap();
            h.debate_info().unwrap()
        };
        assert!(info.topic.contains("Bitcoin"));
    }

    /// A synthetic log cut after its first message (started, aspect,
    /// message), that message, and a second message saying `quiet`.
    fn first_message_and_a_quiet_one(
        quiet: &str,
    ) -> (Vec<DebateEvent>, DialogueMessage, DialogueMessage) {
        let mut events = agon_testkit::synthetic::debate(2, 2);
        events.truncate(3);
        let DebateEvent::MessageAppended { message } = events[2].clone() else {
            panic!("third event is the first message")
        };
        let quiet = DialogueMessage {
            id: "quiet".into(),
            content: quiet.into(),
            ..message.clone()
        };
        (events, message, quiet)
    }

    #[test]
    fn a_message_is_remembered_when_its_analysis_records_a_concession() {
        let (mut events, message, quiet) = first_message_and_a_quiet_one("Nothing new here.");
        events.extend([
            DebateEvent::ConcessionRecorded {
                persona: message.persona.clone(),
                text: "the covenant point".into(),
                round: 1,
            },
            DebateEvent::TurnAnalyzed {
                message: message.id.clone(),
                disagreements: vec![JudgedDisagreement::new(
                    message.persona.clone(),
                    "p1".into(),
                    "treasury risk",
                    90,
                )],
                importance: None,
                contradiction: None,
                window_end: true,
            },
            DebateEvent::MessageAppended {
                message: quiet.clone(),
            },
            DebateEvent::TurnAnalyzed {
                message: quiet.id.clone(),
                disagreements: vec![],
                importance: None,
                contradiction: None,
                window_end: true,
            },
        ]);
        let drafts = harvest(&events);
        let messages: Vec<&MemoryDraft> = drafts
            .iter()
            .filter(|d| d.kind == MemoryKind::Message)
            .collect();
        assert_eq!(messages.len(), 1, "{drafts:#?}");
        assert_eq!(messages[0].importance, 8, "3 + 4 conceded + 1 disputed");
        assert_eq!(messages[0].id, format!("synthetic/message/{}", message.id));
        assert_eq!(messages[0].created, message.time);
        assert!(messages[0].content.contains(&message.content));
        let positions: Vec<&MemoryDraft> = drafts
            .iter()
            .filter(|d| d.kind == MemoryKind::Position)
            .collect();
        assert_eq!(positions.len(), 1);
        assert_eq!(positions[0].importance, 7);
        assert!(
            positions[0]
                .content
                .contains("Conceded: the covenant point")
        );
        assert!(matches!(quiet.kind, MessageKind::Take));
    }

    /// A rolling summary at event `i` of `events` covering `[start, end)`.
    fn rolling(start: usize, end: usize) -> DebateEvent {
        DebateEvent::SummaryRecorded {
            summary: agon_core::DebateSummary {
                scope: SummaryScope::Rolling,
                span: agon_core::MessageSpan { start, end },
                text: "The group weighed the options.".into(),
                before_chars: 0,
                after_chars: 0,
                method: "rolling".into(),
                round: None,
                temperature_centi: None,
                latency_ms: None,
                tokens: None,
                model: None,
                time: agon_testkit::synthetic::small::t(5),
            },
        }
    }

    #[test]
    fn a_rolling_summary_remembers_each_message_it_compressed_once() {
        let (events, first, quiet) = first_message_and_a_quiet_one("The depot code is K-7431.");
        let third = DialogueMessage {
            id: "third".into(),
            content: "Night buses need drivers.".into(),
            ..quiet.clone()
        };
        let mut events = events;
        events.extend([
            DebateEvent::MessageAppended {
                message: quiet.clone(),
            },
            rolling(0, 1),
            DebateEvent::MessageAppended {
                message: third.clone(),
            },
            // The next summary restates the whole span: only what is new
            // is remembered.
            rolling(0, 2),
            rolling(0, 2),
        ]);
        let drafts = harvest(&events);
        let messages: Vec<(&str, u8)> = drafts
            .iter()
            .filter(|d| d.kind == MemoryKind::Message)
            .map(|d| (d.content.as_str(), d.importance))
            .collect();
        assert_eq!(messages.len(), 2, "{messages:#?}");
        assert!(messages[0].0.ends_with(&first.content), "{messages:?}");
        assert!(messages[1].0.ends_with("The depot code is K-7431."));
        assert!(
            messages
                .iter()
                .all(|(_, i)| *i == SESSION_MESSAGE_IMPORTANCE)
        );
        // The message the window still shows verbatim is not remembered.
        assert!(!messages.iter().any(|(c, _)| c.contains("Night buses")));
    }

    #[test]
    fn a_message_remembered_for_its_importance_is_not_drafted_again() {
        let (mut events, message, _) = first_message_and_a_quiet_one("unused");
        events.extend([
            DebateEvent::ConcessionRecorded {
                persona: message.persona.clone(),
                text: "the covenant point".into(),
                round: 1,
            },
            DebateEvent::TurnAnalyzed {
                message: message.id.clone(),
                disagreements: vec![],
                importance: Some(9),
                contradiction: None,
                window_end: true,
            },
            rolling(0, 1),
        ]);
        let drafts = harvest(&events);
        let messages: Vec<u8> = drafts
            .iter()
            .filter(|d| d.kind == MemoryKind::Message)
            .map(|d| d.importance)
            .collect();
        assert_eq!(messages, vec![9]);
    }

    #[test]
    fn the_analysis_models_rating_overrides_the_heuristic() {
        let (mut events, message, quiet) =
            first_message_and_a_quiet_one("A quiet message the analysis rates highly.");
        events.extend([
            // A concession (heuristic 7), rated 2 by the analysis: not kept.
            DebateEvent::ConcessionRecorded {
                persona: message.persona.clone(),
                text: "the covenant point".into(),
                round: 1,
            },
            DebateEvent::TurnAnalyzed {
                message: message.id.clone(),
                disagreements: vec![],
                importance: Some(2),
                contradiction: None,
                window_end: true,
            },
            // Nothing found (heuristic 3), rated 9: kept with 9.
            DebateEvent::MessageAppended {
                message: quiet.clone(),
            },
            DebateEvent::TurnAnalyzed {
                message: quiet.id.clone(),
                disagreements: vec![],
                importance: Some(9),
                contradiction: None,
                window_end: true,
            },
        ]);
        let drafts = harvest(&events);
        let messages: Vec<&MemoryDraft> = drafts
            .iter()
            .filter(|d| d.kind == MemoryKind::Message)
            .collect();
        assert_eq!(messages.len(), 1, "{drafts:#?}");
        assert_eq!(messages[0].id, "synthetic/message/quiet");
        assert_eq!(messages[0].importance, 9);
    }

    #[test]
    fn importance_rule() {
        assert_eq!(message_importance(false, false, false, false, false), 3);
        assert_eq!(message_importance(true, false, false, false, false), 7);
        assert_eq!(message_importance(false, true, true, true, false), 7);
        assert_eq!(message_importance(false, true, true, false, false), 6);
        assert_eq!(message_importance(true, true, true, true, true), 10);
    }
}
