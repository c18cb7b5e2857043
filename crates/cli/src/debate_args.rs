//! `agon debate`'s flags, grouped by protocol, and their translation into
//! `agon_config::Overrides`. Which flag belongs to which protocol is
//! decided by `DebateConfig::apply`; this module only reads the files the
//! flags name and maps the flag values.

use std::path::{Path, PathBuf};

use agon_config::{
    ConfigError, DebateConfig, DeliberationOverrides, DialecticOverrides, Overrides, Preset,
    ProtocolKind, StructuredOverrides, TurnMode,
};
use clap::Args;

use crate::dialectic::{read_text, usage_error};
use crate::failure::Failure;

/// dialectic's default configuration file, read when a dialectic debate
/// names none and the file exists.
pub(crate) const DIALECTIC_DEFAULT_CONFIG: &str = "debate-config.json";

/// Which protocol `agon debate` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ProtocolArg {
    /// Personas debate aspects in minirounds, crux rooms, closings (seed 000).
    Structured,
    /// Role agents propose, critique and refine; a judge synthesizes (seed 004).
    Dialectic,
    /// A long free-form session with a three-tier memory: rolling summaries,
    /// decisions, proposals and reactions (seeds 001 + 002).
    Deliberation,
}

impl From<ProtocolArg> for ProtocolKind {
    fn from(p: ProtocolArg) -> Self {
        match p {
            ProtocolArg::Structured => Self::Structured,
            ProtocolArg::Dialectic => Self::Dialectic,
            ProtocolArg::Deliberation => Self::Deliberation,
        }
    }
}

/// How a deliberation picks its speakers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ModeArg {
    /// The participants in order.
    RoundRobin,
    /// Everyone says whether it wants to respond; the most urgent speaks.
    Listen,
}

/// A deliberation's memory preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PresetArg {
    /// A summary every 12 messages (seed 002).
    Session,
    /// A summary every 50 messages, the last 50 verbatim, an 8k view (seed 001).
    Long,
}

/// What `agon debate` is given, before the view flags.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct DebateFlags {
    /// The question to debate, or (dialectic) the problem to solve
    /// (overrides the config's topic).
    pub topic: Option<String>,
    /// A TOML configuration file (see docs/configuration.md), or
    /// dialectic's debate-config.json (implies `--protocol dialectic`).
    /// A dialectic debate without one reads ./debate-config.json when it
    /// exists, as dialectic does.
    #[arg(long, short)]
    pub config: Option<PathBuf>,
    /// The protocol (default: the config's, else structured).
    #[arg(long, value_enum)]
    pub protocol: Option<ProtocolArg>,
    /// Read the question or problem from this file instead of the command
    /// line (dialectic's `-p/--problemDescription`).
    #[arg(
        long,
        short = 'p',
        visible_alias = "problemDescription",
        conflicts_with = "topic"
    )]
    pub problem_file: Option<PathBuf>,
    /// Background the participants should know, from this file
    /// (dialectic 0.1.0); a directory is dialectic 0.7's context directory
    /// for the agents' file tools (as `--context-dir`).
    #[arg(long)]
    pub context: Option<PathBuf>,
    /// The directory participants' `list_files` and `file_read` tools may
    /// read, and nothing outside it (`context_dir` in a config).
    #[arg(long, value_name = "DIR")]
    pub context_dir: Option<PathBuf>,
    /// Debaters to cast for the topic (2-6) when the config names none
    /// (structured debate, deliberation).
    #[arg(long)]
    pub personas: Option<usize>,
    /// Model spec for every role (e.g. `local`, `anthropic:claude-haiku-4-5`).
    #[arg(long)]
    pub model: Option<String>,
    /// Stop at this many tokens, prompt and answer, every call (the
    /// debate wraps up with its judge or synthesis and ends with the
    /// `budget` status; `[budget] reserve` of it is kept for that).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Stop at this cost in US dollars (priced calls; local models cost
    /// nothing).
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Stop this many minutes after the debate started.
    #[arg(long, value_name = "M")]
    pub max_minutes: Option<f64>,
    #[command(flatten)]
    pub structured: StructuredFlags,
    #[command(flatten)]
    pub dialectic: DialecticFlags,
    #[command(flatten)]
    pub deliberation: DeliberationFlags,
}

