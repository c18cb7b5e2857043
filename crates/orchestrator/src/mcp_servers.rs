//! The MCP servers of a run: started before the first step when a
//! participant is granted one of their tools, every granted tool checked
//! against what its server lists, stopped when the run ends (a resumed
//! debate starts them again).

use std::collections::BTreeSet;
use std::sync::Arc;

use agon_core::{DebateId, ToolGrant};
use agon_tools::{McpLaunch, McpServerSpec, McpServers, ToolError};

use crate::calls::RunSettings;
use crate::error::OrchestratorError;

/// Starts the servers `settings`' grants name (only those), or `None` when
/// no participant is granted an MCP tool. A server that is not declared,
/// whose header variable is unset, that does not start, or that lacks a
/// granted tool is an error naming it, before any turn.
pub(crate) async fn start(
    debate: &DebateId,
    settings: &RunSettings,
) -> Result<Option<Arc<McpServers>>, OrchestratorError> {
    let failure = |source: ToolError| OrchestratorError::Mcp {
        debate: debate.to_string(),
        source,
    };
    let grants: Vec<(String, String, Option<String>)> = settings
        .tools
        .iter()
        .flat_map(|(persona, (names, _))| {
            names.iter().filter_map(move |name| match name.parse() {
                Ok(ToolGrant::Mcp { server, tool }) => Some((persona.to_string(), server, tool)),
                _ => None,
            })
        })
        .collect();
    let used: BTreeSet<&str> = grants
        .iter()
        .map(|(_, server, _)| server.as_str())
        .collect();
    if used.is_empty() {
        return Ok(None);
    }
    let mut specs = Vec::new();
    for name in used {
        let config = settings.mcp_servers.get(name).ok_or_else(|| {
            failure(ToolError::Mcp {
                server: name.to_owned(),
                reason: "is granted to a participant but `mcp_servers` does not declare it".into(),
            })
        })?;
        specs.push(McpServerSpec {
            name: name.to_owned(),
            launch: launch(name, config).map_err(failure)?,
            call_timeout: config.call_timeout(),
        });
    }
    let servers = McpServers::start(specs).await.map_err(failure)?;
    for (persona, server, tool) in &grants {
        if let Err(source) = servers.tools(server, tool.as_deref()) {
            servers.stop().await;
            return Err(OrchestratorError::Tools {
                debate: debate.to_string(),
                persona: persona.clone(),
                source,
            });
        }
    }
    Ok(Some(Arc::new(servers)))
}

/// How `name` is reached, its headers read from the environment now.
fn launch(name: &str, config: &agon_config::McpServerConfig) -> Result<McpLaunch, ToolError> {
    match (&config.command, &config.url) {
        (Some(program), None) => Ok(McpLaunch::Command {
            program: program.clone(),
            args: config.args.clone(),
            env: config
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }),
        (None, Some(url)) => {
            let headers = config
                .headers_from_env
                .iter()
                .map(|(header, var)| match std::env::var(var) {
                    Ok(value) => Ok((header.clone(), value)),
                    Err(_) => Err(ToolError::Mcp {
                        server: name.to_owned(),
                        reason: format!(
                            "header {header}: the environment variable {var} is not set"
                        ),
                    }),
                })
                .collect::<Result<_, _>>()?;
            Ok(McpLaunch::Http {
                url: url.clone(),
                headers,
            })
        }
        _ => Err(ToolError::Mcp {
            server: name.to_owned(),
            reason: "needs exactly one of `command` and `url`".into(),
        }),
    }
}
