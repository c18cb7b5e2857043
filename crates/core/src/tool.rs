//! The tools agents may call, by name ([`ToolName`]): one type from the
//! configuration that grants them to the tool box that builds them. A
//! grant ([`ToolGrant`]) names one of Agon's tools, or the tools of an MCP
//! server the configuration declares (`SERVER/TOOL`, `SERVER/*`).

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
#[error(
    "`{0}` is not a tool Agon has ({names}) nor an MCP server's (SERVER/TOOL or SERVER/*)",
    names = ToolName::names()
)]
pub struct UnknownTool(pub String);

/// A tool a participant may call, as its configuration grants it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolGrant {
    /// One of Agon's own tools.
    Builtin(ToolName),
    /// A tool of an MCP server the configuration declares: `SERVER/TOOL`,
    /// or every tool the server lists (`SERVER/*`, `tool` is `None`).
    Mcp {
        /// The server, as the configuration names it.
        server: String,
        /// The tool, as the server names it; `None` for all of them.
        tool: Option<String>,
    },
}

impl std::str::FromStr for ToolGrant {
    type Err = UnknownTool;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        let Some((server, tool)) = trimmed.split_once('/') else {
            return trimmed.parse().map(Self::Builtin);
        };
        let (server, tool) = (server.trim(), tool.trim());
        if !is_server_name(server) || tool.is_empty() || tool.contains('/') {
            return Err(UnknownTool(s.to_owned()));
        }
        Ok(Self::Mcp {
            server: server.to_owned(),
            tool: (tool != "*").then(|| tool.to_owned()),
        })
    }
}

/// Whether `name` can name an MCP server: letters, digits, `-` and `_`,
/// 1 to 32 of them (it becomes part of the tool names models see).
pub fn is_server_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The name a model sees for `server`'s tool `tool`: `SERVER__TOOL`, with
/// every character providers refuse in a function name (anything but
/// letters, digits, `-` and `_`) as `_`, at most 64 characters.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

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
            "`web_search` is not a tool Agon has (context_search, list_files, file_read) \
             nor an MCP server's (SERVER/TOOL or SERVER/*)"
        );
        assert!(!ToolName::ContextSearch.needs_context_dir());
        assert!(ToolName::FileRead.needs_context_dir());
    }

    #[test]
    fn grants_name_agons_tools_or_an_mcp_servers() {
        assert_eq!(
            "file_read".parse::<ToolGrant>(),
            Ok(ToolGrant::Builtin(ToolName::FileRead))
        );
        assert_eq!(
            " files/read_text_file ".parse::<ToolGrant>(),
            Ok(ToolGrant::Mcp {
                server: "files".into(),
                tool: Some("read_text_file".into())
            })
        );
        assert_eq!(
            "everything/*".parse::<ToolGrant>(),
            Ok(ToolGrant::Mcp {
                server: "everything".into(),
                tool: None
            })
        );
        for bad in ["web_search", "/echo", "a b/echo", "files/", "files/a/b"] {
            assert_eq!(
                bad.parse::<ToolGrant>(),
                Err(UnknownTool(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(
            mcp_tool_name("files", "read_text_file"),
            "files__read_text_file"
        );
        assert_eq!(mcp_tool_name("ev", "get sum.v2"), "ev__get_sum_v2");
        assert_eq!(mcp_tool_name("s", &"x".repeat(100)).len(), 64);
    }
}
