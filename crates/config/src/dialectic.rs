//! The `[dialectic]` section of a debate configuration (seed 004): role
//! agents, the judge, rounds, termination, clarifications, summarization,
//! analysis and the devil's-advocate slot. `docs/configuration.md`
//! documents every field; `dialectic_json` reads dialectic's own
//! `debate-config.json` into the same types.

use std::collections::BTreeMap;
use std::path::Path;

use agon_context::perspective::{SummarizationOverride, SummarizationSettings};
use agon_context::prompts::dialectic::{RoleBrief, RoleKind};
use agon_core::{Persona, PersonaId, PersonaRole, Topic};
use agon_protocol::{
    AspectSource, DetectionRules, DialecticRules, Start, SummaryRules, Termination,
};
use serde::{Deserialize, Serialize};

use crate::{ConfigError, ReadFile};

/// One dialectic agent (or the judge).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Stable id (default: `agent-ROLE`, `judge-main` for the judge); no `/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Display name (default: the role's, e.g. "System Architect").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// architect, performance, security, testing, kiss, datamodeling or generalist.
    pub role: String,
    /// Model spec; a comma-separated list is a fallback chain (default: `models.debater`,
    /// or `models.judge` for the judge, or `models.default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Sampling temperature (default: `temperature.debater` / `temperature.judge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The system prompt, inline (replaces the role's built-in brief).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// A file holding the system prompt (relative to the config file); a
    /// missing or empty file falls back to the built-in brief with a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_file: Option<String>,
    /// The summary prompt, inline (`{content}` receives the history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_prompt: Option<String>,
    /// A file holding the summary prompt (same fallback rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_prompt_file: Option<String>,
    /// Whether the agent takes part (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Overrides of the debate-wide summarization settings.
    #[serde(default, skip_serializing_if = "is_default_override")]
    pub summarization: SummarizationOverride,
    /// Tools it may call while it proposes, critiques and refines
    /// (`context_search`, `list_files`, `file_read`; the file tools need
    /// the top-level `context_dir`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Most tool calls per contribution (default 10, dialectic's
    /// `toolCallLimit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_limit: Option<usize>,
}

/// Tool calls per contribution when an agent sets no limit.
pub const DEFAULT_TOOL_CALL_LIMIT: usize = 10;

fn yes() -> bool {
    true
}

fn is_default_override(o: &SummarizationOverride) -> bool {
    o == &SummarizationOverride::default()
}

impl AgentConfig {
    /// An agent of a built-in role with every default.
    pub fn of_role(role: RoleKind) -> Self {
        Self {
            id: None,
            name: None,
            role: role.as_str().to_owned(),
            model: None,
            temperature: None,
            system_prompt: None,
            system_prompt_file: None,
            summary_prompt: None,
            summary_prompt_file: None,
            enabled: true,
            summarization: SummarizationOverride::default(),
            tools: Vec::new(),
            tool_call_limit: None,
        }
    }

    /// The role (an unknown role is a configuration error, reported by validation).
    pub fn role_kind(&self) -> Option<RoleKind> {
        self.role.parse().ok()
    }

    /// The agent's id.
    pub fn resolved_id(&self, judge: bool) -> String {
        self.id.clone().unwrap_or_else(|| {
            if judge {
                "judge-main".to_owned()
            } else {
                format!("agent-{}", self.role.trim().to_ascii_lowercase())
            }
        })
    }

    /// The agent's display name.
    pub fn resolved_name(&self, judge: bool) -> String {
        self.name.clone().unwrap_or_else(|| {
            if judge {
                "Technical Judge".to_owned()
            } else {
                self.role_kind()
                    .map_or_else(|| self.role.clone(), |r| r.display_name().to_owned())
            }
        })
    }

    /// The system prompt in force: the user's, else the role's brief.
    pub fn brief(&self) -> String {
        match &self.system_prompt {
            Some(p) if !p.trim().is_empty() => p.trim().to_owned(),
            _ => self
                .role_kind()
                .unwrap_or(RoleKind::Generalist)
                .brief()
                .to_owned(),
        }
    }

