//! [`ContextDir`]: the directory the file tools are confined to.

use std::path::{Component, Path, PathBuf};

use crate::error::ToolError;

/// A directory the file tools may read, and nothing outside it: every path
/// is relative to it, resolved with its symlinks, and refused when the
/// result lies outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextDir {
    root: PathBuf,
}

impl ContextDir {
    /// The directory at `path` (it must exist).
    pub fn new(path: &Path) -> Result<Self, ToolError> {
        let root = path.canonicalize().map_err(|e| ToolError::Io {
            what: format!("context directory {}", path.display()),
            reason: e.to_string(),
        })?;
        if !root.is_dir() {
            return Err(ToolError::Io {
                what: format!("context directory {}", path.display()),
                reason: "not a directory".into(),
            });
        }
        Ok(Self { root })
    }

    /// The directory, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The existing file or directory `relative` names inside the
    /// directory. Refused: an absolute path, a path through `..`, and any
    /// path (a symlink included) that resolves outside.
    pub fn resolve(&self, relative: &str) -> Result<PathBuf, ToolError> {
        let refuse = |reason: &str| ToolError::Path {
            path: relative.to_owned(),
            reason: reason.to_owned(),
        };
        let given = Path::new(relative.trim());
        if given.is_absolute() || given.has_root() {
            return Err(refuse(
                "absolute paths are refused: name a path inside the context directory",
            ));
        }
        if given
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return Err(refuse(
                "`..` is refused: name a path inside the context directory",
            ));
        }
        let joined = self.root.join(given);
        let resolved = joined.canonicalize().map_err(|e| ToolError::Path {
            path: relative.to_owned(),
            reason: format!("not found ({e})"),
        })?;
        if !resolved.starts_with(&self.root) {
            return Err(refuse(
                "it resolves outside the context directory (a symlink?)",
            ));
        }
        Ok(resolved)
    }

    /// `path` (inside the directory) relative to it, with `/` separators.
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }
}
