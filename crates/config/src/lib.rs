//! # agon-config
//!
//! What a user asks for, parsed and validated: a debate's TOML
//! configuration (`docs/configuration.md`) or dialectic's own
//! `debate-config.json`, into one [`DebateConfig`] that yields its
//! protocol ([`DebateConfig::protocol`]) and that protocol's rules.
//!
//! Pure: nothing here touches the file system, the network or a clock.
//! [`DebateConfig::load_with`] reads the config file and the prompt files
//! it names through a function the caller passes, so the same code parses
//! a file on disk, an upload or a string in a test. Every error names the
//! file, the line where it knows it, and the field.
//!
//! ```
//! let config = agon_config::DebateConfig::from_toml(
//!     "topic = \"Should cities ban cars?\"\nminirounds = 2\n",
//!     "inline.toml",
//! )
//! .unwrap();
//! assert_eq!(config.minirounds, 2);
//! ```

mod debate;
mod deliberation;
mod dialectic;
mod dialectic_json;
mod error;
mod load;
mod mcp;
mod overrides;
mod resolved;

use std::path::Path;

pub use agon_llm::{ModelSpec, SpecError};
pub use debate::{
    AnalysisCadence, AnalysisConfig, AspectConfig, BudgetConfig, CruxConfig, DEFAULT_TOPIC,
    DebateConfig, DetectionConfig, DetectionMode, DetectionSource, MemoryConfig, ModelsConfig,
    PersonaConfig, ProtocolKind, TemperatureConfig, TrustConfig, TurnMode, default_personas,
};
pub use deliberation::{DeliberationConfig, PatternsConfig, Preset};
pub use dialectic::{
    AgentConfig, DEFAULT_TOOL_CALL_LIMIT, DialecticConfig, LARGE_WINDOW_ANALYSIS_BATCH_CHARS,
    SMALL_WINDOW_ANALYSIS_BATCH_CHARS, TerminationKind,
};
pub use dialectic_json::from_dialectic_json;
pub use error::ConfigError;
pub use mcp::{DEFAULT_MCP_CALL_TIMEOUT_SECS, McpServerConfig};
pub use overrides::{
    DeliberationOverrides, DialecticOverrides, OVERRIDES_SOURCE, Overrides, StructuredOverrides,
};
pub use resolved::{ProtocolConfig, Resolved, RunConfig};

/// How a config's files are read: `&|p| std::fs::read_to_string(p)` in
/// the CLI, a map of strings in a test or a server.
pub type ReadFile<'a> = &'a dyn Fn(&Path) -> std::io::Result<String>;

/// Parses a model spec or a comma-separated fallback chain of specs
/// (`openai:gpt-4o-mini,anthropic:claude-haiku-4-5`: the second answers
/// when the first fails).
pub fn parse_chain(spec: &str) -> Result<Vec<ModelSpec>, SpecError> {
    spec.split(',').map(str::parse).collect()
}
