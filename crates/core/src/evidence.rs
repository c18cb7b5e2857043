//! Evidence a persona cited from its own corpus: the `[E:ID]` citations in
//! a message ([`cited_ids`]), and what the orchestrator found of them
//! ([`EvidenceCitation`], recorded as `evidence_cited`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{MessageId, PersonaId};

/// Longest id read from a citation (longer runs are not citations).
pub const MAX_CITED_ID_CHARS: usize = 16;

/// Longest passage kept with a citation, in characters.
pub const MAX_PASSAGE_CHARS: usize = 2_000;

/// A citation that named a chunk of the persona's corpus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CitedEvidence {
    /// The chunk's id, as cited.
    pub id: String,
    /// The file it comes from.
    pub source: String,
    /// The passage.
    pub passage: String,
}

/// The citations of one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceCitation {
    /// The message.
    pub message: MessageId,
    /// Its speaker.
    pub persona: PersonaId,
    /// Chunks of the speaker's corpus it cited, in order of first citation.
    pub cited: Vec<CitedEvidence>,
    /// Ids it cited that name no chunk of the speaker's corpus (invented
    /// sources, caught).
    pub rejected: Vec<String>,
}

/// The ids cited in `text` as `[E:ID]` (also `[E:ID, E:ID]`, any case, spaces
/// allowed after the colon), each once, in order. An id is 1 to
/// [`MAX_CITED_ID_CHARS`] letters or digits, lower-cased.
pub fn cited_ids(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let inner_start = open + 1;
        let Some(close) = rest[inner_start..].find(']') else {
            break;
        };
        let inner = &rest[inner_start..inner_start + close];
        for part in inner.split([',', ';']) {
            let part = part.trim();
            let Some(id) = part
                .strip_prefix("E:")
                .or_else(|| part.strip_prefix("e:"))
                .map(str::trim)
            else {
                continue;
            };
            let valid = !id.is_empty()
                && id.chars().count() <= MAX_CITED_ID_CHARS
                && id.chars().all(|c| c.is_ascii_alphanumeric());
            if valid {
                let id = id.to_ascii_lowercase();
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        rest = &rest[inner_start + close + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_are_read_in_order_once() {
        let text = "Ridership rose [E:1a2b3c4d]. Air improved [e: 0F0F0F0F, E:1a2b3c4d]; \
                    see [E:12] and [note] and [E:not-an-id] and [E:] and [E:0123456789abcdef0].";
        assert_eq!(cited_ids(text), ["1a2b3c4d", "0f0f0f0f", "12"]);
        assert!(cited_ids("no citations [here").is_empty());
    }
}
