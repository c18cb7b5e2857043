//! Validity: how long a memory of what a persona holds stays true.
//!
//! A memory that records what a persona holds (its stance on the topic, its
//! position on an aspect, a message in which it took or changed a stance)
//! names its [`subject`](crate::MemoryMeta::subject), a key made by
//! [`subject_key`] from the topic's question or the aspect's label. It holds
//! from when it was said until a later memory of the same persona on the
//! same subject replaces it: the earlier one is then closed
//! ([`Superseded`]: by which memory, until when), never deleted. Memories
//! recorded at the same instant (a message and the position its analysis
//! recorded) hold together.
//!
//! Recall ranks current memories first and shows a superseded one only
//! with its successor ([`Successor`], "held until DATE, then …"); a question
//! about change ([`asks_about_change`]) keeps the history in its ranking.

use std::collections::BTreeSet;

use agon_core::{DebateId, PersonaId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::MemoryError;
use crate::index::MemoryIndex;
pub use crate::record::Superseded;
use crate::record::{MemoryFilter, MemoryKind, MemoryMeta};

/// The key of a subject: its words in lower case, joined by single spaces
/// (so "Treasury  Risk" and "treasury risk." are one subject), at most 200
/// characters. `None` for a text without a word.
pub fn subject_key(text: &str) -> Option<String> {
    let key = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ");
    if key.is_empty() {
        return None;
    }
    Some(match key.char_indices().nth(200) {
        Some((i, _)) => key[..i].trim_end().to_owned(),
        None => key,
    })
}

/// A superseded memory's successor, as recall shows it: when it stopped
/// holding, and the memory on its subject that holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Successor {
    /// When the recalled memory stopped holding.
    pub until: DateTime<Utc>,
    /// The memory of the same persona on the same subject that holds now
    /// (the replacements followed to the latest).
    pub memory: MemoryMeta,
}

impl Successor {
    /// "held until 2026-11-20, then: …": the words a reader sees after a
    /// superseded memory.
    pub fn note(&self) -> String {
        format!(
            "held until {}, then: {}",
            self.until.format("%Y-%m-%d"),
            self.memory.content
        )
    }
}

/// The validity of each memory of one persona on one subject, given all of
/// them: each is superseded by the first one recorded strictly later
/// (memories of the same instant hold together), the latest are current.
/// Returned in the order of `history`.
pub fn chain(history: &[MemoryMeta]) -> Vec<(String, Option<Superseded>)> {
    let mut order: Vec<&MemoryMeta> = history.iter().collect();
    order.sort_by(|a, b| by_time(a, b));
    history
        .iter()
        .map(|m| {
            let next = order.iter().find(|n| n.created > m.created);
            (
                m.id.clone(),
                next.map(|n| Superseded {
                    by: n.id.clone(),
                    until: n.created,
                }),
            )
        })
        .collect()
}

/// Sets the validity of every memory of `persona` on `subject` from their
/// times ([`chain`]); returns how many are closed. Called after memories on
/// the subject were stored or deleted.
pub async fn rechain(
    index: &dyn MemoryIndex,
    persona: &PersonaId,
    subject: &str,
) -> Result<usize, MemoryError> {
    let subjects = BTreeSet::from([(persona.clone(), subject.to_owned())]);
    rechain_all(index, &subjects).await
}

/// [`rechain`] for several subjects at once: only the memories whose
/// validity changes are written, in one write. Returns how many of the
/// subjects' memories are closed.
pub async fn rechain_all(
    index: &dyn MemoryIndex,
    subjects: &BTreeSet<(PersonaId, String)>,
) -> Result<usize, MemoryError> {
    let mut wanted = Vec::new();
    for (persona, subject) in subjects {
        let history = index.on_subject(persona, subject).await?;
        wanted.extend(chain(&history));
    }
    let closed = wanted.iter().filter(|(_, s)| s.is_some()).count();
    let ids: Vec<String> = wanted.iter().map(|(id, _)| id.clone()).collect();
    let stored = index.superseded(&ids).await?;
    let changed: Vec<(String, Option<Superseded>)> = wanted
        .into_iter()
        .filter(|(id, s)| stored.get(id) != s.as_ref())
        .collect();
    if !changed.is_empty() {
        index.set_superseded(changed).await?;
    }
    Ok(closed)
}

/// Deletes every memory of `debate` ([`MemoryIndex::delete_debate`]) and
/// sets again the validity of the subjects its memories were on, so a
/// memory its deleted ones had closed holds again (until a later one of
/// another debate). Returns how many memories were deleted.
pub async fn forget_debate(
    index: &dyn MemoryIndex,
    debate: &DebateId,
) -> Result<usize, MemoryError> {
    let filter = MemoryFilter {
        debate: Some(debate.clone()),
        kinds: MemoryKind::ALL.to_vec(),
        ..MemoryFilter::default()
    };
    let subjects: BTreeSet<(PersonaId, String)> = index
        .matching(&filter, usize::MAX)
        .await?
        .into_iter()
        .filter_map(|m| m.subject.map(|s| (m.persona, s)))
        .collect();
    let deleted = index.delete_debate(debate).await?;
    rechain_all(index, &subjects).await?;
    Ok(deleted)
}

/// A remembered position replaced by a later one across two debates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StanceChange {
    /// The position that no longer holds.
    pub before: MemoryMeta,
    /// The position that replaced it (its time is when `before` stopped
    /// holding).
    pub after: MemoryMeta,
}

impl StanceChange {
    /// Whether the position itself changed, not only its round (a later
    /// debate restating the same position replaces the memory, not the
    /// stance).
    pub fn changed(&self) -> bool {
        without_round(&self.before.content) != without_round(&self.after.content)
    }
}

