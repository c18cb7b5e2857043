//! What can go wrong with a tool.

/// A tool's failure: shown to the model as the tool's result, or (when a
/// config names a tool that cannot be built) to the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not match the tool's schema.
    #[error("invalid arguments for {tool}: {reason}")]
    Arguments {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// A path outside the context directory, or one that cannot be used.
    #[error("path {path:?}: {reason}")]
    Path {
        /// The path as given.
        path: String,
        /// Why it is refused.
        reason: String,
    },
    /// Reading or listing failed.
    #[error("{what}: {reason}")]
    Io {
        /// What was read.
        what: String,
        /// The error.
        reason: String,
    },
    /// The debate's memory could not be searched.
    #[error("context_search failed: {0}")]
    Search(String),
    /// An MCP server failed to start, lacks a tool, or a call to it failed.
    #[error("MCP server `{server}`: {reason}")]
    Mcp {
        /// The server, as the configuration names it.
        server: String,
        /// What went wrong.
        reason: String,
    },
    /// A config names a tool Agon does not have, or one it cannot build.
    #[error("tool {name:?}: {reason}")]
    Unavailable {
        /// The name as configured.
        name: String,
        /// Why.
        reason: String,
    },
}