/// The structured debate's flags.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Structured debate (the default protocol)")]
pub(crate) struct StructuredFlags {
    /// Number of aspects.
    #[arg(long)]
    pub aspects: Option<usize>,
    /// Minirounds per aspect.
    #[arg(long)]
    pub minirounds: Option<u32>,
    /// One challenger per aspect, drawn from the agents' trust memory,
    /// argues against the aspect's strongest position in its replies
    /// (seed 003; `challenger = true`).
    #[arg(long)]
    pub challenger: bool,
}

/// Dialectic's flags, short forms as in dialectic's own command line.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Dialectic (--protocol dialectic)")]
pub(crate) struct DialecticFlags {
    /// Agents by role, comma-separated: architect, performance, security,
    /// testing, kiss, datamodeling, generalist (default architect,performance,kiss).
    #[arg(long, short = 'a', value_delimiter = ',')]
    pub agents: Option<Vec<String>>,
    /// Rounds of proposals, critiques and refinements (≥ 1).
    #[arg(long, short = 'r')]
    pub rounds: Option<u32>,
    /// Let every agent ask clarifying questions before round 1.
    #[arg(long)]
    pub clarify: bool,
    /// Clarification rounds at most (1-10, implies --clarify): after the
    /// answers, agents that still have open questions ask follow-ups
    /// (default 3, dialectic's `clarificationsMaxIterations`; 1: none).
    #[arg(long, value_name = "N")]
    pub clarify_rounds: Option<u32>,

    /// One agent per round critiques as devil's advocate, drawn from the
    /// agents' trust memory (seed 003; `[dialectic] devil_advocate`, on by
    /// default).
    #[arg(long, overrides_with = "no_devil_advocate")]
    pub devil_advocate: bool,
    /// No devil's advocate: every critique from the agent's own role.
    #[arg(long, overrides_with = "devil_advocate")]
    pub no_devil_advocate: bool,
}

/// The deliberation's flags.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Deliberation (--protocol deliberation)")]
pub(crate) struct DeliberationFlags {
    /// Turns at most (1-1,000,000).
    #[arg(long)]
    pub turns: Option<u32>,
    /// How speakers are picked.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// The memory preset.
    #[arg(long, value_enum)]
    pub preset: Option<PresetArg>,
    /// Listen mode: a skeptic drawn from the agents' trust memory speaks
    /// up, with a skeptic's brief, while the group converges (seed 003;
    /// `[deliberation] skeptic`).
    #[arg(long)]
    pub skeptic: bool,
}

impl DebateFlags {
    /// The configuration to start from: the file `--config` names, else
    /// (for a dialectic debate) `./debate-config.json` when it exists, else
    /// the defaults. Warnings go to standard error.
    pub(crate) fn base_config(&self, dialectic_by_default: bool) -> Result<DebateConfig, Failure> {
        let dialectic = match self.protocol {
            Some(p) => p == ProtocolArg::Dialectic,
            None => dialectic_by_default,
        };
        let default_file = Path::new(DIALECTIC_DEFAULT_CONFIG);
        let path = match &self.config {
            Some(path) => path.as_path(),
            None if dialectic && default_file.is_file() => {
                eprintln!(
                    "Reading ./{DIALECTIC_DEFAULT_CONFIG} (dialectic's default configuration)"
                );
                default_file
            }
            None => {
                let mut config = DebateConfig::default();
                if dialectic {
                    config.protocol = ProtocolKind::Dialectic;
                }
                return Ok(config);
            }
        };
        let (config, warnings) = DebateConfig::load_with(path, &|p| std::fs::read_to_string(p))?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        Ok(config)
    }

