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

/// The lowercased words of a persona id or name (`zoë-brandt` →
/// `["zoë", "brandt"]`).
fn words_of(persona: &str) -> Vec<String> {
    persona
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Splits `query` by the personas in `personas` (their ids, as stored):
/// a persona is named by its words in order, whole words, case-insensitive,
/// separated by spaces or hyphens (`Zoë Brandt` and `zoë-brandt` name
/// `zoë-brandt`, `agent architect` names `agent-architect`), with or
/// without a possessive `'s`; the longest name wins where two start at
/// the same word.
pub fn split_names(query: &str, personas: &[String]) -> NamedQuery {
    split_names_as(query, personas, personas)
}

/// [`split_names`] with names that are not ids: `names[i]` is a way to
/// name the persona `owners[i]` (its id, its display name, a dialectic
/// agent's role), and `named` lists the owners named.
pub fn split_names_as(query: &str, names: &[String], owners: &[String]) -> NamedQuery {
    let personas = owners;
    debug_assert_eq!(names.len(), owners.len());
    // The query's words with their byte spans.
    let mut words: Vec<(usize, usize, String)> = Vec::new();
    let mut at = 0;
    while let Some(start) = query[at..].find(|c: char| c.is_alphanumeric()) {
        let start = at + start;
        let end = query[start..]
            .find(|c: char| !c.is_alphanumeric())
            .map_or(query.len(), |e| start + e);
        words.push((start, end, query[start..end].to_lowercase()));
        at = end;
    }
    let names: Vec<Vec<String>> = names.iter().map(|p| words_of(p)).collect();
    let joined = |from: usize, to: usize| {
        query[from..to]
            .chars()
            .all(|c| c.is_whitespace() || c == '-')
    };
    let mut dense = String::with_capacity(query.len());
    let mut lexical = String::with_capacity(query.len());
    let mut named: Vec<String> = Vec::new();
    let mut copied = 0;
    let mut i = 0;
    while i < words.len() {
        let found = names
            .iter()
            .enumerate()
            .filter(|(_, name)| {
                !name.is_empty()
                    && i + name.len() <= words.len()
                    && name.iter().enumerate().all(|(k, w)| {
                        words[i + k].2 == *w
                            && (k == 0 || joined(words[i + k - 1].1, words[i + k].0))
                    })
            })
            .max_by_key(|(_, name)| name.len());
        let Some((p, name)) = found else {
            i += 1;
            continue;
        };
        let (start, end) = (words[i].0, words[i + name.len() - 1].1);
        dense.push_str(&query[copied..start]);
        lexical.push_str(&query[copied..start]);
        let after = &query[end..];
        let possessive = ["'s", "’s"]
            .into_iter()
            .find(|s| after.starts_with(s) && !after[s.len()..].starts_with(char::is_alphanumeric));
        match possessive {
            Some(s) => {
                dense.push_str("their");
                copied = end + s.len();
            }
            None => {
                dense.push_str("someone");
                copied = end;
            }
        }
        if !named.contains(&personas[p]) {
            named.push(personas[p].clone());
        }
        // Skip the name's words, and a possessive's `s`.
        i += name.len();
        while i < words.len() && words[i].0 < copied {
            i += 1;
        }
    }
    dense.push_str(&query[copied..]);
    lexical.push_str(&query[copied..]);
    NamedQuery {
        dense,
        lexical,
        named,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dialectic_agent_is_named_by_its_id_its_name_and_its_role() {
        let names = names(&["agent-architect", "System Architect", "architect"]);
        let owners = vec!["agent-architect".to_owned(); 3];
        for (query, dense) in [
            (
                "What did the System Architect's plan cache?",
                "What did the their plan cache?",
            ),
            (
                "What did agent architect propose?",
                "What did someone propose?",
            ),
            (
                "Why did the architect reject queues?",
                "Why did the someone reject queues?",
            ),
        ] {
            let q = split_names_as(query, &names, &owners);
            assert_eq!(q.dense, dense, "{query}");
            assert_eq!(q.named, ["agent-architect"], "{query}");
        }
        // Its longest name wins: "System Architect" is one name, not two.
        let q = split_names_as("System Architect said so", &names, &owners);
        assert_eq!(q.dense, "someone said so");
    }

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

    #[test]
    fn multi_word_hyphenated_and_non_ascii_names_match() {
        let personas = names(&["zoë-brandt", "agent-architect", "system-architect", "mara"]);
        let q = split_names(
            "Did Zoë Brandt's plan convince the System Architect, or agent-architect, or MARA?",
            &personas,
        );
        assert_eq!(
            q.dense,
            "Did their plan convince the someone, or someone, or someone?"
        );
        assert_eq!(q.lexical, "Did  plan convince the , or , or ?");
        assert_eq!(
            q.named,
            ["zoë-brandt", "system-architect", "agent-architect", "mara"]
        );
        // Words that are apart, or only part of a name, name nobody.
        let q = split_names("Zoë, Brandt and the architect", &personas);
        assert!(q.named.is_empty(), "{:?}", q.named);
        assert_eq!(q.dense, "Zoë, Brandt and the architect");
    }
}