    fn persona(&self, judge: bool) -> Persona {
        Persona {
            id: PersonaId::new(self.resolved_id(judge)),
            name: self.resolved_name(judge),
            contract: self.brief(),
            voice: String::new(),
            role: if judge {
                PersonaRole::Judge
            } else {
                PersonaRole::Debater
            },
            // Validation rejects a role that is not built in.
            specialty: self.role_kind(),
        }
    }

    /// Reads the prompt files (relative to `base`) into the inline fields;
    /// a file that is missing, unreadable or empty leaves the built-in
    /// prompt in force and adds a warning.
    pub fn read_prompt_files(
        &mut self,
        base: &Path,
        read_file: ReadFile<'_>,
        what: &str,
        warnings: &mut Vec<String>,
    ) {
        let read = |file: &str, warnings: &mut Vec<String>| -> Option<String> {
            let path = base.join(file);
            match read_file(&path) {
                Ok(text) if !text.trim().is_empty() => Some(text),
                Ok(_) => {
                    warnings.push(format!(
                        "{what}: prompt file {} is empty; using the built-in prompt",
                        path.display()
                    ));
                    None
                }
                Err(e) => {
                    warnings.push(format!(
                        "{what}: cannot read prompt file {} ({e}); using the built-in prompt",
                        path.display()
                    ));
                    None
                }
            }
        };
        if self.system_prompt.is_none()
            && let Some(file) = &self.system_prompt_file
        {
            self.system_prompt = read(file, warnings);
        }
        if self.summary_prompt.is_none()
            && let Some(file) = &self.summary_prompt_file
        {
            self.summary_prompt = read(file, warnings);
        }
    }
}

/// When the debate stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminationKind {
    /// After `rounds` rounds.
    #[default]
    Fixed,
    /// As soon as the judge's confidence reaches `convergence_threshold`.
    Convergence,
}

/// The dialectic protocol's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DialecticConfig {
    /// The agents (default: architect, performance, kiss).
    #[serde(rename = "agent")]
    pub agents: Vec<AgentConfig>,
    /// The judge (default: a generalist, "Technical Judge").
    pub judge: AgentConfig,
    /// Rounds (at most, with convergence); ≥ 1.
    pub rounds: u32,
    /// `fixed` or `convergence`.
    pub termination: TerminationKind,
    /// The judge's confidence (0-100) that ends a `convergence` debate.
    pub convergence_threshold: u8,
    /// Ask clarifying questions before round 1.
    pub clarify: bool,
    /// Most clarifying questions per agent (1-5).
    pub max_questions: usize,
    /// Clarification rounds at most (1-10): the first asking, then
    /// follow-ups in which the agents see every answer and may ask again
    /// (dialectic's `clarificationsMaxIterations`, default 3; 1: none).
    pub clarify_rounds: u32,
    /// Seconds a round may take; turns still running then are recorded as
    /// skipped and the debate goes on with what it has (0: no limit).
    pub timeout_per_round_secs: u64,
    /// Debate-wide summarization (seed 004's defaults: 5,000 → 2,500 chars).
    pub summarization: SummarizationSettings,
    /// A summary prompt for every agent without its own (inline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_prompt: Option<String>,
    /// A file holding it (relative to the config file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_prompt_file: Option<String>,
    /// Analyse every contribution into the position ledger (and open
    /// contested claims): the memory every later prompt shows.
    pub analysis: bool,
    /// With `analysis`, the round's analysis call also judges which
    /// critiques each refinement took in, for the agents' trust memory
    /// (seed 003's impact; no extra call, a few tokens per refinement).
    /// Off: the embeddings' cosine, or the words and ledger, judge.
    pub judge_impact: bool,
    /// Most characters of contributions one analysis call reads (0: no
    /// limit). A longer round is analysed in several calls; a refinement
    /// whose critiques land in another call is not judged for impact (the
    /// embeddings or the words and ledger judge it). Unset (the default):
    /// sized to the analysis model's window, see
    /// [`DialecticConfig::analysis_batch_chars_for`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis_batch_chars: Option<usize>,
    /// Track the problem's requirements on the ledger (dialectic 0.7): the
    /// analysis model reads them once before round 1 (dialectic's keyword
    /// inference without `analysis`), each round's analysis records which
    /// contributions cover them, agents see the uncovered ones and the
    /// judge answers for each.
    pub requirements: bool,
    /// One agent per round critiques as devil's advocate, drawn from the
    /// agents' trust memory (seed 003: weighted by trust, never an agent
    /// at 0.2 or below or on probation unless all are; default on).
    pub devil_advocate: bool,
    /// Crux rooms between two agents whose critiques keep clashing, after a
    /// round's refinements (needs `analysis`; room sizes from `[crux]`).
    pub crux_rooms: bool,
    /// Word limit stated to the agents.
    pub answer_words: u32,
    /// Most tokens an agent's answer may generate.
    pub answer_max_tokens: u32,
    /// Tokens of assembled context per agent call (≥ 128).
    pub context_tokens: usize,
}

