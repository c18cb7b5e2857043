//! Tools an agent may call while it contributes (dialectic's `tools`):
//! one [`Tool`] trait, the arguments of each tool a Rust type whose JSON
//! schema is generated ([`TypedTool`]), and the first tools:
//!
//! - [`ContextSearch`] (`context_search`): the debate's own memory,
//!   through Agon's recall; with the memory off, [`TranscriptSearch`]
//!   (BM25 over the debate's messages, as dialectic searches its history);
//! - [`ListFiles`] (`list_files`) and [`FileRead`] (`file_read`): confined
//!   to a [`ContextDir`]; a path that escapes it (`..`, an absolute path, a
//!   symlink pointing out) is refused, reads are size-limited.
//!
//! - the tools of MCP servers ([`McpServers`]): started by command over
//!   stdio or reached by URL over streamable HTTP, granted as
//!   `SERVER/TOOL` or `SERVER/*`, and seen by the model as `SERVER__TOOL`.
//!
//! A tool never fails its caller: a bad argument, a refused path or a
//! failed search is a [`ToolOutput`] with `ok: false` and the reason, which
//! the model sees. [`ToolBox`] builds the tools a config names.

mod context_dir;
mod error;
mod files;
mod mcp;
mod search;
mod tool;
mod toolbox;
mod transcript;

pub use context_dir::ContextDir;
pub use error::ToolError;
pub use files::{FileRead, FileReadArgs, ListFiles, ListFilesArgs, MAX_LISTED, MAX_READ_BYTES};
pub use mcp::{MAX_DESCRIPTION_CHARS, McpLaunch, McpServerSpec, McpServers, START_TIMEOUT};
pub use search::{ContextSearch, ContextSearchArgs};
pub use tool::{Tool, ToolOutput, TypedTool};
pub use toolbox::{DEFAULT_CALL_LIMIT, ToolBox};
pub use transcript::{HIT_CHARS, TranscriptSearch};
