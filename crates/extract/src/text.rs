//! Text repair shared by the payloads: trim, bound, de-null, cap lists.

use std::collections::HashSet;

/// The bounds every payload enforces (and advertises in its schema).
#[derive(Debug)]
pub struct Limits;

impl Limits {
    /// A one-sentence field (stance, position, agreement topic, …), in characters.
    pub const SENTENCE: usize = 300;
    /// A list item (evidence, challenge, …), in characters.
    pub const ITEM: usize = 200;
    /// A paragraph (summary, diagnosis, reasoning, reflection), in characters.
    pub const PARAGRAPH: usize = 600;
    /// Items in a list field.
    pub const LIST: usize = 5;
    /// Reflections in one batch.
    pub const REFLECTIONS: usize = 3;
    /// Lowest importance.
    pub const IMPORTANCE_MIN: i64 = 1;
    /// Highest importance.
    pub const IMPORTANCE_MAX: i64 = 10;
}

/// Words small models write instead of JSON `null`.
const NULL_WORDS: [&str; 6] = ["null", "none", "n/a", "na", "nothing", "unchanged"];

/// Pieces of the prompts' and schemas' own wording that a model copies into
/// a field instead of an answer ("5-sentence summary or null").
const PLACEHOLDERS: [&str; 8] = [
    "or null",
    "sentence summary",
    "-sentence stance",
    "if unchanged",
    "withpersona",
    "overallstance",
    "keyargument",
    "evidencecited",
];

/// Field values that are the name of a type or a stand-in, not content.
const STAND_INS: [&str; 9] = [
    "text", "string", "str", "...", "…", "value", "example", "todo", "tbd",
];

/// Lowercase words of at least four letters or digits: content words,
/// enough to tell whether a text takes up an evidence item.
pub fn content_words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4 || w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect()
}

/// Cleans the text fields of a payload: `clean` and its kin, plus, for a
/// cleaner made for a blackboard ([`Cleaner::for_board`]), the rejection
/// of a text that is only a persona's name ("Theo", "Theo,") or the
/// debate's question repeated. Validators that know the blackboard make
/// one and pass it to every field they clean; nothing is kept between
/// calls.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cleaner {
    echoes: Vec<(String, &'static str)>,
}

/// The cleaner without echoes.
const PLAIN: Cleaner = Cleaner { echoes: Vec::new() };

impl Cleaner {
    /// The cleaner of `blackboard`'s personas and question.
    pub fn for_board(blackboard: &agon_core::Blackboard) -> Self {
        const NAME: &str = "a bare persona name";
        let mut echoes: Vec<(String, &'static str)> = blackboard
            .personas()
            .iter()
            .flat_map(|p| {
                [
                    (normalized(&p.name), NAME),
                    (normalized(p.id.as_str()), NAME),
                ]
            })
            .collect();
        if let Some(topic) = blackboard.topic() {
            echoes.push((
                normalized(&topic.question),
                "the debate's question repeated",
            ));
        }
        echoes.retain(|(e, _)| !e.is_empty());
        Self { echoes }
    }

    /// Why `text` is junk rather than content ([`junk_reason`]), or an echo
    /// of a persona's name or the question; `None` when it is content.
    pub fn junk_reason(&self, text: &str) -> Option<&'static str> {
        junk_reason(text).or_else(|| {
            let bare = normalized(text.trim());
            self.echoes
                .iter()
                .find_map(|(echo, reason)| (*echo == bare).then_some(*reason))
        })
    }

