//! The start of a debate: the `debate_started` event.

use agon_core::extraction::{AspectPlan, Validated};
use agon_core::{DebateAspect, DebateEvent, DebateId};
use chrono::{DateTime, Utc};

use crate::step::{AspectSource, Start};

/// Aspects from (label, description) pairs, with ids `aspect-1`,
/// `aspect-2`, … in order (labels and descriptions trimmed).
pub fn numbered_aspects<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<DebateAspect> {
    pairs
        .into_iter()
        .enumerate()
        .map(|(i, (label, description))| {
            DebateAspect::new(
                format!("aspect-{}", i + 1),
                label.trim(),
                description.trim(),
            )
        })
        .collect()
}

/// The aspects the judge planned, numbered.
pub fn aspects_from_plan(plan: &Validated<AspectPlan>) -> Vec<DebateAspect> {
    numbered_aspects(
        plan.value()
            .aspects
            .iter()
            .map(|a| (a.label.as_str(), a.description.as_str())),
    )
}

/// The `debate_started` event of `start`; `planned` holds the judge's
/// aspects when the start asked for planning (ignored otherwise).
pub fn start_event(
    debate: &DebateId,
    start: &Start,
    planned: Option<Vec<DebateAspect>>,
    time: DateTime<Utc>,
) -> DebateEvent {
    let aspects = match &start.aspects {
        AspectSource::Configured(aspects) => aspects.clone(),
        AspectSource::Planned { .. } => planned.unwrap_or_default(),
    };
    DebateEvent::DebateStarted {
        debate: debate.clone(),
        topic: start.topic.clone(),
        aspects,
        personas: start.personas.clone(),
        time,
    }
}
