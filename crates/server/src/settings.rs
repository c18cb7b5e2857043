//! What starts a debate over the API: a configuration (JSON or TOML, as
//! `agon debate --config` reads it) and the settings `agon debate`'s flags
//! give, laid over it by `DebateConfig::apply` as the CLI lays its flags.

use agon_config::{
    DebateConfig, DeliberationOverrides, DialecticOverrides, Overrides, Preset, ProtocolKind,
    StructuredOverrides, TurnMode,
};
use serde::Deserialize;
use serde_json::Value;

use crate::error::ApiError;

/// The body of `POST /api/debates`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewDebate {
    /// The configuration as JSON (the stored form).
    config: Option<Value>,
    /// The configuration as a TOML file's text.
    toml: Option<String>,
    /// The flags' settings, laid over the configuration (or over the
    /// defaults when there is none, as `agon debate TOPIC` runs).
    #[serde(default)]
    settings: Settings,
    /// Queue it for the workers (`agon submit`) instead of running it on
    /// this server.
    #[serde(default)]
    pub(crate) detach: bool,
}

/// `agon debate`'s flags, by their long names without dashes.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Settings {
    protocol: Option<ProtocolKind>,
    topic: Option<String>,
    context: Option<String>,
    model: Option<String>,
    personas: Option<usize>,
    aspects: Option<usize>,
    minirounds: Option<u32>,
    /// A structured debate's challenger per aspect (`challenger`).
    #[serde(default)]
    challenger: bool,
    agents: Option<Vec<String>>,
    rounds: Option<u32>,
    #[serde(default)]
    clarify: bool,
    #[serde(rename = "clarify-rounds", alias = "clarify_rounds")]
    clarify_rounds: Option<u32>,
    #[serde(default, rename = "devil-advocate", alias = "devil_advocate")]
    devil_advocate: Option<bool>,
    /// A deliberation's skeptic drawn by trust (`[deliberation] skeptic`).
    #[serde(default)]
    skeptic: bool,
    turns: Option<u32>,
    /// `round-robin` or `listen`.
    #[schemars(with = "Option<String>")]
    mode: Option<TurnMode>,
    /// `session`, `meeting` or `brainstorm`.
    #[schemars(with = "Option<String>")]
    preset: Option<Preset>,
    #[serde(rename = "max-tokens", alias = "max_tokens")]
    max_tokens: Option<u64>,
    #[serde(rename = "max-cost", alias = "max_cost")]
    max_cost: Option<f64>,
    #[serde(rename = "max-minutes", alias = "max_minutes")]
    max_minutes: Option<f64>,
}

impl Settings {
    fn overrides(self) -> Overrides {
        Overrides {
            protocol: self.protocol,
            topic: self.topic,
            context: self.context,
            model: self.model,
            personas: self.personas,
            structured: StructuredOverrides {
                aspects: self.aspects,
                minirounds: self.minirounds,
                challenger: self.challenger,
            },
            dialectic: DialecticOverrides {
                agents: self.agents,
                rounds: self.rounds,
                clarify: self.clarify,
                clarify_rounds: self.clarify_rounds,
                devil_advocate: self.devil_advocate,
            },
            deliberation: DeliberationOverrides {
                turns: self.turns,
                mode: self.mode,
                preset: self.preset,
                skeptic: self.skeptic,
            },
            max_tokens: self.max_tokens,
            max_cost_usd: self.max_cost,
            max_minutes: self.max_minutes,
            // A request never names a directory of the server to read.
            context_dir: None,
        }
    }
}

impl NewDebate {
    /// The configuration the request asks for, validated as `agon debate`
    /// validates it; an error names the field or setting.
    pub(crate) fn config(&self) -> Result<DebateConfig, ApiError> {
        let mut config = match (self.config.clone(), self.toml.as_deref()) {
            (Some(value), None) => serde_path_to_error::deserialize::<_, DebateConfig>(value)
                .map_err(|e| {
                    ApiError::bad_request(format!("config.{}: {}", e.path(), e.inner()))
                })?,
            (None, Some(text)) => DebateConfig::from_toml(text, "toml")
                .map_err(|e| ApiError::bad_request(e.to_string()))?,
            (None, None) => {
                let mut config = DebateConfig::default();
                if let Some(protocol) = self.settings.protocol {
                    config.protocol = protocol;
                }
                config
            }
            (Some(_), Some(_)) => {
                return Err(ApiError::bad_request(
                    "give the configuration as `config` (JSON) or `toml` (text), not both",
                ));
            }
        };
        if config.context_dir.is_some() || config.personas.iter().any(|p| !p.corpus.is_empty()) {
            return Err(ApiError::bad_request(
                "config.context_dir and personas' corpus name files of the server: not accepted over the API (use `agon debate` or `agon corpus add` on the server)",
            ));
        }
        if !config.mcp_servers.is_empty() {
            let names: Vec<&str> = config.mcp_servers.keys().map(String::as_str).collect();
            return Err(ApiError::bad_request(format!(
                "config.mcp_servers ({}): MCP servers start programs or reach addresses from the server: not accepted over the API (use `agon debate` or a worker the operator starts)",
                names.join(", ")
            )));
        }
        config
            .apply(&self.settings.clone().overrides())
            .map_err(|e| match e {
                agon_config::ConfigError::Override { setting, reason }
                | agon_config::ConfigError::Conflict { setting, reason } => {
                    ApiError::bad_request(format!("settings.{setting}: {reason}"))
                }
                other => ApiError::bad_request(other.to_string()),
            })?;
        Ok(config)
    }
}
