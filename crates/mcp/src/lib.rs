//! Agon as a [Model Context Protocol](https://modelcontextprotocol.io)
//! server: an adapter over the application (`agon-app`), as the CLI and
//! the HTTP server are. An MCP client (Claude Desktop, Claude Code, an
//! IDE, an agent framework) can start a debate, follow its progress, read
//! its report, answer its clarifying questions, add a moderator's note,
//! recall from the vector memory and list the debates.
//!
//! `agon mcp` serves it over stdio ([`serve_stdio`]); [`AgonMcp`] serves
//! any rmcp transport.
//!
//! A tool's failure (an unknown debate, a finished one, a bad
//! configuration, arguments of the wrong shape) is a tool result marked
//! as an error whose text names what was wrong, so the calling model
//! reads it and can try again.

use std::time::Duration;

use agon_app::App;
use agon_config::{DebateConfig, Overrides, ProtocolKind};
use agon_core::DebateId;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

mod text;

/// How often a waiting `start_debate` reports progress.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// The MCP server over one application.
#[derive(Clone)]
pub struct AgonMcp {
    app: App,
}

impl std::fmt::Debug for AgonMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgonMcp").finish_non_exhaustive()
    }
}

/// Serves `app` over stdin and stdout until the client closes them (the
/// process's logs must go to stderr).
pub async fn serve_stdio(app: App) -> Result<(), McpError> {
    let service = AgonMcp::new(app)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpError(format!("starting the MCP session on stdio: {e}")))?;
    service
        .waiting()
        .await
        .map_err(|e| McpError(format!("the MCP session on stdio ended with an error: {e}")))?;
    Ok(())
}

/// Agon over streamable HTTP: a tower service that answers MCP where it is
/// mounted (`agon serve --mcp` mounts it at `/mcp`, behind the API's token
/// and cross-site checks). Each session gets its own [`AgonMcp`] over the
/// one `app`, so its debates run, stream and are steered as the server's
/// own. `loopback`: the server listens on a loopback address, and only a
/// loopback `Host` is accepted (against DNS rebinding); elsewhere the
/// token guards every request. Cancelling `shutdown` ends every session.
pub fn http_service(
    app: App,
    loopback: bool,
    shutdown: tokio_util::sync::CancellationToken,
) -> rmcp::transport::StreamableHttpService<
    AgonMcp,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    let mut config = rmcp::transport::StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown;
    if !loopback {
        config = config.disable_allowed_hosts();
    }
    rmcp::transport::StreamableHttpService::new(
        move || Ok(AgonMcp::new(app.clone())),
        std::sync::Arc::default(),
        config,
    )
}

/// A failure of the MCP session itself (not of a tool).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpError(pub String);

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for McpError {}

/// `start_debate`'s arguments: a topic or a configuration, and the
/// settings `agon debate`'s flags give.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartDebate {
    /// The question to debate (with the defaults, or over `config_toml`).
    pub topic: Option<String>,
    /// A configuration file's text, TOML as `agon debate --config` reads it.
    pub config_toml: Option<String>,
    /// `structured`, `dialectic` or `deliberation`.
    pub protocol: Option<ProtocolKind>,
    /// One model spec for every role (`openai:gpt-4o-mini`, `local`, …).
    pub model: Option<String>,
    /// Dialectic: rounds.
    pub rounds: Option<u32>,
    /// Structured debate: minirounds per aspect.
    pub minirounds: Option<u32>,
    /// Deliberation: turns.
    pub turns: Option<u32>,
    /// Wait until the debate ends, reporting progress, and return its
    /// report (default: return its id at once; ask `debate_status`).
    #[serde(default)]
    pub wait: bool,
}

/// Arguments naming one debate.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebateRef {
    /// The debate's id.
    pub id: String,
}

/// `debate_report`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportRequest {
    /// The debate's id.
    pub id: String,
    /// `markdown` (default) or `json`.
    #[serde(default)]
    pub format: ReportFormat,
}

/// The form of a report.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReportFormat {
    /// Markdown, as `agon report` prints it.
    #[default]
    Markdown,
    /// JSON, as `agon report --json` prints it.
    Json,
}

/// `answer_questions`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Answers {
    /// The debate's id.
    pub id: String,
    /// One answer per question it waits on, in order (`""` for NA).
    pub answers: Vec<String>,
}

