//! dialectic 0.1.0's own `debate-config.json`, read as is into a dialectic
//! [`DebateConfig`]: the migration path for dialectic users.
//!
//! | dialectic | Agon |
//! |---|---|
//! | `agents[]`, `judge` (`id`, `name`, `role`, `model` + `provider`, `temperature`, `systemPromptPath`, `summaryPromptPath`, `enabled`, `summarization`) | `[[dialectic.agent]]`, `[dialectic.judge]`; the model spec is `PROVIDER:MODEL` |
//! | `debate.rounds` | `dialectic.rounds` |
//! | `debate.terminationCondition` `fixed` / `convergence` / `quality` (+ `threshold`) | `dialectic.termination`: `fixed`, or `convergence` on the judge's confidence (a threshold ≤ 1 is a fraction: 0.9 → 90) |
//! | `debate.synthesisMethod` | only `judge` (as in dialectic) |
//! | `debate.includeFullHistory` | accepted; Agon's contexts are always token-budgeted |
//! | `debate.timeoutPerRound` (ms) | `dialectic.timeout_per_round_secs` |
//! | `debate.interactiveClarifications`, `clarificationsMaxPerAgent` | `dialectic.clarify`, `dialectic.max_questions` |
//! | `debate.summarization` (+ `promptPath`) | `dialectic.summarization` (+ `summary_prompt_file`) |
//! | `debate.orchestratorType` (0.7) | read; either value runs Agon's one engine |
//! | `debate.clarificationsMaxIterations` (0.7) | `dialectic.clarify_rounds` (the first asking and the follow-ups) |
//! | agents' `tools` (`[{"name": …}]`), `toolCallLimit` | `tools`, `tool_call_limit` of `[[dialectic.agent]]` |
//! | anything else | a warning naming the key: nothing is silently ignored |
//!
//! The models of Agon's own roles (analysis into the ledger) default to
//! the judge's model, so a dialectic config needs no local model.

use agon_context::perspective::{SummarizationOverride, SummarizationSettings};
use std::collections::BTreeMap;

use serde::Deserialize;

