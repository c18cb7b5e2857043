//! Agents call the tools of real MCP servers from the npm registry
//! (`@modelcontextprotocol/server-filesystem` and `server-everything`,
//! installed by `cargo xtask test` into `AGON_MCP_SERVERS_DIR`; a test fails
//! when they are missing, it is never skipped): over stdio with the
//! scripted model's constrained tool turns, over streamable HTTP with the
//! OpenAI stub's native tool calls.

use std::path::PathBuf;
use std::time::Duration;

use agon_config::{DebateConfig, McpServerConfig};
use agon_core::MessageKind;
use agon_llm::PriceTable;
use agon_orchestrator::{Models, OrchestratorError, RunControl, RunOutcome};
use agon_testkit::ScriptedModel;

use crate::dialectic::dialectic_config;
use crate::support::sqlite;

/// The directory holding the servers' executables (`node_modules/.bin`).
fn bin(server: &str) -> String {
    let dir = std::env::var("AGON_MCP_SERVERS_DIR").unwrap_or_else(|_| {
        panic!(
            "AGON_MCP_SERVERS_DIR is not set: `cargo xtask mcp-servers` installs the MCP servers \
             the tests use and prints it (`cargo xtask test` sets it)"
        )
    });
    let path = PathBuf::from(dir).join(server);
    assert!(
        path.exists(),
        "{} is missing: run `cargo xtask mcp-servers`",
        path.display()
    );
    path.display().to_string()
}

fn stdio(server: &str, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        command: Some(bin(server)),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..McpServerConfig::default()
    }
}

/// A dialectic debate of one round whose architect may use `tools` (at
/// most 3 calls a contribution), with `servers`.
fn with_tools(topic: &str, servers: &[(&str, McpServerConfig)], tools: &[&str]) -> DebateConfig {
    let mut config = dialectic_config(1);
    config.topic = topic.to_owned();
    config.mcp_servers = servers
        .iter()
        .map(|(name, s)| ((*name).to_owned(), s.clone()))
        .collect();
    for a in &mut config.dialectic.agents {
        if a.role == "architect" {
            a.tools = tools.iter().map(|t| (*t).to_owned()).collect();
            a.tool_call_limit = Some(3);
        }
    }
    config.validate("test").unwrap();
    config.validate_tools("test").unwrap();
    config
}

fn scripted(delay: Duration) -> Models {
    Models::uniform(
        std::sync::Arc::new(ScriptedModel::new(delay)),
        PriceTable::with_defaults(),
    )
}

/// The filesystem server, started by command for the debate: the architect
/// reads the file the problem names through it and cites it; each call is
/// a `tool_called` event listed in the report. A run stopped at the first
/// call is resumed: the server is started again, and the recorded call is
/// reused instead of made again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_reads_a_file_through_the_filesystem_server_and_cites_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("limits.md");
    std::fs::write(
        &file,
        "Per client: 100 requests per second, bursts of 20.\nGlobal: 10k/s.\n",
    )
    .unwrap();
    let config = with_tools(
        &format!(
            "Design a rate limiting system. The limits are in {}.",
            file.display()
        ),
        &[(
            "files",
            stdio("mcp-server-filesystem", &[root.to_str().unwrap()]),
        )],
        &["files/read_text_file"],
    );
    let models = scripted(Duration::from_millis(200));
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    let control = RunControl::default();
    let mut updates = orch.subscribe();
    let abort = control.abort.clone();
    let watcher = tokio::spawn(async move {
        while let Some(u) = futures::StreamExt::next(&mut updates).await {
            if let agon_orchestrator::DebateUpdate::Event { event, .. } = u
                && matches!(*event, agon_core::DebateEvent::ToolCalled { .. })
            {
                abort.cancel();
                return;
            }
        }
    });
    assert_eq!(
        orch.run(&id, &models, control).await.unwrap(),
        RunOutcome::Stopped
    );
    watcher.abort();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    assert_eq!(bb.tool_calls().len(), 1);
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let architect = agon_core::PersonaId::new("agent-architect");
    let contributions = bb
        .messages()
        .iter()
        .filter(|m| m.persona == architect)
        .count();
    assert_eq!(
        bb.tool_calls().len(),
        contributions,
        "{:#?}",
        bb.tool_calls()
    );
    for c in bb.tool_calls() {
        assert_eq!(c.persona, architect);
        assert_eq!(c.name, "files__read_text_file");
        assert_eq!(
            c.arguments,
            serde_json::json!({"path": file.display().to_string()})
        );
        assert!(
            c.ok && c.result.starts_with("Per client: 100 requests"),
            "{c:?}"
        );
    }
    let proposal = bb
        .messages()
        .iter()
        .find(|m| m.persona == architect && m.kind == MessageKind::Proposal)
        .unwrap();
    let cited = format!(
        "As {} says: \"Per client: 100 requests per second, bursts of 20.\"",
        file.display()
    );
    assert!(proposal.content.contains(&cited), "{}", proposal.content);
    let md = agon_view::report::markdown(&bb);
    assert!(
        md.contains(&format!("## Tool calls\n\n{contributions} call(s)")),
        "{md}"
    );
    assert!(
        md.contains("(proposal/1/agent-architect): `files__read_text_file({\"path\":"),
        "{md}"
    );
}

