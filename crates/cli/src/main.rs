//! `agon`: run memory-backed multi-agent debates from the command line.
//!
//! Exit codes: 0 success; 1 internal error; 2 usage error; 3 configuration
//! error; 4 model/provider error; 5 store error; 130 stopped by Ctrl-C (the
//! debate is resumable with `agon resume ID`).

mod agents;
mod corpus;
mod debate_args;
mod dialectic;
mod eval;
mod live;
mod memory;
mod queue;
mod report_file;
mod retention;
mod rubric;
mod serve;
mod telemetry;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agon_config::{ConfigError, DebateConfig, ProtocolKind};
use agon_core::{Blackboard, DebateId};
use agon_llm::ModelFactory;
use agon_orchestrator::{Models, Orchestrator, OrchestratorError, RunControl, RunOutcome, Steer};
use agon_store::{EventStore, StoreError};
use agon_view::{DebateView, ReportOptions, report};
use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

/// Memory-backed multi-agent debates.
#[derive(Debug, Parser)]
#[command(name = "agon", version, about)]
struct Cli {
    /// Store URL: `sqlite://PATH` or `postgres://…` (default: a SQLite file
    /// in the user's data directory).
    #[arg(long, global = true, env = "AGON_STORE")]
    store: Option<String>,
    /// Log what the engine does to stderr (-v info, -vv debug, -vvv trace;
    /// `RUST_LOG` takes precedence, e.g. `RUST_LOG=agon_orchestrator=debug`).
    /// With `debate --protocol dialectic` and `report`, also show each
    /// contribution's model, latency and tokens.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Export traces over OTLP/HTTP (JSON) to this endpoint
    /// (`--otlp=http://localhost:4318`); `--otlp` alone uses
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, else localhost:4318. Without the flag,
    /// traces are exported when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
    /// `…_TRACES_ENDPOINT`) is set.
    #[arg(long, global = true, num_args = 0..=1, require_equals = true, value_name = "ENDPOINT")]
    otlp: Option<Option<String>>,
    /// Attach prompts and completions to the exported model-call spans
    /// (off by default: they may be sensitive). Keys are never attached.
    #[arg(long, global = true)]
    otlp_content: bool,
    /// Load environment variables (API keys) from this file instead of `./.env`.
    #[arg(long, short = 'e', global = true)]
    env_file: Option<PathBuf>,
    /// Print the output of a read command (list, show, report, recall,
    /// export) as JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
    /// Score a finished debate's solution with evaluator agents (dialectic's
    /// eval-config.json).
    Eval(eval::EvalArgs),
    /// Serve the HTTP API and the live event streams (docs/api.md).
    Serve {
        /// Where to listen. Any address but loopback needs a token: the
        /// one in `AGON_SERVER_TOKEN`, or one generated and printed.
        #[arg(long, default_value = "127.0.0.1:7878")]
        addr: std::net::SocketAddr,
    },
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
    /// The debate-quality metrics of several debates side by side.
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
    /// argues from, shown as EVIDENCE while it speaks and cited as [E:id].
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

#[derive(Debug, Subcommand)]
enum MemoryCommand {
    /// Re-embed every memory with an embedder (and bind the store to it).
    Reindex {
        /// The embedder spec (see docs/configuration.md).
        #[arg(long, default_value = "local")]
        embedder: String,
    },
}

/// `agon debate`'s arguments.
#[derive(Debug, Args)]
struct DebateArgs {
    #[command(flatten)]
    flags: debate_args::DebateFlags,
    /// Queue the debate for the workers (`agon worker`, PostgreSQL store),
    /// print its id and return at once.
    #[arg(long)]
    detach: bool,
    #[command(flatten)]
    view: ViewArgs,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
struct ViewArgs {
    /// Do not stream utterances; print only the outcome.
    #[arg(long, short)]
    quiet: bool,
    /// Answers to clarifying questions from this JSON file (agent id, name
    /// or role → answers in order) instead of the terminal.
    #[arg(long)]
    answers: Option<PathBuf>,
    /// When the debate finishes, write FILE.json (the full debate state) or
    /// FILE (the solution text) instead of printing the solution.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// When the debate finishes, also write its Markdown report here
    /// (`.md` is added when missing; a failure is only a warning).
    #[arg(long)]
    report: Option<PathBuf>,
}

/// A stored debate's run status, as `agon prune --status` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StatusArg {
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
enum Rating {
    /// +1.
    Up,
    /// -1.
    Down,
}

/// An error with the exit code it maps to.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        let error = e.into();
        let code = if error.downcast_ref::<ConfigError>().is_some() {
            3
        } else if let Some(o) = error.downcast_ref::<OrchestratorError>() {
            if matches!(o, OrchestratorError::Config(_)) {
                3
            } else if o.is_provider() {
                4
            } else if o.is_store() {
                5
            } else {
                1
            }
        } else if error
            .downcast_ref::<agon_orchestrator::ModelError>()
            .is_some()
        {
            4
        } else if error.downcast_ref::<StoreError>().is_some() {
            5
        } else if let Some(w) = error.downcast_ref::<agon_worker::WorkerError>() {
            match w {
                agon_worker::WorkerError::NotPostgres { .. }
                | agon_worker::WorkerError::RateLimit { .. } => 2,
                _ => 5,
            }
        } else {
            1
        };
        Self { code, error }
    }
}

