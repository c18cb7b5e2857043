//! Debates of each protocol against the fault-injecting provider
//! (`agon_testkit::faults`): shared by the fault test (`tests/faults.rs`)
//! and `cargo xtask bench faults`.
//!
//! A run uses the real HTTP provider (`OpenAiChat`, JSON-schema structured
//! output) with short timeouts and backoffs, so a fault costs
//! milliseconds: a 1 s request timeout, 4 retries from 20 ms to 300 ms, a
//! 60 s deadline per call. A debate that fails is resumed once against the
//! healthy provider, as a person would after an outage.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agon_config::DebateConfig;
use agon_core::Blackboard;
use agon_llm::{HttpConfig, OpenAiChat, OpenAiConfig, PriceTable, StructuredOutput};
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_testkit::faults::{FaultServer, FaultStats, Planned};

/// The protocols, small.
pub const PROTOCOLS: [&str; 3] = ["structured", "dialectic", "deliberation"];

/// The configuration of `protocol`, small enough for many runs.
pub fn config(protocol: &str) -> DebateConfig {
    DebateConfig::from_toml(toml(protocol), "faults.toml").expect("the fault configs parse")
}

/// The TOML of [`config`] (no `[models]` table: add one to run it with
/// `agon`). Trust does not weigh feedback and dialectic draws no devil's
/// advocate: these runs compare each debate with another run of it in the
/// same store, whose agents' trust memories change as the debates before
/// it finish (and a draw is seeded by the debate's id).
pub fn toml(protocol: &str) -> &'static str {
    match protocol {
        "structured" => {
            "topic = \"Should cities ban private cars from their centres?\"\nminirounds = 2\n\n\
             [[aspects]]\nlabel = \"Cost\"\n\n[[aspects]]\nlabel = \"Health\"\n\n\
             [[personas]]\nname = \"Mara\"\ncontract = \"Urban planner, for car-free centres.\"\n\n\
             [[personas]]\nname = \"Theo\"\ncontract = \"Economist, against bans.\"\n\n\
             [crux]\nmax_turns = 2\ncheck_every = 2\nmax_rooms = 1\n\n[memory]\nenabled = false\n\n[trust]\nweigh_feedback = false\n"
        }
        "dialectic" => {
            "protocol = \"dialectic\"\ntopic = \"Design a rate limiter for a public API.\"\n\n\
             [dialectic]\nrounds = 2\ndevil_advocate = false\n\n[[dialectic.agent]]\nrole = \"architect\"\n\n\
             [[dialectic.agent]]\nrole = \"kiss\"\n\n[memory]\nenabled = false\n\n[trust]\nweigh_feedback = false\n"
        }
        _ => {
            "protocol = \"deliberation\"\ntopic = \"How should the city spend its transport budget?\"\n\n\
             [deliberation]\nturns = 12\nstop_on_consensus = false\n\n\
             [[personas]]\nname = \"Ana\"\ncontract = \"Cyclist.\"\n\n\
             [[personas]]\nname = \"Ben\"\ncontract = \"Driver.\"\n\n[memory]\nenabled = false\n\n[trust]\nweigh_feedback = false\n"
        }
    }
}

/// How one debate fared.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The protocol.
    pub protocol: &'static str,
    /// The fault rate.
    pub rate: f64,
    /// Finished in its first run, faults and all.
    pub finished_first: bool,
    /// The first run's error, if it failed.
    pub error: Option<String>,
    /// Finished in the end (after the resume, if one was needed).
    pub finished: bool,
    /// Messages in the final log.
    pub messages: usize,
    /// Warning events in the log (failed optional steps, repaired output).
    pub warnings: usize,
    /// Tokens the models reported (prompt and answer).
    pub tokens: u64,
    /// What the provider saw and injected.
    pub faults: FaultStats,
    /// Wall time, both runs.
    pub wall: Duration,
}

fn http() -> HttpConfig {
    HttpConfig {
        timeout: Duration::from_secs(1),
        deadline: Duration::from_secs(60),
        max_retries: 4,
        min_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(300),
        concurrency: 8,
    }
}

/// The models of a run: the real OpenAI-compatible client against `url`,
/// with the short timeouts and backoffs of [`http`].
pub fn models(url: &str) -> Models {
    let mut config = OpenAiConfig::local("faulty", url, "stub");
    config.structured = StructuredOutput::JsonSchema;
    config.http = http();
    let chat = OpenAiChat::new(config).expect("the client builds");
    Models::uniform(Arc::new(chat), PriceTable::default())
}

/// Warning events: optional steps that failed, output that was repaired.
fn warnings(events: &[agon_core::DebateEvent]) -> usize {
    events
        .iter()
        .filter(|e| {
            let name = e.name();
            name.contains("failed") || name.contains("repaired") || name.contains("warning")
        })
        .count()
}

/// Runs `protocol` against a provider faulting `rate` of its requests
/// (seed `seed`) on a fresh SQLite store in `dir`.
pub async fn run(protocol: &'static str, rate: f64, seed: u64, dir: &std::path::Path) -> Outcome {
    run_planned(protocol, rate, seed, Vec::new(), dir).await
}

/// [`run`], with `plan`'s faults injected first (each into the next
/// request of its target).
pub async fn run_planned(
    protocol: &'static str,
    rate: f64,
    seed: u64,
    plan: Vec<Planned>,
    dir: &std::path::Path,
) -> Outcome {
    let planned = !plan.is_empty();
    let server = FaultServer::start_planned(rate, seed, Duration::from_millis(1500), plan)
        .await
        .expect("the fault server starts");
    let url = format!(
        "sqlite://{}",
        dir.join(format!(
            "{protocol}-{seed}{}.db",
            if planned { "-planned" } else { "" }
        ))
        .display()
    );
    let orch = agon_app::orchestrator_for(agon_store::open(&url).await.expect("the store opens"));
    let id = orch
        .create(&config(protocol))
        .await
        .expect("the debate is created");
    let started = Instant::now();
    let models = models(server.url());
    let first = orch.run(&id, &models, RunControl::default()).await;
    let error = first.as_ref().err().map(ToString::to_string);
    let finished_first = matches!(first, Ok(RunOutcome::Finished));
    let faults = server.stats();
    let finished = if finished_first {
        true
    } else {
        // The outage is over: a resume finishes it.
        server.set_rate(0.0);
        matches!(
            orch.run(&id, &models, RunControl::default()).await,
            Ok(RunOutcome::Finished)
        )
    };
    let wall = started.elapsed();
    let events = orch.log(&id).await.expect("the log reads");
    let bb: Blackboard = orch.store().load(&id).await.expect("the debate loads").0;
    let usage = bb.usage_total();
    Outcome {
        protocol,
        rate,
        finished_first,
        error,
        finished,
        messages: bb.messages().len(),
        warnings: warnings(&events),
        tokens: usage.input_tokens + usage.output_tokens,
        faults,
        wall,
    }
}
