//! The runs of this process: a debate run in the background
//! ([`App::spawn`]), its control, and what it tells the live views.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agon_config::DebateConfig;
use agon_core::DebateId;
use agon_orchestrator::{DebateUpdate, Orchestrator, RunControl, RunOutcome};
use futures::StreamExt as _;
use tokio::sync::broadcast;
use tracing::Instrument as _;

use crate::{App, AppError, PostedAnswers};

/// What a run of this process tells the live views.
#[derive(Debug, Clone)]
pub enum LocalRun {
    /// An update of the run (an event persisted, a token generated).
    Update(DebateUpdate),
    /// The run waits on clarifying questions.
    Asked,
    /// The run ended (finished, stopped, paused in slices, or failed).
    Ended,
}

/// The runs of this process.
pub(crate) struct Runs {
    table: Mutex<HashMap<DebateId, RunControl>>,
    live: broadcast::Sender<(DebateId, LocalRun)>,
}

impl Default for Runs {
    fn default() -> Self {
        let (live, _) = broadcast::channel(4_096);
        Self {
            table: Mutex::new(HashMap::new()),
            live,
        }
    }
}

impl Runs {
    /// The control of `id`'s run here, if it runs here.
    pub(crate) fn control(&self, id: &DebateId) -> Option<RunControl> {
        self.table.lock().ok()?.get(id).cloned()
    }

    fn insert(&self, id: &DebateId, control: RunControl) -> Result<(), AppError> {
        let mut table = self
            .table
            .lock()
            .map_err(|_| AppError::Unavailable("the run table is poisoned".into()))?;
        if table.contains_key(id) {
            return Err(AppError::conflict(id, "it already runs in this process"));
        }
        table.insert(id.clone(), control);
        Ok(())
    }

    fn remove(&self, id: &DebateId) {
        if let Ok(mut table) = self.table.lock() {
            table.remove(id);
        }
    }

    fn ids(&self) -> Vec<DebateId> {
        self.table
            .lock()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }
}

impl App {
    /// Whether `id` runs in this process.
    pub fn runs_here(&self, id: &DebateId) -> bool {
        self.inner.runs.control(id).is_some()
    }

    /// What the runs of this process tell the live views.
    pub fn subscribe(&self) -> broadcast::Receiver<(DebateId, LocalRun)> {
        self.inner.runs.live.subscribe()
    }

    /// Creates a debate with `config` (validated first) and runs it in
    /// this process in the background.
    pub async fn start(&self, config: &DebateConfig) -> Result<DebateId, AppError> {
        let id = self.orchestrator().create(config).await?;
        self.spawn(&id).await?;
        Ok(id)
    }

    /// Runs `id` (new, interrupted or forked) in this process in the
    /// background, from wherever its log ends. Its clarifying questions
    /// wait for answers posted to the store ([`App::answer`]).
    pub async fn spawn(&self, id: &DebateId) -> Result<(), AppError> {
        let record = self.store().debate(id).await?;
        if record.status.is_done() {
            return Err(AppError::conflict(id, "it is not running: it is finished"));
        }
        let config = self.orchestrator().config_of(id).await?;
        let control = RunControl::default();
        self.inner.runs.insert(id, control.clone())?;
        let app = self.clone();
        let id = id.clone();
        tokio::spawn(async move {
            match app.run_here(&id, &config, control).await {
                Ok(outcome) => tracing::info!(debate = %id, ?outcome, "run ended"),
                Err(e) => tracing::warn!(debate = %id, error = %e, "run failed"),
            }
            app.inner.runs.remove(&id);
            let _ = app.inner.runs.live.send((id, LocalRun::Ended));
        });
        Ok(())
    }

    /// An orchestrator for `config`, equipped by the runtime, with its
    /// questions answered through the store, and its models.
    pub async fn prepare(
        &self,
        id: &DebateId,
        config: &DebateConfig,
    ) -> Result<(Orchestrator, agon_orchestrator::Models), AppError> {
        let orch = self.runtime().equip(self.orchestrator(), config).await;
        let models = self
            .runtime()
            .models(config)
            .await
            .map_err(|e| AppError::Unavailable(format!("debate `{id}`: models: {e}")))?;
        let live = self.inner.runs.live.clone();
        let asking = id.clone();
        let answers = PostedAnswers::new(Arc::clone(self.store()), id.clone(), self.answer_wait())
            .on_asked(Arc::new(move |_| {
                let _ = live.send((asking.clone(), LocalRun::Asked));
            }));
        Ok((orch.with_answerer(Arc::new(answers)), models))
    }

    async fn run_here(
        &self,
        id: &DebateId,
        config: &DebateConfig,
        control: RunControl,
    ) -> Result<RunOutcome, AppError> {
        let (orch, models) = self.prepare(id, config).await?;
        let mut updates = orch.subscribe();
        let live = self.inner.runs.live.clone();
        let debate = id.clone();
        let forward = tokio::spawn(async move {
            while let Some(update) = updates.next().await {
                let _ = live.send((debate.clone(), LocalRun::Update(update)));
            }
        });
        let outcome = orch
            .run(id, &models, control)
            .instrument(self.runtime().run_span(id))
            .await;
        forward.abort();
        Ok(outcome?)
    }

    /// Asks every run of this process to stop at its next step boundary
    /// and waits until they ended (their leases released), at most
    /// `grace`; returns how many were still running then.
    pub async fn shutdown(&self, grace: std::time::Duration) -> usize {
        for id in self.inner.runs.ids() {
            if let Some(control) = self.inner.runs.control(&id) {
                control.stop.cancel();
                control.steering.wake();
            }
        }
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let left = self.inner.runs.ids().len();
            if left == 0 || tokio::time::Instant::now() >= deadline {
                return left;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}
