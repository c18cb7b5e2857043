//! Seed 004's perspective summaries as pure functions: which messages an
//! agent's summary covers, when it must summarize, the judge's final-round
//! filter, and two-level (debate-wide, per-agent) settings.

use agon_core::{Blackboard, DebateSummary, DialogueMessage, MessageKind, PersonaId, SummaryScope};
use serde::{Deserialize, Serialize};

/// Summarization settings in force for one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SummarizationSettings {
    /// Whether the agent summarizes at all.
    pub enabled: bool,
    /// Summarize when the perspective reaches this many characters (default 5000).
    pub threshold: usize,
    /// Maximum characters of a summary (default 2500).
    pub max_length: usize,
    /// Strategy name (default "length-based").
    pub method: String,
}

impl Default for SummarizationSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 5_000,
            max_length: 2_500,
            method: "length-based".to_owned(),
        }
    }
}

/// Per-agent overrides; `None` keeps the debate-wide value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SummarizationOverride {
    /// Overrides `enabled`.
    pub enabled: Option<bool>,
    /// Overrides `threshold`.
    pub threshold: Option<usize>,
    /// Overrides `max_length`.
    pub max_length: Option<usize>,
    /// Overrides `method`.
    pub method: Option<String>,
}

impl SummarizationSettings {
    /// The debate-wide settings with an agent's overrides applied.
    pub fn with_override(&self, agent: &SummarizationOverride) -> Self {
        Self {
            enabled: agent.enabled.unwrap_or(self.enabled),
            threshold: agent.threshold.unwrap_or(self.threshold),
            max_length: agent.max_length.unwrap_or(self.max_length),
            method: agent.method.clone().unwrap_or_else(|| self.method.clone()),
        }
    }
}

/// An agent's perspective: its own proposals, the critiques it received,
/// and its own refinements, in transcript order. A proposal carried over
/// from a refinement (it answers it, `reply_to`) repeats it and is left out.
pub fn agent_perspective<'a>(
    blackboard: &'a Blackboard,
    persona: &PersonaId,
) -> Vec<&'a DialogueMessage> {
    blackboard
        .messages()
        .iter()
        .filter(|m| match &m.kind {
            MessageKind::Proposal => &m.persona == persona && !m.is_carried_proposal(),
            MessageKind::Refinement => &m.persona == persona,
            MessageKind::Critique { target } => target == persona,
            _ => false,
        })
        .collect()
}

/// What an agent carries of its history: its latest perspective summary,
/// and its perspective since that summary (all of it without one).
pub fn history_since_summary<'a>(
    blackboard: &'a Blackboard,
    persona: &PersonaId,
) -> (Option<&'a DebateSummary>, Vec<&'a DialogueMessage>) {
    let summary = blackboard.latest_summary(&SummaryScope::Persona {
        persona: persona.clone(),
    });
    let after = summary.map_or(0, |s| s.span.end);
    let since = agent_perspective(blackboard, persona)
        .into_iter()
        .filter(|m| blackboard.message_index(&m.id).is_some_and(|i| i >= after))
        .collect();
    (summary, since)
}

/// Characters of the history an agent carries: its latest summary plus
/// its perspective since.
pub fn history_chars(blackboard: &Blackboard, persona: &PersonaId) -> usize {
    let (summary, since) = history_since_summary(blackboard, persona);
    summary.map_or(0, |s| s.text.chars().count()) + total_chars(&since)
}

/// Total characters of the messages' content.
pub fn total_chars(messages: &[&DialogueMessage]) -> usize {
    messages.iter().map(|m| m.content.chars().count()).sum()
}

/// Whether the agent must summarize its history before the next round:
/// the history it carries (its latest summary and its perspective since,
/// [`history_chars`]) reached the threshold. A summary folds the previous
/// one and what came after it, so each round's summary costs a bounded
/// input however long the debate.
pub fn needs_summary(
    blackboard: &Blackboard,
    persona: &PersonaId,
    settings: &SummarizationSettings,
) -> bool {
    settings.enabled && history_chars(blackboard, persona) >= settings.threshold
}

