//! A downstream project's use of agon-context alone: its own agents'
//! conversation kept as Agon's events, and the budgeted context each agent
//! is shown before it speaks; no store, no model, no orchestrator.

use agon_context::{ContextBudget, ContextError, ContextExtras, Phase, assemble};
use agon_core::{
    AspectId, Blackboard, DebateAspect, DebateEvent, DialogueMessage, MessageKind, Persona, Topic,
};

/// A two-agent conversation on one aspect: the start, and `lines` said in
/// turn (the first by `ada`, the next by `bo`, …).
pub fn conversation(lines: &[&str]) -> Result<Blackboard, agon_core::ApplyError> {
    let aspect = AspectId::from("budget");
    let mut board = Blackboard::new();
    board.apply(&DebateEvent::DebateStarted {
        debate: "project-1".into(),
        topic: Topic::new("How should the city spend its transport budget?"),
        aspects: vec![DebateAspect::new(
            "budget",
            "Budget",
            "Where the money goes.",
        )],
        personas: vec![
            Persona::debater("ada", "Ada", "Cycling advocate.", "brisk"),
            Persona::debater("bo", "Bo", "Bus operator.", "calm"),
        ],
        time: chrono::DateTime::UNIX_EPOCH,
        protocol: None,
    })?;
    board.apply(&DebateEvent::AspectStarted {
        aspect: aspect.clone(),
        round: 1,
    })?;
    for (i, line) in lines.iter().enumerate() {
        let speaker = if i % 2 == 0 { "ada" } else { "bo" };
        board.apply(&DebateEvent::MessageAppended {
            message: DialogueMessage {
                id: format!("m{i}").into(),
                persona: speaker.into(),
                kind: MessageKind::Take,
                aspect: Some(aspect.clone()),
                round: 1,
                miniround: Some(u32::try_from(i / 2).unwrap_or(u32::MAX)),
                crux_room: None,
                content: (*line).to_owned(),
                time: chrono::DateTime::UNIX_EPOCH,
                reply_to: None,
                meta: None,
            },
        })?;
    }
    Ok(board)
}

/// What `agent` is shown for its next take, within `tokens`.
pub fn view_of(board: &Blackboard, agent: &str, tokens: usize) -> Result<String, ContextError> {
    let phase = Phase::Take {
        aspect: "budget".into(),
        miniround: 1,
    };
    let budget = ContextBudget::new(tokens)?;
    let context = assemble(board, agent, &phase, budget, &ContextExtras::default())?;
    Ok(context.text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn each_agent_sees_the_other_within_its_budget() {
        let board = super::conversation(&[
            "Protected bike lanes cost a tenth of a tram line per kilometre.",
            "Buses carry four times the riders of the bike lanes on the ring road.",
        ])
        .unwrap();
        let ada = super::view_of(&board, "Ada", 800).unwrap();
        assert!(ada.contains("Buses carry four times the riders"), "{ada}");
        let tokens = agon_context::TiktokenCounter::default();
        assert!(agon_context::TokenCounter::count(&tokens, &ada) <= 800);
        // A budget too small for the fixed parts is an error, not a cut.
        assert!(super::view_of(&board, "Bo", 10).is_err());
    }
}