/// `add_note`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// The debate's id.
    pub id: String,
    /// The note every agent's next context shows.
    pub text: String,
    /// Who writes it (default: the moderator).
    pub author: Option<String>,
}

/// `recall`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    /// What to recall.
    pub query: String,
    /// Whose memories (a persona's name or id; everyone's without one).
    pub persona: Option<String>,
    /// Only this debate's memories.
    pub debate: Option<String>,
    /// How many (default 8).
    pub k: Option<usize>,
    /// The embedder the memories were written with (default `local`).
    pub embedder: Option<String>,
}

/// `list_debates` takes no arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// The tools: name, description and the JSON schema of their arguments.
fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "start_debate",
            "Start a debate on a topic (or a TOML configuration) and run it. Returns its id at \
             once; with wait=true, reports progress until it ends and returns its report. \
             Protocols: structured (personas, aspects, crux rooms), dialectic (role agents \
             propose, critique, refine; a judge synthesizes), deliberation (a long free-form \
             session).",
            schema_for_type::<StartDebate>(),
        ),
        Tool::new(
            "debate_status",
            "A debate's status (running, finished, …), its progress (phase, round or turn, \
             messages so far) and the clarifying questions it waits on, if any.",
            schema_for_type::<DebateRef>(),
        ),
        Tool::new(
            "debate_report",
            "A debate's report: Markdown (default) or JSON. Works while it runs (what it has \
             so far) and after it ends.",
            schema_for_type::<ReportRequest>(),
        ),
        Tool::new(
            "answer_questions",
            "Answer the clarifying questions a debate waits on: one answer per question, in \
             the order debate_status lists them (\"\" for not applicable).",
            schema_for_type::<Answers>(),
        ),
        Tool::new(
            "add_note",
            "Add a moderator's note to a debate: every agent's next context shows it (a \
             debate that runs nowhere now takes it when it runs again).",
            schema_for_type::<Note>(),
        ),
        Tool::new(
            "recall",
            "Recall from Agon's vector memory of past debates: the memories closest to a \
             query, a persona's or everyone's, of one debate or all, with their scores.",
            schema_for_type::<RecallRequest>(),
        ),
        Tool::new(
            "list_debates",
            "List the stored debates, newest first: id, status, protocol, messages and topic.",
            schema_for_type::<NoArguments>(),
        ),
    ]
}

/// `request`'s arguments as `T`, or what was wrong with them.
fn arguments<T: DeserializeOwned>(request: &CallToolRequestParams) -> Result<T, String> {
    let value = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
    serde_json::from_value(value).map_err(|e| format!("{}: invalid arguments: {e}", request.name))
}

/// What a tool answers: its text, or what went wrong (a result marked as
/// an error).
type Answer = Result<String, String>;