/// A remembered position without its round, as the harvester writes it
/// ("Ada's position on X (round 2): …" → "Ada's position on X: …").
fn without_round(content: &str) -> String {
    match (content.find(" (round "), content.find("): ")) {
        (Some(open), Some(close)) if open < close => {
            format!("{}{}", &content[..open], &content[close + 1..])
        }
        _ => content.to_owned(),
    }
}

/// Oldest first, then by id: the order validity follows.
fn by_time(a: &MemoryMeta, b: &MemoryMeta) -> std::cmp::Ordering {
    a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id))
}

/// The changes of position across debates that involve `debate`: the
/// earlier debates' positions its own replaced, and its own positions
/// that later debates replaced, each subject's positions in time order
/// ([`chain`] over the position memories alone, so a message on the
/// subject does not split a change in two). Oldest first.
pub async fn stance_changes(
    index: &dyn MemoryIndex,
    debate: &DebateId,
) -> Result<Vec<StanceChange>, MemoryError> {
    let filter = MemoryFilter {
        debate: Some(debate.clone()),
        kinds: vec![MemoryKind::Position],
        ..MemoryFilter::default()
    };
    let subjects: BTreeSet<(PersonaId, String)> = index
        .matching(&filter, usize::MAX)
        .await?
        .into_iter()
        .filter_map(|m| m.subject.map(|s| (m.persona, s)))
        .collect();
    let mut out = Vec::new();
    for (persona, subject) in &subjects {
        let mut positions: Vec<MemoryMeta> = index
            .on_subject(persona, subject)
            .await?
            .into_iter()
            .filter(|m| m.kind == MemoryKind::Position)
            .collect();
        positions.sort_by(by_time);
        // The last position each debate held on the subject, in time order.
        let mut last: Vec<MemoryMeta> = Vec::new();
        for m in positions {
            match last.last_mut() {
                Some(prev) if prev.debate == m.debate => *prev = m,
                _ => last.push(m),
            }
        }
        for pair in last.windows(2) {
            let [before, after] = pair else { continue };
            if &before.debate == debate || &after.debate == debate {
                out.push(StanceChange {
                    before: before.clone(),
                    after: after.clone(),
                });
            }
        }
    }
    out.sort_by_key(|c| c.after.created);
    Ok(out)
}

/// Whether a recall query asks how something changed ("used to",
/// "before", "changed", "previously", "no longer", …): such a query gets
/// the history ranked as it scores, superseded memories included.
pub fn asks_about_change(query: &str) -> bool {
    const CUES: [&str; 14] = [
        "used to",
        "before",
        "changed",
        "change of",
        "changes",
        "previous",
        "previously",
        "formerly",
        "no longer",
        "anymore",
        "any more",
        "originally",
        "at first",
        "history",
    ];
    let words = subject_key(query).unwrap_or_default();
    let padded = format!(" {words} ");
    CUES.iter().any(|cue| padded.contains(&format!(" {cue} ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn meta(id: &str, minute: u32) -> MemoryMeta {
        MemoryMeta {
            id: id.into(),
            debate: "d".into(),
            persona: "p".into(),
            content: format!("memory {id}"),
            kind: crate::MemoryKind::Position,
            importance: 5,
            round: 0,
            created: Utc.with_ymd_and_hms(2026, 11, 20, 10, minute, 0).unwrap(),
            subject: Some("treasury risk".into()),
        }
    }

    #[test]
    fn subjects_are_their_words_in_lower_case() {
        assert_eq!(
            subject_key("  Treasury  Risk. ").as_deref(),
            Some("treasury risk")
        );
        assert_eq!(
            subject_key("Is Bitcoin a hedge?").as_deref(),
            Some("is bitcoin a hedge")
        );
        assert_eq!(subject_key(" — ?"), None);
        assert_eq!(
            subject_key(&"word ".repeat(100)).unwrap().chars().count(),
            199
        );
    }

    #[test]
    fn each_memory_holds_until_the_next_later_one_and_same_instant_ones_hold_together() {
        let history = [meta("c", 3), meta("a", 1), meta("b1", 2), meta("b2", 2)];
        let chain = chain(&history);
        let by = |id: &str| {
            chain
                .iter()
                .find(|(i, _)| i == id)
                .and_then(|(_, s)| s.as_ref().map(|s| s.by.clone()))
        };
        assert_eq!(by("a").as_deref(), Some("b1"));
        assert_eq!(by("b1").as_deref(), Some("c"));
        assert_eq!(by("b2").as_deref(), Some("c"));
        assert_eq!(by("c"), None, "the latest is current");
        assert_eq!(chain[0].0, "c", "in the order given");
    }

    #[test]
    fn a_position_without_its_round() {
        assert_eq!(
            without_round("Ada's position on Rates (round 2): Hold them. (evidence: a)"),
            "Ada's position on Rates: Hold them. (evidence: a)"
        );
        assert_eq!(without_round("no round here"), "no round here");
    }

    #[test]
    fn questions_about_change_are_recognized() {
        for q in [
            "What did Ada use to think about the treasury? used to",
            "Did Ada's view on rates change before the vote?",
            "Ada changed her mind on rates",
            "Which stance did Ada hold previously?",
            "Ada no longer backs the covenant",
        ] {
            assert!(asks_about_change(q), "{q}");
        }
        for q in [
            "What does Ada think about the treasury?",
            "rates and inflation",
            "beforehand",
        ] {
            assert!(!asks_about_change(q), "{q}");
        }
    }

    #[test]
    fn a_successor_note_names_the_date_and_the_new_memory() {
        let s = Successor {
            until: meta("b", 2).created,
            memory: meta("b", 2),
        };
        assert_eq!(s.note(), "held until 2026-11-20, then: memory b");
    }
}
