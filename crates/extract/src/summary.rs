//! Free text a model writes where no payload schema holds it: summaries
//! (a perspective's, a judge's, a rolling one, or those a round's
//! analysis folds into its answer) and a plain-text solution. Like every
//! text field, it is cleaned and validated before it becomes an event.

use agon_core::{Blackboard, PersonaId};

use crate::text::{Cleaner, strip_controls, truncate_chars};
use crate::{MAX_UTTERANCE_CHARS, Validated};

/// A summary's text, cleaned as a text field of its debate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryText(pub String);

impl SummaryText {
    /// `raw` cleaned as a text field of `board`: control characters
    /// removed, junk rejected (no letters, JSON debris, the prompt's own
    /// placeholders, a bare persona name, the question repeated), cut to
    /// `max_chars` on a word break. The value is `None` when nothing
    /// usable is left; the notes say what was repaired or why it was
    /// rejected, naming `field`.
    pub fn validate(
        raw: &str,
        max_chars: usize,
        field: &str,
        board: &Blackboard,
    ) -> Validated<Option<SummaryText>> {
        let mut notes = Vec::new();
        let text = Cleaner::for_board(board).clean(raw, max_chars, field, &mut notes);
        Validated::new(text.map(SummaryText), notes, 0)
    }
}

/// The perspective summaries a round's analysis wrote in its `summaries`
/// field (an agent's name or id → text), each resolved to a persona that
/// was asked for one and cleaned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FoldedSummaries {
    /// Each asked persona that got a usable summary, with its text, in the
    /// order they were asked.
    pub written: Vec<(PersonaId, SummaryText)>,
}

impl FoldedSummaries {
    /// `raw`, the answer's `summaries` (any JSON: only an object of strings
    /// is read), validated against the personas `asked` (each with its
    /// most characters): an entry whose key names none of them is dropped
    /// with a note; each text is [`SummaryText::validate`]d. A persona
    /// asked for that has no usable entry is simply absent (its caller
    /// asks it on its own).
    pub fn validate(
        raw: Option<&serde_json::Value>,
        board: &Blackboard,
        asked: &[(PersonaId, usize)],
    ) -> Validated<Self> {
        let mut notes = Vec::new();
        let entries: Vec<(&str, &str)> = match raw {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(serde_json::Value::Object(map)) => map
                .iter()
                .filter_map(|(k, v)| match v.as_str() {
                    Some(text) => Some((k.as_str(), text)),
                    None => {
                        notes.push(format!(
                            "summaries: the entry for {:?} is not text; ignored",
                            truncate_chars(k.trim(), 40)
                        ));
                        None
                    }
                })
                .collect(),
            Some(_) => {
                notes.push("summaries: not an object of texts; ignored".to_owned());
                Vec::new()
            }
        };
        let names = |key: &str, persona: &PersonaId| {
            let key = key.trim();
            key == board.persona_name(persona) || key == persona.as_str()
        };
        let mut written = Vec::new();
        for (persona, max_chars) in asked {
            let Some((_, text)) = entries.iter().find(|(key, _)| names(key, persona)) else {
                continue;
            };
            let field = format!("summaries.{}", board.persona_name(persona));
            // The length asked for is the summary's budget, not a repair:
            // cut to it without a note, as a summary of its own call is.
            let text = truncate_chars(text.trim(), *max_chars);
            let valid = SummaryText::validate(&text, *max_chars, &field, board);
            notes.extend(valid.notes().iter().cloned());
            if let Some(text) = valid.value().clone() {
                written.push((persona.clone(), text));
            }
        }
        for (key, _) in &entries {
            if !asked.iter().any(|(persona, _)| names(key, persona)) {
                notes.push(format!(
                    "summaries: {:?} was not asked for; ignored",
                    truncate_chars(key.trim(), 40)
                ));
            }
        }
        Validated::new(Self { written }, notes, 0)
    }
}