impl Default for DialecticConfig {
    fn default() -> Self {
        Self {
            agents: [RoleKind::Architect, RoleKind::Performance, RoleKind::Kiss]
                .into_iter()
                .map(AgentConfig::of_role)
                .collect(),
            judge: AgentConfig::of_role(RoleKind::Generalist),
            rounds: 3,
            termination: TerminationKind::Fixed,
            convergence_threshold: 80,
            clarify: false,
            max_questions: 5,
            clarify_rounds: 3,
            timeout_per_round_secs: 300,
            summarization: SummarizationSettings::default(),
            summary_prompt: None,
            summary_prompt_file: None,
            analysis: true,
            judge_impact: true,
            analysis_batch_chars: None,
            requirements: true,
            devil_advocate: true,
            crux_rooms: false,
            answer_words: 300,
            answer_max_tokens: 700,
            context_tokens: 2_000,
        }
    }
}

/// The default most characters of one analysis call when the analysis
/// model's window may be small: about 6K tokens, so a round's call fits an
/// 8K-token local model.
pub const SMALL_WINDOW_ANALYSIS_BATCH_CHARS: usize = 24_000;

/// The default most characters of one analysis call on Anthropic, OpenAI
/// and OpenRouter, whose models read 128K tokens and more: about 50K
/// tokens, so a round of long answers is read in one call.
pub const LARGE_WINDOW_ANALYSIS_BATCH_CHARS: usize = 200_000;

impl DialecticConfig {
    /// Most characters of contributions one analysis call reads when the
    /// analysis model is `extractor` (a model spec chain, as in
    /// `[models]`): the configured value, else
    /// [`LARGE_WINDOW_ANALYSIS_BATCH_CHARS`] when every model of the chain
    /// is Anthropic, OpenAI or OpenRouter, and
    /// [`SMALL_WINDOW_ANALYSIS_BATCH_CHARS`] otherwise (a local model; an
    /// OpenAI-compatible server, whose window Agon cannot know; a spec that
    /// does not parse, which validation reports). Fewer, larger calls read
    /// the same contributions with fewer instructions: at ~2,500-word
    /// answers, one call per round instead of one per contribution.
    pub fn analysis_batch_chars_for(&self, extractor: &str) -> usize {
        use agon_llm::ModelSpec;
        if let Some(chars) = self.analysis_batch_chars {
            return chars;
        }
        let large = crate::parse_chain(extractor).is_ok_and(|chain| {
            chain.iter().all(|m| {
                matches!(
                    m,
                    ModelSpec::Anthropic(_) | ModelSpec::OpenAi(_) | ModelSpec::OpenRouter(_)
                )
            })
        });
        if large {
            LARGE_WINDOW_ANALYSIS_BATCH_CHARS
        } else {
            SMALL_WINDOW_ANALYSIS_BATCH_CHARS
        }
    }

    /// The agents that take part.
    pub fn enabled_agents(&self) -> impl Iterator<Item = &AgentConfig> {
        self.agents.iter().filter(|a| a.enabled)
    }

