//! The `[deliberation]` table: a long free-form session (seeds 001 + 002).
//!
//! ```toml
//! protocol = "deliberation"
//! topic = "How should the city spend its transport budget?"
//!
//! [deliberation]
//! turns = 200               # at most (1..=1_000_000)
//! mode = "listen"           # or "round-robin"
//! preset = "session"        # or "long"
//! summary_every = 12        # overrides the preset's cadence
//! keep_recent = 12          # messages kept verbatim after a summary
//! listen_tokens = 1500      # a listening agent's brief context
//! skeptic = true            # listen mode: a skeptic drawn by trust speaks up as the group converges
//! stop_on_consensus = true  # stop at the first decision everyone supports
//! max_tokens = 500000       # stop when turns + summaries used this many
//! max_minutes = 30          # stop after this long
//!
//! [deliberation.patterns]   # each list replaces the seed's default list
//! proposal = ['I\s+propose', '\[PROPOSAL\]']
//! ```

use agon_context::rolling::RollingSummaryPolicy;
use agon_protocol::{
    DeliberationRules, DetectionRules, DetectionSource, Patterns, Start, StopRules, TurnMode,
};
use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// The memory presets of a deliberation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Seed 002: a summary every 12 messages, 12 kept verbatim.
    #[default]
    Session,
    /// Seed 001: a summary every 50 messages, the last 50 verbatim, an
    /// 8,000-token view (1k summary, 5k recent, 2k system).
    Long,
}

impl Preset {
    /// The rolling-summary policy of the preset.
    pub fn policy(self) -> RollingSummaryPolicy {
        match self {
            Self::Long => RollingSummaryPolicy::default(),
            Self::Session => RollingSummaryPolicy {
                resummarize_every: 12,
                keep_recent_turns: 12,
                ..RollingSummaryPolicy::default()
            },
        }
    }
}

/// The decision, proposal and reaction patterns (regular expressions,
/// case-insensitive); each list replaces the seed's default list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PatternsConfig {
    /// A decision was reached.
    pub decision: Vec<String>,
    /// A proposal is made.
    pub proposal: Vec<String>,
    /// Support for a proposal.
    pub support: Vec<String>,
    /// Opposition to a proposal.
    pub oppose: Vec<String>,
}

impl Default for PatternsConfig {
    fn default() -> Self {
        use agon_protocol::deliberation::detect::{
            DEFAULT_DECISION, DEFAULT_OPPOSE, DEFAULT_PROPOSAL, DEFAULT_SUPPORT,
        };
        let all = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        Self {
            decision: all(DEFAULT_DECISION),
            proposal: all(DEFAULT_PROPOSAL),
            support: all(DEFAULT_SUPPORT),
            oppose: all(DEFAULT_OPPOSE),
        }
    }
}

impl PatternsConfig {
    /// The compiled patterns; the error names the list and the index.
    pub fn compile(&self) -> Result<Patterns, agon_protocol::PatternError> {
        Patterns::new(&self.decision, &self.proposal, &self.support, &self.oppose)
    }
}

/// The deliberation protocol's settings (`protocol = "deliberation"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeliberationConfig {
    /// Turns at most.
    pub turns: u32,
    /// How the speaker is chosen: `round-robin` or `listen`.
    pub mode: TurnMode,
    /// The memory preset: `session` or `long`.
    pub preset: Preset,
    /// A rolling summary every this many messages (default: the preset's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_every: Option<usize>,
    /// Messages kept verbatim after a summary (default: the preset's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_recent: Option<usize>,
    /// Tokens of an agent's whole view (default 8000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<usize>,
    /// Tokens reserved for the system prompt and instruction (default 2000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_tokens: Option<usize>,
    /// Tokens of the rolling summary (default 1000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_tokens: Option<usize>,
    /// Tokens of the verbatim recent messages (default 5000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recent_tokens: Option<usize>,
    /// Tokens of a listening agent's brief context (decisions, active
    /// proposals, the last 5 messages).
    pub listen_tokens: usize,
    /// Listen mode: a designated skeptic, drawn from the agents' trust
    /// memory at the start (never an agent at 0.2 or below or on
    /// probation, unless all are), whose bid is raised to the top while
    /// the session drifts toward consensus (a decision or an unopposed
    /// proposal backed by more than half); it then speaks with the
    /// skeptic's brief (default off).
    pub skeptic: bool,
    /// Stop at the first decision every participant supports.
    pub stop_on_consensus: bool,
    /// Stop when the turns and summaries have used this many tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Stop after this many minutes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_minutes: Option<u32>,
    /// Where decisions, proposals and reactions are found: `patterns`
    /// (default), `model` (the extractor's model, in batches of
    /// `analysis_every`), or `both`.
    pub detection: DetectionSource,
    /// Analyse messages into the position ledger, in batches (with
    /// `[detection]`'s mode and window; disagreements in consecutive
    /// batches open claims).
    pub analysis: bool,
    /// Messages per analysis batch.
    pub analysis_every: usize,
    /// Word limit stated to speakers.
    pub answer_words: u32,
    /// Most tokens a turn may generate.
    pub answer_max_tokens: u32,
    /// Decision, proposal and reaction patterns.
    pub patterns: PatternsConfig,
}

impl Default for DeliberationConfig {
    fn default() -> Self {
        Self {
            turns: 48,
            mode: TurnMode::RoundRobin,
            preset: Preset::Session,
            summary_every: None,
            keep_recent: None,
            total_tokens: None,
            system_tokens: None,
            summary_tokens: None,
            recent_tokens: None,
            listen_tokens: 1_500,
            skeptic: false,
            stop_on_consensus: true,
            max_tokens: None,
            max_minutes: None,
            detection: DetectionSource::Patterns,
            analysis: false,
            analysis_every: 12,
            answer_words: 120,
            answer_max_tokens: 300,
            patterns: PatternsConfig::default(),
        }
    }
}

