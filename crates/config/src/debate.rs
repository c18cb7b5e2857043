//! Debate configuration (TOML). The schema is documented in
//! `docs/configuration.md`; every field has a default that runs on the local
//! model.

use std::collections::BTreeMap;

pub use agon_core::ProtocolKind;
use agon_core::{Persona, PersonaId, PersonaRole, ReflectionTrigger, Topic};
use agon_llm::ModelSpec;
use agon_protocol::ClaimDetector;
pub use agon_protocol::{AnalysisCadence, CruxRules as CruxConfig, DetectionMode};
use agon_protocol::{
    AspectSource, DetectionRules, JUDGE_ID, Start, StructuredRules, numbered_aspects,
};

use crate::deliberation::DeliberationConfig;
use crate::dialectic::DialecticConfig;
use crate::error::ConfigError;
use crate::resolved::{ProtocolConfig, Resolved, RunConfig};
pub use agon_protocol::{DetectionSource, TurnMode};
use serde::{Deserialize, Serialize};

/// One persona of the debate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonaConfig {
    /// Stable id (default: the name, lower-cased, non-alphanumerics as `-`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Display name.
    pub name: String,
    /// What they stand for and argue from.
    pub contract: String,
    /// How they sound.
    #[serde(default)]
    pub voice: String,
    /// Model spec for this persona's utterances (overrides `models.debater`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Files of the persona's own corpus (Markdown, text, JSON-lines
    /// posts), relative to the config file: indexed on first use and
    /// searched for EVIDENCE while the persona speaks (`agon corpus`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corpus: Vec<std::path::PathBuf>,
    /// Tools the persona may call while it speaks (`context_search`,
    /// `list_files`, `file_read`; the file tools need `context_dir`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Most tool calls per turn (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_limit: Option<usize>,
}

impl PersonaConfig {
    /// The id a persona named `name` gets (`Zoë Brandt` → `zoë-brandt`;
    /// an id is its own id).
    pub fn id_of(name: &str) -> String {
        agon_protocol::persona_slug(name)
    }

    /// The persona's id.
    pub fn resolved_id(&self) -> String {
        self.id
            .clone()
            .unwrap_or_else(|| agon_protocol::persona_slug(&self.name))
    }
}

/// An aspect given in the config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AspectConfig {
    /// Short label.
    pub label: String,
    /// What it covers.
    #[serde(default)]
    pub description: String,
}

/// Model specs per role (see `agon_llm::ModelSpec`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelsConfig {
    /// Used by every role not set below.
    pub default: String,
    /// Debaters' utterances.
    pub debater: Option<String>,
    /// Position extraction (and the combined disagreement judgement).
    pub extractor: Option<String>,
    /// Disagreement detection in `separate` mode.
    pub detector: Option<String>,
    /// Reflections and round records.
    pub reflector: Option<String>,
    /// Crux rooms' convergence checks and cards.
    pub crux: Option<String>,
    /// Aspect decomposition and the final synthesis.
    pub judge: Option<String>,
    /// A listening agent's "should I respond?" in a deliberation (default:
    /// the extractor's model).
    pub evaluator: Option<String>,
}

impl Default for ModelsConfig {
    fn default() -> Self {
        Self {
            default: "local".into(),
            debater: None,
            extractor: None,
            detector: None,
            reflector: None,
            crux: None,
            judge: None,
            evaluator: None,
        }
    }
}

/// Token budgets and output lengths, and the debate's spending limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// Tokens of assembled context per utterance call (≥ 128).
    pub context_tokens: usize,
    /// Most tokens an utterance may generate.
    pub utterance_max_tokens: u32,
    /// Word limit stated to the debaters.
    pub utterance_words: u32,
    /// Most tokens of a structured (JSON) call.
    pub structured_max_tokens: u32,
    /// Stop the debate at this many tokens (prompt + answer, every call):
    /// it wraps up (its judge or synthesis) and finishes with the
    /// `budget` status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Stop at this cost in US dollars (priced calls; local models cost
    /// nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Stop this many minutes after the debate started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_minutes: Option<f64>,
    /// The share of each limit kept for the wrap-up (0 to 0.5; default
    /// 0.1): the stop comes at 90 % of the limit.
    pub reserve: f64,
}

impl DebateConfig {
    /// The built-in list prices with this configuration's `[prices]` over
    /// them.
    pub fn price_table(&self) -> agon_llm::PriceTable {
        let mut table = agon_llm::PriceTable::with_defaults();
        for (model, price) in &self.prices {
            table.set(model.clone(), *price);
        }
        table
    }
}

impl BudgetConfig {
    /// The spending limits, as a run checks them.
    pub fn limits(&self) -> agon_core::Budget {
        agon_core::Budget {
            max_tokens: self.max_tokens,
            max_cost_usd: self.max_cost_usd,
            max_minutes: self.max_minutes,
            reserve: self.reserve,
        }
    }
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            context_tokens: 1_200,
            utterance_max_tokens: 220,
            utterance_words: 120,
            structured_max_tokens: 600,
            max_tokens: None,
            max_cost_usd: None,
            max_minutes: None,
            reserve: 0.1,
        }
    }
}