    /// Keeps the enabled agents whose role is listed (in the order
    /// configured); roles no configured agent has get a built-in agent.
    pub fn select_roles(&mut self, roles: &[RoleKind]) {
        let mut kept: Vec<AgentConfig> = Vec::new();
        for role in roles {
            let configured: Vec<AgentConfig> = self
                .enabled_agents()
                .filter(|a| a.role_kind() == Some(*role))
                .cloned()
                .collect();
            if configured.is_empty() {
                kept.push(AgentConfig::of_role(*role));
            } else {
                kept.extend(configured);
            }
        }
        self.agents = kept;
    }

    /// Reads every prompt file into the inline fields (see
    /// [`AgentConfig::read_prompt_files`]); returns the warnings.
    pub fn read_prompt_files(&mut self, base: &Path, read_file: ReadFile<'_>) -> Vec<String> {
        let mut warnings = Vec::new();
        for (i, a) in self.agents.iter_mut().enumerate() {
            a.read_prompt_files(
                base,
                read_file,
                &format!("dialectic.agent[{i}]"),
                &mut warnings,
            );
        }
        self.judge
            .read_prompt_files(base, read_file, "dialectic.judge", &mut warnings);
        if self.summary_prompt.is_none()
            && let Some(file) = &self.summary_prompt_file
        {
            let path = base.join(file);
            match read_file(&path) {
                Ok(t) if !t.trim().is_empty() => self.summary_prompt = Some(t),
                _ => warnings.push(format!(
                    "dialectic.summary_prompt_file: cannot use {}; using the built-in prompt",
                    path.display()
                )),
            }
        }
        warnings
    }

    /// Checks every value; errors name the field.
    pub fn validate(&self, file: &str) -> Result<(), ConfigError> {
        let bad = |field: String, reason: String| {
            Err(ConfigError::Invalid {
                file: file.to_owned(),
                field,
                reason,
            })
        };
        if self.rounds < 1 {
            return bad("dialectic.rounds".into(), "must be at least 1".into());
        }
        if self.enabled_agents().next().is_none() {
            return bad(
                "dialectic.agent".into(),
                "needs at least one enabled agent".into(),
            );
        }
        for (i, a) in self.agents.iter().enumerate() {
            for (j, tool) in a.tools.iter().enumerate() {
                if let Err(unknown) = tool.parse::<agon_core::ToolGrant>() {
                    return bad(
                        format!("dialectic.agent[{i}].tools[{j}]"),
                        unknown.to_string(),
                    );
                }
            }
            if let Some(n) = a.tool_call_limit
                && !(1..=50).contains(&n)
            {
                return bad(
                    format!("dialectic.agent[{i}].tool_call_limit"),
                    format!("{n} is outside 1..=50"),
                );
            }
        }
        if !(1..=10).contains(&self.clarify_rounds) {
            return bad(
                "dialectic.clarify_rounds".into(),
                format!("{} is outside 1..=10", self.clarify_rounds),
            );
        }
        if !(1..=5).contains(&self.max_questions) {
            return bad(
                "dialectic.max_questions".into(),
                format!("{} is outside 1..=5", self.max_questions),
            );
        }
        if self.convergence_threshold > 100 {
            return bad(
                "dialectic.convergence_threshold".into(),
                format!("{} is outside 0..=100", self.convergence_threshold),
            );
        }
        if self.context_tokens < agon_context::ContextBudget::MIN_TOKENS {
            return bad(
                "dialectic.context_tokens".into(),
                format!(
                    "{} is below the minimum of {}",
                    self.context_tokens,
                    agon_context::ContextBudget::MIN_TOKENS
                ),
            );
        }
        if self.answer_max_tokens == 0 || self.answer_words == 0 {
            return bad(
                "dialectic.answer_max_tokens".into(),
                "answer limits must be positive".into(),
            );
        }
        let mut ids = std::collections::HashSet::new();
        let judge = std::iter::once((true, "dialectic.judge".to_owned(), &self.judge));
        let agents = self
            .agents
            .iter()
            .enumerate()
            .filter(|(_, a)| a.enabled)
            .map(|(i, a)| (false, format!("dialectic.agent[{i}]"), a));
        for (is_judge, field, a) in judge.chain(agents) {
            if let Err(e) = a.role.parse::<RoleKind>() {
                return bad(format!("{field}.role"), e.to_string());
            }
            let id = a.resolved_id(is_judge);
            if id.trim().is_empty() || id.contains('/') {
                return bad(
                    format!("{field}.id"),
                    format!("`{id}` is not usable (empty, or contains `/`)"),
                );
            }
            if !ids.insert(id.clone()) {
                return bad(
                    format!("{field}.id"),
                    format!(
                        "duplicate agent id `{id}` (two agents of one role need their own ids)"
                    ),
                );
            }
            if let Some(spec) = &a.model
                && let Err(e) = crate::parse_chain(spec)
            {
                return bad(format!("{field}.model"), e.to_string());
            }
            if let Some(t) = a.temperature
                && !(0.0..=2.0).contains(&t)
            {
                return bad(
                    format!("{field}.temperature"),
                    format!("{t} is outside 0..=2"),
                );
            }
            let s = self.summarization.with_override(&a.summarization);
            if s.enabled && s.max_length == 0 {
                return bad(
                    format!("{field}.summarization.maxLength"),
                    "must be positive".into(),
                );
            }
        }
        Ok(())
    }

