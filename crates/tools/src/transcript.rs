//! `context_search` without the vector memory: BM25 over the debate's own
//! messages, as dialectic searches its history. A debate whose memory is
//! off still gives its agents the tool; one with the memory on searches
//! the memory instead ([`crate::ContextSearch`]).

use std::sync::OnceLock;

use async_trait::async_trait;

use agon_core::{Blackboard, ToolName};
use agon_memory::Bm25;

use crate::error::ToolError;
use crate::search::ContextSearchArgs;
use crate::tool::TypedTool;

/// Longest excerpt of a message a hit shows, in characters.
pub const HIT_CHARS: usize = 600;

/// One message the search can find.
#[derive(Debug, Clone)]
struct Said {
    round: u32,
    kind: String,
    speaker: String,
    text: String,
}

/// Searches the messages of the debate so far by their words (BM25, the
/// lexical half of Agon's recall): one line a hit, `(round N, KIND,
/// SPEAKER) TEXT`, best first, each cut at [`HIT_CHARS`] characters. The
/// index is built at the first search, so a turn that never searches pays
/// only for the copy of the messages.
#[derive(Debug)]
pub struct TranscriptSearch {
    said: Vec<Said>,
    index: OnceLock<Bm25>,
}

impl TranscriptSearch {
    /// Searching every message `board` holds now.
    pub fn of(board: &Blackboard) -> Self {
        let said = board
            .messages()
            .iter()
            .map(|m| Said {
                round: m.round,
                kind: m.kind.label().to_owned(),
                speaker: board.persona_name(&m.persona).to_owned(),
                text: m.content.split_whitespace().collect::<Vec<_>>().join(" "),
            })
            .collect();
        Self {
            said,
            index: OnceLock::new(),
        }
    }

    fn index(&self) -> &Bm25 {
        self.index.get_or_init(|| {
            let mut index = Bm25::new();
            for s in &self.said {
                index.add(&s.text);
            }
            index
        })
    }
}

#[async_trait]
impl TypedTool for TranscriptSearch {
    type Args = ContextSearchArgs;
    const NAME: &'static str = ToolName::ContextSearch.as_str();
    const DESCRIPTION: &'static str = "Search what has been said in this debate so far (every message, by its words) for a query.";

    async fn run(&self, args: ContextSearchArgs) -> Result<String, ToolError> {
        let k = args.hits()?;
        let hits = self.index().search(&args.query, k, |_| true);
        if hits.is_empty() {
            return Ok("(nothing said so far matches)".into());
        }
        Ok(hits
            .iter()
            .filter_map(|(slot, _)| self.said.get(*slot as usize))
            .map(|s| {
                let text = match s.text.char_indices().nth(HIT_CHARS) {
                    Some((cut, _)) => format!("{}…", &s.text[..cut]),
                    None => s.text.clone(),
                };
                format!("(round {}, {}, {}) {text}", s.round, s.kind, s.speaker)
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}