/// Disagreement detection → claims (Faultline's values by default).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DetectionConfig {
    /// Combined, separate or off.
    pub mode: DetectionMode,
    /// Messages in a judged window.
    pub window: usize,
    /// Confidence needed (0-1).
    pub min_confidence: f32,
    /// Consecutive windows needed.
    pub consecutive: u32,
    /// Messages before the same pair may get another claim.
    pub cooldown_messages: u32,
}

impl Default for DetectionConfig {
    fn default() -> Self {
        Self {
            mode: DetectionMode::Combined,
            window: 10,
            min_confidence: 0.8,
            consecutive: 2,
            cooldown_messages: 10,
        }
    }
}

impl DetectionConfig {
    /// The core claim-detection rule for these settings.
    pub fn detector(&self) -> ClaimDetector {
        ClaimDetector {
            min_confidence: (self.min_confidence * 100.0).round().clamp(0.0, 100.0) as u8,
            consecutive: self.consecutive,
            cooldown_messages: self.cooldown_messages,
        }
    }
}

/// When a structured debate's messages are analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisConfig {
    /// `miniround` (default): one analysis call per group of turns (the
    /// openings, a miniround's takes, a crux room, the closings) once the
    /// group is complete; `message`: one call per message.
    pub cadence: AnalysisCadence,
}

/// Vector memory (agon-memory): what the debate remembers and how much of
/// it is recalled into each take, crux and closing context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Remember and recall (when the embedder cannot be loaded the debate
    /// runs without memory and records a warning).
    pub enabled: bool,
    /// The embedder: `local` (MiniLM), `local:DIR`, `voyage[:MODEL]`,
    /// `openai[:MODEL]` or `openai-compatible:MODEL/DIMS@URL`.
    pub embedder: String,
    /// Also recall the persona's memories of earlier debates.
    pub cross_debate: bool,
    /// Retrieval: candidates (N), k, weights, decay, lexical share.
    pub retrieval: agon_context::RetrievalConfig,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            embedder: "local".into(),
            cross_debate: true,
            retrieval: agon_context::RetrievalConfig::default(),
        }
    }
}

/// Sampling temperature per role.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TemperatureConfig {
    /// Debaters.
    pub debater: f32,
    /// Extraction (seed: 0.2).
    pub extractor: f32,
    /// Detection.
    pub detector: f32,
    /// Reflections (seed: 0.3) and round records.
    pub reflector: f32,
    /// Crux checks and cards.
    pub crux: f32,
    /// Judge.
    pub judge: f32,
    /// Listening agents' evaluations (deliberation).
    pub evaluator: f32,
}

impl Default for TemperatureConfig {
    fn default() -> Self {
        Self {
            debater: 0.8,
            extractor: 0.2,
            detector: 0.2,
            reflector: 0.3,
            crux: 0.3,
            judge: 0.3,
            evaluator: 0.2,
        }
    }
}

fn is_default_dialectic(d: &DialecticConfig) -> bool {
    d == &DialecticConfig::default()
}

fn is_default_deliberation(d: &DeliberationConfig) -> bool {
    d == &DeliberationConfig::default()
}

fn is_default_trust(t: &TrustConfig) -> bool {
    t == &TrustConfig::default()
}

/// How the agents' trust memory (seed 003) steers a debate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrustConfig {
    /// Read the agents' standings when the debate starts and weigh the
    /// feedback prompts show by them: the critiques a proposal received
    /// ordered by their critic's trust and labelled, the judge's view of
    /// the positions labelled (default on; agents with no memory yet are
    /// never labelled).
    pub weigh_feedback: bool,
}

impl Default for TrustConfig {
    fn default() -> Self {
        Self {
            weigh_feedback: true,
        }
    }
}