/// A judge's plain-text synthesis (the fallback when the structured
/// solution failed): control characters removed, cut at
/// [`MAX_UTTERANCE_CHARS`]; rejected only when it has no letters (a
/// design may quote code, so the JSON-debris rules of short fields do not
/// apply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainSolution(pub String);

impl PlainSolution {
    /// `raw` validated as a plain-text solution; `None` in the value when
    /// nothing usable is left.
    pub fn validate(raw: &str) -> Validated<Option<PlainSolution>> {
        let mut notes = Vec::new();
        let text = strip_controls(raw, "solution", &mut notes);
        let text = text.trim();
        if !text.chars().any(char::is_alphabetic) {
            if !text.is_empty() {
                notes.push(format!(
                    "solution: rejected {:?} (no letters)",
                    truncate_chars(text, 60)
                ));
            }
            return Validated::new(None, notes, 0);
        }
        let count = text.chars().count();
        let text = if count > MAX_UTTERANCE_CHARS {
            notes.push(format!(
                "solution: cut from {count} to {MAX_UTTERANCE_CHARS} characters"
            ));
            truncate_chars(text, MAX_UTTERANCE_CHARS)
        } else {
            text.to_owned()
        };
        Validated::new(Some(PlainSolution(text)), notes, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> Blackboard {
        crate::test_board()
    }

    #[test]
    fn a_summary_is_cleaned_and_junk_is_rejected() {
        let bb = board();
        let ok = SummaryText::validate(
            "  Ada argued for \u{1b}[31mtoken buckets.  ",
            200,
            "summary",
            &bb,
        );
        assert_eq!(
            ok.value().as_ref().map(|s| s.0.as_str()),
            Some("Ada argued for [31mtoken buckets.")
        );
        assert_eq!(ok.notes().len(), 1, "{:?}", ok.notes());
        let junk = SummaryText::validate("{\"summary\": }", 200, "summary", &bb);
        assert_eq!(junk.value(), &None);
        assert!(junk.notes()[0].contains("rejected"), "{:?}", junk.notes());
        let echo = SummaryText::validate("Ada", 200, "summary", &bb);
        assert_eq!(echo.value(), &None, "a bare name is not a summary");
        let long = SummaryText::validate(&"word ".repeat(100), 50, "summary", &bb);
        assert!(long.value().as_ref().unwrap().0.chars().count() <= 50);
    }

    #[test]
    fn folded_summaries_keep_what_was_asked_and_say_what_was_not() {
        let bb = board();
        let raw = serde_json::json!({
            "Ada": "Ada kept the token bucket and answered Bo's burst critique.",
            "bo": "{{}}",
            "Cy": "Cy was never asked.",
            "Zed": 3
        });
        let asked = [(PersonaId::new("ada"), 200), (PersonaId::new("bo"), 200)];
        let valid = FoldedSummaries::validate(Some(&raw), &bb, &asked);
        assert_eq!(valid.value().written.len(), 1);
        assert_eq!(valid.value().written[0].0, PersonaId::new("ada"));
        let notes = valid.notes().join("\n");
        assert!(notes.contains("summaries.Bo: rejected"), "{notes}");
        assert!(notes.contains("\"Cy\" was not asked for"), "{notes}");
        assert!(notes.contains("\"Zed\" is not text"), "{notes}");
        let none = FoldedSummaries::validate(Some(&serde_json::json!([1])), &bb, &asked);
        assert!(none.value().written.is_empty());
        assert_eq!(none.notes().len(), 1);
    }

    #[test]
    fn a_plain_solution_keeps_code_and_loses_controls() {
        let code = PlainSolution::validate("Use `HashMap<String, u64>`: {{ bucket }}\u{7}");
        assert_eq!(
            code.value().as_ref().map(|s| s.0.as_str()),
            Some("Use `HashMap<String, u64>`: {{ bucket }}")
        );
        assert_eq!(code.notes().len(), 1);
        assert_eq!(PlainSolution::validate("{} []").value(), &None);
        assert_eq!(PlainSolution::validate("  ").value(), &None);
    }
}
