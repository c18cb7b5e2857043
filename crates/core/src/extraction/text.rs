//! Text repair shared by the payloads: trim, bound, de-null, cap lists.

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

/// Trims `text`, maps empty and null-like words to `None`, and cuts it to at
/// most `max` characters (on a character boundary, preferring a word break).
/// Pushes a note when text was cut.
pub(crate) fn clean(
    text: &str,
    max: usize,
    field: &str,
    notes: &mut Vec<String>,
) -> Option<String> {
    let trimmed = text.trim().trim_matches('"').trim();
    if trimmed.is_empty() || NULL_WORDS.iter().any(|w| trimmed.eq_ignore_ascii_case(w)) {
        return None;
    }
    let count = trimmed.chars().count();
    if count <= max {
        return Some(trimmed.to_owned());
    }
    notes.push(format!(
        "{field}: cut from {count} to at most {max} characters"
    ));
    Some(truncate_chars(trimmed, max))
}

/// `clean` over an optional value.
pub(crate) fn clean_opt(
    text: Option<&str>,
    max: usize,
    field: &str,
    notes: &mut Vec<String>,
) -> Option<String> {
    text.and_then(|t| clean(t, max, field, notes))
}

/// Cleans every item, drops empty ones and duplicates, and keeps at most `max_items`.
pub(crate) fn clean_list(
    items: &[String],
    max_items: usize,
    max_chars: usize,
    field: &str,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if let Some(item) = clean(item, max_chars, field, notes)
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
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
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
    fn clean_maps_null_words_and_blank_to_none() {
        let mut notes = Vec::new();
        for input in ["", "   ", "null", "None", "\"n/a\""] {
            assert_eq!(clean(input, 10, "f", &mut notes), None, "{input:?}");
        }
        assert!(notes.is_empty());
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