/// A whole debate's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DebateConfig {
    /// The protocol: `structured` (default) or `dialectic`.
    pub protocol: ProtocolKind,
    /// The question debated (for `dialectic`: the problem to solve).
    pub topic: String,
    /// Background for the topic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The directory agents' `list_files` and `file_read` tools are
    /// confined to (`--context-dir`, or `--context DIR`; relative to the
    /// config file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_dir: Option<std::path::PathBuf>,
    /// MCP servers whose tools participants may be granted (`tools =
    /// ["files/read_text_file"]`): started when the debate runs, stopped
    /// when the run ends. Only the CLI and operator-run workers start
    /// them; the API refuses a configuration that declares one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, crate::mcp::McpServerConfig>,
    /// Aspects; when empty, a model decomposes the topic into `aspect_count`.
    pub aspects: Vec<AspectConfig>,
    /// Number of aspects to decompose into (when `aspects` is empty).
    pub aspect_count: usize,
    /// Minirounds per aspect in all (miniround 0 = initial takes).
    pub minirounds: u32,
    /// Participants; when empty, the judge model casts `persona_count`
    /// debaters for the topic (topic-neutral ones if that fails).
    pub personas: Vec<PersonaConfig>,
    /// How many debaters to cast when `personas` is empty (2-6).
    pub persona_count: usize,
    /// A judge writes a final synthesis.
    pub synthesis: bool,
    /// Reflection threshold (seed: 15).
    pub reflection_threshold: u32,
    /// One challenger per aspect, drawn from the agents' trust memory like
    /// dialectic's devil's advocate: from the aspect's first reply on, it
    /// argues against the aspect's strongest position (default off).
    pub challenger: bool,
    /// Models per role.
    pub models: ModelsConfig,
    /// Budgets.
    pub budget: BudgetConfig,
    /// Disagreement detection.
    pub detection: DetectionConfig,
    /// When messages are analysed into the position ledger.
    pub analysis: AnalysisConfig,
    /// Crux rooms.
    pub crux: CruxConfig,
    /// Temperatures.
    pub temperature: TemperatureConfig,
    /// Vector memory.
    pub memory: MemoryConfig,
    /// The dialectic protocol's settings (`protocol = "dialectic"`).
    #[serde(skip_serializing_if = "is_default_dialectic")]
    pub dialectic: DialecticConfig,
    /// The deliberation protocol's settings (`protocol = "deliberation"`).
    #[serde(skip_serializing_if = "is_default_deliberation")]
    pub deliberation: DeliberationConfig,
    /// How the agents' trust memory steers the debate.
    #[serde(skip_serializing_if = "is_default_trust")]
    pub trust: TrustConfig,
    /// Prices (USD per million tokens) by model id, over the built-in list
    /// prices: `[prices."gpt-4o-mini"] input_per_mtok = 0.15,
    /// output_per_mtok = 0.6`. What `--max-cost` and the cost lines count.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, agon_llm::Price>,
}

/// ` (it declares a, b)`, or nothing when `servers` is empty.
fn declared(servers: &BTreeMap<String, crate::mcp::McpServerConfig>) -> String {
    if servers.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = servers.keys().map(String::as_str).collect();
        format!(" (it declares {})", names.join(", "))
    }
}

/// The default topic.
pub const DEFAULT_TOPIC: &str = "Should cities ban private cars from their centres?";

/// The example personas for [`DEFAULT_TOPIC`] (the demo's cast; a
/// configuration without personas has them cast for its own topic).
pub fn default_personas() -> Vec<PersonaConfig> {
    let p = |name: &str, contract: &str, voice: &str| PersonaConfig {
        corpus: Vec::new(),
        tools: Vec::new(),
        tool_call_limit: None,
        id: None,
        name: name.into(),
        contract: contract.into(),
        voice: voice.into(),
        model: None,
    };
    vec![
        p(
            "Mara",
            "Urban planner. Car-free centres make cities healthier, safer and richer; cites transit ridership and pedestrian-zone retail data.",
            "direct, concrete, impatient with vagueness",
        ),
        p(
            "Theo",
            "Economist. Skeptical of bans: they hurt small shops, commuters and the poor; prefers congestion pricing over prohibition.",
            "dry, precise, asks for numbers",
        ),
        p(
            "Priya",
            "Public-health physician. Focuses on air pollution, road deaths and who bears the costs; open to phased compromises.",
            "warm, pragmatic, evidence-minded",
        ),
    ]
}