fn default_store_url() -> anyhow::Result<String> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var("XDG_DATA_HOME")
        .map(|d| d.join("agon"))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/agon")))
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(format!("sqlite://{}", dir.join("agon.db").display()))
}

async fn open_store(url: Option<&str>) -> Result<Arc<dyn EventStore>, Failure> {
    let url = match url {
        Some(u) => u.to_owned(),
        None => default_store_url()?,
    };
    Ok(agon_store::open(&url).await?)
}

async fn build_models(config: &DebateConfig) -> Result<Models, Failure> {
    let config = config.clone();
    let models = tokio::task::spawn_blocking(move || {
        Models::from_config(
            &config,
            &model_factory(),
            &|k| std::env::var(k).ok(),
            config.price_table(),
        )
    })
    .await
    .context("loading models")??;
    Ok(models)
}

async fn run(
    orch: Orchestrator,
    id: &DebateId,
    config: &DebateConfig,
    view: &ViewArgs,
    verbose: bool,
    control: RunControl,
    interrupts: tokio::task::JoinHandle<()>,
) -> Result<ExitCode, Failure> {
    let dialectic = config.protocol == ProtocolKind::Dialectic;
    let bars = indicatif::MultiProgress::new();
    let orch = orch.with_answerer(dialectic::answerer(view.answers.as_deref(), &bars)?);
    let models = build_models(config).await?;
    let (board, _) = orch.store().load(id).await?;
    let display = live::spawn(orch.subscribe(), &board, view.quiet, verbose, bars);
    // Every run of one debate (the first and each resume) is in the same
    // trace: the run's span hangs under one derived from the debate id.
    let outcome = {
        use tracing::Instrument as _;
        let span = tracing::info_span!("agon run", debate = %id);
        telemetry::join_debate_trace(&span, id.as_str());
        orch.run(id, &models, control).instrument(span).await
    };
    interrupts.abort();
    display.finish().await;
    match outcome? {
        RunOutcome::Finished => {
            let options = ReportOptions {
                verbose,
                reflection_threshold: Some(config.reflection_threshold),
            };
            let debate = view_of(&orch, id, options).await?;
            let outputs = dialectic::Outputs {
                output: view.output.clone(),
                report: view.report.clone(),
            };
            outputs.write(&debate, dialectic)?;
            eprintln!("\nDebate {id} finished. Read it with: agon report {id}");
            Ok(ExitCode::SUCCESS)
        }
        RunOutcome::Stopped | RunOutcome::Paused => {
            eprintln!("\nDebate {id} stopped; continue it with: agon resume {id}");
            Ok(ExitCode::from(130))
        }
    }
}

/// The store's vector memory index, for deleting a debate's memories (none,
/// with a warning, when it cannot be opened: the debates are still deleted).
async fn retention_memory(url: &str) -> Option<Arc<dyn agon_memory::MemoryIndex>> {
    match agon_memory::open(url).await {
        Ok(index) => Some(index),
        Err(e) => {
            eprintln!("warning: the vector memory cannot be opened ({e}); its memories stay");
            None
        }
    }
}

