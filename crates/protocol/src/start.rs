//! The start of a debate: the `debate_started` event.

use agon_core::{DebateAspect, DebateEvent, DebateId, Persona, ProtocolKind, StepId};
use agon_extract::{AspectPlan, PersonaCast, Validated};
use chrono::{DateTime, Utc};

use crate::turn::{AspectSource, Start};

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

/// A persona id from a name: lower case, runs of anything but letters and
/// digits as `-` (`"Dr. Lena Ruiz"` → `dr--lena-ruiz`).
pub fn persona_slug(name: &str) -> String {
    let s: String = name
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    s.trim_matches('-').to_owned()
}

/// Debaters from `(name, contract, voice)` triples, with ids slugged from
/// their names (made unique with `-2`, `-3`, … and never one of `taken`).
fn debaters<'a>(
    triples: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    taken: &[Persona],
) -> Vec<Persona> {
    let mut out: Vec<Persona> = Vec::new();
    for (name, contract, voice) in triples {
        let base = match persona_slug(name) {
            s if s.is_empty() => "persona".to_owned(),
            s => s,
        };
        let used = |id: &str| out.iter().chain(taken).any(|p| p.id.as_str() == id);
        let mut id = base.clone();
        let mut n = 2;
        while used(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        out.push(Persona::debater(
            id,
            name.trim(),
            contract.trim(),
            voice.trim(),
        ));
    }
    out
}

/// The debaters a model cast for the topic, before the start's other
/// personas (`taken`: their ids are kept clear).
pub fn personas_from_cast(cast: &Validated<PersonaCast>, taken: &[Persona]) -> Vec<Persona> {
    debaters(
        cast.value()
            .personas
            .iter()
            .map(|p| (p.name.as_str(), p.contract.as_str(), p.voice.as_str())),
        taken,
    )
}

/// Topic-neutral debaters, for when casting fails: an advocate, a skeptic
/// and a pragmatist first, then an analyst, an ethicist and a historian
/// (`count` of them, 2 to 6). Never another topic's cast.
pub fn neutral_personas(count: usize, taken: &[Persona]) -> Vec<Persona> {
    const NEUTRAL: [(&str, &str, &str); 6] = [
        (
            "Advocate",
            "Argues for the proposal: its strongest benefits and the evidence for them.",
            "confident, concrete",
        ),
        (
            "Skeptic",
            "Argues against the proposal: its costs, risks and the evidence it would fail.",
            "probing, precise",
        ),
        (
            "Pragmatist",
            "Looks for what would work in practice: trade-offs, conditions and compromises.",
            "calm, practical",
        ),
        (
            "Analyst",
            "Weighs the data on both sides and asks what the numbers actually show.",
            "dry, numbers-first",
        ),
        (
            "Ethicist",
            "Asks who gains, who pays and whether it is fair to those with the least say.",
            "measured, principled",
        ),
        (
            "Historian",
            "Compares with what happened when similar measures were tried elsewhere.",
            "storytelling, careful",
        ),
    ];
    debaters(
        NEUTRAL.into_iter().take(count.clamp(2, NEUTRAL.len())),
        taken,
    )
}

/// The aspects a model planned for a start that asked for `count`, and the
/// events to append right after `debate_started`: the repairs validation
/// made (`output_repaired`). An unusable plan is an error (the debate
/// cannot start without aspects).
pub fn aspects_from_output(
    count: usize,
    output: crate::ModelOutput,
) -> Result<(Vec<DebateAspect>, Vec<DebateEvent>), crate::ExtractFailure> {
    let plan = crate::extract(output, |p: AspectPlan| p.validate(count))?;
    let notes = plan.notes().to_vec();
    let after = if notes.is_empty() {
        Vec::new()
    } else {
        vec![DebateEvent::OutputRepaired {
            step: StepId::AspectPlan,
            notes,
        }]
    };
    Ok((aspects_from_plan(&plan), after))
}

/// The debaters cast from a model's `output` for a start that asked for
/// casting, and the events to append right after `debate_started`: the
/// repairs validation made (`output_repaired`), or, when the output was
/// unusable, the `step_failed` warning saying topic-neutral personas
/// replaced the cast (the cast is then `None`; [`start_event`] falls back).
pub fn cast_from_output(
    start: &Start,
    output: crate::ModelOutput,
    time: DateTime<Utc>,
) -> (Option<Vec<Persona>>, Vec<DebateEvent>) {
    let count = start.cast.unwrap_or(0);
    match crate::extract(output, |p: PersonaCast| p.validate(count)) {
        Ok(cast) => {
            let personas = personas_from_cast(&cast, &start.personas);
            let notes = cast.notes().to_vec();
            let after = if notes.is_empty() {
                Vec::new()
            } else {
                vec![DebateEvent::OutputRepaired {
                    step: StepId::PersonaCast,
                    notes,
                }]
            };
            (Some(personas), after)
        }
        Err(e) => (
            None,
            vec![crate::step_failed(
                StepId::PersonaCast,
                format!(
                    "casting personas for the topic failed ({e}); topic-neutral personas debate instead"
                ),
                time,
            )],
        ),
    }
}

/// The `debate_started` event of `start`; `planned` holds the judge's
/// aspects when the start asked for planning, `cast` the debaters cast for
/// the topic when it asked for casting (both ignored otherwise; a missing
/// cast falls back to [`neutral_personas`]). `protocol` is recorded in
/// the event ([`Protocol::kind`](crate::Protocol::kind)).
pub fn start_event(
    debate: &DebateId,
    start: &Start,
    planned: Option<Vec<DebateAspect>>,
    cast: Option<Vec<Persona>>,
    time: DateTime<Utc>,
    protocol: Option<ProtocolKind>,
) -> DebateEvent {
    let aspects = match &start.aspects {
        AspectSource::Configured(aspects) => aspects.clone(),
        AspectSource::Planned { .. } => planned.unwrap_or_default(),
    };
    let personas = match start.cast {
        None => start.personas.clone(),
        Some(count) => cast
            .unwrap_or_else(|| neutral_personas(count, &start.personas))
            .into_iter()
            .chain(start.personas.iter().cloned())
            .collect(),
    };
    DebateEvent::DebateStarted {
        debate: debate.clone(),
        topic: start.topic.clone(),
        aspects,
        personas,
        time,
        protocol,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use agon_core::{PersonaRole, Topic};
    use agon_extract::CastPersonaPayload;

    fn judge() -> Persona {
        Persona {
            role: PersonaRole::Judge,
            ..Persona::debater("judge", "Judge", "Impartial.", "measured")
        }
    }

    fn start(cast: Option<usize>) -> Start {
        Start {
            weigh_by_trust: true,
            topic: Topic::new("Should we tax sugar?"),
            personas: vec![judge()],
            cast,
            aspects: AspectSource::Configured(Vec::new()),
        }
    }

    fn personas_of(event: DebateEvent) -> Vec<(String, String)> {
        match event {
            DebateEvent::DebateStarted { personas, .. } => personas
                .into_iter()
                .map(|p| (p.id.to_string(), p.name))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_cast_comes_before_the_judge_with_unique_slugged_ids() {
        let payload = PersonaCast {
            personas: ["Dr. Lena Ruiz", "Omar", "Judge Dee"]
                .iter()
                .map(|n| CastPersonaPayload {
                    name: (*n).into(),
                    contract: format!("{n} argues a distinct stance."),
                    voice: "plain".into(),
                })
                .collect(),
        };
        let cast = personas_from_cast(&payload.validate(3).unwrap(), &[judge()]);
        let event = start_event(
            &"d".into(),
            &start(Some(3)),
            None,
            Some(cast),
            DateTime::UNIX_EPOCH,
            None,
        );
        assert_eq!(
            personas_of(event),
            [
                ("dr--lena-ruiz".into(), "Dr. Lena Ruiz".into()),
                ("omar".into(), "Omar".into()),
                ("judge-dee".into(), "Judge Dee".into()),
                ("judge".into(), "Judge".into()),
            ]
        );
    }

    #[test]
    fn a_failed_cast_falls_back_to_topic_neutral_personas() {
        let event = start_event(
            &"d".into(),
            &start(Some(3)),
            None,
            None,
            DateTime::UNIX_EPOCH,
            None,
        );
        let names: Vec<String> = personas_of(event).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["Advocate", "Skeptic", "Pragmatist", "Judge"]);
        assert_eq!(neutral_personas(9, &[]).len(), 6);
        assert_eq!(neutral_personas(0, &[]).len(), 2);
    }

    #[test]
    fn without_casting_the_configured_personas_are_the_cast() {
        let event = start_event(
            &"d".into(),
            &start(None),
            None,
            None,
            DateTime::UNIX_EPOCH,
            Some(ProtocolKind::Structured),
        );
        assert!(matches!(
            event,
            DebateEvent::DebateStarted {
                protocol: Some(ProtocolKind::Structured),
                ..
            }
        ));
        assert_eq!(personas_of(event), [("judge".into(), "Judge".into())]);
    }

    #[test]
    fn an_unusable_cast_output_is_a_warning_and_a_repaired_one_a_note() {
        let time = DateTime::UNIX_EPOCH;
        let (cast, after) = cast_from_output(
            &start(Some(2)),
            Ok(serde_json::json!({"personas": [{"name": "1}},", "contract": "x", "voice": "y"}]})),
            time,
        );
        assert!(cast.is_none());
        match &after[..] {
            [
                DebateEvent::StepFailed {
                    step: StepId::PersonaCast,
                    reason,
                    ..
                },
            ] => {
                assert!(reason.contains("topic-neutral"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let (cast, after) = cast_from_output(
            &start(Some(2)),
            Ok(serde_json::json!({"personas": [
                {"name": "Lena", "contract": "Dentist, for the tax.", "voice": ""},
                {"name": "Omar", "contract": "Grocer, against it.", "voice": "warm"}
            ]})),
            time,
        );
        assert_eq!(cast.unwrap().len(), 2);
        assert!(
            after.is_empty(),
            "a missing voice is filled in silently: {after:?}"
        );
    }

    #[test]
    fn colliding_ids_get_a_number() {
        let people = debaters(
            [("Ana", "a", "v"), ("ana", "b", "v"), ("ANA!", "c", "v")],
            &[],
        );
        let ids: Vec<&str> = people.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["ana", "ana-2", "ana-3"]);
    }
}