    /// Trims `text`, maps empty and null-like words to `None`, rejects junk
    /// with a note, and cuts it to at most `max` characters (on a character
    /// boundary, preferring a word break), with a note when it was cut.
    pub(crate) fn clean(
        &self,
        text: &str,
        max: usize,
        field: &str,
        notes: &mut Vec<String>,
    ) -> Option<String> {
        let text = strip_controls(text, field, notes);
        let trimmed = text.trim().trim_matches('"').trim();
        if trimmed.is_empty() || NULL_WORDS.iter().any(|w| trimmed.eq_ignore_ascii_case(w)) {
            return None;
        }
        let mut reject = |text: &str, reason: &str| {
            notes.push(format!(
                "{field}: rejected {:?} ({reason})",
                truncate_chars(text, 60)
            ));
            None
        };
        if let Some(reason) = self.junk_reason(trimmed) {
            return reject(trimmed, reason);
        }
        // Debris is cut from text that keeps a few words; a word or two left
        // between debris was a fragment ("{{<#Theo,}},").
        let stripped = strip_debris(trimmed);
        let trimmed = if stripped != trimmed && stripped.split_whitespace().count() >= 3 {
            if let Some(reason) = self.junk_reason(stripped) {
                return reject(stripped, reason);
            }
            notes.push(format!(
                "{field}: cut JSON debris from {:?}",
                truncate_chars(trimmed, 60)
            ));
            stripped
        } else {
            trimmed
        };
        let count = trimmed.chars().count();
        if count <= max {
            return Some(trimmed.to_owned());
        }
        notes.push(format!(
            "{field}: cut from {count} to at most {max} characters"
        ));
        Some(truncate_chars(trimmed, max))
    }

    /// [`Cleaner::clean`] over an optional value.
    pub(crate) fn clean_opt(
        &self,
        text: Option<&str>,
        max: usize,
        field: &str,
        notes: &mut Vec<String>,
    ) -> Option<String> {
        text.and_then(|t| self.clean(t, max, field, notes))
    }

    /// Cleans every item, drops empty ones and duplicates, and keeps at
    /// most `max_items`.
    pub(crate) fn clean_list(
        &self,
        items: &[String],
        max_items: usize,
        max_chars: usize,
        field: &str,
        notes: &mut Vec<String>,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for item in items {
            if let Some(item) = self.clean(item, max_chars, field, notes)
                && !out.contains(&item)
            {
                out.push(item);
            }
        }
        if out.len() > max_items {
            notes.push(format!(
                "{field}: kept the first {max_items} of {} items",
                out.len()
            ));
            out.truncate(max_items);
        }
        out
    }
}

/// `text` without JSON debris at either end: a leading run without
/// letters that holds a brace or an unpaired bracket (`3}} Theo said…`),
/// or a trailing one (`…goes beyond.}],`). Text without such a run is
/// returned as is.
fn strip_debris(text: &str) -> &str {
    // Braces, `<`, `#`, or brackets that do not pair up ("[2017] study"
    // keeps its year).
    let unpaired = text.matches('[').count() != text.matches(']').count();
    let braces =
        |s: &str| s.contains(['{', '}', '<', '>', '#']) || (unpaired && s.contains(['[', ']']));
    let mut t = text;
    if let Some(first) = t.find(char::is_alphabetic)
        && braces(&t[..first])
    {
        t = &t[first..];
    }
    if let Some((last, c)) = t.char_indices().rev().find(|(_, c)| c.is_alphanumeric()) {
        let mut end = last + c.len_utf8();
        // Keep the sentence's own closing punctuation.
        end += t[end..]
            .chars()
            .take_while(|c| matches!(c, '.' | '!' | '?' | ')' | '"' | '\''))
            .map(char::len_utf8)
            .sum::<usize>();
        if braces(&t[end..]) {
            t = &t[..end];
        }
    }
    t.trim()
}

/// Lower case, surrounding punctuation and markup removed.
fn normalized(text: &str) -> String {
    text.trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

/// Why `text` is junk rather than content, or `None` when it is content:
/// no letters ("1}},"), a JSON fragment ("{{<#Theo,}},"), an echo of the
/// prompt's placeholders ("5-sentence summary or null"), a stand-in
/// ("text", "..."). [`Cleaner::junk_reason`] also knows a debate's echoes.
pub fn junk_reason(text: &str) -> Option<&'static str> {
    let t = text.trim();
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    if letters == 0 {
        return Some("no letters");
    }
    let visible = t.chars().filter(|c| !c.is_whitespace()).count();
    let syntax = t
        .chars()
        .filter(|c| {
            matches!(
                c,
                '{' | '}' | '[' | ']' | '<' | '>' | '#' | '"' | '\\' | '|' | '`'
            )
        })
        .count();
    // The markers only count in short texts or texts that open like JSON:
    // a long answer may quote code.
    let short = visible <= 60;
    let markers = ["\":", "{\"", "[]", "]}", "}]", "{}", "},"];
    let json_like = t.starts_with(['{', '[']);
    if ["{{", "}}", "<#"].iter().any(|m| t.contains(m))
        || ((short || json_like) && markers.iter().any(|m| t.contains(m)))
        || (syntax >= 2 && letters * 2 < visible)
    {
        return Some("a JSON fragment");
    }
    let lower = t.to_lowercase();
    if PLACEHOLDERS.iter().any(|p| lower.contains(p))
        || (lower.starts_with('<') && lower.ends_with('>'))
    {
        return Some("an echo of the prompt's placeholder");
    }
    let bare = normalized(t);
    if STAND_INS.contains(&bare.as_str()) || STAND_INS.contains(&lower.as_str()) {
        return Some("a stand-in, not content");
    }
    None
}