/// Most turns a session may ask for.
pub const MAX_TURNS: u32 = 1_000_000;

impl DeliberationConfig {
    /// The rolling-summary policy: the preset's, with the overrides.
    pub fn policy(&self) -> RollingSummaryPolicy {
        let mut p = self.preset.policy();
        if let Some(v) = self.summary_every {
            p.resummarize_every = v;
        }
        if let Some(v) = self.keep_recent {
            p.keep_recent_turns = v;
        }
        if let Some(v) = self.total_tokens {
            p.total_tokens = v;
        }
        if let Some(v) = self.system_tokens {
            p.system_tokens = v;
        }
        if let Some(v) = self.summary_tokens {
            p.summary_tokens = v;
        }
        if let Some(v) = self.recent_tokens {
            p.recent_tokens = v;
        }
        p
    }

    /// Tokens of the assembled context of a turn: the view less the system
    /// reserve.
    pub fn context_tokens(&self) -> usize {
        let p = self.policy();
        p.total_tokens.saturating_sub(p.system_tokens)
    }

    /// The protocol's rules (`start` holds the topic and participants;
    /// `detection`, the `[detection]` settings the analyses use).
    pub fn rules(&self, start: Start, detection: DetectionRules) -> DeliberationRules {
        DeliberationRules {
            start,
            turns: self.turns,
            mode: self.mode,
            rolling: self.policy(),
            // Validated before a debate runs; an invalid list falls back to
            // the seed's patterns here.
            patterns: self.patterns.compile().unwrap_or_default(),
            stop: StopRules {
                consensus: self.stop_on_consensus,
                max_tokens: self.max_tokens,
                max_minutes: self.max_minutes,
            },
            analysis: self.analysis.then_some(detection),
            detection: self.detection,
            analysis_every: self.analysis_every,
            listen_tokens: self.listen_tokens,
            skeptic: self.skeptic,
        }
    }

    /// Checks every value; the error names the field.
    pub fn validate(&self, file: &str) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                file: file.to_owned(),
                field: format!("deliberation.{field}"),
                reason,
            })
        };
        if !(1..=MAX_TURNS).contains(&self.turns) {
            return bad(
                "turns",
                format!("{} is outside 1..={MAX_TURNS}", self.turns),
            );
        }
        if self.summary_every == Some(0) {
            return bad(
                "summary_every",
                "must be at least 1 (a summary every 0 messages is no cadence)".into(),
            );
        }
        if self.analysis_every == 0 {
            return bad("analysis_every", "must be at least 1".into());
        }
        if self.answer_words == 0 || self.answer_max_tokens == 0 {
            return bad(
                "answer_words",
                "word and token limits must be positive".into(),
            );
        }
        if self.max_tokens == Some(0) || self.max_minutes == Some(0) {
            return bad(
                "max_tokens",
                "a budget of 0 would stop before the first turn".into(),
            );
        }
        let p = self.policy();
        let parts = p.system_tokens + p.summary_tokens + p.recent_tokens;
        if parts > p.total_tokens {
            return bad(
                "recent_tokens",
                format!(
                    "system {} + summary {} + recent {} = {parts} tokens is more than the view's \
                     total_tokens {}",
                    p.system_tokens, p.summary_tokens, p.recent_tokens, p.total_tokens
                ),
            );
        }
        if p.recent_tokens < 64 {
            return bad("recent_tokens", format!("{} is below 64", p.recent_tokens));
        }
        if p.total_tokens.saturating_sub(p.system_tokens) < agon_context::ContextBudget::MIN_TOKENS
        {
            return bad(
                "total_tokens",
                format!(
                    "leaves {} tokens of context after the system reserve; at least {} are needed",
                    p.total_tokens.saturating_sub(p.system_tokens),
                    agon_context::ContextBudget::MIN_TOKENS
                ),
            );
        }
        if self.listen_tokens < agon_context::ContextBudget::MIN_TOKENS {
            return bad(
                "listen_tokens",
                format!(
                    "{} is below the minimum of {}",
                    self.listen_tokens,
                    agon_context::ContextBudget::MIN_TOKENS
                ),
            );
        }
        if let Err(e) = self.patterns.compile() {
            return bad(&format!("patterns.{}[{}]", e.list, e.index), e.to_string());
        }
        if self.skeptic && self.mode != TurnMode::Listen {
            return bad(
                "skeptic",
                "a skeptic speaks up by bidding, so it needs mode = \"listen\" (--mode listen)"
                    .to_owned(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skeptic_needs_listen_mode_and_the_error_names_the_field() {
        let mut d = DeliberationConfig {
            skeptic: true,
            ..DeliberationConfig::default()
        };
        let e = d.validate("session.toml").unwrap_err().to_string();
        assert!(
            e.contains("session.toml")
                && e.contains("deliberation.skeptic")
                && e.contains("listen"),
            "{e}"
        );
        d.mode = TurnMode::Listen;
        d.validate("session.toml").unwrap();
        assert!(
            d.rules(
                Start {
                    topic: agon_core::Topic::new("t"),
                    personas: Vec::new(),
                    cast: None,
                    aspects: agon_protocol::AspectSource::Configured(Vec::new()),
                    weigh_by_trust: true,
                },
                DetectionRules::default(),
            )
            .skeptic
        );
    }
}
