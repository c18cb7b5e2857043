//! What the report shows ([`ReportOptions`]) and why its empty sections
//! are empty ([`EmptySections`]).

use agon_core::{Blackboard, MessageKind, ReflectionTrigger};

/// How much the report shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportOptions {
    /// Show each contribution's model, latency and tokens.
    pub verbose: bool,
    /// The debate's reflection threshold (from its configuration), so an
    /// empty reflections section can say how close the trigger came.
    pub reflection_threshold: Option<u32>,
}

/// Why sections of the report are empty: each field holds the reason
/// for its section, `None` when the section has content (or, for the
/// structured-only sections, in a dialectic debate).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EmptySections {
    /// The position ledger.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
    /// Reflections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reflections: Option<String>,
    /// Crux cards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crux_cards: Option<String>,
    /// Closing statements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closings: Option<String>,
    /// The judge's synthesis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthesis: Option<String>,
}

/// The weights of the reflection trigger, as the report explains them.
fn trigger_weights() -> String {
    use agon_core::EpistemicWeights as W;
    format!(
        "disagreements ×{}, concessions ×{}, shifts ×{}",
        W::DISAGREEMENT,
        W::CONCESSION,
        W::SHIFT
    )
}

/// Why the sections of `bb`'s report that have nothing to show are empty.
pub fn empty_sections(bb: &Blackboard, options: ReportOptions) -> EmptySections {
    use agon_core::{AnalysisPart, StepId};
    let failed = |of: fn(&StepId) -> bool| bb.warnings().iter().filter(|w| of(&w.step)).count();
    let not_reached =
        || format!("not reached yet (the debate is {:?})", bb.status()).to_lowercase();
    let mut out = EmptySections::default();
    if bb
        .positions()
        .values()
        .all(|p| p.overall_stance.is_empty() && p.aspects.is_empty() && p.concessions.is_empty())
    {
        let analyses = failed(|s| {
            matches!(
                s,
                StepId::Analysis {
                    part: AnalysisPart::Combined | AnalysisPart::Position,
                    ..
                }
            )
        });
        out.ledger = Some(if analyses > 0 {
            format!("no position recorded: {analyses} analysis step(s) failed (see Warnings)")
        } else if bb.analyzed_turns().is_empty() {
            "no position recorded: no message was analysed".to_owned()
        } else {
            "no position recorded: the analyses found no stance to record".to_owned()
        });
    }
    if bb.protocol() != agon_core::ProtocolKind::Structured {
        return out;
    }
    if bb.reflections().is_empty() {
        let weight = bb.weight_since_reflection();
        let trigger = options.reflection_threshold.map(ReflectionTrigger::new);
        out.reflections = Some(if failed(|s| matches!(s, StepId::Reflection(_))) > 0 {
            "no reflection: the reflection step failed (see Warnings)".to_owned()
        } else {
            match trigger {
                Some(t) if t.fires_at(weight) => format!(
                    "no reflection: the trigger reached {weight} of {} only after the last aspect closed (it is checked when an aspect closes)",
                    t.threshold
                ),
                Some(t) => format!(
                    "no reflection: the trigger reached {weight} of {0} ({1}; it fires above {0})",
                    t.threshold,
                    trigger_weights()
                ),
                None => format!(
                    "no reflection: the trigger reached {weight} ({}), not above its threshold",
                    trigger_weights()
                ),
            }
        });
    }
    if bb.crux_cards().is_empty() {
        out.crux_cards = Some(if bb.claims().is_empty() {
            "no crux card: no claim was contested strongly enough to open".to_owned()
        } else if failed(|s| matches!(s, StepId::CruxCard(_))) > 0 {
            format!(
                "no crux card: {} card step(s) failed (see Warnings)",
                failed(|s| matches!(s, StepId::CruxCard(_)))
            )
        } else if bb.status() == agon_core::DebateStatus::Finished {
            "no crux card: no crux room reached its card".to_owned()
        } else {
            format!("no crux card yet: {}", not_reached())
        });
    }
    let has = |kind: MessageKind| bb.messages().iter().any(|m| m.kind == kind);
    if !has(MessageKind::Closing) {
        let skipped = bb.skipped_turns(|t| matches!(t, agon_core::TurnKey::Closing { .. }));
        out.closings = Some(if skipped > 0 {
            format!("no closing: {skipped} closing turn(s) were skipped (see Warnings)")
        } else {
            format!("no closing: {}", not_reached())
        });
    }
    if !has(MessageKind::Synthesis) {
        let judged = bb
            .personas()
            .iter()
            .any(|p| p.role == agon_core::PersonaRole::Judge);
        out.synthesis = Some(if !judged {
            "no synthesis: synthesis is off for this debate".to_owned()
        } else if bb.skipped_turns(|t| *t == agon_core::TurnKey::Synthesis) > 0 {
            "no synthesis: the judge's turn was skipped (see Warnings)".to_owned()
        } else {
            format!("no synthesis: {}", not_reached())
        });
    }
    out
}