/// `text` without control characters (escape sequences, NULs, bells; line
/// breaks and tabs stay), with a note naming `field` when any were removed.
pub(crate) fn strip_controls<'a>(
    text: &'a str,
    field: &str,
    notes: &mut Vec<String>,
) -> std::borrow::Cow<'a, str> {
    let unwanted = |c: char| c.is_control() && c != '\n' && c != '\t';
    let removed = text.chars().filter(|c| unwanted(*c)).count();
    if removed == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    notes.push(format!("{field}: removed {removed} control character(s)"));
    std::borrow::Cow::Owned(text.chars().filter(|c| !unwanted(*c)).collect())
}

/// [`Cleaner::clean`] without a debate's echoes.
pub(crate) fn clean(
    text: &str,
    max: usize,
    field: &str,
    notes: &mut Vec<String>,
) -> Option<String> {
    PLAIN.clean(text, max, field, notes)
}

/// [`Cleaner::clean_list`] without a debate's echoes.
pub(crate) fn clean_list(
    items: &[String],
    max_items: usize,
    max_chars: usize,
    field: &str,
    notes: &mut Vec<String>,
) -> Vec<String> {
    PLAIN.clean_list(items, max_items, max_chars, field, notes)
}

/// Clamps an importance into 1..=10, noting any change.
pub(crate) fn clamp_importance(value: i64, field: &str, notes: &mut Vec<String>) -> u8 {
    let clamped = value.clamp(Limits::IMPORTANCE_MIN, Limits::IMPORTANCE_MAX);
    if clamped != value {
        notes.push(format!("{field}: importance {value} clamped to {clamped}"));
    }
    u8::try_from(clamped).unwrap_or(1)
}

