//! `list_files` and `file_read`, confined to a [`ContextDir`].

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context_dir::ContextDir;
use crate::error::ToolError;
use crate::tool::TypedTool;

/// Most entries `list_files` returns.
pub const MAX_LISTED: usize = 200;

/// Most bytes `file_read` returns (a longer file is cut, and says so).
pub const MAX_READ_BYTES: usize = 64 * 1024;

/// `list_files`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// A directory inside the context directory (default: its top).
    #[serde(default)]
    pub path: Option<String>,
}

/// Lists a directory of the context directory: one entry a line, a
/// directory with a trailing `/`, sorted, at most [`MAX_LISTED`].
#[derive(Debug, Clone)]
pub struct ListFiles {
    dir: ContextDir,
}

impl ListFiles {
    /// Listing inside `dir`.
    pub fn new(dir: ContextDir) -> Self {
        Self { dir }
    }
}

#[async_trait]
impl TypedTool for ListFiles {
    type Args = ListFilesArgs;
    const NAME: &'static str = agon_core::ToolName::ListFiles.as_str();
    const DESCRIPTION: &'static str = "List the files and directories of a directory in the debate's context directory (paths relative to it; directories end with /).";

    async fn run(&self, args: ListFilesArgs) -> Result<String, ToolError> {
        let at = args.path.unwrap_or_else(|| ".".to_owned());
        let dir = self.dir.resolve(&at)?;
        let io = |e: std::io::Error| ToolError::Io {
            what: format!("listing {at}"),
            reason: e.to_string(),
        };
        if !dir.is_dir() {
            return Err(ToolError::Path {
                path: at,
                reason: "not a directory (use file_read)".into(),
            });
        }
        let mut entries: Vec<String> = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let path = entry.path();
            // A symlink that leads outside is not shown.
            let Ok(resolved) = path.canonicalize() else {
                continue;
            };
            if !resolved.starts_with(self.dir.root()) {
                continue;
            }
            let mut name = self.dir.relative(&path);
            if resolved.is_dir() {
                name.push('/');
            }
            entries.push(name);
        }
        entries.sort();
        let total = entries.len();
        entries.truncate(MAX_LISTED);
        let mut out = entries.join("\n");
        if total > MAX_LISTED {
            out.push_str(&format!("\n… {} more not shown", total - MAX_LISTED));
        }
        if total == 0 {
            out = "(empty directory)".into();
        }
        Ok(out)
    }
}

/// `file_read`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileReadArgs {
    /// A file inside the context directory.
    pub path: String,
}

/// Reads a UTF-8 text file of the context directory, at most
/// [`MAX_READ_BYTES`] (a longer file is cut at a character boundary and
/// says how long it is).
#[derive(Debug, Clone)]
pub struct FileRead {
    dir: ContextDir,
}

impl FileRead {
    /// Reading inside `dir`.
    pub fn new(dir: ContextDir) -> Self {
        Self { dir }
    }
}

#[async_trait]
impl TypedTool for FileRead {
    type Args = FileReadArgs;
    const NAME: &'static str = agon_core::ToolName::FileRead.as_str();
    const DESCRIPTION: &'static str =
        "Read a text file of the debate's context directory (path relative to it; at most 64 KiB).";

    async fn run(&self, args: FileReadArgs) -> Result<String, ToolError> {
        let path = self.dir.resolve(&args.path)?;
        if !path.is_file() {
            return Err(ToolError::Path {
                path: args.path,
                reason: "not a file (use list_files)".into(),
            });
        }
        let bytes = std::fs::read(&path).map_err(|e| ToolError::Io {
            what: format!("reading {}", args.path),
            reason: e.to_string(),
        })?;
        let total = bytes.len();
        let head = &bytes[..total.min(MAX_READ_BYTES)];
        let text = match std::str::from_utf8(head) {
            Ok(t) => t,
            // Cut inside a character: keep what is whole.
            Err(e) if e.error_len().is_none() && total > MAX_READ_BYTES => {
                std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(_) => {
                return Err(ToolError::Io {
                    what: format!("reading {}", args.path),
                    reason: "not a UTF-8 text file".into(),
                });
            }
        };
        if total > MAX_READ_BYTES {
            Ok(format!(
                "{text}\n… (cut at {} of {total} bytes)",
                text.len()
            ))
        } else {
            Ok(text.to_owned())
        }
    }
}
