//! MCP servers a configuration declares ([`McpServerConfig`]): their tools
//! are granted to participants as `SERVER/TOOL` (or `SERVER/*`) next to
//! Agon's own tools.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// Seconds an MCP tool call may take before it is a failed call.
pub const DEFAULT_MCP_CALL_TIMEOUT_SECS: u64 = 60;

/// One MCP server: started by command over stdio, or reached by URL over
/// streamable HTTP. Exactly one of `command` and `url`. dialectic's JSON
/// spells the same fields in camel case (`headersFromEnv`,
/// `callTimeoutSecs`), as Claude Desktop's `mcpServers` does.
///
/// ```toml
/// [mcp_servers.files]
/// command = "npx"
/// args = ["-y", "@modelcontextprotocol/server-filesystem", "./docs"]
///
/// [mcp_servers.search]
/// url = "https://mcp.example.com/mcp"
/// headers_from_env = { Authorization = "SEARCH_MCP_AUTHORIZATION" }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program to start (stdio transport), found on `PATH` or by path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables set for it (over the inherited ones).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The server's streamable HTTP endpoint (`http://` or `https://`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers sent to `url`, each read from an environment variable
    /// when the debate starts (header name → variable name), so no secret
    /// is stored with the debate.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", alias = "headersFromEnv")]
    pub headers_from_env: BTreeMap<String, String>,
    /// Seconds a tool call may take (default 60); a slower call is a
    /// failed call the model reads.
    #[serde(skip_serializing_if = "Option::is_none", alias = "callTimeoutSecs")]
    pub call_timeout_secs: Option<u64>,
}

impl McpServerConfig {
    /// How long a tool call may take.
    pub fn call_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.call_timeout_secs
                .unwrap_or(DEFAULT_MCP_CALL_TIMEOUT_SECS),
        )
    }

    /// Checks the server `name` (`mcp_servers.NAME` in `file`).
    pub(crate) fn validate(&self, name: &str, file: &str) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                file: file.to_owned(),
                field: format!("mcp_servers.{name}{field}"),
                reason,
            })
        };
        if !agon_core::is_server_name(name) {
            return bad(
                "",
                "a server's name is 1 to 32 letters, digits, `-` or `_`".into(),
            );
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) | (None, None) => {
                return bad(
                    "",
                    "give exactly one of `command` (stdio) and `url` (streamable HTTP)".into(),
                );
            }
            (Some(command), None) => {
                if command.trim().is_empty() {
                    return bad(".command", "must not be empty".into());
                }
                if !self.headers_from_env.is_empty() {
                    return bad(
                        ".headers_from_env",
                        "headers go to a `url` server; a `command` server takes `env`".into(),
                    );
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return bad(".url", format!("{url:?} is not an http:// or https:// URL"));
                }
                if !self.args.is_empty() || !self.env.is_empty() {
                    return bad(
                        "",
                        "`args` and `env` go to a `command` server, not a `url` one".into(),
                    );
                }
            }
        }
        if let Some(secs) = self.call_timeout_secs
            && !(1..=3_600).contains(&secs)
        {
            return bad(".call_timeout_secs", format!("{secs} is outside 1..=3600"));
        }
        Ok(())
    }
}