/// The text of an application error.
fn said(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl AgonMcp {
    /// The server over `app`.
    pub fn new(app: App) -> Self {
        Self { app }
    }

    /// Runs the tool `request` names with its arguments.
    async fn dispatch(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Answer {
        match request.name.as_ref() {
            "start_debate" => self.start_debate(arguments(request)?, context).await,
            "debate_status" => self.debate_status(arguments(request)?).await,
            "debate_report" => self.debate_report(arguments(request)?).await,
            "answer_questions" => self.answer_questions(arguments(request)?).await,
            "add_note" => self.add_note(arguments(request)?).await,
            "recall" => self.recall(arguments(request)?).await,
            _ => {
                arguments::<NoArguments>(request)?;
                self.list_debates().await
            }
        }
    }

    /// Starts a debate in this process.
    async fn start_debate(
        &self,
        args: StartDebate,
        context: &RequestContext<RoleServer>,
    ) -> Answer {
        let wait = args.wait;
        let config = config_of(args)?;
        let id = self.app.start(&config).await.map_err(said)?;
        if !wait {
            return Ok(format!(
                "Started debate {id}. Ask debate_status with id \"{id}\" for its progress, and \
                 debate_report for its report once it has finished."
            ));
        }
        let token = context.meta.get_progress_token();
        let mut reported = u64::MAX;
        loop {
            // Whether the run has ended, asked before the status is read: a
            // run stores its final status before it stops running here, so
            // the status read after an ended run is its last.
            let ended = !self.app.runs_here(&id);
            let status = text::status(&self.app, &id).await.map_err(said)?;
            if let Some(token) = &token
                && status.messages != reported
            {
                reported = status.messages;
                let mut note =
                    ProgressNotificationParam::new(token.clone(), status.messages as f64)
                        .with_message(status.line());
                if let Some(total) = status.planned {
                    note = note.with_total(total as f64);
                }
                // A client gone away loses its progress, not the debate.
                let _ = context.peer.notify_progress(note).await;
            }
            if ended {
                let report = text::report(&self.app, &id, ReportFormat::Markdown)
                    .await
                    .map_err(said)?;
                return Ok(format!("{}\n\n{report}", status.line()));
            }
            if let Some(questions) = status.questions.as_deref() {
                return Ok(format!(
                    "{}\n\nThe debate waits for answers to its clarifying questions; give them \
                     with answer_questions (one per question, in order):\n{questions}",
                    status.line()
                ));
            }
            tokio::time::sleep(PROGRESS_EVERY).await;
        }
    }

    /// A debate's status and progress.
    async fn debate_status(&self, args: DebateRef) -> Answer {
        let status = text::status(&self.app, &DebateId::new(args.id)).await;
        Ok(status.map_err(said)?.describe())
    }

    /// A debate's report.
    async fn debate_report(&self, args: ReportRequest) -> Answer {
        text::report(&self.app, &DebateId::new(args.id), args.format)
            .await
            .map_err(said)
    }

    /// Answers the clarifying questions a debate waits on.
    async fn answer_questions(&self, args: Answers) -> Answer {
        let id = DebateId::new(args.id);
        let posted = self.app.answer(&id, args.answers).await.map_err(said)?;
        Ok(format!(
            "Answers recorded for debate {id} (request {}).",
            posted.request
        ))
    }

    /// Adds a moderator's note.
    async fn add_note(&self, args: Note) -> Answer {
        let id = DebateId::new(args.id);
        let posted = self
            .app
            .note(&id, args.text, args.author)
            .await
            .map_err(said)?;
        Ok(format!(
            "Note queued for debate {id} (request {}).",
            posted.request
        ))
    }

    /// Recalls from the vector memory.
    async fn recall(&self, args: RecallRequest) -> Answer {
        let recall = self
            .app
            .recall(
                &args.query,
                args.persona.as_deref(),
                args.debate.as_deref(),
                args.k.unwrap_or(8),
                args.embedder.as_deref().unwrap_or("local"),
            )
            .await
            .map_err(said)?;
        Ok(text::recall(&recall))
    }

    /// Lists the debates.
    async fn list_debates(&self) -> Answer {
        let debates = self.app.store().list_debates().await.map_err(said)?;
        Ok(text::list(&debates))
    }
}

impl ServerHandler for AgonMcp {
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools().iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("no tool `{}` (list_tools names Agon's seven)", request.name),
                None,
            ));
        }
        let result = match self.dispatch(&request, &context).await {
            Ok(answer) => CallToolResult::success(vec![ContentBlock::text(answer)]),
            Err(failure) => CallToolResult::error(vec![ContentBlock::text(failure)]),
        };
        Ok(result.into())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("agon", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Agon runs multi-agent debates with a real memory. Start one with start_debate \
                 (a topic is enough), follow it with debate_status, read it with debate_report.",
            )
    }
}

/// The configuration `args` ask for, validated as `agon debate` validates
/// its flags; an error names the argument.
fn config_of(args: StartDebate) -> Result<DebateConfig, String> {
    let mut config = match args.config_toml.as_deref() {
        Some(toml) => DebateConfig::from_toml(toml, "config_toml").map_err(|e| e.to_string())?,
        None => {
            // The protocol first, so the topic lands where that protocol
            // keeps it (a dialectic problem), as `agon debate` does.
            let mut config = DebateConfig::default();
            if let Some(protocol) = args.protocol {
                config.protocol = protocol;
            }
            config
        }
    };
    if args.topic.is_none() && args.config_toml.is_none() {
        return Err("start_debate: give a `topic` or a `config_toml`".into());
    }
    let mut overrides = Overrides {
        protocol: args.protocol,
        topic: args.topic,
        model: args.model,
        ..Overrides::default()
    };
    overrides.dialectic.rounds = args.rounds;
    overrides.structured.minirounds = args.minirounds;
    overrides.deliberation.turns = args.turns;
    config
        .apply(&overrides)
        .map_err(|e| format!("start_debate: {e}"))?;
    Ok(config)
}