/// The view of a stored debate: its log read once, replayed into the
/// blackboard and the metrics.
async fn view_of(
    orch: &Orchestrator,
    id: &DebateId,
    options: ReportOptions,
) -> Result<DebateView, Failure> {
    let events = orch.log(id).await?;
    DebateView::from_log(&events, options).map_err(|source| {
        Failure::from(OrchestratorError::Replay {
            debate: id.to_string(),
            source,
        })
    })
}

/// Whether this binary was started through a link named `dialectic`
/// (`ln -s "$(command -v agon)" dialectic`): `debate` then runs dialectic
/// and reads `./debate-config.json` by default, as dialectic does.
fn invoked_as_dialectic() -> bool {
    std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_stem().map(|s| s.to_os_string()))
        .is_some_and(|stem| stem == "dialectic")
}

/// The first non-empty line of a topic or problem (problems can be files).
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

fn transcript(bb: &Blackboard) -> String {
    let mut out = String::new();
    for m in bb.messages() {
        let mut tag = m.kind.label().to_owned();
        if let Some(a) = m.aspect.as_ref().and_then(|a| bb.aspect(a)) {
            tag.push_str(&format!(" · {}", a.label));
        }
        if let Some(mr) = m.miniround {
            tag.push_str(&format!(" · miniround {mr}"));
        }
        if let Some(room) = &m.crux_room {
            tag.push_str(&format!(" · {room}"));
        }
        out.push_str(&format!(
            "[{}] {} ({tag}):\n{}\n\n",
            m.id,
            bb.persona_name(&m.persona),
            m.content.trim()
        ));
    }
    out
}

fn blackboard_text(bb: &Blackboard) -> String {
    let mut out = format!(
        "{}\n\nPOSITIONS\n",
        bb.topic().map_or("", |t| t.question.as_str())
    );
    for p in bb.debaters() {
        if let Some(s) = bb.position(&p.id) {
            out.push_str(&format!(
                "- {}: {}\n  concessions: {}, shifts: {}, agreements: {}, disagreements: {}\n",
                p.name,
                if s.overall_stance.is_empty() {
                    "(none recorded)"
                } else {
                    &s.overall_stance
                },
                s.concessions.len(),
                s.shifts.len(),
                s.agreements.len(),
                s.disagreements.len()
            ));
        }
    }
    out.push_str("\nCLAIMS\n");
    for c in bb.claims() {
        out.push_str(&format!(
            "- {} [{}] {} vs {}: {}\n",
            c.id,
            c.status.label(),
            bb.persona_name(&c.personas[0]),
            bb.persona_name(&c.personas[1]),
            c.claim
        ));
    }
    out.push_str("\nCRUX CARDS\n");
    for c in bb.crux_cards() {
        out.push_str(&format!(
            "- {}: {} ({})\n",
            c.id,
            c.question,
            c.disagreement_type.label()
        ));
    }
    out.push_str("\nREFLECTIONS\n");
    for r in bb.reflections() {
        out.push_str(&format!("- [{}] {}\n", r.importance, r.content));
    }
    out.push_str(&format!(
        "\nROUND RECORDS: {}  WARNINGS: {}\n",
        bb.rounds().len(),
        bb.warnings().len()
    ));
    out
}