impl Default for DebateConfig {
    fn default() -> Self {
        Self {
            protocol: ProtocolKind::Structured,
            topic: DEFAULT_TOPIC.into(),
            context: None,
            context_dir: None,
            mcp_servers: BTreeMap::new(),
            aspects: Vec::new(),
            aspect_count: 3,
            minirounds: 3,
            personas: Vec::new(),
            persona_count: 3,
            synthesis: true,
            reflection_threshold: 15,
            challenger: false,
            models: ModelsConfig::default(),
            budget: BudgetConfig::default(),
            detection: DetectionConfig::default(),
            analysis: AnalysisConfig::default(),
            crux: CruxConfig::default(),
            temperature: TemperatureConfig::default(),
            memory: MemoryConfig::default(),
            dialectic: DialecticConfig::default(),
            deliberation: DeliberationConfig::default(),
            trust: TrustConfig::default(),
            prices: BTreeMap::new(),
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The dotted field at `line` (1-based): the table header above it plus the
/// key on it, e.g. `crux.max_turns`.
fn field_at(text: &str, line: usize) -> Option<String> {
    let mut table = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.starts_with('[') {
            table = l.trim_matches(|c| c == '[' || c == ']').trim().to_owned();
        }
        if i + 1 == line {
            let key = l.split_once('=').map(|(k, _)| k.trim().to_owned());
            return match (table.is_empty(), key) {
                (_, None) => (!table.is_empty()).then_some(table),
                (true, Some(k)) => Some(k),
                (false, Some(k)) => Some(format!("{table}.{k}")),
            };
        }
    }
    None
}

impl DebateConfig {
    /// The structured-debate rules of this configuration: the start event's
    /// topic, personas (with the judge when a synthesis is asked for) and
    /// aspects, and everything that decides the next step.
    pub fn rules(&self) -> StructuredRules {
        let mut personas: Vec<Persona> = self
            .personas
            .iter()
            .map(|p| {
                Persona::debater(
                    p.resolved_id(),
                    p.name.trim(),
                    p.contract.trim(),
                    p.voice.trim(),
                )
            })
            .collect();
        if self.synthesis {
            personas.push(Persona {
                id: PersonaId::new(JUDGE_ID),
                name: "Judge".into(),
                contract: "Impartial judge who writes the final synthesis.".into(),
                voice: "measured".into(),
                role: PersonaRole::Judge,
                specialty: None,
            });
        }
        let aspects = if self.aspects.is_empty() {
            AspectSource::Planned {
                count: self.aspect_count,
            }
        } else {
            AspectSource::Configured(numbered_aspects(
                self.aspects
                    .iter()
                    .map(|a| (a.label.as_str(), a.description.as_str())),
            ))
        };
        StructuredRules {
            start: Start {
                topic: Topic {
                    question: self.topic.trim().to_owned(),
                    context: self.context.clone(),
                },
                personas,
                cast: self.personas.is_empty().then_some(self.persona_count),
                aspects,
                weigh_by_trust: self.trust.weigh_feedback,
            },
            minirounds: self.minirounds,
            crux: self.crux,
            synthesis: self.synthesis,
            detection: DetectionRules {
                mode: self.detection.mode,
                window: self.detection.window,
                detector: self.detection.detector(),
            },
            analysis: self.analysis.cadence,
            reflection: ReflectionTrigger::new(self.reflection_threshold),
            challenger: self.challenger,
        }
    }

    /// The personas (structured debate, deliberation) that may call tools.
    fn persona_tools(&self) -> Vec<(PersonaId, Vec<String>, usize)> {
        self.personas
            .iter()
            .filter(|p| !p.tools.is_empty())
            .map(|p| {
                (
                    PersonaId::new(p.resolved_id()),
                    p.tools.clone(),
                    p.tool_call_limit
                        .unwrap_or(crate::dialectic::DEFAULT_TOOL_CALL_LIMIT),
                )
            })
            .collect()
    }

    /// Checks that every participant's file tools have a context
    /// directory (once the command line's `--context-dir` is laid over the
    /// file), and that every tool is one Agon has.
    pub fn validate_tools(&self, file: &str) -> Result<(), ConfigError> {
        let tools: Vec<(String, &[String], Option<usize>)> = match self.protocol {
            ProtocolKind::Dialectic => self
                .dialectic
                .agents
                .iter()
                .enumerate()
                .filter(|(_, a)| a.enabled)
                .map(|(i, a)| {
                    (
                        format!("dialectic.agent[{i}]"),
                        a.tools.as_slice(),
                        a.tool_call_limit,
                    )
                })
                .collect(),
            _ => self
                .personas
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    (
                        format!("personas[{i}]"),
                        p.tools.as_slice(),
                        p.tool_call_limit,
                    )
                })
                .collect(),
        };
        let bad = |field: String, reason: String| {
            Err(ConfigError::Invalid {
                file: file.to_owned(),
                field,
                reason,
            })
        };
        for (name, server) in &self.mcp_servers {
            server.validate(name, file)?;
        }
        for (at, names, limit) in tools {
            for (j, tool) in names.iter().enumerate() {
                let name = match tool.parse::<agon_core::ToolGrant>() {
                    Ok(agon_core::ToolGrant::Builtin(name)) => name,
                    Ok(agon_core::ToolGrant::Mcp { server, .. }) => {
                        if !self.mcp_servers.contains_key(&server) {
                            return bad(
                                format!("{at}.tools[{j}]"),
                                format!(
                                    "`{tool}` names the MCP server `{server}`, which `mcp_servers` does not declare{}",
                                    declared(&self.mcp_servers)
                                ),
                            );
                        }
                        continue;
                    }
                    Err(unknown) => return bad(format!("{at}.tools[{j}]"), unknown.to_string()),
                };
                if name.needs_context_dir() && self.context_dir.is_none() {
                    return bad(
                        format!("{at}.tools[{j}]"),
                        format!(
                            "`{tool}` needs a context directory (context_dir or --context-dir)"
                        ),
                    );
                }
            }
            if let Some(n) = limit
                && !(1..=50).contains(&n)
            {
                return bad(
                    format!("{at}.tool_call_limit"),
                    format!("{n} is outside 1..=50"),
                );
            }
        }
        Ok(())
    }