/// A free local port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `port` accepts connections.
async fn listening(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on {port}");
}

/// The everything server reached by URL over streamable HTTP (started
/// here, as an operator runs a remote server), with its header read from
/// the environment, and the agents' models an OpenAI-compatible server
/// that calls tools natively: the architect echoes through the server and
/// cites the echo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_tool_calls_reach_a_streamable_http_server() {
    let port = free_port();
    let mut server = tokio::process::Command::new(bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    listening(port).await;
    let stub = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(|request: &wiremock::Request| {
            let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
            let (content_type, text) = agon_testkit::openai_reply(&body);
            wiremock::ResponseTemplate::new(200).set_body_raw(text, content_type)
        })
        .mount(&stub)
        .await;
    // A header from the environment: any variable set for the tests (the
    // crate forbids the unsafe `set_var`) — the servers' directory.
    let http = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers_from_env: [("X-Agon-Test".to_owned(), "AGON_MCP_SERVERS_DIR".to_owned())]
            .into_iter()
            .collect(),
        ..McpServerConfig::default()
    };
    let mut config = with_tools(
        "Design a rate limiting system for the public API",
        &[("everything", http)],
        &["everything/echo"],
    );
    config.models.default = format!("openai-compatible:stub@{}/v1", stub.uri());
    let models = agon_app::models_from_config(
        &config,
        &agon_llm::ModelFactory::new(),
        &|_| None,
        PriceTable::with_defaults(),
    )
    .unwrap();
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let calls = bb.tool_calls();
    assert!(!calls.is_empty());
    for c in calls {
        assert_eq!(c.name, "everything__echo");
        let message = c.arguments["message"].as_str().unwrap();
        assert!(c.ok && c.result == format!("Echo: {message}"), "{c:?}");
    }
    let proposal = bb
        .messages()
        .iter()
        .find(|m| m.persona.as_str() == "agent-architect" && m.kind == MessageKind::Proposal)
        .unwrap();
    assert!(
        proposal
            .content
            .contains("The tool everything__echo said: \"Echo: "),
        "{}",
        proposal.content
    );
    // The tool call went over the provider's native tool calling.
    let native = stub.received_requests().await.unwrap().iter().any(|r| {
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        body["tools"][0]["function"]["name"] == "everything__echo"
    });
    assert!(native);
    server.kill().await.ok();
}

/// Every way a server can be unusable is an error before the first turn
/// that names the server (and the tool), and the debate keeps no message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_server_is_an_error_before_the_first_turn() {
    let everything = stdio("mcp-server-everything", &[]);
    let cases: Vec<(McpServerConfig, &str, &str)> = vec![
        (
            everything.clone(),
            "everything/web_search",
            "tools of agent-architect: MCP server `everything`: has no tool `web_search` (it lists echo,",
        ),
        (
            McpServerConfig {
                command: Some("/nonexistent/mcp-server".into()),
                ..McpServerConfig::default()
            },
            "everything/echo",
            "MCP server `everything`: cannot start `/nonexistent/mcp-server`",
        ),
        (
            McpServerConfig {
                url: Some("http://127.0.0.1:9/mcp".into()),
                headers_from_env: [("Authorization".to_owned(), "AGON_TEST_UNSET_VAR".to_owned())]
                    .into_iter()
                    .collect(),
                ..McpServerConfig::default()
            },
            "everything/echo",
            "MCP server `everything`: header Authorization: the environment variable AGON_TEST_UNSET_VAR is not set",
        ),
    ];
    for (server, tool, expected) in cases {
        let config = with_tools("Design a cache", &[("everything", server)], &[tool]);
        let orch = agon_app::orchestrator_for(sqlite().await);
        let id = orch.create(&config).await.unwrap();
        let e = orch
            .run(&id, &scripted(Duration::ZERO), RunControl::default())
            .await
            .unwrap_err();
        assert!(matches!(
            e,
            OrchestratorError::Mcp { .. } | OrchestratorError::Tools { .. }
        ));
        let said = e.to_string();
        assert!(said.contains(&format!("debate `{id}`")), "{said}");
        assert!(said.contains(expected), "{said}");
        let (bb, _) = orch.store().load(&id).await.unwrap();
        assert!(bb.messages().is_empty());
    }
}

/// A grant must name a declared server; a server is a command or a URL.
#[test]
fn grants_and_servers_are_checked_with_the_configuration() {
    let mut config = dialectic_config(1);
    config.dialectic.agents[0].tools = vec!["files/read_text_file".into()];
    let e = config.validate_tools("x.toml").unwrap_err().to_string();
    assert_eq!(
        e,
        "x.toml: field `dialectic.agent[0].tools[0]`: `files/read_text_file` names the MCP server `files`, which `mcp_servers` does not declare"
    );
    config.mcp_servers.insert(
        "files".into(),
        McpServerConfig {
            command: Some("npx".into()),
            url: Some("http://localhost/mcp".into()),
            ..McpServerConfig::default()
        },
    );
    let e = config.validate_tools("x.toml").unwrap_err().to_string();
    assert_eq!(
        e,
        "x.toml: field `mcp_servers.files`: give exactly one of `command` (stdio) and `url` (streamable HTTP)"
    );
}
