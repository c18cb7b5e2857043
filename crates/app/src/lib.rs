//! # agon-app
//!
//! The application every front door shares. The CLI (`agon`), the server
//! (`agon serve`) and the workers (`agon worker`) are adapters: each parses
//! its input, calls one use case of [`App`] and renders the result; none
//! wires the engine itself. A use case is written once, with one typed
//! error ([`AppError`]) that each adapter maps once: to an exit code
//! ([`AppError::exit_code`]) or an HTTP status ([`AppError::http_status`]).
//!
//! - **Runs**: [`App::spawn`] runs a debate in this process in the
//!   background (the server); [`Runtime`] is what a run needs from the
//!   program (models, vector memory, trace), implemented once per binary.
//! - **Steering through the store**: [`App::note`], [`App::pause`],
//!   [`App::resume`], [`App::stop`] and [`App::answer`] record a request in
//!   the store, whatever process a person reaches; the process that holds
//!   the run's lease takes it before its next step (at once in this
//!   process, within a poll of the store in another). Only the lease
//!   holder appends, so no request interleaves with a step.
//! - **Fork**: [`App::fork`] copies a debate's log up to any event into a
//!   new debate, to run on with other settings; [`App::divergence`] says
//!   where two debates part.
//! - **The trust and rubric repositories** ([`trust::TrustStore`],
//!   [`rubric::RubricStore`]), behind the orchestrator's `TrustMemory`
//!   seam ([`StoreTrust`]).
//! - **Feedback** ([`App::feedback`]), **overrides** with their rubric
//!   proposals ([`App::override_output`]), and **retention**
//!   ([`App::delete`], [`App::prunable`]).

mod answers;
mod answers_file;
mod error;
mod feedback;
mod fork;
mod models;
mod overrides;
mod posted_answers;
mod retention;
pub mod rubric;
mod rubrics;
mod runs;
mod runtime;
mod steer;
mod store_trust;
pub mod trust;
mod upkeep;
mod view;

use std::sync::Arc;
use std::time::Duration;

use agon_orchestrator::Orchestrator;
use agon_store::EventStore;

pub use agon_protocol::{PendingQuestion, RunRequest};
pub use answers_file::AnswersFile;
pub use error::{AppError, ErrorKind};
pub use fork::{Divergence, Forked, PartedMessage, default_fork_point};
pub use models::{build_chain, models_from_config};
pub use overrides::{Overridden, RubricAsk, RubricProposal};
pub use posted_answers::{OnAsked, PostedAnswers, pending_questions};
pub use retention::Deleted;
pub use runs::LocalRun;
pub use runtime::{Runtime, StepQueue};
pub use steer::{Posted, Resumed, RunsWhere};
pub use store_trust::StoreTrust;

/// How long clarifying questions wait for a person by default before
/// they are answered "NA" (dialectic's behaviour when nobody answers).
pub const DEFAULT_ANSWER_WAIT: Duration = Duration::from_secs(600);

/// An orchestrator over `store` with the trust memory and the living
/// rubrics kept in it ([`StoreTrust`]): what a program that runs debates
/// without the rest of the application (a benchmark, an embedder) wants.
pub fn orchestrator_for(store: Arc<dyn EventStore>) -> Orchestrator {
    Orchestrator::new(Arc::clone(&store)).with_trust(Arc::new(StoreTrust::new(store)))
}

/// The application: a store, the runtime debates run with, the runs of
/// this process, and (on PostgreSQL with workers) the job queue. Cheap to
/// clone.
#[derive(Clone)]
pub struct App {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn EventStore>,
    runtime: Arc<dyn Runtime>,
    queue: Option<Arc<dyn StepQueue>>,
    runs: runs::Runs,
    answer_wait: Duration,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("store", &self.inner.store.url())
            .field("queue", &self.inner.queue.is_some())
            .finish_non_exhaustive()
    }
}

impl App {
    /// The application over `store`, its debates run with `runtime`.
    pub fn new(store: Arc<dyn EventStore>, runtime: Arc<dyn Runtime>) -> Self {
        Self::build(store, runtime, None, DEFAULT_ANSWER_WAIT)
    }

    fn build(
        store: Arc<dyn EventStore>,
        runtime: Arc<dyn Runtime>,
        queue: Option<Arc<dyn StepQueue>>,
        answer_wait: Duration,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                runtime,
                queue,
                runs: runs::Runs::default(),
                answer_wait,
            }),
        }
    }

    /// The same application, queuing the debates the workers run (a
    /// resume of one queues it again). Call it before anything runs.
    pub fn with_queue(self, queue: Arc<dyn StepQueue>) -> Self {
        let inner = &self.inner;
        Self::build(
            Arc::clone(&inner.store),
            Arc::clone(&inner.runtime),
            Some(queue),
            inner.answer_wait,
        )
    }

    /// The same application, with clarifying questions waiting `wait` for
    /// their answers (default [`DEFAULT_ANSWER_WAIT`]) before they are
    /// answered "NA". Call it before anything runs.
    pub fn with_answer_wait(self, wait: Duration) -> Self {
        let inner = &self.inner;
        Self::build(
            Arc::clone(&inner.store),
            Arc::clone(&inner.runtime),
            inner.queue.clone(),
            wait,
        )
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.inner.store
    }

    /// The runtime debates run with.
    pub fn runtime(&self) -> &Arc<dyn Runtime> {
        &self.inner.runtime
    }

    /// How long clarifying questions wait for answers.
    pub fn answer_wait(&self) -> Duration {
        self.inner.answer_wait
    }

    /// An orchestrator over the store, with the trust memory and the
    /// living rubrics in it (creating debates, reading their logs and
    /// configurations, running them).
    pub fn orchestrator(&self) -> Orchestrator {
        orchestrator_for(Arc::clone(&self.inner.store))
    }
}