    /// The configuration resolved for its protocol: the protocol's own
    /// rules, one variant per protocol, and the settings every run has.
    /// The one place that reads the file by its protocol.
    pub fn resolve(&self) -> Resolved {
        let topic = || Topic {
            question: self.topic.trim().to_owned(),
            context: self.context.clone(),
        };
        let detection = DetectionRules {
            mode: self.detection.mode,
            window: self.detection.window,
            detector: self.detection.detector(),
        };
        let structured_personas = || {
            self.personas
                .iter()
                .filter_map(|p| Some((p.resolved_id(), p.model.clone()?)))
                .collect()
        };
        let (protocol, run) = match self.protocol {
            ProtocolKind::Structured => (
                ProtocolConfig::Structured(self.rules()),
                RunConfig {
                    context_tokens: self.budget.context_tokens,
                    utterance_words: self.budget.utterance_words,
                    utterance_max_tokens: self.budget.utterance_max_tokens,
                    persona_models: structured_personas(),
                    judge_model: None,
                    persona_temperatures: Vec::new(),
                    agent_tools: self.persona_tools(),
                    context_dir: self.context_dir.clone(),
                },
            ),
            ProtocolKind::Dialectic => {
                let d = &self.dialectic;
                let judge = PersonaId::new(d.judge.resolved_id(true));
                let persona_temperatures = d
                    .enabled_agents()
                    .map(|a| PersonaId::new(a.resolved_id(false)))
                    .chain(std::iter::once(judge))
                    .filter_map(|p| Some((p.clone(), d.temperature_of(&p)?)))
                    .collect();
                let extractor = self
                    .models
                    .extractor
                    .as_deref()
                    .unwrap_or(&self.models.default);
                let mut rules = d.rules(topic(), Some(detection), self.crux, extractor);
                rules.start.weigh_by_trust = self.trust.weigh_feedback;
                (
                    ProtocolConfig::Dialectic(rules),
                    RunConfig {
                        context_tokens: d.context_tokens,
                        utterance_words: d.answer_words,
                        utterance_max_tokens: d.answer_max_tokens,
                        persona_models: d.persona_models(),
                        judge_model: d.judge.model.clone(),
                        persona_temperatures,
                        agent_tools: d
                            .enabled_agents()
                            .filter(|a| !a.tools.is_empty())
                            .map(|a| {
                                (
                                    PersonaId::new(a.resolved_id(false)),
                                    a.tools.clone(),
                                    a.tool_call_limit
                                        .unwrap_or(crate::dialectic::DEFAULT_TOOL_CALL_LIMIT),
                                )
                            })
                            .collect(),
                        context_dir: self.context_dir.clone(),
                    },
                )
            }
            ProtocolKind::Deliberation => {
                let mut start = self.rules().start;
                // A session has no aspects and no judge.
                start.aspects = AspectSource::Configured(Vec::new());
                start.personas.retain(Persona::is_debater);
                let d = &self.deliberation;
                (
                    ProtocolConfig::Deliberation(d.rules(start, detection)),
                    RunConfig {
                        context_tokens: d.context_tokens(),
                        utterance_words: d.answer_words,
                        utterance_max_tokens: d.answer_max_tokens,
                        persona_models: structured_personas(),
                        judge_model: None,
                        persona_temperatures: Vec::new(),
                        agent_tools: self.persona_tools(),
                        context_dir: self.context_dir.clone(),
                    },
                )
            }
        };
        Resolved { protocol, run }
    }

    /// The protocol this configuration runs.
    pub fn protocol(&self) -> std::sync::Arc<dyn agon_protocol::Protocol> {
        self.resolve().protocol.into_protocol()
    }

    /// Parses TOML; `file` names the source in errors. Validates the result.
    pub fn from_toml(text: &str, file: &str) -> Result<Self, ConfigError> {
        let config = Self::parse_toml(text, file)?;
        config.validate(file)?;
        Ok(config)
    }

    /// Parses TOML without validating the values.
    pub(crate) fn parse_toml(text: &str, file: &str) -> Result<Self, ConfigError> {
        // The error names the field by its whole path (`budget.context_tokens`),
        // else (a syntax error) by the key on its line.
        let error = |e: toml::de::Error, path: Option<String>| {
            let line = e.span().map_or(0, |s| line_of(text, s.start));
            let message = e.message().trim().to_owned();
            let field = path.filter(|p| p != ".").or_else(|| field_at(text, line));
            ConfigError::Parse {
                file: file.to_owned(),
                line,
                message: match field {
                    Some(field) if !message.contains(&format!("`{field}`")) => {
                        format!("field `{field}`: {message}")
                    }
                    _ => message,
                },
            }
        };
        let document = toml::Deserializer::parse(text).map_err(|e| error(e, None))?;
        serde_path_to_error::deserialize(document).map_err(|e| {
            let path = e.path().to_string();
            error(e.into_inner(), Some(path))
        })
    }

