//! The tools agents may call, by name ([`ToolName`]): one type from the
//! configuration that grants them to the tool box that builds them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A tool Agon has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    /// Searches the debate's own history (dialectic's `context_search`).
    ContextSearch,
    /// Lists the files of the context directory.
    ListFiles,
    /// Reads a file of the context directory.
    FileRead,
}

impl ToolName {
    /// Every tool.
    pub const ALL: [ToolName; 3] = [Self::ContextSearch, Self::ListFiles, Self::FileRead];

    /// Its name, as configurations and models spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ContextSearch => "context_search",
            Self::ListFiles => "list_files",
            Self::FileRead => "file_read",
        }
    }

    /// Whether it reads the context directory (and needs one).
    pub fn needs_context_dir(self) -> bool {
        matches!(self, Self::ListFiles | Self::FileRead)
    }

    /// Every tool's name, comma-separated (for error messages).
    pub fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ToolName {
    type Err = UnknownTool;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s.trim())
            .ok_or_else(|| UnknownTool(s.to_owned()))
    }
}

/// A name that is not one of Agon's tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a tool Agon has ({names})", names = ToolName::names())]
pub struct UnknownTool(pub String);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn tool_names_read_back_and_unknown_ones_are_named() {
        for tool in ToolName::ALL {
            assert_eq!(tool.as_str().parse::<ToolName>(), Ok(tool));
            assert_eq!(serde_json::to_string(&tool).unwrap(), format!("\"{tool}\""));
        }
        let e = "web_search".parse::<ToolName>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`web_search` is not a tool Agon has (context_search, list_files, file_read)"
        );
        assert!(!ToolName::ContextSearch.needs_context_dir());
        assert!(ToolName::FileRead.needs_context_dir());
    }
}
