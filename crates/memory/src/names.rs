//! Persona names in a query: a name is a field, not content.
//!
//! A question like "What did Caroline paint?" names whose memory it wants;
//! embedded with the name, it is close to every memory of Caroline's, and
//! matched by BM25, the name is a term half the memories share. So recall
//! takes the names of the personas it searches out of the query: the dense
//! query reads "What did someone paint?", the lexical one "What did paint?",
//! and a memory of a named persona gets the speaker component of its score
//! instead.

/// A query split into its content and the personas it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedQuery {
    /// The query for the embedder: each name replaced by "someone", a
    /// possessive ("Caroline's") by "their".
    pub dense: String,
    /// The query for BM25: the names left out.
    pub lexical: String,
    /// The personas named, as given in `personas`.
    pub named: Vec<String>,
}

/// Splits `query` by the persona ids in `personas`; a name matches a whole
/// word, case-insensitively, with or without a possessive `'s`.
pub fn split_names(query: &str, personas: &[String]) -> NamedQuery {
    let mut dense = String::with_capacity(query.len());
    let mut lexical = String::with_capacity(query.len());
    let mut named: Vec<String> = Vec::new();
    let lowered: Vec<String> = personas.iter().map(|p| p.to_lowercase()).collect();
    let mut rest = query;
    while let Some(start) = rest.find(|c: char| c.is_alphanumeric()) {
        let (gap, word_on) = rest.split_at(start);
        dense.push_str(gap);
        lexical.push_str(gap);
        let end = word_on
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(word_on.len());
        let (word, after) = word_on.split_at(end);
        let word_lower = word.to_lowercase();
        let persona = lowered
            .iter()
            .position(|p| *p == word_lower)
            .map(|i| &personas[i]);
        match persona {
            Some(p) => {
                if !named.contains(p) {
                    named.push(p.clone());
                }
                let possessive = ["'s", "’s"].into_iter().find(|s| {
                    after.starts_with(s) && !after[s.len()..].starts_with(char::is_alphanumeric)
                });
                match possessive {
                    Some(s) => {
                        dense.push_str("their");
                        rest = &after[s.len()..];
                    }
                    None => {
                        dense.push_str("someone");
                        rest = after;
                    }
                }
            }
            None => {
                dense.push_str(word);
                lexical.push_str(word);
                rest = after;
            }
        }
    }
    dense.push_str(rest);
    lexical.push_str(rest);
    NamedQuery {
        dense,
        lexical,
        named,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn names_become_a_field_and_leave_the_content() {
        let q = split_names(
            "What did Caroline's sister tell melanie?",
            &names(&["Caroline", "Melanie"]),
        );
        assert_eq!(q.dense, "What did their sister tell someone?");
        assert_eq!(q.lexical, "What did  sister tell ?");
        assert_eq!(q.named, ["Caroline", "Melanie"]);
    }

    #[test]
    fn only_whole_words_match_and_other_text_is_kept() {
        let q = split_names(
            "Is Carolinesque art Lena-like? Lena’s view",
            &names(&["Caroline", "Lena"]),
        );
        assert_eq!(q.dense, "Is Carolinesque art someone-like? their view");
        assert_eq!(q.named, ["Lena"]);
        let q = split_names("no names here", &names(&["Caroline"]));
        assert_eq!(q.dense, "no names here");
        assert_eq!(q.lexical, "no names here");
        assert!(q.named.is_empty());
        assert_eq!(split_names("", &[]).dense, "");
    }
}
