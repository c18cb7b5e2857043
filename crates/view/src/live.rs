//! One-line notices of a running debate's events, the same for every live
//! view (the terminal today, a web page next) and every protocol: each
//! view folds the events it receives into a blackboard and asks
//! [`notice`] what to say about the latest one.

use agon_core::{Blackboard, DebateEvent, ProtocolKind, SummaryScope};

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
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_core::synthetic::small;

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
}