use crate::dialectic::{AgentConfig, TerminationKind};
use crate::mcp::McpServerConfig;
use crate::{ConfigError, DebateConfig, ProtocolKind};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SystemConfig {
    #[serde(default)]
    agents: Vec<JsonAgent>,
    judge: Option<JsonAgent>,
    debate: Option<JsonDebate>,
    /// MCP servers, in the shape of Claude Desktop's `mcpServers`
    /// (`command`, `args`, `env`; or `url` with `headersFromEnv`): agents
    /// name their tools as `SERVER/TOOL`.
    #[serde(default)]
    mcp_servers: BTreeMap<String, McpServerConfig>,
    /// Keys Agon does not know: each one a warning, never silently dropped.
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonAgent {
    id: String,
    name: String,
    role: String,
    model: String,
    provider: String,
    temperature: f32,
    system_prompt_path: Option<String>,
    summary_prompt_path: Option<String>,
    clarification_prompt_path: Option<String>,
    enabled: Option<bool>,
    summarization: Option<SummarizationOverride>,
    /// dialectic 0.7's agent tools: `[{"name": "file_read"}, …]`.
    #[serde(default)]
    tools: Vec<JsonTool>,
    /// dialectic 0.7: most tool calls per phase.
    tool_call_limit: Option<usize>,
    /// Any key Agon does not act on: each one a warning.
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct JsonTool {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Termination {
    #[serde(rename = "type")]
    kind: String,
    threshold: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonSummarization {
    enabled: Option<bool>,
    threshold: Option<usize>,
    max_length: Option<usize>,
    method: Option<String>,
    prompt_path: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonDebate {
    rounds: Option<u32>,
    termination_condition: Option<Termination>,
    synthesis_method: Option<String>,
    #[allow(dead_code)] // accepted: Agon's contexts are always token-budgeted
    include_full_history: Option<bool>,
    timeout_per_round: Option<u64>,
    interactive_clarifications: Option<bool>,
    clarifications_max_per_agent: Option<usize>,
    /// dialectic 0.7: how many times agents may ask again (Agon asks once).
    clarifications_max_iterations: Option<u32>,
    /// dialectic 0.7's choice of orchestrator: read, and either value runs
    /// Agon's one engine.
    #[allow(dead_code)]
    orchestrator_type: Option<String>,
    summarization: Option<JsonSummarization>,
    /// Keys Agon does not know: each one a warning.
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

/// A warning for each key of `other` (under `at`), saying Agon ignores it.
fn unknown_keys(
    file: &str,
    at: &str,
    other: &BTreeMap<String, serde_json::Value>,
    warnings: &mut Vec<String>,
) {
    for key in other.keys() {
        warnings.push(format!("{file}: {at}{key}: not a key Agon knows; ignored"));
    }
}

fn invalid(file: &str, field: String, reason: String) -> ConfigError {
    ConfigError::Invalid {
        file: file.to_owned(),
        field,
        reason,
    }
}

fn agent(
    a: JsonAgent,
    file: &str,
    field: &str,
    warnings: &mut Vec<String>,
) -> Result<AgentConfig, ConfigError> {
    let spec = match a.provider.trim() {
        "openai" => format!("openai:{}", a.model.trim()),
        "openrouter" => format!("openrouter:{}", a.model.trim()),
        other => {
            return Err(invalid(
                file,
                format!("{field}.provider"),
                format!("`{other}` is not a dialectic provider (openai or openrouter)"),
            ));
        }
    };
    unknown_keys(file, &format!("{field}."), &a.other, warnings);
    if a.clarification_prompt_path.is_some() {
        warnings.push(format!(
            "{file}: {field}.clarificationPromptPath: the built-in clarification prompt is used"
        ));
    }
    Ok(AgentConfig {
        id: Some(a.id),
        name: Some(a.name),
        role: a.role,
        model: Some(spec),
        temperature: Some(a.temperature),
        system_prompt: None,
        system_prompt_file: a.system_prompt_path,
        summary_prompt: None,
        summary_prompt_file: a.summary_prompt_path,
        enabled: a.enabled.unwrap_or(true),
        summarization: a.summarization.unwrap_or_default(),
        // As dialectic does: an unknown tool is a warning, and skipped
        // (an MCP server's tool is checked against `mcpServers` with the
        // rest of the configuration).
        tools: a
            .tools
            .into_iter()
            .map(|t| t.name)
            .filter(|name| {
                let known = name.parse::<agon_core::ToolGrant>().is_ok();
                if !known {
                    warnings.push(format!(
                        "{file}: {field}.tools: `{name}` is not a tool Agon has; skipped"
                    ));
                }
                known
            })
            .collect(),
        tool_call_limit: a.tool_call_limit,
    })
}

/// Reads dialectic's `debate-config.json` text (`file` names it in errors
/// and warnings) into a dialectic configuration, plus the warnings
/// dialectic would print (missing agents or judge, ignored fields).
pub fn from_dialectic_json(
    text: &str,
    file: &str,
) -> Result<(DebateConfig, Vec<String>), ConfigError> {
    let system: SystemConfig = serde_path_to_error::deserialize(
        &mut serde_json::Deserializer::from_str(text),
    )
    .map_err(|e| {
        let field = e.path().to_string();
        let e = e.into_inner();
        ConfigError::Parse {
            file: file.to_owned(),
            line: e.line(),
            message: format!("field `{field}`: {e}"),
        }
    })?;
    let mut warnings = Vec::new();
    unknown_keys(file, "", &system.other, &mut warnings);
    let mut config = DebateConfig {
        protocol: ProtocolKind::Dialectic,
        mcp_servers: system.mcp_servers,
        ..DebateConfig::default()
    };
    let d = &mut config.dialectic;
    if system.agents.is_empty() {
        warnings.push(format!(
            "{file}: no agents configured; using the default agents (architect, performance, kiss)"
        ));
    } else {
        d.agents = system
            .agents
            .into_iter()
            .enumerate()
            .map(|(i, a)| agent(a, file, &format!("agents[{i}]"), &mut warnings))
            .collect::<Result<_, _>>()?;
    }
    match system.judge {
        Some(j) => d.judge = agent(j, file, "judge", &mut warnings)?,
        None => warnings.push(format!(
            "{file}: no judge configured; using the default judge"
        )),
    }
    if let Some(debate) = system.debate {
        unknown_keys(file, "debate.", &debate.other, &mut warnings);
        if let Some(n) = debate.clarifications_max_iterations {
            if !(1..=10).contains(&n) {
                warnings.push(format!(
                    "{file}: debate.clarificationsMaxIterations {n} is clamped to 1..=10"
                ));
            }
            d.clarify_rounds = n.clamp(1, 10);
        }
        if let Some(rounds) = debate.rounds {
            d.rounds = rounds;
        }
        if let Some(t) = debate.termination_condition {
            match t.kind.as_str() {
                "fixed" => d.termination = TerminationKind::Fixed,
                "convergence" | "quality" => {
                    d.termination = TerminationKind::Convergence;
                    if let Some(threshold) = t.threshold {
                        let percent = if threshold <= 1.0 {
                            threshold * 100.0
                        } else {
                            threshold
                        };
                        if !(0.0..=100.0).contains(&percent) {
                            return Err(invalid(
                                file,
                                "debate.terminationCondition.threshold".into(),
                                format!("{threshold} is outside 0..=1 (or 0..=100)"),
                            ));
                        }
                        d.convergence_threshold = percent.round() as u8;
                    }
                }
                other => {
                    return Err(invalid(
                        file,
                        "debate.terminationCondition.type".into(),
                        format!("`{other}` is not fixed, convergence or quality"),
                    ));
                }
            }
        }
        if let Some(method) = debate.synthesis_method
            && method != "judge"
        {
            return Err(invalid(
                file,
                "debate.synthesisMethod".into(),
                format!("`{method}` is not supported (only `judge`, as in dialectic)"),
            ));
        }
        if let Some(ms) = debate.timeout_per_round {
            d.timeout_per_round_secs = ms.div_ceil(1_000);
        }
        if let Some(c) = debate.interactive_clarifications {
            d.clarify = c;
        }
        if let Some(n) = debate.clarifications_max_per_agent {
            if n > 5 {
                warnings.push(format!(
                    "{file}: debate.clarificationsMaxPerAgent {n} is capped at 5"
                ));
            }
            d.max_questions = n.clamp(1, 5);
        }
        if let Some(s) = debate.summarization {
            let defaults = SummarizationSettings::default();
            d.summarization = SummarizationSettings {
                enabled: s.enabled.unwrap_or(defaults.enabled),
                threshold: s.threshold.unwrap_or(defaults.threshold),
                max_length: s.max_length.unwrap_or(defaults.max_length),
                method: s.method.unwrap_or(defaults.method),
            };
            d.summary_prompt_file = s.prompt_path;
        }
    }
    if let Some(spec) = d.judge.model.clone() {
        config.models.default = spec;
    }
    Ok((config, warnings))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_example_config_of_dialectic_reads_and_validates() {
        let dir = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/dialectic"
        ));
        let mut read = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".json") || !name.contains("config") || name.contains("eval") {
                continue;
            }
            let (config, warnings) =
                DebateConfig::load_with(&path, &|p: &std::path::Path| std::fs::read_to_string(p))
                    .unwrap();
            assert!(warnings.is_empty(), "{name}: {warnings:?}");
            assert!(config.dialectic.enabled_agents().count() >= 1, "{name}");
            assert!(!config.uses_local_model(), "{name}: its models are remote");
            read += 1;
        }
        assert_eq!(read, 7, "the seven debate configs of dialectic's examples");
    }

    #[test]
    fn fields_map_to_agon_and_bad_values_name_the_field() {
        let text = r#"{
          "agents": [{"id": "a1", "name": "Arch", "role": "architect", "model": "gpt-4",
                      "provider": "openai", "temperature": 0.5,
                      "summarization": {"threshold": 3000}}],
          "judge": {"id": "j", "name": "Judge", "role": "generalist", "model": "anthropic/claude-3-opus",
                    "provider": "openrouter", "temperature": 0.2},
          "debate": {"rounds": 4, "terminationCondition": {"type": "convergence", "threshold": 0.9},
                     "synthesisMethod": "judge", "includeFullHistory": true, "timeoutPerRound": 450000,
                     "summarization": {"enabled": true, "threshold": 2500, "maxLength": 1250, "method": "length-based"}}
        }"#;
        let (c, warnings) = from_dialectic_json(text, "x.json").unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let d = &c.dialectic;
        assert_eq!(d.agents[0].model.as_deref(), Some("openai:gpt-4"));
        assert_eq!(
            d.judge.model.as_deref(),
            Some("openrouter:anthropic/claude-3-opus")
        );
        assert_eq!(c.models.default, "openrouter:anthropic/claude-3-opus");
        assert_eq!(
            (d.rounds, d.termination, d.convergence_threshold),
            (4, TerminationKind::Convergence, 90)
        );
        assert_eq!(d.timeout_per_round_secs, 450);
        assert_eq!(
            (d.summarization.threshold, d.summarization.max_length),
            (2500, 1250)
        );
        assert_eq!(d.agents[0].summarization.threshold, Some(3000));

        let bad = text.replace("\"provider\": \"openai\"", "\"provider\": \"azure\"");
        let e = from_dialectic_json(&bad, "x.json").unwrap_err();
        assert!(e.to_string().contains("agents[0].provider"), "{e}");
        let e = from_dialectic_json("{\"agents\": [{\"id\": \"a\"}]}", "y.json").unwrap_err();
        assert!(
            e.to_string().starts_with("y.json:1:")
                && e.to_string().contains("missing field `name`"),
            "{e}"
        );
        let e = from_dialectic_json(
            r#"{"agents": [{"id": "a", "name": "A", "role": "architect", "model": "m",
                            "provider": "openai", "temperature": "hot"}]}"#,
            "t.json",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("field `agents[0].temperature`"),
            "{e}"
        );
        let (c, warnings) = from_dialectic_json("{}", "z.json").unwrap();
        assert_eq!(c.dialectic.agents.len(), 3);
        assert_eq!(warnings.len(), 2, "no agents, no judge: {warnings:?}");
    }

    #[test]
    fn dialectic_0_7s_data_modeling_role_is_built_in() {
        let text = r#"{"agents": [{"id": "agent-data", "name": "Data Modeler", "role": "datamodeling",
                        "model": "gpt-4", "provider": "openai", "temperature": 0.5}]}"#;
        let (c, _) = from_dialectic_json(text, "x.json").unwrap();
        let agent = &c.dialectic.agents[0];
        assert_eq!(agent.role_kind(), Some(agon_core::AgentRole::DataModeling));
        let rules = c.dialectic.rules(
            agon_core::Topic::new("Model a library's loans"),
            None,
            agon_protocol::CruxRules::default(),
            &c.models.default,
        );
        let persona = rules
            .start
            .personas
            .iter()
            .find(|p| p.name == "Data Modeler")
            .unwrap();
        assert!(
            persona.contract.contains("entities"),
            "{}",
            persona.contract
        );
    }

    #[test]
    fn dialectic_0_7_keys_are_read_and_every_unknown_key_is_a_warning() {
        let text = r#"{
          "agents": [{"id": "a1", "name": "Arch", "role": "architect", "model": "gpt-4",
                      "provider": "openai", "temperature": 0.5,
                      "tools": [{"name": "file_read"}, {"name": "web_search"}], "toolCallLimit": 5}],
          "judge": {"id": "j", "name": "Judge", "role": "generalist", "model": "gpt-4",
                    "provider": "openai", "temperature": 0.2, "colour": "blue"},
          "debate": {"rounds": 2, "orchestratorType": "state-machine",
                     "clarificationsMaxIterations": 3, "clarificationsMaxPerAgent": 4,
                     "speed": "fast"},
          "version": 7
        }"#;
        let (c, warnings) = from_dialectic_json(text, "x.json").unwrap();
        assert_eq!(c.dialectic.max_questions, 4);
        assert_eq!(c.dialectic.clarify_rounds, 3);
        assert_eq!(c.dialectic.agents[0].tools, ["file_read"]);
        assert_eq!(c.dialectic.agents[0].tool_call_limit, Some(5));
        assert_eq!(
            warnings,
            vec![
                "x.json: version: not a key Agon knows; ignored",
                "x.json: agents[0].tools: `web_search` is not a tool Agon has; skipped",
                "x.json: judge.colour: not a key Agon knows; ignored",
                "x.json: debate.speed: not a key Agon knows; ignored",
            ]
        );
    }

    #[test]
    fn mcp_servers_are_read_in_claude_desktops_shape_and_agents_name_their_tools() {
        let text = r#"{
          "mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                      "env": {"NODE_OPTIONS": "--max-old-space-size=256"}},
            "search": {"url": "https://mcp.example.com/mcp",
                       "headersFromEnv": {"Authorization": "SEARCH_TOKEN"}, "callTimeoutSecs": 30}
          },
          "agents": [{"id": "a1", "name": "Arch", "role": "architect", "model": "gpt-4",
                      "provider": "openai", "temperature": 0.5,
                      "tools": [{"name": "files/read_text_file"}, {"name": "search/*"}]}]
        }"#;
        let (c, _) = from_dialectic_json(text, "x.json").unwrap();
        assert_eq!(
            c.dialectic.agents[0].tools,
            ["files/read_text_file", "search/*"]
        );
        let files = &c.mcp_servers["files"];
        assert_eq!(files.command.as_deref(), Some("npx"));
        assert_eq!(files.args.len(), 3);
        assert_eq!(files.env["NODE_OPTIONS"], "--max-old-space-size=256");
        let search = &c.mcp_servers["search"];
        assert_eq!(search.url.as_deref(), Some("https://mcp.example.com/mcp"));
        assert_eq!(search.headers_from_env["Authorization"], "SEARCH_TOKEN");
        assert_eq!(search.call_timeout(), std::time::Duration::from_secs(30));
        c.validate("x.json").unwrap();
        c.validate_tools("x.json").unwrap();
        // A tool of an undeclared server is named with the servers declared.
        let text = text.replace("search/*", "web/*");
        let (c, _) = from_dialectic_json(&text, "x.json").unwrap();
        assert_eq!(
            c.validate_tools("x.json").unwrap_err().to_string(),
            "x.json: field `dialectic.agent[0].tools[1]`: `web/*` names the MCP server `web`, \
             which `mcp_servers` does not declare (it declares files, search)"
        );
    }
}
