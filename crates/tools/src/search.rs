//! `context_search`: the debate's own memory, through Agon's recall.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use agon_core::DebateId;
use agon_memory::{Memory, MemoryFilter};

use crate::error::ToolError;
use crate::tool::TypedTool;

/// `context_search`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextSearchArgs {
    /// What to look for.
    pub query: String,
    /// How many results (1-10, default 5).
    #[serde(default)]
    pub k: Option<usize>,
}

impl ContextSearchArgs {
    /// How many hits to return (`k`, 1-10, default 5); an empty query is
    /// refused.
    pub(crate) fn hits(&self) -> Result<usize, ToolError> {
        if self.query.trim().is_empty() {
            return Err(ToolError::Arguments {
                tool: agon_core::ToolName::ContextSearch.as_str().into(),
                reason: "the query is empty".into(),
            });
        }
        Ok(self.k.unwrap_or(5).clamp(1, 10))
    }
}

/// Searches what the debate remembers (positions, reflections, crux
/// cards, important messages) with Agon's scored recall: one line a hit,
/// `(round N, KIND, PERSONA) TEXT`.
#[derive(Debug, Clone)]
pub struct ContextSearch {
    memory: Memory,
    debate: DebateId,
}

impl ContextSearch {
    /// Searching `debate`'s memories in `memory`.
    pub fn new(memory: Memory, debate: DebateId) -> Self {
        Self { memory, debate }
    }
}

#[async_trait]
impl TypedTool for ContextSearch {
    type Args = ContextSearchArgs;
    const NAME: &'static str = agon_core::ToolName::ContextSearch.as_str();
    const DESCRIPTION: &'static str = "Search what this debate has remembered so far (positions, reflections, crux cards, important messages) for a query.";

    async fn run(&self, args: ContextSearchArgs) -> Result<String, ToolError> {
        let k = args.hits()?;
        let filter = MemoryFilter {
            debate: Some(self.debate.clone()),
            ..MemoryFilter::default()
        };
        let recall = self
            .memory
            .recall(&args.query, &filter, k)
            .await
            .map_err(|e| ToolError::Search(e.to_string()))?;
        if recall.memories.is_empty() {
            return Ok("(nothing remembered matches)".into());
        }
        Ok(recall
            .memories
            .iter()
            .map(|m| {
                format!(
                    "(round {}, {}, {}) {}",
                    m.memory.round,
                    m.memory.kind,
                    m.memory.persona,
                    m.memory.content.replace('\n', " ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}
