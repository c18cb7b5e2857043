//! MCP servers' tools as agent tools: [`McpServers`] starts (or connects
//! to) the servers a debate names, lists their tools once, and hands out
//! each tool an agent was granted as a [`Tool`] like the built-in ones. The
//! client is the official Rust SDK (rmcp): a server started by command
//! speaks over its stdio, one given by URL over streamable HTTP.
//!
//! What a server says is untrusted: a tool's description is cut to
//! [`MAX_DESCRIPTION_CHARS`], its result rendered as text (images and audio
//! as a line naming them), a call bounded by the server's timeout, and a
//! failure is a failed call the model reads, never a failed debate.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};

use crate::error::ToolError;
use crate::tool::{Tool, ToolOutput};

/// How long a server may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest tool description a model is shown.
pub const MAX_DESCRIPTION_CHARS: usize = 1_024;

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpLaunch {
    /// A program started for the debate, spoken to over its stdin and
    /// stdout (its stderr goes to the debate's process's stderr).
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it.
        env: Vec<(String, String)>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint's URL.
        url: String,
        /// Headers sent with every request (already resolved).
        headers: Vec<(String, String)>,
    },
}

/// One server as a debate declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// Its name in the configuration (the `SERVER` of `SERVER/TOOL`).
    pub name: String,
    /// How it is reached.
    pub launch: McpLaunch,
    /// How long one tool call may take.
    pub call_timeout: Duration,
}

/// A running server: its session and the tools it listed.
struct Server {
    name: String,
    peer: Peer<RoleClient>,
    tools: Vec<rmcp::model::Tool>,
    call_timeout: Duration,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, ()>>>,
}

/// The MCP servers of one run, started together and stopped together.
pub struct McpServers {
    servers: Vec<Arc<Server>>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.servers.iter().map(|s| &s.name))
            .finish()
    }
}

impl McpServers {
    /// Starts every server of `specs` and lists its tools. A server that
    /// does not start, or does not answer within [`START_TIMEOUT`], is an
    /// error naming it (the servers already started are stopped).
    pub async fn start(specs: Vec<McpServerSpec>) -> Result<Self, ToolError> {
        let mut started = Self {
            servers: Vec::new(),
        };
        for spec in specs {
            match tokio::time::timeout(START_TIMEOUT, Server::start(&spec)).await {
                Ok(Ok(server)) => started.servers.push(Arc::new(server)),
                Ok(Err(reason)) => {
                    started.stop().await;
                    return Err(ToolError::Mcp {
                        server: spec.name,
                        reason,
                    });
                }
                Err(_) => {
                    started.stop().await;
                    return Err(ToolError::Mcp {
                        server: spec.name,
                        reason: format!(
                            "did not start and list its tools within {} s",
                            START_TIMEOUT.as_secs()
                        ),
                    });
                }
            }
        }
        Ok(started)
    }

    fn server(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// `server`'s tool `tool`, or every tool it lists (`tool` is `None`),
    /// as agent tools named `SERVER__TOOL`. A server that is not running or
    /// a tool it does not list is an error naming both.
    pub fn tools(&self, server: &str, tool: Option<&str>) -> Result<Vec<Arc<dyn Tool>>, ToolError> {
        let running = self.server(server).ok_or_else(|| ToolError::Mcp {
            server: server.to_owned(),
            reason: "is not one of the debate's running MCP servers".into(),
        })?;
        let chosen: Vec<&rmcp::model::Tool> = match tool {
            Some(name) => {
                let found = running.tools.iter().find(|t| t.name == name);
                vec![found.ok_or_else(|| ToolError::Mcp {
                    server: server.to_owned(),
                    reason: format!(
                        "has no tool `{name}` (it lists {})",
                        running
                            .tools
                            .iter()
                            .map(|t| t.name.as_ref())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?]
            }
            None => running.tools.iter().collect(),
        };
        Ok(chosen
            .into_iter()
            .map(|t| Arc::new(McpTool::new(Arc::clone(running), t)) as Arc<dyn Tool>)
            .collect())
    }

    /// Stops every server: a started program is asked to quit (and killed
    /// if it does not), an HTTP session is closed.
    pub async fn stop(&self) {
        for server in &self.servers {
            if let Some(service) = server.service.lock().await.take() {
                service.cancel().await.ok();
            }
        }
    }
}

impl Server {
    async fn start(spec: &McpServerSpec) -> Result<Self, String> {
        let service = match &spec.launch {
            McpLaunch::Command { program, args, env } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().map(|(k, v)| (k, v)));
                let transport = TokioChildProcess::new(command)
                    .map_err(|e| format!("cannot start `{program}`: {e}"))?;
                ().serve(transport)
                    .await
                    .map_err(|e| format!("`{program}` did not speak MCP on its stdio: {e}"))?
            }
            McpLaunch::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let header = HeaderName::try_from(name.as_str())
                        .map_err(|e| format!("header {name:?}: {e}"))?;
                    let value = HeaderValue::try_from(value.as_str())
                        .map_err(|e| format!("header {name:?}: its value: {e}"))?;
                    custom.insert(header, value);
                }
                let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                let transport = StreamableHttpClientTransport::from_config(config);
                ().serve(transport)
                    .await
                    .map_err(|e| format!("{url} did not answer as an MCP server: {e}"))?
            }
        };
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        Ok(Self {
            name: spec.name.clone(),
            peer: service.peer().clone(),
            tools,
            call_timeout: spec.call_timeout,
            service: tokio::sync::Mutex::new(Some(service)),
        })
    }
}