    /// The protocol's rules for the problem `topic` (`crux`: the room
    /// sizes of the debate's `[crux]` table; `extractor`: the analysis
    /// model's spec chain, which sizes the analysis batch, see
    /// [`DialecticConfig::analysis_batch_chars_for`]).
    pub fn rules(
        &self,
        topic: Topic,
        analysis: Option<DetectionRules>,
        crux: agon_protocol::CruxRules,
        extractor: &str,
    ) -> DialecticRules {
        let agents: Vec<&AgentConfig> = self.enabled_agents().collect();
        let mut personas: Vec<Persona> = agents.iter().map(|a| a.persona(false)).collect();
        let judge = self.judge.persona(true);
        let judge_id = judge.id.clone();
        personas.push(judge);
        let summary_rules = |a: &AgentConfig| SummaryRules {
            settings: self.summarization.with_override(&a.summarization),
            prompt: a
                .summary_prompt
                .clone()
                .or_else(|| self.summary_prompt.clone()),
        };
        let summaries: BTreeMap<PersonaId, SummaryRules> = agents
            .iter()
            .map(|a| (PersonaId::new(a.resolved_id(false)), summary_rules(a)))
            .collect();
        DialecticRules {
            start: Start {
                topic,
                personas,
                cast: None,
                aspects: AspectSource::Configured(Vec::new()),
                weigh_by_trust: true,
            },
            judge: judge_id,
            rounds: self.rounds,
            termination: match self.termination {
                TerminationKind::Fixed => Termination::Fixed,
                TerminationKind::Convergence => Termination::Convergence {
                    threshold: self.convergence_threshold,
                },
            },
            clarify: self.clarify.then_some(self.max_questions),
            clarify_rounds: self.clarify_rounds,
            summaries,
            default_summary: SummaryRules {
                settings: self.summarization.clone(),
                prompt: self.summary_prompt.clone(),
            },
            judge_summary: summary_rules(&self.judge),
            analysis: if self.analysis { analysis } else { None },
            judge_impact: self.analysis && self.judge_impact,
            analysis_batch_chars: self.analysis_batch_chars_for(extractor),
            requirements: self.requirements,
            devil_advocate: self.devil_advocate,
            crux: self.crux_rooms.then_some(crux),
            round_timeout_secs: self.timeout_per_round_secs,
        }
    }

    /// Each agent's (and the judge's) own model spec, by persona id.
    pub fn persona_models(&self) -> Vec<(String, String)> {
        self.enabled_agents()
            .filter_map(|a| Some((a.resolved_id(false), a.model.clone()?)))
            .collect()
    }

    /// Each agent's (and the judge's) own temperature, by persona id.
    pub fn temperature_of(&self, persona: &PersonaId) -> Option<f32> {
        if persona.as_str() == self.judge.resolved_id(true) {
            return self.judge.temperature;
        }
        self.enabled_agents()
            .find(|a| a.resolved_id(false) == persona.as_str())
            .and_then(|a| a.temperature)
    }
}
