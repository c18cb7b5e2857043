//! Persona casting: the debaters a model proposes for a topic when the
//! configuration names none.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{Limits, clean, junk_reason};
use super::{ExtractionError, Payload, Validated};

/// Longest persona name, in characters.
pub const MAX_NAME_CHARS: usize = 40;
/// Most debaters a cast may hold.
pub const MAX_CAST: usize = 6;

/// One debater proposed for a topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CastPersonaPayload {
    /// A first name, unique in the cast.
    #[schemars(length(max = 40))]
    pub name: String,
    /// Who they are and the stance they argue on the topic, one sentence.
    #[schemars(length(max = 300))]
    pub contract: String,
    /// How they talk, a few words.
    #[schemars(length(max = 200))]
    pub voice: String,
}

/// The debaters cast for a topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PersonaCast {
    /// The debaters, with distinct stances.
    #[schemars(length(max = 6))]
    pub personas: Vec<CastPersonaPayload>,
}

impl Payload for PersonaCast {
    const NAME: &'static str = "persona_cast";
}

impl PersonaCast {
    /// Trims and bounds every field; drops a persona whose name is missing,
    /// junk, not a name (more than four words) or taken (case-insensitive),
    /// or whose contract is missing, junk or another's; a missing voice
    /// becomes "plain-spoken"; keeps at most `count` (capped at
    /// [`MAX_CAST`]). Fails when fewer than two (or fewer than `count`,
    /// when `count` is smaller) survive.
    pub fn validate(&self, count: usize) -> Result<Validated<Self>, ExtractionError> {
        let count = count.clamp(2, MAX_CAST);
        let mut notes = Vec::new();
        let mut kept: Vec<CastPersonaPayload> = Vec::new();
        for (i, p) in self.personas.iter().enumerate() {
            let field = format!("personas[{i}]");
            let Some(name) = clean(
                &p.name,
                MAX_NAME_CHARS,
                &format!("{field}.name"),
                &mut notes,
            ) else {
                notes.push(format!("{field}: dropped (no usable name)"));
                continue;
            };
            let name = name.trim_matches(|c: char| !c.is_alphanumeric()).to_owned();
            if name.split_whitespace().count() > 4 || junk_reason(&name).is_some() {
                notes.push(format!("{field}: dropped ({name:?} is not a name)"));
                continue;
            }
            if name.eq_ignore_ascii_case("judge")
                || kept.iter().any(|k| k.name.eq_ignore_ascii_case(&name))
            {
                notes.push(format!("{field}: dropped ({name:?} is taken)"));
                continue;
            }
            let Some(contract) = clean(
                &p.contract,
                Limits::SENTENCE,
                &format!("{field}.contract"),
                &mut notes,
            ) else {
                notes.push(format!("{field}: dropped {name} (no usable contract)"));
                continue;
            };
            if kept
                .iter()
                .any(|k| k.contract.eq_ignore_ascii_case(&contract))
            {
                notes.push(format!(
                    "{field}: dropped {name} (the same contract as another persona)"
                ));
                continue;
            }
            let voice = clean(
                &p.voice,
                Limits::ITEM,
                &format!("{field}.voice"),
                &mut notes,
            )
            .unwrap_or_else(|| "plain-spoken".to_owned());
            kept.push(CastPersonaPayload {
                name,
                contract,
                voice,
            });
        }
        if kept.len() > count {
            notes.push(format!(
                "personas: kept the first {count} of {}",
                kept.len()
            ));
            kept.truncate(count);
        }
        if kept.len() < count {
            return Err(ExtractionError::Invalid {
                payload: Self::NAME,
                field: "personas",
                reason: format!(
                    "has {} usable persona(s), {count} were asked for",
                    kept.len()
                ),
            });
        }
        Ok(Validated::new(Self { personas: kept }, notes, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, contract: &str, voice: &str) -> CastPersonaPayload {
        CastPersonaPayload {
            name: name.into(),
            contract: contract.into(),
            voice: voice.into(),
        }
    }

    #[test]
    fn a_good_cast_is_kept_and_capped_at_the_count() {
        let cast = PersonaCast {
            personas: vec![
                p(
                    "Lena",
                    "Dentist. A sugar tax cuts decay in children.",
                    "blunt",
                ),
                p(
                    "Omar",
                    "Grocer. The tax hits poor families hardest.",
                    "warm",
                ),
                p("Ines", "Economist. Wants a tax on producers only.", "dry"),
                p("Kai", "Student. Undecided.", "curious"),
            ],
        };
        let v = cast.validate(3).unwrap();
        let names: Vec<&str> = v.value().personas.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Lena", "Omar", "Ines"]);
        assert_eq!(v.notes(), ["personas: kept the first 3 of 4"]);
    }

    #[test]
    fn junk_duplicate_and_reserved_names_are_dropped_and_too_few_fail() {
        let cast = PersonaCast {
            personas: vec![
                p("Lena", "Dentist. A sugar tax cuts decay.", ""),
                p("lena", "Grocer. Against.", "warm"),
                p("Judge", "Neutral.", "calm"),
                p("1}},", "Economist.", "dry"),
                p("Ana", "dentist. a sugar tax cuts decay.", "calm"),
                p("Sam", "5-sentence summary or null", "calm"),
            ],
        };
        let err = cast.validate(2).unwrap_err();
        assert!(err.to_string().contains("1 usable persona"), "{err}");
        let ok = PersonaCast {
            personas: vec![cast.personas[0].clone(), p("Omar", "Grocer. Against.", "")],
        }
        .validate(2)
        .unwrap();
        assert_eq!(ok.value().personas[0].voice, "plain-spoken");
    }
}