async fn main_inner(cli: Cli) -> Result<ExitCode, Failure> {
    if let Some(file) = &cli.env_file {
        dotenvy::from_path(file).map_err(|e| {
            dialectic::usage_error("--env-file", format!("cannot load {}: {e}", file.display()))
        })?;
    }
    let verbose = cli.verbose > 0;
    // The store is opened before any model is loaded or called.
    let url = match cli.store.as_deref() {
        Some(u) => u.to_owned(),
        None => default_store_url()?,
    };
    if cli.json
        && matches!(
            cli.command,
            Command::Debate(_)
                | Command::Worker(_)
                | Command::Submit(_)
                | Command::Serve { .. }
                | Command::Resume { .. }
                | Command::Eval(_)
                | Command::Memory(_)
                | Command::Override { .. }
                | Command::Trust(_)
        )
    {
        return Err(dialectic::usage_error(
            "--json",
            "is for the read commands: list, show, report, recall, export and agents \
             (`agon eval` writes JSON with `-o FILE.json`)",
        ));
    }
    let store = open_store(Some(&url)).await?;
    let orch = Orchestrator::new(Arc::clone(&store));
    match cli.command {
        Command::Debate(args) if args.detach => {
            let config = args.flags.config(invoked_as_dialectic())?;
            let queue = agon_worker::JobQueue::connect(&url).await?;
            let id = orch.create(&config).await?;
            queue::detach(&queue, &id, &config.topic).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Worker(args) => queue::worker(store, &url, args).await,
        Command::Submit(args) => queue::submit(&orch, &url, args, invoked_as_dialectic()).await,
        Command::Debate(args) => {
            let config = args.flags.config(invoked_as_dialectic())?;
            let id = orch.create(&config).await?;
            eprintln!("Debate {id}: {}", first_line(&config.topic));
            // Ctrl-C is handled from here on, while models load too.
            let control = RunControl::default();
            let interrupts = live::watch_ctrl_c(control.clone());
            let orch = memory::attach(orch, &url, &config).await;
            run(orch, &id, &config, &args.view, verbose, control, interrupts).await
        }
        Command::Resume {
            id, detach: true, ..
        } => {
            let id = DebateId::new(id);
            let config = orch.config_of(&id).await?;
            let queue = agon_worker::JobQueue::connect(&url).await?;
            queue.resume(&id).await?;
            eprintln!("Queued debate {id}: {}", first_line(&config.topic));
            Ok(ExitCode::SUCCESS)
        }
        Command::Resume {
            id, force, view, ..
        } => {
            let id = DebateId::new(id);
            let config = orch.config_of(&id).await?;
            if force && let Some(taken) = orch.take_over_lease(&id).await? {
                eprintln!(
                    "warning: debate {id}: took the run lease over from `{}` (held since {}, \
                     until {}); if that runner is alive, it stops at its next lease renewal \
                     (within {} s)",
                    taken.holder,
                    taken.acquired_at.format("%Y-%m-%d %H:%M:%S UTC"),
                    taken.expires_at.format("%H:%M:%S UTC"),
                    orch.lease_ttl().as_secs().div_ceil(3).max(1)
                );
            }
            eprintln!("Resuming debate {id}: {}", first_line(&config.topic));
            let control = RunControl::default();
            // Resuming lifts a pause the debate was stopped in (a resume
            // of a debate that was not paused records nothing).
            if let Err(e) = control.steering.post(Steer::Resume { by: None }) {
                eprintln!("warning: debate {id}: the resume was refused: {e}");
            }
            let interrupts = live::watch_ctrl_c(control.clone());
            let orch = memory::attach(orch, &url, &config).await;
            run(orch, &id, &config, &view, verbose, control, interrupts).await
        }
        Command::Serve { addr } => serve::run(store, url, addr).await,
        Command::List => {
            let debates = store.list_debates().await?;
            let jobs = queue::jobs(&url).await;
            // A person's rating is in each debate's log.
            let mut feedback = Vec::with_capacity(debates.len());
            for d in &debates {
                feedback.push(store.load(&d.id).await?.0.user_feedback());
            }
            if cli.json {
                let rows: Vec<serde_json::Value> = debates
                    .iter()
                    .zip(&feedback)
                    .map(|(d, feedback)| {
                        serde_json::json!({
                            "id": d.id,
                            "topic": d.topic,
                            "protocol": d.config.get("protocol").and_then(|p| p.as_str()).unwrap_or("structured"),
                            "status": d.status,
                            "messages": d.message_count,
                            "events": d.last_seq,
                            "user_feedback": feedback,
                            "job": jobs.get(&d.id).map(|job| {
                                let (state, detail) = queue::job_state(job);
                                serde_json::json!({
                                    "state": state,
                                    "worker": job.locked_by,
                                    "attempts": job.attempts,
                                    "max_attempts": job.max_attempts,
                                    "last_error": job.last_error,
                                    "detail": detail,
                                })
                            }),
                            "created_at": d.created_at,
                            "updated_at": d.updated_at,
                        })
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&rows)?);
                return Ok(ExitCode::SUCCESS);
            }
            if debates.is_empty() {
                eprintln!("No debates in {}", store.url());
            }
            for (d, feedback) in debates.iter().zip(feedback) {
                let rated = match feedback {
                    Some(1) => "+1",
                    Some(_) => "-1",
                    None => "  ",
                };
                // A queued debate's job says more than its stored status.
                let (status, detail) = match jobs.get(&d.id) {
                    Some(job) if !d.status.is_done() => queue::job_state(job),
                    _ => (d.status.as_str(), String::new()),
                };
                let detail = if detail.is_empty() {
                    detail
                } else {
                    format!("  [{detail}]")
                };
                println!(
                    "{}  {:<11}  {:>3} msgs  {rated}  {}  {}{detail}",
                    d.id,
                    status,
                    d.message_count,
                    d.created_at.format("%Y-%m-%d %H:%M"),
                    first_line(&d.topic)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Show {
            id, metrics: true, ..
        } => {
            let view = view_of(&orch, &DebateId::new(id), ReportOptions::default()).await?;
            if cli.json {
                println!("{}", serde_json::to_string_pretty(view.metrics())?);
            } else {
                print!("{}", view.metrics_markdown());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Show {
            id, stats: true, ..
        } => {
            let (bb, _) = store.load(&DebateId::new(id)).await?;
            if cli.json {
                let stats = agon_view::MemoryStats::of(&bb);
                println!("{}", serde_json::to_string_pretty(&stats)?);
            } else {
                print!("{}", report::stats_markdown(&bb));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { ids } => {
            let mut all = Vec::with_capacity(ids.len());
            for id in ids {
                let view =
                    view_of(&orch, &DebateId::new(id.clone()), ReportOptions::default()).await?;
                all.push((id, view.metrics().clone()));
            }
            if cli.json {
                let list: Vec<serde_json::Value> = all
                    .iter()
                    .map(|(id, m)| serde_json::json!({"debate": id, "metrics": m}))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                print!("{}", report::compare_markdown(&all));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Show {
            id,
            blackboard,
            transcript: transcript_only,
            ..
        } => {
            let (bb, _) = store.load(&DebateId::new(id)).await?;
            if cli.json && transcript_only {
                println!("{}", serde_json::to_string_pretty(bb.messages())?);
            } else if cli.json {
                println!("{}", serde_json::to_string_pretty(&bb)?);
            } else if blackboard {
                print!("{}", blackboard_text(&bb));
            } else {
                print!("{}", transcript(&bb));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Report {
            id,
            debate,
            config,
            output,
        } => {
            let md = match (id, debate) {
                (_, Some(file)) => {
                    let options = ReportOptions {
                        verbose,
                        reflection_threshold: None,
                    };
                    report_file::render(&file, config.as_deref(), options, cli.json)?
                }
                (Some(id), None) => {
                    let id = DebateId::new(id);
                    let options = ReportOptions {
                        verbose,
                        reflection_threshold: orch
                            .config_of(&id)
                            .await
                            .ok()
                            .map(|c| c.reflection_threshold),
                    };
                    let view = view_of(&orch, &id, options).await?;
                    if cli.json {
                        serde_json::to_string_pretty(&view.json())?
                    } else {
                        view.markdown()
                    }
                }
                (None, None) => {
                    return Err(dialectic::usage_error(
                        "ID",
                        "give a debate id, or a saved debate with --debate FILE",
                    ));
                }
            };
            match output {
                Some(path) => {
                    std::fs::write(&path, md)
                        .with_context(|| format!("writing {}", path.display()))?;
                    eprintln!("Report written to {}", path.display());
                }
                None => print!("{md}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Delete { ids, dry_run } => {
            let ids: Vec<DebateId> = ids.into_iter().map(DebateId::new).collect();
            let memory = retention_memory(&url).await;
            retention::delete(&orch, store.as_ref(), memory, &ids, dry_run).await
        }
        Command::Compact => {
            let (before, after) = store.compact().await?;
            let mb = |b: u64| b as f64 / 1_048_576.0;
            println!(
                "{}: {:.2} MB → {:.2} MB ({} KB given back)",
                store.url(),
                mb(before),
                mb(after),
                before.saturating_sub(after) / 1024
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Prune {
            older_than,
            status,
            dry_run,
        } => {
            let statuses: Vec<agon_store::RunStatus> = status.into_iter().map(Into::into).collect();
            let ids = retention::prunable(store.as_ref(), older_than, &statuses).await?;
            if ids.is_empty() {
                eprintln!("Nothing to prune in {}", store.url());
                return Ok(ExitCode::SUCCESS);
            }
            let memory = retention_memory(&url).await;
            retention::delete(&orch, store.as_ref(), memory, &ids, dry_run).await
        }
        Command::Feedback { id, rating } => {
            let id = DebateId::new(id);
            let value = match rating {
                Rating::Up => 1,
                Rating::Down => -1,
            };
            orch.record(
                &id,
                &[agon_core::DebateEvent::FeedbackRecorded {
                    value,
                    time: chrono::Utc::now(),
                }],
            )
            .await?;
            eprintln!("Recorded feedback {value:+} for debate {id}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Export { id } => {
            let id = DebateId::new(id);
            store.debate(&id).await?;
            let events = store.events_after(&id, 0).await?;
            println!("{}", serde_json::to_string_pretty(&events)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Recall {
            query,
            persona,
            debate,
            k,
            embedder,
        } => {
            memory::recall(
                &url,
                &query,
                &persona,
                debate.as_deref(),
                k,
                &embedder,
                cli.json,
            )
            .await
        }
        Command::Memory(MemoryCommand::Reindex { embedder }) => {
            memory::reindex(&url, &embedder).await
        }
        Command::Corpus(command) => corpus::run(&url, command, cli.json).await,
        Command::Eval(args) => eval::run(&store, &args, verbose).await,
        Command::Agents { command: None } => agents::list(store, cli.json).await,
        Command::Agents {
            command: Some(command),
        } => agents::run(store, command, cli.json).await,
        Command::Override {
            id,
            file,
            agent,
            criterion,
            drop_criterion,
        } => {
            agents::override_output(
                store,
                &id,
                &file,
                agent.as_deref(),
                criterion.as_deref(),
                drop_criterion.as_deref(),
            )
            .await
        }
        Command::Rubric(command) => rubric::run(store, command, cli.json).await,
        Command::Trust(agents::TrustCommand::Check) => agents::check(store).await,
    }
}

/// The model factory: HTTP providers, and the in-process models when the
/// binary is built with them (feature `local`, default).
fn model_factory() -> ModelFactory {
    #[cfg(feature = "local")]
    return agon_local::factory();
    #[cfg(not(feature = "local"))]
    return ModelFactory::new();
}

/// The log filter: `RUST_LOG` when set, else Agon's crates at the level
/// `-v` asks for (warnings only without it).
fn log_filter(verbose: u8) -> tracing_subscriber::EnvFilter {
    use tracing_subscriber::EnvFilter;
    if let Ok(filter) = EnvFilter::try_from_default_env() {
        return filter;
    }
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let crates = [
        "agon",
        "agon_core",
        "agon_context",
        "agon_protocol",
        "agon_llm",
        "agon_store",
        "agon_memory",
        "agon_orchestrator",
        "agon_cli",
    ];
    let directives: Vec<String> = std::iter::once("warn".to_owned())
        .chain(crates.iter().map(|c| format!("{c}={level}")))
        .collect();
    EnvFilter::new(directives.join(","))
}

/// Installs the log subscriber (stderr only, so logs never mix with the
/// live view on stdout) and, when asked, the OTLP trace export.
fn init_logging(cli: &Cli) -> telemetry::Telemetry {
    let url = telemetry::traces_url(cli.otlp.clone(), &|k| std::env::var(k).ok());
    telemetry::init(log_filter(cli.verbose), url, cli.otlp_content)
}

/// The error and its causes on one line, each cause once: errors that
/// already name their source in their message are not followed by it again.
fn error_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    if cli.env_file.is_none() {
        let _ = dotenvy::dotenv();
    }
    // Kept to the end: dropping it flushes the spans still queued.
    let _telemetry = init_logging(&cli);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(main_inner(cli)) {
        Ok(code) => code,
        Err(Failure { code, error }) => {
            eprintln!("error: {}", error_text(&error));
            ExitCode::from(code)
        }
    }
}
