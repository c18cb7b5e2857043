//! What the server shares between requests: the store, how a run gets its
//! orchestrator and models, the runs in progress, and a channel that says
//! when a debate changed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agon_config::DebateConfig;
use agon_core::DebateId;
use agon_orchestrator::{DebateUpdate, Models, Orchestrator, RunControl, RunOutcome};
use agon_store::EventStore;
use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::broadcast;

use crate::answers::{ApiAnswerer, Pending};
use crate::error::ApiError;
use crate::live::Live;

/// How long clarifying questions wait for a person by default.
const DEFAULT_ANSWER_WAIT: Duration = Duration::from_secs(600);

/// How a run gets its orchestrator (memory attached as the configuration
/// asks) and its models. The CLI builds them as `agon debate` does; tests
/// and embedders give their own.
#[async_trait]
pub trait Runner: Send + Sync {
    /// An orchestrator over `store` and the models for a debate with
    /// `config`, or why they cannot be had.
    async fn prepare(
        &self,
        store: Arc<dyn EventStore>,
        config: &DebateConfig,
    ) -> Result<(Orchestrator, Models), String>;

    /// The vector memory recall reads, with the embedder `embedder` names
    /// (the one its memories were written with), or why there is none
    /// (by default: this runner has no vector memory).
    async fn memory(&self, embedder: &str) -> Result<agon_memory::Memory, String> {
        let _ = embedder;
        Err("this server has no vector memory to recall from".into())
    }
}

/// The protocol a stored debate runs, by its configuration's name.
pub(crate) fn protocol_of(record: &agon_store::DebateRecord) -> &str {
    record
        .config
        .get("protocol")
        .and_then(|p| p.as_str())
        .unwrap_or("structured")
}

/// The server's shared state.
pub struct Server {
    pub(crate) store: Arc<dyn EventStore>,
    runner: Arc<dyn Runner>,
    runs: Mutex<HashMap<DebateId, RunControl>>,
    live: broadcast::Sender<(DebateId, Live)>,
    pub(crate) token: Option<String>,
    pub(crate) pending: Arc<Pending>,
    answer_wait: Duration,
}

impl Server {
    /// A server over `store` whose runs are prepared by `runner`; with
    /// `token`, every request must carry it.
    pub fn new(store: Arc<dyn EventStore>, runner: Arc<dyn Runner>, token: Option<String>) -> Self {
        let (live, _) = broadcast::channel(4_096);
        Self {
            store,
            runner,
            runs: Mutex::new(HashMap::new()),
            live,
            token,
            pending: Arc::new(Pending::default()),
            answer_wait: DEFAULT_ANSWER_WAIT,
        }
    }

    /// The same server, with clarifying questions waiting `wait` for
    /// their answers (default ten minutes) before they are answered "NA".
    pub fn with_answer_wait(mut self, wait: Duration) -> Self {
        self.answer_wait = wait;
        self
    }