    /// Checks every value; the error names the field.
    pub fn validate(&self, file: &str) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                file: file.to_owned(),
                field: field.to_owned(),
                reason,
            })
        };
        if self.topic.trim().is_empty() {
            return bad("topic", "must not be empty".into());
        }
        match self.protocol {
            ProtocolKind::Dialectic => self.dialectic.validate(file)?,
            ProtocolKind::Structured => self.validate_structured(file)?,
            ProtocolKind::Deliberation => {
                // The participants are checked as a structured debate's.
                self.validate_structured(file)?;
                self.deliberation.validate(file)?;
            }
        }
        self.validate_common(file)
    }

    fn validate_structured(&self, file: &str) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                file: file.to_owned(),
                field: field.to_owned(),
                reason,
            })
        };
        if self.aspects.is_empty() && !(1..=6).contains(&self.aspect_count) {
            return bad(
                "aspect_count",
                format!("{} is outside 1..=6", self.aspect_count),
            );
        }
        for (i, a) in self.aspects.iter().enumerate() {
            if a.label.trim().is_empty() {
                return bad(&format!("aspects[{i}].label"), "must not be empty".into());
            }
        }
        if !(1..=10).contains(&self.minirounds) {
            return bad(
                "minirounds",
                format!("{} is outside 1..=10", self.minirounds),
            );
        }
        if self.personas.len() == 1 {
            return bad(
                "personas",
                "needs at least 2 personas (or none: then they are cast for the topic)".into(),
            );
        }
        if self.personas.is_empty() && !(2..=agon_extract::MAX_CAST).contains(&self.persona_count) {
            return bad(
                "persona_count",
                format!(
                    "{} is outside 2..={}",
                    self.persona_count,
                    agon_extract::MAX_CAST
                ),
            );
        }
        let mut ids = std::collections::HashSet::new();
        for (i, p) in self.personas.iter().enumerate() {
            if p.name.trim().is_empty() {
                return bad(&format!("personas[{i}].name"), "must not be empty".into());
            }
            if p.contract.trim().is_empty() {
                return bad(
                    &format!("personas[{i}].contract"),
                    "must not be empty".into(),
                );
            }
            let id = p.resolved_id();
            if id.is_empty() || id == "judge" {
                return bad(
                    &format!("personas[{i}].id"),
                    format!("`{id}` is not usable"),
                );
            }
            if !ids.insert(id.clone()) {
                return bad(
                    &format!("personas[{i}]"),
                    format!("duplicate persona id `{id}`"),
                );
            }
            if let Some(spec) = &p.model
                && let Err(e) = crate::parse_chain(spec)
            {
                return bad(&format!("personas[{i}].model"), e.to_string());
            }
        }
        Ok(())
    }

    fn validate_common(&self, file: &str) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                file: file.to_owned(),
                field: field.to_owned(),
                reason,
            })
        };
        let m = &self.models;
        for (field, spec) in [
            ("models.default", Some(&m.default)),
            ("models.debater", m.debater.as_ref()),
            ("models.extractor", m.extractor.as_ref()),
            ("models.detector", m.detector.as_ref()),
            ("models.reflector", m.reflector.as_ref()),
            ("models.crux", m.crux.as_ref()),
            ("models.judge", m.judge.as_ref()),
            ("models.evaluator", m.evaluator.as_ref()),
        ] {
            if let Some(spec) = spec
                && let Err(e) = crate::parse_chain(spec)
            {
                return bad(field, e.to_string());
            }
        }
        if let Err(e) = self.memory.embedder.parse::<agon_llm::EmbedderSpec>() {
            return bad("memory.embedder", e.to_string());
        }
        if let Err(e) = self.memory.retrieval.validate() {
            return bad("memory.retrieval", e.to_string());
        }
        if self.budget.context_tokens < agon_context::ContextBudget::MIN_TOKENS {
            return bad(
                "budget.context_tokens",
                format!(
                    "{} is below the minimum of {}",
                    self.budget.context_tokens,
                    agon_context::ContextBudget::MIN_TOKENS
                ),
            );
        }
        if self.budget.utterance_max_tokens == 0 || self.budget.structured_max_tokens == 0 {
            return bad("budget", "token limits must be positive".into());
        }
        if self.budget.max_tokens == Some(0) {
            return bad("budget.max_tokens", "must be positive".into());
        }
        for (field, value) in [
            ("budget.max_cost_usd", self.budget.max_cost_usd),
            ("budget.max_minutes", self.budget.max_minutes),
        ] {
            if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return bad(
                    field,
                    format!("{} is not a positive number", value.unwrap_or_default()),
                );
            }
        }
        for (model, price) in &self.prices {
            let fine = |v: f64| v.is_finite() && v >= 0.0;
            if !(fine(price.input_per_mtok) && fine(price.output_per_mtok)) {
                return bad(
                    "prices",
                    format!("the price of `{model}` must be two non-negative numbers"),
                );
            }
            for (rate, value) in [
                ("cached_input_per_mtok", price.cached_input_per_mtok),
                ("cache_write_per_mtok", price.cache_write_per_mtok),
            ] {
                if value.is_some_and(|v| !fine(v)) {
                    return bad(
                        "prices",
                        format!(
                            "`{rate}` of `{model}` must be a non-negative number, not {}",
                            value.unwrap_or_default()
                        ),
                    );
                }
            }
        }
        if !(0.0..=0.5).contains(&self.budget.reserve) {
            return bad(
                "budget.reserve",
                format!("{} is outside 0..=0.5", self.budget.reserve),
            );
        }
        if !(0.0..=1.0).contains(&self.detection.min_confidence) {
            return bad(
                "detection.min_confidence",
                format!("{} is outside 0..=1", self.detection.min_confidence),
            );
        }
        if self.detection.window == 0 || self.detection.consecutive == 0 {
            return bad(
                "detection",
                "window and consecutive must be positive".into(),
            );
        }
        for (field, t) in [
            ("temperature.debater", self.temperature.debater),
            ("temperature.extractor", self.temperature.extractor),
            ("temperature.detector", self.temperature.detector),
            ("temperature.reflector", self.temperature.reflector),
            ("temperature.crux", self.temperature.crux),
            ("temperature.judge", self.temperature.judge),
            ("temperature.evaluator", self.temperature.evaluator),
        ] {
            if !(0.0..=2.0).contains(&t) {
                return bad(field, format!("{t} is outside 0..=2"));
            }
        }
        Ok(())
    }

    /// Whether any role uses the local model.
    pub fn uses_local_model(&self) -> bool {
        let m = &self.models;
        [
            Some(&m.default),
            m.debater.as_ref(),
            m.extractor.as_ref(),
            m.detector.as_ref(),
            m.reflector.as_ref(),
            m.crux.as_ref(),
            m.judge.as_ref(),
            m.evaluator.as_ref(),
        ]
        .into_iter()
        .flatten()
        .cloned()
        .chain({
            let run = self.resolve().run;
            run.persona_models
                .into_iter()
                .map(|(_, spec)| spec)
                .chain(run.judge_model)
        })
        .any(|s| crate::parse_chain(&s).is_ok_and(|chain| chain.iter().any(ModelSpec::is_local)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn load(path: &Path) -> DebateConfig {
        DebateConfig::load_with(path, &|p: &Path| std::fs::read_to_string(p))
            .unwrap()
            .0
    }

    #[test]
    fn defaults_are_valid_and_round_trip_through_toml() {
        let c = DebateConfig::default();
        c.validate("x").unwrap();
        let text = toml::to_string(&c).unwrap();
        assert_eq!(DebateConfig::from_toml(&text, "x").unwrap(), c);
    }

    #[test]
    fn prices_with_cache_rates_override_the_built_in_ones_and_bad_rates_are_named() {
        let c = DebateConfig::from_toml(
            "[prices.\"my-model\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\ncached_input_per_mtok = 0.1\n",
            "p.toml",
        )
        .unwrap();
        let price = c.price_table().price("my-model-v2").unwrap();
        assert_eq!(price.cached_input_per_mtok, Some(0.1));
        assert_eq!(
            price.cache_write_per_mtok, None,
            "writes cost the input rate"
        );
        let e = DebateConfig::from_toml(
            "[prices.\"m\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\ncache_write_per_mtok = -1.0\n",
            "p.toml",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("`cache_write_per_mtok` of `m` must be a non-negative number"),
            "{e}"
        );
    }

    #[test]
    fn each_protocol_resolves_to_its_own_rules_and_run_settings() {
        let structured = DebateConfig::default().resolve();
        assert_eq!(structured.protocol.kind(), ProtocolKind::Structured);
        assert_eq!(
            structured.run.context_tokens,
            DebateConfig::default().budget.context_tokens
        );
        assert!(structured.run.persona_temperatures.is_empty());

        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/dialectic");
        let text =
            std::fs::read_to_string(Path::new(root).join("debate-config-kata1.json")).unwrap();
        let (dialectic, _) = crate::from_dialectic_json(&text, "kata1.json").unwrap();
        let resolved = dialectic.resolve();
        let ProtocolConfig::Dialectic(rules) = &resolved.protocol else {
            panic!("{:?}", resolved.protocol)
        };
        assert_eq!(rules.rounds, 3);
        let run = &resolved.run;
        assert_eq!(run.utterance_words, dialectic.dialectic.answer_words);
        assert_eq!(
            run.judge_model.as_deref(),
            Some("openrouter:anthropic/claude-3-opus")
        );
        let temperatures: Vec<(String, f32)> = run
            .persona_temperatures
            .iter()
            .map(|(p, t)| (p.to_string(), *t))
            .collect();
        assert_eq!(
            temperatures,
            [
                ("agent-architect".to_owned(), 0.5),
                ("agent-performance".to_owned(), 0.6),
                ("agent-security".to_owned(), 0.4),
                ("judge-main".to_owned(), 0.5),
            ]
        );
        assert_eq!(run.persona_models.len(), 3);

        let deliberation = DebateConfig {
            protocol: ProtocolKind::Deliberation,
            ..DebateConfig::default()
        }
        .resolve();
        let ProtocolConfig::Deliberation(rules) = &deliberation.protocol else {
            panic!("{:?}", deliberation.protocol)
        };
        assert!(
            rules.start.personas.iter().all(Persona::is_debater),
            "a session has no judge"
        );
        assert_eq!(
            deliberation.run.utterance_max_tokens,
            DeliberationConfig::default().answer_max_tokens
        );
    }

    /// The analysis reads a round of long answers in one call on the API
    /// providers' large windows, and in calls of ~6K tokens where the
    /// window may be small; a configured value wins.
    #[test]
    fn the_analysis_batch_is_sized_to_the_analysis_models_window() {
        let batch = |default: &str, extractor: Option<&str>, configured: Option<usize>| {
            let mut config = DebateConfig {
                protocol: ProtocolKind::Dialectic,
                ..DebateConfig::default()
            };
            config.models.default = default.into();
            config.models.extractor = extractor.map(str::to_owned);
            config.dialectic.analysis_batch_chars = configured;
            let ProtocolConfig::Dialectic(rules) = config.resolve().protocol else {
                panic!("not dialectic")
            };
            rules.analysis_batch_chars
        };
        use crate::dialectic::{
            LARGE_WINDOW_ANALYSIS_BATCH_CHARS as LARGE, SMALL_WINDOW_ANALYSIS_BATCH_CHARS as SMALL,
        };
        assert_eq!(batch("local", None, None), SMALL);
        assert_eq!(batch("anthropic:claude-sonnet-4-0", None, None), LARGE);
        assert_eq!(batch("openai:gpt-4o,openrouter:x/y", None, None), LARGE);
        assert_eq!(
            batch("openai:gpt-4o,local", None, None),
            SMALL,
            "a fallback to the local model"
        );
        assert_eq!(
            batch("openai-compatible:m@http://127.0.0.1:1/v1", None, None),
            SMALL
        );
        assert_eq!(
            batch("local", Some("openai:gpt-4o-mini"), None),
            LARGE,
            "the extractor's model decides"
        );
        assert_eq!(
            batch("anthropic:claude-sonnet-4-0", Some("local"), None),
            SMALL
        );
        assert_eq!(
            batch("openai:gpt-4o", None, Some(0)),
            0,
            "configured: no limit"
        );
        assert_eq!(batch("openai:gpt-4o", None, Some(24_000)), 24_000);
    }

    #[test]
    fn the_example_configs_parse() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
        let full = load(&Path::new(root).join("debate.toml"));
        let expected = DebateConfig {
            aspects: full.aspects.clone(),
            personas: default_personas(),
            ..DebateConfig::default()
        };
        assert_eq!(
            full, expected,
            "examples/debate.toml shows the defaults (and the default topic's cast)"
        );
        let demo = load(&Path::new(root).join("demo.toml"));
        assert_eq!(
            (demo.aspects.len(), demo.personas.len(), demo.crux.min_rooms),
            (2, 3, 1)
        );
        let devil = load(&Path::new(root).join("dialectic-devil-advocate.toml"));
        assert!(devil.dialectic.devil_advocate);
        assert_eq!(devil.dialectic.enabled_agents().count(), 3);
    }

    #[test]
    fn corpus_files_are_read_relative_to_the_config() {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"));
        let read = |p: &Path| std::fs::read_to_string(p);
        let (config, _) = DebateConfig::load_with(&root.join("evidence.toml"), &read).unwrap();
        let corpus: Vec<&Path> = config
            .personas
            .iter()
            .flat_map(|p| p.corpus.iter().map(|f| f.as_path()))
            .collect();
        assert_eq!(corpus.len(), 3);
        assert!(
            corpus.iter().all(|f| f.starts_with(root) && f.exists()),
            "{corpus:?}"
        );
        let dir = std::env::temp_dir().join(format!("agon-corpus-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, "topic = \"t\"\n[[personas]]\nname = \"A\"\ncontract = \"x\"\ncorpus = [\"missing.md\"]\n").unwrap();
        let err = DebateConfig::load_with(&file, &read)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("personas[0].corpus[0]") && err.contains("missing.md"),
            "{err}"
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = DebateConfig::from_toml("topic = \"t\"\nminirounds = \"three\"\n", "a.toml")
            .unwrap_err();
        let s = e.to_string();
        assert!(
            s.starts_with("a.toml:2:") && s.contains("minirounds"),
            "{s}"
        );
        let e = DebateConfig::from_toml("topic = \"t\"\n\n[crux]\nmax_turnz = 3\n", "a.toml")
            .unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("a.toml:4:") && s.contains("max_turnz"), "{s}");
        // A wrong type deep in a table names the whole path.
        let e = DebateConfig::from_toml(
            "topic = \"t\"\n[budget]\ncontext_tokens = \"big\"\n",
            "d.toml",
        )
        .unwrap_err();
        let s = e.to_string();
        assert!(
            s.starts_with("d.toml:3:") && s.contains("field `budget.context_tokens`"),
            "{s}"
        );
        let e = DebateConfig::from_toml(
            "topic = \"t\"\n[[personas]]\nname = \"A\"\ncontract = 7\n",
            "e.toml",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("field `personas[0].contract`"),
            "{e}"
        );
        let e = DebateConfig::from_toml("[models]\ndebater = \"gpt4\"\n", "b.toml").unwrap_err();
        assert!(e.to_string().contains("field `models.debater`"), "{e}");
        let e = DebateConfig::from_toml(
            "[[personas]]\nname = \"A\"\ncontract = \"x\"\n[[personas]]\nname = \"a\"\ncontract = \"y\"\n",
            "c.toml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("duplicate persona id `a`"), "{e}");
    }
}
