//! [`ToolBox`]: the tools a config names, built.

use std::sync::Arc;

use agon_core::{Blackboard, DebateId, ToolGrant, ToolName};
use agon_memory::Memory;

use crate::context_dir::ContextDir;
use crate::error::ToolError;
use crate::files::{FileRead, ListFiles};
use crate::mcp::McpServers;
use crate::search::ContextSearch;
use crate::tool::Tool;
use crate::transcript::TranscriptSearch;

/// Tool calls an agent may make per phase when its config sets no limit
/// (dialectic's `toolCallLimit` default).
pub const DEFAULT_CALL_LIMIT: usize = 10;

/// Named tools, ready to call.
#[derive(Clone, Default)]
pub struct ToolBox {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolBox {
    /// The tools `names` names: the file tools need `context_dir`;
    /// `context_search` searches the debate's `memory` when it has one, else
    /// the messages of `board` (the debate as it stands); `SERVER/TOOL` and
    /// `SERVER/*` are tools of the running `mcp` servers. An unknown name,
    /// or a tool that cannot be built, is an error naming it.
    pub fn build(
        names: &[String],
        context_dir: Option<&ContextDir>,
        memory: Option<(&Memory, &DebateId)>,
        mcp: Option<&McpServers>,
        board: &Blackboard,
    ) -> Result<Self, ToolError> {
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut add = |tool: Arc<dyn Tool>| {
            if !tools.iter().any(|t| t.name() == tool.name()) {
                tools.push(tool);
            }
        };
        for name in names {
            let unavailable = |reason: &str| ToolError::Unavailable {
                name: name.clone(),
                reason: reason.to_owned(),
            };
            let grant: ToolGrant = name
                .parse()
                .map_err(|e: agon_core::UnknownTool| unavailable(&e.to_string()))?;
            let known = match grant {
                ToolGrant::Builtin(known) => known,
                ToolGrant::Mcp { server, tool } => {
                    let servers = mcp.ok_or_else(|| ToolError::Mcp {
                        server: server.clone(),
                        reason: "is not running (the debate started no MCP server)".into(),
                    })?;
                    for tool in servers.tools(&server, tool.as_deref())? {
                        add(tool);
                    }
                    continue;
                }
            };
            let tool: Arc<dyn Tool> = match known {
                ToolName::ListFiles => {
                    Arc::new(ListFiles::new(context_dir.cloned().ok_or_else(|| {
                        unavailable("needs a context directory (--context-dir)")
                    })?))
                }
                ToolName::FileRead => {
                    Arc::new(FileRead::new(context_dir.cloned().ok_or_else(|| {
                        unavailable("needs a context directory (--context-dir)")
                    })?))
                }
                ToolName::ContextSearch => match memory {
                    Some((memory, debate)) => {
                        Arc::new(ContextSearch::new(memory.clone(), debate.clone()))
                    }
                    None => Arc::new(TranscriptSearch::of(board)),
                },
            };
            add(tool);
        }
        Ok(Self { tools })
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// Whether it holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Every tool.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }
}