/// [`needs_summary`] as of the start of `round`: only the messages of
/// earlier rounds count, so the answer is the same before, during and
/// after the round (a summary due at a round's start may be written by the
/// previous round's analysis, which can land after the round began).
pub fn needs_summary_before(
    blackboard: &Blackboard,
    persona: &PersonaId,
    settings: &SummarizationSettings,
    round: u32,
) -> bool {
    settings.enabled && history_chars_before(blackboard, persona, round) >= settings.threshold
}

/// [`history_chars`] counting only the messages of rounds before `round`.
pub fn history_chars_before(blackboard: &Blackboard, persona: &PersonaId, round: u32) -> usize {
    let (summary, since) = history_since_summary(blackboard, persona);
    let earlier: Vec<&DialogueMessage> = since.into_iter().filter(|m| m.round < round).collect();
    summary.map_or(0, |s| s.text.chars().count()) + total_chars(&earlier)
}

/// The judge's view for synthesis: proposals and refinements of the final
/// round only (the highest round that has any message; proposals carried
/// over from the previous round's refinements are left out).
pub fn judge_final_round(blackboard: &Blackboard) -> Vec<&DialogueMessage> {
    let Some(last) = blackboard.messages().iter().map(|m| m.round).max() else {
        return Vec::new();
    };
    blackboard
        .messages()
        .iter()
        .filter(|m| {
            m.round == last
                && match m.kind {
                    // A carried-over proposal repeats the previous refinement.
                    MessageKind::Proposal => !m.is_carried_proposal(),
                    MessageKind::Refinement => true,
                    _ => false,
                }
        })
        .collect()
}

/// Whether the judge must summarize the final round before synthesis.
pub fn judge_needs_summary(blackboard: &Blackboard, settings: &SummarizationSettings) -> bool {
    settings.enabled && total_chars(&judge_final_round(blackboard)) >= settings.threshold
}

#[cfg(test)]
mod tests {
    use agon_core::{DebateEvent, DialogueMessage, MessageKind, Persona, Topic};
    use chrono::DateTime;

    use super::*;

    fn message(
        id: &str,
        persona: &str,
        kind: MessageKind,
        round: u32,
        chars: usize,
    ) -> DebateEvent {
        DebateEvent::MessageAppended {
            message: DialogueMessage {
                id: id.into(),
                persona: persona.into(),
                kind,
                aspect: None,
                round,
                miniround: None,
                crux_room: None,
                content: "x".repeat(chars),
                time: DateTime::UNIX_EPOCH,
                reply_to: None,
                meta: None,
            },
        }
    }

    fn board() -> Blackboard {
        let critique = |target: &str| MessageKind::Critique {
            target: target.into(),
        };
        let events = vec![
            DebateEvent::DebateStarted {
                debate: "d".into(),
                topic: Topic::new("Design a task queue"),
                aspects: vec![],
                personas: vec![
                    Persona::debater("arch", "Architect", "c", "v"),
                    Persona::debater("perf", "Performance", "c", "v"),
                ],
                time: DateTime::UNIX_EPOCH,
                protocol: None,
            },
            message("1", "arch", MessageKind::Proposal, 1, 2_000),
            message("2", "perf", MessageKind::Proposal, 1, 1_000),
            message("3", "perf", critique("arch"), 1, 1_500),
            message("4", "arch", critique("perf"), 1, 700),
            message("5", "arch", MessageKind::Refinement, 1, 1_600),
            message("6", "arch", MessageKind::Deliberation, 1, 9_000),
            message("7", "arch", MessageKind::Proposal, 2, 100),
            message("8", "perf", MessageKind::Refinement, 2, 200),
            message("9", "perf", critique("arch"), 2, 300),
        ];
        Blackboard::replay(&events).unwrap()
    }

    #[test]
    fn perspective_is_own_proposals_received_critiques_and_own_refinements() {
        let board = board();
        let ids: Vec<&str> = agent_perspective(&board, &"arch".into())
            .iter()
            .map(|m| m.id.as_str())
            .collect();
        assert_eq!(ids, ["1", "3", "5", "7", "9"]);
        assert_eq!(
            total_chars(&agent_perspective(&board, &"arch".into())),
            5_500
        );
    }

