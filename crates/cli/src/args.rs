//! The command line: every command and flag `agon` takes (clap).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::{agents, corpus, debate_args, eval, queue, retention, rubric};

/// Memory-backed multi-agent debates.
#[derive(Debug, Parser)]
#[command(name = "agon", version, about)]
pub(crate) struct Cli {
    /// Store URL: `sqlite://PATH` or `postgres://…` (default: a SQLite file
    /// in the user's data directory).
    #[arg(long, global = true, env = "AGON_STORE")]
    pub(crate) store: Option<String>,
    /// Log what the engine does to stderr (-v info, -vv debug, -vvv trace;
    /// `RUST_LOG` takes precedence, e.g. `RUST_LOG=agon_orchestrator=debug`).
    /// With `debate --protocol dialectic` and `report`, also show each
    /// contribution's model, latency and tokens.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Export traces over OTLP/HTTP (JSON) to this endpoint
    /// (`--otlp=http://localhost:4318`); `--otlp` alone uses
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, else localhost:4318. Without the flag,
    /// traces are exported when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
    /// `…_TRACES_ENDPOINT`) is set.
    #[arg(long, global = true, num_args = 0..=1, require_equals = true, value_name = "ENDPOINT")]
    pub(crate) otlp: Option<Option<String>>,
    /// Attach prompts and completions to the exported model-call spans
    /// (off by default: they may be sensitive). Keys are never attached.
    #[arg(long, global = true)]
    pub(crate) otlp_content: bool,
    /// Load environment variables (API keys) from this file instead of `./.env`.
    #[arg(long, short = 'e', global = true)]
    pub(crate) env_file: Option<PathBuf>,
    /// Print the output of a read command (list, show, report, recall,
    /// export) as JSON.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start a new debate and run it.
    Debate(Box<DebateArgs>),
    /// Continue an interrupted debate from its last persisted event.
    Resume {
        /// The debate id.
        id: String,
        /// Take the run lease over from whoever holds it (a runner on
        /// another machine, or a stuck one): its next lease renewal fails
        /// and it stops. A dead runner on this host is taken over without it.
        #[arg(long)]
        force: bool,
        /// Queue it for the workers (`agon worker`, PostgreSQL store)
        /// instead of running it here: a pause it is in is lifted when a
        /// worker takes it up.
        #[arg(long, conflicts_with = "force")]
        detach: bool,
        #[command(flatten)]
        view: ViewArgs,
    },
    /// Post a moderator's note to a debate, wherever it runs (this
    /// machine's terminal, `agon serve`, a worker): every agent's next
    /// context shows it. A debate that runs nowhere takes it when resumed.
    Note {
        /// The debate id.
        id: String,
        /// The note.
        text: String,
        /// Who posts it.
        #[arg(long)]
        author: Option<String>,
    },
    /// Pause a debate, wherever it runs, before its next turn (`agon
    /// resume ID` lifts it).
    Pause {
        /// The debate id.
        id: String,
        /// Who pauses it.
        #[arg(long)]
        by: Option<String>,
    },
    /// Stop a debate, wherever it runs, after its current step (`agon
    /// resume ID` continues it).
    Stop {
        /// The debate id.
        id: String,
    },
    /// Answer the clarifying questions a debate waits on, wherever it
    /// runs: the answers in order (`""` for NA), or asked one by one on
    /// the terminal when none are given.
    Answer {
        /// The debate id.
        id: String,
        /// One answer per question, in order.
        answers: Vec<String>,
    },
    /// Fork a debate: a new debate whose log is this one's up to event
    /// `--at` (default: before its last step), to run on with `agon resume`
    /// and other settings; `agon compare ID FORK` shows where they part.
    Fork {
        /// The debate id.
        id: String,
        /// The last event to copy (`agon export ID` numbers them).
        #[arg(long)]
        at: Option<u64>,
        /// One model spec for every role of the fork.
        #[arg(long)]
        model: Option<String>,
        /// Dialectic: rounds of proposals, critiques and refinements.
        #[arg(long)]
        rounds: Option<u32>,
        /// Structured debate: minirounds per aspect.
        #[arg(long)]
        minirounds: Option<u32>,
    },
    /// Score a finished debate's solution with evaluator agents (dialectic's
    /// eval-config.json).
    Eval(eval::EvalArgs),
    /// Serve the HTTP API and the live event streams (docs/api.md).
    Serve {
        /// Where to listen. Any address but loopback needs a token: the
        /// one in `AGON_SERVER_TOKEN`, or one generated and printed.
        #[arg(long, default_value = "127.0.0.1:7878")]
        addr: std::net::SocketAddr,
        /// Seconds a stopping server (Ctrl-C, SIGTERM) gives its runs to
        /// reach a step boundary and release their leases.
        #[arg(long, default_value_t = 120)]
        grace_secs: u64,
        /// Serve Agon over the Model Context Protocol too, at `/mcp`
        /// (streamable HTTP; the tools of `agon mcp`, behind the same
        /// token as the API; docs/mcp.md).
        #[arg(long)]
        mcp: bool,
    },
    /// Serve Agon over the Model Context Protocol on stdin and stdout, for
    /// an MCP client (Claude Desktop, Claude Code, an IDE): tools to start
    /// a debate, follow it, read its report, answer its questions, add a
    /// note, recall and list debates (docs/mcp.md). Logs go to stderr.
    Mcp,
    /// List stored debates (on PostgreSQL with workers: queued, running,
    /// retrying and failed jobs, with their worker).
    List,
    /// Run a worker: advance queued debates one step per job, on a
    /// PostgreSQL store shared with other workers (docs/scale.md).
    Worker(queue::WorkerArgs),
    /// Queue debates for the workers and print their ids.
    Submit(queue::SubmitArgs),
    /// Show a debate's transcript or blackboard (`--json`: the blackboard
    /// as JSON, or with `--transcript` the messages as JSON).
    Show {
        /// The debate id.
        id: String,
        /// The transcript (default).
        #[arg(long, group = "what")]
        transcript: bool,
        /// The blackboard: ledger, claims, cards, reflections.
        #[arg(long, group = "what")]
        blackboard: bool,
        /// The debate-quality metrics: crux compression, disagreement-type
        /// entropy, ledger coverage, concessions, shifts, stance changes,
        /// evidence reuse, self-contradictions, memory cost.
        #[arg(long, group = "what")]
        metrics: bool,
        /// The memory statistics (seed 002): rolling summaries, decisions,
        /// active proposals, participants, messages, messages per participant.
        #[arg(long, group = "what")]
        stats: bool,
    },
    /// The debate-quality metrics of several debates side by side; for two
    /// debates (a fork and its parent), where their logs and transcripts
    /// part first.
    Compare {
        /// The debate ids.
        #[arg(required = true, num_args = 1..)]
        ids: Vec<String>,
    },
    /// Delete debates: their events, snapshots and vector memories (a
    /// debate another live process runs is refused). The agents' trust
    /// memory keeps what they learned in them.
    Delete {
        /// The debate ids.
        #[arg(required = true, num_args = 1..)]
        ids: Vec<String>,
        /// Only say what would be deleted.
        #[arg(long)]
        dry_run: bool,
    },
    /// Give the space of deleted debates and replaced snapshots back to the
    /// file system (SQLite: VACUUM; PostgreSQL: VACUUM FULL of the store's
    /// tables, which locks them: run it when no debate runs).
    Compact,
    /// Delete the debates last changed longer ago than `--older-than`, as
    /// `agon delete` does.
    Prune {
        /// How long ago: `30d`, `12h`, `45m`, `2w`, `90s`.
        #[arg(long, value_parser = retention::parse_age)]
        older_than: chrono::Duration,
        /// Only debates with this status (repeatable; default: any but
        /// running).
        #[arg(long, value_enum)]
        status: Vec<StatusArg>,
        /// Only say what would be deleted.
        #[arg(long)]
        dry_run: bool,
    },
    /// Rate a debate's outcome (dialectic's `userFeedback`): recorded in its
    /// log, shown by `list` and `report`, and written as `userFeedback` in
    /// its debate-state JSON. The latest rating counts.
    Feedback {
        /// The debate id.
        id: String,
        /// up (+1) or down (-1).
        #[arg(value_enum)]
        rating: Rating,
    },
    /// Write a debate's markdown report: a debate in the store, or a saved
    /// debate-state JSON (`--debate FILE`: Agon's `-o FILE.json`, or one
    /// dialectic wrote).
    Report {
        /// The debate id.
        #[arg(required_unless_present = "debate", conflicts_with = "debate")]
        id: Option<String>,
        /// A saved debate-state JSON file instead of a debate in the store
        /// (dialectic's `report --debate`).
        #[arg(long, short = 'd')]
        debate: Option<PathBuf>,
        /// With `--debate`: name the agents as this configuration does
        /// (dialectic's debate-config.json, or a TOML configuration).
        #[arg(long, short, requires = "debate")]
        config: Option<PathBuf>,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a debate's event log as JSON.
    Export {
        /// The debate id.
        id: String,
    },
    /// Recall a persona's memories (all debates) with their score components.
    Recall {
        /// What to recall.
        query: String,
        /// Whose memories (name or id).
        #[arg(long)]
        persona: String,
        /// Only memories of this debate.
        #[arg(long)]
        debate: Option<String>,
        /// How many (1-1000).
        #[arg(short, default_value_t = 8)]
        k: usize,
        /// The embedder the store was written with.
        #[arg(long, default_value = "local")]
        embedder: String,
    },
    /// Maintain the vector memory.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// A persona's own corpus (essays, posts, papers): the sources it
    /// argues from, shown as EVIDENCE while it speaks and cited as `[E:id]`.
    #[command(subcommand)]
    Corpus(corpus::CorpusCommand),
    /// The agent trust memory (seed 003): trust, probation, dissents,
    /// overrides and regret per agent, across debates.
    Agents {
        #[command(subcommand)]
        command: Option<agents::AgentsCommand>,
    },
    /// Record that a human replaced a debate's final output (its synthesis
    /// or solution) with the text of FILE, in the trust memory of `--agent`
    /// or of every debater; a later override of the same debate reverts the
    /// earlier ones.
    Override {
        /// The debate id.
        id: String,
        /// The human decision.
        #[arg(long)]
        file: PathBuf,
        /// Only this participant's memory.
        #[arg(long)]
        agent: Option<String>,
        /// Propose this criterion (`"NAME: description"`) for the debate's
        /// rubric: added, or reworded when the rubric has one of that
        /// name. Proposed only when the overridden agent with the highest
        /// trust holds at least 0.70; `agon rubric accept` adopts it.
        #[arg(long, conflicts_with = "drop_criterion")]
        criterion: Option<String>,
        /// Propose removing this criterion from the debate's rubric (same
        /// rule as `--criterion`).
        #[arg(long)]
        drop_criterion: Option<String>,
    },
    /// The living rubric: the criteria debates and `agon eval` judge by,
    /// its versions, and the changes high-trust overrides proposed.
    #[command(subcommand)]
    Rubric(rubric::RubricCommand),
    /// Maintain the trust memory.
    #[command(subcommand)]
    Trust(agents::TrustCommand),
}

impl Command {
    /// Whether this is a read command, which `--json` applies to.
    pub(crate) fn reads(&self) -> bool {
        !matches!(
            self,
            Self::Debate(_)
                | Self::Worker(_)
                | Self::Submit(_)
                | Self::Serve { .. }
                | Self::Mcp
                | Self::Resume { .. }
                | Self::Eval(_)
                | Self::Memory(_)
                | Self::Override { .. }
                | Self::Trust(_)
                | Self::Note { .. }
                | Self::Pause { .. }
                | Self::Stop { .. }
                | Self::Answer { .. }
                | Self::Fork { .. }
        )
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum MemoryCommand {
    /// Re-embed every memory with an embedder (and bind the store to it).
    Reindex {
        /// The embedder spec (see docs/configuration.md).
        #[arg(long, default_value = "local")]
        embedder: String,
    },
}

/// `agon debate`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct DebateArgs {
    #[command(flatten)]
    pub(crate) flags: debate_args::DebateFlags,
    /// Queue the debate for the workers (`agon worker`, PostgreSQL store),
    /// print its id and return at once.
    #[arg(long)]
    pub(crate) detach: bool,
    #[command(flatten)]
    pub(crate) view: ViewArgs,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
pub(crate) struct ViewArgs {
    /// Do not stream utterances; print only the outcome.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Answers to clarifying questions from this JSON file (agent id, name
    /// or role → answers in order) instead of the terminal.
    #[arg(long)]
    pub(crate) answers: Option<PathBuf>,
    /// When the debate finishes, write FILE.json (the full debate state) or
    /// FILE (the solution text) instead of printing the solution.
    #[arg(long, short = 'o')]
    pub(crate) output: Option<PathBuf>,
    /// When the debate finishes, also write its Markdown report here
    /// (`.md` is added when missing; a failure is only a warning).
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
}

/// A stored debate's run status, as `agon prune --status` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StatusArg {
    /// Created, never run.
    Created,
    /// Running, or stopped by a crash while running.
    Running,
    /// Finished.
    Finished,
    /// Stopped by an error.
    Failed,
    /// Stopped on request.
    Interrupted,
    /// Finished early at its budget.
    Budget,
}

impl From<StatusArg> for agon_store::RunStatus {
    fn from(s: StatusArg) -> Self {
        match s {
            StatusArg::Created => Self::Created,
            StatusArg::Running => Self::Running,
            StatusArg::Finished => Self::Finished,
            StatusArg::Failed => Self::Failed,
            StatusArg::Interrupted => Self::Interrupted,
            StatusArg::Budget => Self::Budget,
        }
    }
}

/// A person's rating of a debate's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Rating {
    /// +1.
    Up,
    /// -1.
    Down,
}