    /// The flags as settings to lay over the configuration (files read).
    pub(crate) fn overrides(&self) -> Result<Overrides, Failure> {
        let topic = match (&self.topic, &self.problem_file) {
            (_, Some(file)) => Some(read_text("--problem-file", file)?.trim().to_owned()),
            (topic, None) => topic.clone(),
        };
        let mut context_dir = self.context_dir.clone();
        let context = match self.context.as_deref() {
            // dialectic 0.7's meaning: the directory its file tools read.
            Some(dir) if dir.is_dir() => {
                eprintln!(
                    "Taking --context {} as the context directory of the agents' file tools \
                     (dialectic 0.7)",
                    dir.display()
                );
                context_dir.get_or_insert_with(|| dir.to_owned());
                None
            }
            Some(file) => {
                eprintln!(
                    "Reading --context {} as background for every participant (a file, as in dialectic 0.1.0)",
                    file.display()
                );
                Some(read_text("--context", file)?)
            }
            None => None,
        };
        Ok(Overrides {
            protocol: self.protocol.map(ProtocolKind::from),
            topic,
            context,
            model: self.model.clone(),
            personas: self.personas,
            structured: StructuredOverrides {
                aspects: self.structured.aspects,
                minirounds: self.structured.minirounds,
                challenger: self.structured.challenger,
            },
            dialectic: DialecticOverrides {
                agents: self.dialectic.agents.clone(),
                rounds: self.dialectic.rounds,
                clarify: self.dialectic.clarify,
                clarify_rounds: self.dialectic.clarify_rounds,
                devil_advocate: match (
                    self.dialectic.devil_advocate,
                    self.dialectic.no_devil_advocate,
                ) {
                    (true, _) => Some(true),
                    (_, true) => Some(false),
                    _ => None,
                },
            },
            deliberation: DeliberationOverrides {
                turns: self.deliberation.turns,
                mode: self.deliberation.mode.map(|m| match m {
                    ModeArg::RoundRobin => TurnMode::RoundRobin,
                    ModeArg::Listen => TurnMode::Listen,
                }),
                preset: self.deliberation.preset.map(|p| match p {
                    PresetArg::Session => Preset::Session,
                    PresetArg::Long => Preset::Long,
                }),
                skeptic: self.deliberation.skeptic,
            },
            max_tokens: self.max_tokens,
            max_cost_usd: self.max_cost,
            max_minutes: self.max_minutes,
            context_dir,
        })
    }

    /// The configuration the command line asks for: the base configuration
    /// with the flags laid over it. A flag of another protocol or out of
    /// range is a usage error (exit 2) naming the flag; one that
    /// contradicts the configuration file is a config error (exit 3).
    pub(crate) fn config(&self, dialectic_by_default: bool) -> Result<DebateConfig, Failure> {
        let mut config = self.base_config(dialectic_by_default)?;
        let mut overrides = self.overrides()?;
        if dialectic_by_default && overrides.protocol.is_none() {
            overrides.protocol = Some(ProtocolKind::Dialectic);
        }
        let dialectic = overrides.protocol.unwrap_or(config.protocol) == ProtocolKind::Dialectic;
        config.apply(&overrides).map_err(|e| match e {
            ConfigError::Override { setting, reason } => {
                usage_error(&flag_of(setting, dialectic), reason)
            }
            ConfigError::Conflict { setting, reason } => Failure {
                code: 3,
                error: anyhow::anyhow!("{}: {reason}", flag_of(setting, dialectic)),
            },
            other => other.into(),
        })?;
        Ok(config)
    }
}

/// The command-line spelling of an override's setting.
fn flag_of(setting: &str, dialectic: bool) -> String {
    match setting {
        "topic" if dialectic => "PROBLEM".to_owned(),
        "topic" => "TOPIC".to_owned(),
        other => format!("--{other}"),
    }
}