    /// The live updates of every debate this server runs.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<(DebateId, Live)> {
        self.live.subscribe()
    }

    /// An orchestrator over the server's store (for creating debates and
    /// reading their logs and configurations).
    pub(crate) fn orchestrator(&self) -> Orchestrator {
        Orchestrator::new(Arc::clone(&self.store))
    }

    /// The view of `id` from its stored log (what the reports, the pages
    /// and the JSON API render).
    pub(crate) async fn view(&self, id: &DebateId) -> Result<agon_view::DebateView, ApiError> {
        self.view_at(id).await.map(|(view, _)| view)
    }

    /// The view of a debate and the sequence of the last event it holds
    /// (where a live stream of the page picks up, so no event is shown
    /// twice or missed).
    pub(crate) async fn view_at(
        &self,
        id: &DebateId,
    ) -> Result<(agon_view::DebateView, u64), ApiError> {
        self.store.debate(id).await?;
        let events = self.orchestrator().log(id).await?;
        let seq = events.len() as u64;
        agon_view::DebateView::from_log(&events, agon_view::ReportOptions::default())
            .map(|view| (view, seq))
            .map_err(|e| ApiError::internal(format!("debate `{id}`: the log does not replay: {e}")))
    }

    /// The vector memory recall reads (`503` when the runner has none).
    pub(crate) async fn memory(&self, embedder: &str) -> Result<agon_memory::Memory, ApiError> {
        self.runner
            .memory(embedder)
            .await
            .map_err(|e| ApiError::new(axum::http::StatusCode::SERVICE_UNAVAILABLE, e))
    }

    /// Wakes the live streams of `id`: another process (a worker on
    /// another machine) appended to it. The CLI forwards the PostgreSQL
    /// store's append notifications here (`PgStore::listen_appends`).
    pub fn appended_elsewhere(&self, id: DebateId) {
        let _ = self.live.send((id, Live::Appended));
    }

    /// Whether this server is running `id`.
    pub fn is_running(&self, id: &DebateId) -> bool {
        self.runs.lock().is_ok_and(|runs| runs.contains_key(id))
    }

    /// The control of the run of `id` on this server; `409` (with `hint`
    /// after the reason) when there is none.
    fn control(&self, id: &DebateId, hint: &str) -> Result<RunControl, ApiError> {
        let runs = self
            .runs
            .lock()
            .map_err(|_| ApiError::internal("the run table is poisoned"))?;
        runs.get(id).cloned().ok_or_else(|| {
            ApiError::conflict(format!("debate `{id}` is not running on this server{hint}"))
        })
    }

    /// Asks the run of `id` to stop after the current utterance.
    pub(crate) fn stop(&self, id: &DebateId) -> Result<(), ApiError> {
        self.control(id, "")?.stop.cancel();
        Ok(())
    }

    /// Queues a note, pause or resume for the run of `id`: recorded as an
    /// event before its next step.
    pub(crate) fn steer(&self, id: &DebateId, steer: agon_protocol::Steer) -> Result<(), ApiError> {
        self.control(id, " (resume it first)")?
            .steering
            .post(steer)
            .map_err(|e| ApiError::bad_request(format!("debate `{id}`: {e}")))
    }

    /// Runs `id` (new or interrupted) in the background with `config`.
    pub(crate) async fn spawn_run(
        self: &Arc<Self>,
        id: DebateId,
        config: DebateConfig,
    ) -> Result<(), ApiError> {
        let control = RunControl::default();
        {
            let mut runs = self
                .runs
                .lock()
                .map_err(|_| ApiError::internal("the run table is poisoned"))?;
            if runs.contains_key(&id) {
                return Err(ApiError::conflict(format!(
                    "debate `{id}` is already running on this server"
                )));
            }
            runs.insert(id.clone(), control.clone());
        }
        let server = Arc::clone(self);
        tokio::spawn(async move {
            let outcome = server.run(&id, &config, control).await;
            match &outcome {
                Ok(outcome) => tracing::info!(debate = %id, ?outcome, "run ended"),
                Err(e) => tracing::warn!(debate = %id, error = %e, "run failed"),
            }
            if let Ok(mut runs) = server.runs.lock() {
                runs.remove(&id);
            }
            // Wake the streams: the status changed.
            let _ = server.live.send((id, Live::Appended));
        });
        Ok(())
    }

    async fn run(
        &self,
        id: &DebateId,
        config: &DebateConfig,
        control: RunControl,
    ) -> Result<RunOutcome, String> {
        let (orch, models) = self.runner.prepare(Arc::clone(&self.store), config).await?;
        let orch = orch.with_answerer(Arc::new(ApiAnswerer {
            debate: id.clone(),
            pending: Arc::clone(&self.pending),
            live: self.live.clone(),
            wait: self.answer_wait,
        }));
        // Forward the run's updates to the streams.
        let mut updates = orch.subscribe();
        let live = self.live.clone();
        let debate = id.clone();
        let forward = tokio::spawn(async move {
            while let Some(update) = updates.next().await {
                let item = match update {
                    DebateUpdate::Event { debate, .. } => (debate, Live::Appended),
                    DebateUpdate::Token {
                        persona,
                        turn,
                        delta,
                    } => (
                        debate.clone(),
                        Live::Token {
                            turn: turn.to_string(),
                            persona: persona.to_string(),
                            delta,
                        },
                    ),
                    _ => continue,
                };
                let _ = live.send(item);
            }
        });
        let outcome = orch.run(id, &models, control).await;
        forward.abort();
        outcome.map_err(|e| e.to_string())
    }
}
