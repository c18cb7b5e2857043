//! Utterance cleaning: a debater's generated text is untrusted like any
//! other model output. Small models start speaking for the other
//! participants ("Theo: I disagree…") and run into their token limit in
//! mid-sentence; neither may reach the transcript as the speaker's words.

/// Labels that are never the speaker's own, whoever speaks: a model that
/// writes one at the start of a line has started a script of the debate.
const ROLE_LABELS: [&str; 5] = ["Moderator", "Judge", "User", "Assistant", "Narrator"];

/// The longest utterance recorded, in characters (a 300-word answer is
/// ~1,800; dialectic's longest proposals ~12,000): a runaway or hostile
/// answer is cut here.
pub const MAX_UTTERANCE_CHARS: usize = 50_000;

/// What cleaning did to an utterance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanUtterance {
    /// The text to record (empty when nothing of the speaker's own was left).
    pub text: String,
    /// The text was cut back to its last complete sentence because the
    /// model hit its token limit.
    pub truncated: bool,
    /// One line per repair, for the `output_repaired` record.
    pub notes: Vec<String>,
}

/// Cleans `raw`, the text `speaker` generated in a debate with `others`:
/// strips a leading label with the speaker's own name ("Mara:",
/// "**Mara:**"), cuts the text where a line starts with another
/// participant's label ("Theo: …", "**Judge:**") or a role label
/// ("Moderator:"), and, when `hit_token_limit`, cuts it back to its last
/// complete sentence (or line) and marks it truncated.
pub fn clean_utterance(
    raw: &str,
    speaker: &str,
    others: &[&str],
    hit_token_limit: bool,
) -> CleanUtterance {
    let mut notes = Vec::new();
    let raw = crate::text::strip_controls(raw, "utterance", &mut notes);
    let raw = if raw.chars().count() > MAX_UTTERANCE_CHARS {
        notes.push(format!(
            "utterance: cut from {} to {MAX_UTTERANCE_CHARS} characters",
            raw.chars().count()
        ));
        std::borrow::Cow::Owned(crate::truncate_chars(&raw, MAX_UTTERANCE_CHARS))
    } else {
        raw
    };
    let mut text = raw.trim();
    while let Some(rest) = strip_label(text, speaker) {
        text = rest.trim_start();
    }
    let foreign: Vec<&str> = others
        .iter()
        .copied()
        .chain(ROLE_LABELS)
        .filter(|n| !n.trim().is_empty() && !n.trim().eq_ignore_ascii_case(speaker.trim()))
        .collect();
    let mut cut_for_speaker = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(name) = foreign.iter().find(|n| strip_label(trimmed, n).is_some()) {
            notes.push(format!(
                "cut where the model began speaking as {name} ({} of {} characters kept)",
                text[..offset].trim_end().chars().count(),
                text.chars().count()
            ));
            text = &text[..offset];
            cut_for_speaker = true;
            break;
        }
        offset += line.len();
    }
    let mut text = text.trim_end().to_owned();
    let bare = text
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    let only_a_name = !bare.is_empty()
        && std::iter::once(speaker)
            .chain(others.iter().copied())
            .any(|n| n.trim().eq_ignore_ascii_case(&bare));
    if only_a_name || (!text.is_empty() && !text.chars().any(char::is_alphabetic)) {
        notes.push(format!("dropped {text:?}: not an utterance"));
        text.clear();
    }
    let mut truncated = false;
    if hit_token_limit && !cut_for_speaker && !text.is_empty() {
        truncated = true;
        match last_complete_end(&text) {
            Some(end) if end < text.len() => {
                notes.push(format!(
                    "hit the token limit: cut back to the last complete sentence ({} of {} characters kept)",
                    text[..end].chars().count(),
                    text.chars().count()
                ));
                text.truncate(end);
                text = text.trim_end().to_owned();
            }
            Some(_) => notes.push("hit the token limit at the end of a sentence".into()),
            None => notes
                .push("hit the token limit inside its first sentence: kept as generated".into()),
        }
    }
    CleanUtterance {
        text,
        truncated,
        notes,
    }
}

/// The rest of `line` after a leading label of `name`: `Name:`, `Name :`,
/// `**Name:**`, `**Name**:`, `Name (any role):`, `[Name]:` (case-insensitive),
/// or `None` when the line does not start with one.
fn strip_label<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let rest = line.trim_start_matches(['*', '_', '#', '>', '[', ' ']);
    let head = rest.get(..name.len())?;
    if !head.eq_ignore_ascii_case(name) {
        return None;
    }
    let mut rest = &rest[name.len()..];
    rest = rest.trim_start_matches(['*', '_', ']']);
    if let Some(inner) = rest.trim_start().strip_prefix('(') {
        let close = inner.find(')')?;
        if inner[..close].contains('\n') {
            return None;
        }
        rest = &inner[close + 1..];
    }
    let rest = rest.trim_start_matches([' ', '*', '_', ']']);
    let rest = rest.strip_prefix(':')?;
    Some(rest.trim_start_matches(['*', '_']))
}