    #[test]
    fn threshold_and_per_agent_overrides_decide_summarization() {
        let board = board();
        let debate = SummarizationSettings::default();
        assert!(
            needs_summary(&board, &"arch".into(), &debate),
            "5,500 chars ≥ 5,000"
        );
        assert!(
            !needs_summary(&board, &"perf".into(), &debate),
            "perf's perspective is 2,000 chars"
        );
        let lenient = debate.with_override(&SummarizationOverride {
            threshold: Some(8_000),
            ..Default::default()
        });
        assert_eq!(lenient.threshold, 8_000);
        assert_eq!(
            lenient.max_length, 2_500,
            "unset fields keep the debate-wide value"
        );
        assert!(!needs_summary(&board, &"arch".into(), &lenient));
        let off = debate.with_override(&SummarizationOverride {
            enabled: Some(false),
            ..Default::default()
        });
        assert!(!needs_summary(&board, &"arch".into(), &off));
    }

    #[test]
    fn judge_sees_final_round_proposals_and_refinements_only() {
        let board = board();
        let ids: Vec<&str> = judge_final_round(&board)
            .iter()
            .map(|m| m.id.as_str())
            .collect();
        assert_eq!(ids, ["7", "8"]);
        assert!(!judge_needs_summary(
            &board,
            &SummarizationSettings::default()
        ));
        let strict = SummarizationSettings {
            threshold: 300,
            ..Default::default()
        };
        assert!(judge_needs_summary(&board, &strict));
    }

    #[test]
    fn a_summary_folds_the_history_before_it_and_carried_proposals_do_not_count() {
        let mut board = board();
        // arch's history: 5,500 chars (see above); a summary at index 9
        // covers all of it.
        board
            .apply(&DebateEvent::SummaryRecorded {
                summary: DebateSummary {
                    scope: SummaryScope::Persona {
                        persona: "arch".into(),
                    },
                    span: agon_core::MessageSpan { start: 0, end: 9 },
                    text: "s".repeat(1_000),
                    before_chars: 5_500,
                    after_chars: 1_000,
                    method: "length-based".into(),
                    round: Some(3),
                    temperature_centi: None,
                    latency_ms: None,
                    tokens: None,
                    model: None,
                    time: DateTime::UNIX_EPOCH,
                },
            })
            .unwrap();
        let settings = SummarizationSettings::default();
        assert_eq!(history_chars(&board, &"arch".into()), 1_000);
        assert!(!needs_summary(&board, &"arch".into(), &settings));
        let mut carried = DialogueMessage {
            id: "10".into(),
            persona: "arch".into(),
            kind: MessageKind::Proposal,
            aspect: None,
            round: 3,
            miniround: None,
            crux_room: None,
            content: "x".repeat(3_000),
            time: DateTime::UNIX_EPOCH,
            reply_to: Some("5".into()),
            meta: None,
        };
        board
            .apply(&DebateEvent::MessageAppended {
                message: carried.clone(),
            })
            .unwrap();
        assert_eq!(history_chars(&board, &"arch".into()), 1_000, "carried over");
        carried.id = "11".into();
        carried.kind = MessageKind::Critique {
            target: "arch".into(),
        };
        carried.persona = "perf".into();
        carried.reply_to = None;
        carried.content = "x".repeat(4_000);
        board
            .apply(&DebateEvent::MessageAppended { message: carried })
            .unwrap();
        let (summary, since) = history_since_summary(&board, &"arch".into());
        assert_eq!(summary.unwrap().round, Some(3));
        assert_eq!(since.len(), 1);
        assert!(
            needs_summary(&board, &"arch".into(), &settings),
            "1,000 + 4,000"
        );
    }

    #[test]
    fn settings_deserialize_from_camel_case_with_defaults() {
        let settings: SummarizationSettings =
            serde_json::from_str(r#"{"threshold": 8000}"#).unwrap();
        assert_eq!(
            settings,
            SummarizationSettings {
                threshold: 8_000,
                ..Default::default()
            }
        );
        let agent: SummarizationOverride = serde_json::from_str(r#"{"maxLength": 1000}"#).unwrap();
        assert_eq!(agent.max_length, Some(1_000));
    }
}