/// One MCP server's tool, as an agent tool.
struct McpTool {
    server: Arc<Server>,
    tool: String,
    exposed: String,
    description: String,
    parameters: serde_json::Value,
}

impl McpTool {
    fn new(server: Arc<Server>, tool: &rmcp::model::Tool) -> Self {
        let mut schema = serde_json::Value::Object(tool.input_schema.as_ref().clone());
        if let Some(map) = schema.as_object_mut() {
            map.remove("$schema");
        }
        let described = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or("");
        let description = format!(
            "{} (tool `{}` of the MCP server `{}`)",
            described
                .chars()
                .take(MAX_DESCRIPTION_CHARS)
                .collect::<String>()
                .trim(),
            tool.name,
            server.name
        );
        Self {
            exposed: agon_core::mcp_tool_name(&server.name, &tool.name),
            tool: tool.name.to_string(),
            description,
            parameters: schema,
            server,
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.exposed
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> serde_json::Value {
        self.parameters.clone()
    }

    async fn call(&self, arguments: serde_json::Value) -> ToolOutput {
        let failed = |reason: String| {
            ToolOutput::failed(&ToolError::Mcp {
                server: self.server.name.clone(),
                reason,
            })
        };
        let arguments = match arguments {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            other => {
                return ToolOutput::failed(&ToolError::Arguments {
                    tool: self.exposed.clone(),
                    reason: format!("expected an object, got {other}"),
                });
            }
        };
        let mut params = CallToolRequestParams::new(self.tool.clone());
        params.arguments = arguments;
        let call = self.server.peer.call_tool(params);
        match tokio::time::timeout(self.server.call_timeout, call).await {
            Ok(Ok(result)) => rendered(&result),
            Ok(Err(e)) => failed(format!("`{}` failed: {e}", self.tool)),
            Err(_) => failed(format!(
                "`{}` did not answer within {} s",
                self.tool,
                self.server.call_timeout.as_secs()
            )),
        }
    }
}

/// A call's result as the text a model reads: text blocks as they are,
/// embedded text resources by their text, anything else as a line naming
/// it; the structured result when there is no text.
fn rendered(result: &CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image ({}) not shown]", i.mime_type),
            ContentBlock::Audio(a) => format!("[audio ({}) not shown]", a.mime_type),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                ResourceContents::BlobResourceContents { uri, .. } => {
                    format!("[binary resource {uri} not shown]")
                }
                _ => "[a resource of a kind Agon does not read]".to_owned(),
            },
            ContentBlock::ResourceLink(link) => format!("[resource link {}]", link.uri),
            _ => "[content of a kind Agon does not read]".to_owned(),
        })
        .collect();
    if parts.iter().all(|p| p.trim().is_empty())
        && let Some(structured) = &result.structured_content
    {
        parts = vec![structured.to_string()];
    }
    ToolOutput {
        ok: result.is_error != Some(true),
        content: parts.join("\n"),
    }
}