/// The byte offset just after the last complete sentence of `text`: a
/// `.`, `!`, `?` or `…` (with any closing quotes or brackets) followed by
/// whitespace or the end, or the end of a non-empty line. `None` when
/// there is none.
fn last_complete_end(text: &str) -> Option<usize> {
    let mut best = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let boundary = match c {
            '.' | '!' | '?' | '…' => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, q)) = chars.peek() {
                    if matches!(q, '"' | '\'' | ')' | ']' | '”' | '’' | '*' | '_') {
                        end = j + q.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                match chars.peek() {
                    None => Some(end),
                    Some(&(_, next)) if next.is_whitespace() => Some(end),
                    _ => None,
                }
            }
            '\n' if !text[..i].trim_end().is_empty() => Some(text[..i].trim_end().len()),
            _ => None,
        };
        if boundary.is_some() {
            best = boundary;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const OTHERS: [&str; 2] = ["Theo", "Priya"];

    #[test]
    fn control_characters_and_runaway_lengths_never_reach_the_transcript() {
        let c = clean_utterance(
            "Cars \u{1b}[31mkill\u{0} people.\tTwice\u{7} a week.\nReally.",
            "Mara",
            &OTHERS,
            false,
        );
        assert_eq!(c.text, "Cars [31mkill people.\tTwice a week.\nReally.");
        assert_eq!(c.notes, vec!["utterance: removed 3 control character(s)"]);
        let huge = "Cars cost cities dearly. ".repeat(50_000);
        let c = clean_utterance(&huge, "Mara", &OTHERS, false);
        assert!(c.text.chars().count() <= MAX_UTTERANCE_CHARS);
        assert!(
            c.notes[0].starts_with("utterance: cut from 1250000 to 50000 characters"),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn a_leading_own_label_is_stripped_in_its_usual_spellings() {
        for raw in [
            "Mara: Cars must go.",
            "**Mara:** Cars must go.",
            "**Mara**: Cars must go.",
            "mara : Cars must go.",
            "Mara (urban planner): Cars must go.",
            "Mara: Mara: Cars must go.",
        ] {
            let c = clean_utterance(raw, "Mara", &OTHERS, false);
            assert_eq!(c.text, "Cars must go.", "{raw:?}");
            assert!(c.notes.is_empty() && !c.truncated);
        }
    }

    #[test]
    fn the_text_is_cut_where_another_participant_starts_speaking() {
        let raw = "Pricing works better than bans.\nIt keeps shops open.\n\nTheo: I agree with Mara.\nPriya: So do I.";
        let c = clean_utterance(raw, "Mara", &OTHERS, false);
        assert_eq!(
            c.text,
            "Pricing works better than bans.\nIt keeps shops open."
        );
        assert_eq!(c.notes.len(), 1);
        assert!(c.notes[0].contains("speaking as Theo"), "{:?}", c.notes);
        assert!(!c.truncated);
        let bold = clean_utterance("Fine.\n**Moderator:** Next.", "Mara", &OTHERS, true);
        assert_eq!(bold.text, "Fine.");
        assert!(!bold.truncated, "a cut at a speaker is not a truncation");
    }

    #[test]
    fn an_utterance_that_opens_as_someone_else_is_emptied() {
        let c = clean_utterance("Theo: Bans are bad.", "Mara", &OTHERS, false);
        assert_eq!(c.text, "");
        assert_eq!(c.notes.len(), 1);
    }

    #[test]
    fn a_name_inside_a_sentence_or_a_longer_word_is_not_a_label() {
        let raw = "As Theo said: prices matter.\nTheodore's data: 12% fewer trips.";
        let c = clean_utterance(raw, "Mara", &OTHERS, false);
        assert_eq!(c.text, raw);
        assert!(c.notes.is_empty());
    }

    #[test]
    fn a_text_cut_by_the_token_limit_ends_at_its_last_complete_sentence() {
        let raw = "Bans work. Look at Oslo (2019). The data from Ghent shows that shops";
        let c = clean_utterance(raw, "Mara", &OTHERS, true);
        assert_eq!(c.text, "Bans work. Look at Oslo (2019).");
        assert!(c.truncated);
        assert_eq!(c.notes.len(), 1);
        let quoted = clean_utterance("She said \"no.\" Then we", "Mara", &OTHERS, true);
        assert_eq!(quoted.text, "She said \"no.\"");
        let list = clean_utterance("Two points:\n- cost\n- time and", "Mara", &OTHERS, true);
        assert_eq!(list.text, "Two points:\n- cost");
    }

    #[test]
    fn a_limit_hit_without_any_complete_sentence_keeps_the_text_marked() {
        let c = clean_utterance("Cars in city centres are", "Mara", &OTHERS, true);
        assert_eq!(c.text, "Cars in city centres are");
        assert!(c.truncated);
        assert!(c.notes[0].contains("first sentence"));
        let done = clean_utterance("All done.", "Mara", &OTHERS, true);
        assert_eq!(done.text, "All done.");
        assert!(done.truncated);
    }

    #[test]
    fn a_bare_name_or_punctuation_is_not_an_utterance() {
        for raw in ["Theo,", "Mara: Theo.", "...", "Mara: 42!"] {
            let c = clean_utterance(raw, "Mara", &OTHERS, false);
            assert_eq!(c.text, "", "{raw:?}");
            assert!(
                c.notes.last().unwrap().contains("not an utterance"),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn the_judge_may_open_with_its_own_label() {
        let c = clean_utterance("Judge: The synthesis.", "Judge", &OTHERS, false);
        assert_eq!(c.text, "The synthesis.");
    }

    #[test]
    fn decimals_and_abbreviations_mid_word_are_not_sentence_ends() {
        let c = clean_utterance("Growth was 2.5 percent in", "Mara", &OTHERS, true);
        assert_eq!(c.text, "Growth was 2.5 percent in");
    }
}