/// At most `max` characters of `text`, cut at the last word break in the
/// final fifth if there is one.
pub fn truncate_chars(text: &str, max: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(max) else {
        // It fits: nothing is cut.
        return text.trim_end().to_owned();
    };
    let head = &text[..end];
    let floor = head.len() - head.len() / 5;
    match head.rfind(char::is_whitespace) {
        Some(space) if space >= floor && space > 0 => head[..space].trim_end().to_owned(),
        _ => head.trim_end().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junk_is_rejected_with_a_note_naming_the_field_and_why() {
        let mut notes = Vec::new();
        for (input, why) in [
            ("1}},", "no letters"),
            ("---", "no letters"),
            ("{{<#Theo,}},", "a JSON fragment"),
            ("Aryadrakumar}}.", "a JSON fragment"),
            ("\"position\": \"ban\"", "a JSON fragment"),
            ("5-sentence summary or null", "placeholder"),
            ("updated 1-sentence summary", "placeholder"),
            ("<stance>", "placeholder"),
            ("text", "stand-in"),
            ("...", "no letters"),
        ] {
            assert_eq!(clean(input, 100, "f", &mut notes), None, "{input:?}");
            let note = notes.last().unwrap();
            assert!(
                note.starts_with("f: rejected") && note.contains(why),
                "{input:?}: {note}"
            );
        }
    }

    #[test]
    fn json_debris_at_either_end_is_cut_with_a_note() {
        let mut notes = Vec::new();
        let raw =
            "3} Theo, 2017: you have been caught in the middle of an argument about costs.}],";
        assert_eq!(
            clean(raw, 200, "f", &mut notes).as_deref(),
            Some("Theo, 2017: you have been caught in the middle of an argument about costs.")
        );
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("f: cut JSON debris from"), "{notes:?}");
        assert_eq!(
            clean("[2017] study: fewer crashes", 100, "f", &mut notes).as_deref(),
            Some("[2017] study: fewer crashes"),
            "paired brackets are content"
        );
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn content_with_numbers_quotes_and_brackets_is_kept() {
        let mut notes = Vec::new();
        for input in [
            "Congestion pricing cut traffic 20% in Stockholm [2007].",
            "Zones marked \"car-free\" raised retail footfall (Ghent, 2017).",
            "Theo's claim about shops",
            "Sugar taxes work",
            "A 1-in-5 chance",
            "Use a token bucket per client; the config is {\"rate\": 100, \"burst\": 20}, quoted in a longer answer.",
        ] {
            assert_eq!(clean(input, 200, "f", &mut notes).as_deref(), Some(input));
        }
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_boards_cleaner_rejects_bare_names_and_the_question() {
        use agon_core::{DebateEvent, Persona, Topic};
        let mut bb = agon_core::Blackboard::new();
        bb.apply(&DebateEvent::DebateStarted {
            debate: "d".into(),
            topic: Topic::new("Should we tax sugar?"),
            aspects: vec![],
            personas: vec![Persona::debater("theo", "Theo", "c", "v")],
            time: chrono::DateTime::UNIX_EPOCH,
            protocol: None,
        })
        .unwrap();
        let mut notes = Vec::new();
        assert_eq!(clean("Theo", 100, "f", &mut notes).as_deref(), Some("Theo"));
        let cleaner = Cleaner::for_board(&bb);
        assert_eq!(cleaner.clean("Theo,", 100, "on", &mut notes), None);
        assert!(notes[0].contains("a bare persona name"), "{notes:?}");
        assert_eq!(
            cleaner.clean("should we tax sugar", 100, "stance", &mut notes),
            None
        );
        assert!(notes[1].contains("question repeated"), "{notes:?}");
        assert!(
            cleaner
                .clean("Theo is right about prices", 100, "on", &mut notes)
                .is_some()
        );
        // Nothing is kept: the plain functions still take a bare name.
        assert_eq!(clean("Theo", 100, "f", &mut notes).as_deref(), Some("Theo"));
    }

    #[test]
    fn clean_maps_null_words_and_blank_to_none() {
        let mut notes = Vec::new();
        for input in ["", "   ", "null", "None", "\"n/a\""] {
            assert_eq!(clean(input, 10, "f", &mut notes), None, "{input:?}");
        }
        assert!(notes.is_empty());
    }

    #[test]
    fn clean_removes_control_characters_and_says_so() {
        let mut notes = Vec::new();
        let text = clean(
            "Mara \u{1b}concedes\u{0} the cost",
            100,
            "concessions",
            &mut notes,
        );
        assert_eq!(text.as_deref(), Some("Mara concedes the cost"));
        assert_eq!(notes, vec!["concessions: removed 2 control character(s)"]);
    }

    #[test]
    fn clean_cuts_long_text_on_a_char_boundary_and_notes_it() {
        let mut notes = Vec::new();
        let long = "é".repeat(50);
        let out = clean(&long, 10, "field", &mut notes).unwrap();
        assert_eq!(out.chars().count(), 10);
        assert_eq!(notes, vec!["field: cut from 50 to at most 10 characters"]);
    }

    #[test]
    fn truncate_prefers_a_word_break_near_the_end() {
        assert_eq!(
            truncate_chars("alpha beta gamma delta", 19),
            "alpha beta gamma"
        );
        assert_eq!(truncate_chars("abcdefghij", 4), "abcd");
    }

    #[test]
    fn clean_list_dedupes_caps_and_notes() {
        let mut notes = Vec::new();
        let items: Vec<String> = ["a", "a", "b", " ", "c", "d"].map(String::from).to_vec();
        assert_eq!(
            clean_list(&items, 2, 10, "evidence", &mut notes),
            vec!["a", "b"]
        );
        assert_eq!(notes, vec!["evidence: kept the first 2 of 4 items"]);
    }

    #[test]
    fn importance_is_clamped_into_range() {
        let mut notes = Vec::new();
        assert_eq!(clamp_importance(0, "i", &mut notes), 1);
        assert_eq!(clamp_importance(42, "i", &mut notes), 10);
        assert_eq!(clamp_importance(7, "i", &mut notes), 7);
        assert_eq!(notes.len(), 2);
    }
}
