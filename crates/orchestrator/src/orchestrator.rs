//! [`Orchestrator`]: creates debates and runs them. A run takes the lease
//! (renewed from then on), opens the log, starts the background pipeline
//! and the memory writer, lets the interpreter drive the protocol, and on the way
//! out records usage and the run's status.

use std::sync::Arc;
use std::time::Duration;

use agon_context::{Assembler, CachedCounter, ContextBudget, TiktokenCounter};
use agon_core::{DebateId, DebateStatus};
use agon_memory::Memory;
use agon_protocol::Protocol;
use agon_store::{DebateLog, EventStore, NewDebate, RunStatus, SnapshotPolicy};
use tokio::sync::{broadcast, mpsc};
use tracing::Instrument;

use crate::calls::{RunCtx, RunSettings};
pub use crate::control::{RunControl, RunOutcome};
use crate::error::OrchestratorError;
use crate::interpreter::Interpreter;
use crate::lease::{self, HeldLease};
use crate::models::Models;
use crate::shared::Shared;
use crate::update::{DebateUpdate, DebateUpdates, subscription};
use agon_config::DebateConfig;

/// Creates and runs debates on a store, publishing updates to subscribers.
pub struct Orchestrator {
    store: Arc<dyn EventStore>,
    updates: broadcast::Sender<DebateUpdate>,
    holder: String,
    memory: Option<Memory>,
    memory_unavailable: Option<String>,
    lease_ttl: Duration,
    answerer: Option<Arc<dyn crate::answers::Answerer>>,
    trust: Arc<dyn crate::trust_memory::TrustMemory>,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orchestrator")
            .field("store", &self.store.url())
            .finish()
    }
}

impl Orchestrator {
    /// An orchestrator over `store`.
    pub fn new(store: Arc<dyn EventStore>) -> Self {
        let (updates, _) = broadcast::channel(4_096);
        Self {
            store,
            updates,
            holder: agon_store::lease::this_process(),
            memory: None,
            memory_unavailable: None,
            lease_ttl: lease::LEASE_TTL,
            answerer: None,
            trust: Arc::new(crate::trust_memory::NoTrustMemory),
        }
    }

    /// Gives the debates this orchestrator runs the agents' trust memory
    /// and the living rubrics (`agon_app::StoreTrust` keeps them in the
    /// store). Without one, runs read the built-in rubrics and no agent's
    /// memory, and record nothing.
    pub fn with_trust(mut self, trust: Arc<dyn crate::trust_memory::TrustMemory>) -> Self {
        self.trust = trust;
        self
    }

    /// How long a run's lease lasts without renewal (default 60 s). The
    /// lease is renewed every third of it on a timer, whatever the run is
    /// doing; a process that dies leaves the debate to others after it.
    pub fn with_lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl.max(Duration::from_millis(30));
        self
    }

    /// Frees the run lease of `id` whoever holds it (`agon resume
    /// --force`), so this orchestrator's next run of it starts at once; a
    /// live holder's next renewal fails and its run stops. Returns the
    /// lease taken over, if another holder had a live one.
    pub async fn take_over_lease(
        &self,
        id: &DebateId,
    ) -> Result<Option<agon_store::Lease>, OrchestratorError> {
        self.store.debate(id).await?;
        Ok(
            agon_store::lease::take_over(self.store.as_ref(), id, &self.holder, self.lease_ttl)
                .await?,
        )
    }

    /// How long a run's lease lasts without renewal.
    pub fn lease_ttl(&self) -> Duration {
        self.lease_ttl
    }

    /// Gives the debates this orchestrator runs a vector memory: what they
    /// say is remembered, and recalled into takes, crux rooms and closings
    /// (unless a debate's `memory.enabled` is false).
    pub fn with_memory(mut self, memory: Memory) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Records why memory could not be set up (the embedder did not load,
    /// the store holds another embedder's vectors, …): debates run without
    /// it and log a `step_failed` warning (`memory`, scope `setup`).
    pub fn with_memory_unavailable(mut self, reason: impl Into<String>) -> Self {
        self.memory_unavailable = Some(reason.into());
        self
    }

    /// Where clarifying questions get their answers: a terminal, an
    /// answers file, the store (`PostedAnswers`). Without one every answer is "NA".
    pub fn with_answerer(mut self, answerer: Arc<dyn crate::answers::Answerer>) -> Self {
        self.answerer = Some(answerer);
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// A live stream of updates (events as they are persisted, tokens as
    /// they are generated, progress and usage) of every debate this
    /// orchestrator runs.
    pub fn subscribe(&self) -> DebateUpdates {
        subscription(self.updates.subscribe())
    }

    /// Records a new debate with its configuration (validated first). No
    /// model is called; [`Orchestrator::run`] starts it.
    pub async fn create(&self, config: &DebateConfig) -> Result<DebateId, OrchestratorError> {
        config.validate("<config>")?;
        let value =
            serde_json::to_value(config).map_err(|source| OrchestratorError::StoredConfig {
                debate: "(new)".to_owned(),
                source,
            })?;
        let mut attempts = 0;
        loop {
            let id = new_debate_id();
            let created = self
                .store
                .create_debate(&NewDebate {
                    id: id.clone(),
                    topic: config.topic.clone(),
                    config: value.clone(),
                })
                .await;
            match created {
                Ok(_) => return Ok(id),
                Err(agon_store::StoreError::DebateExists { .. }) if attempts < 8 => attempts += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The configuration a debate was created with.
    pub async fn config_of(&self, id: &DebateId) -> Result<DebateConfig, OrchestratorError> {
        let record = self.store.debate(id).await?;
        serde_json::from_value(record.config).map_err(|source| OrchestratorError::StoredConfig {
            debate: id.to_string(),
            source,
        })
    }

    /// Runs the debate from wherever its log ends (a new debate from the
    /// start, an interrupted one from its last persisted event) until it
    /// finishes or `control` stops it, with the protocol its configuration
    /// names.
    pub async fn run(
        &self,
        id: &DebateId,
        models: &Models,
        control: RunControl,
    ) -> Result<RunOutcome, OrchestratorError> {
        let config = self.config_of(id).await?;
        let protocol = config.protocol();
        self.run_inner(id, config, protocol, models, control)
            .instrument(tracing::info_span!("debate", debate = %id))
            .await
    }

    /// Runs the debate with `protocol`: the one interpreter executes any
    /// protocol's steps. The debate's stored configuration still supplies
    /// budgets, temperatures and memory settings.
    pub async fn run_protocol(
        &self,
        id: &DebateId,
        protocol: Arc<dyn Protocol>,
        models: &Models,
        control: RunControl,
    ) -> Result<RunOutcome, OrchestratorError> {
        let config = self.config_of(id).await?;
        self.run_inner(id, config, protocol, models, control)
            .instrument(tracing::info_span!("debate", debate = %id))
            .await
    }

    async fn run_inner(
        &self,
        id: &DebateId,
        config: DebateConfig,
        protocol: Arc<dyn Protocol>,
        models: &Models,
        control: RunControl,
    ) -> Result<RunOutcome, OrchestratorError> {
        let started = chrono::Utc::now();
        let run = config.resolve().run;
        let budget =
            ContextBudget::new(run.context_tokens).map_err(|source| OrchestratorError::Budget {
                debate: id.to_string(),
                source,
            })?;
        let lease = HeldLease::keep(
            Arc::clone(&self.store),
            agon_store::lease::acquire(self.store.as_ref(), id, &self.holder, self.lease_ttl)
                .await?,
            self.lease_ttl,
        );
        self.store.set_status(id, RunStatus::Running).await?;
        let log = DebateLog::open(
            Arc::clone(&self.store),
            id.clone(),
            SnapshotPolicy::default(),
        )
        .await?;
        if log.blackboard().status() == DebateStatus::Finished {
            lease.release().await;
            self.store
                .set_status(id, finished_status(log.blackboard()))
                .await?;
            return Ok(RunOutcome::Finished);
        }
        let settings = RunSettings::of(&config, run);
        let mcp = match crate::mcp_servers::start(id, &settings).await {
            Ok(mcp) => mcp,
            Err(e) => {
                self.store.set_status(id, RunStatus::Failed).await.ok();
                lease.release().await;
                return Err(e);
            }
        };
        let memory = self.memory.clone().filter(|_| config.memory.enabled);
        let (memory_tx, memory_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared::new(
            id.clone(),
            log,
            self.updates.clone(),
            memory.as_ref().map(|_| memory_tx),
        ));
        let writer = match &memory {
            Some(memory) => Some(
                self.spawn_memory_writer(id, memory, &shared, memory_rx)
                    .await?,
            ),
            None => None,
        };
        let memory_unavailable = config
            .memory
            .enabled
            .then(|| self.memory_unavailable.clone())
            .flatten();
        let limits = config.budget.limits();
        let guard = shared
            .read(|bb| {
                crate::guard::BudgetGuard::new(
                    limits,
                    bb,
                    Arc::clone(models.ledger()),
                    models.ledger().snapshot(),
                )
            })
            .await;
        let ctx = Arc::new(RunCtx {
            protocol,
            settings,
            models: models.clone(),
            assembler: Assembler::new(CachedCounter::new(TiktokenCounter::default())),
            budget,
            memory,
            memory_unavailable,
            mcp,
            guard: Arc::new(guard),
            usage_baseline: models.ledger().snapshot(),
            answerer: self.answerer.clone(),
            trust: Arc::clone(&self.trust),
        });
        let applier = tokio::spawn(
            crate::applier::run(Arc::clone(&shared), Arc::clone(&ctx)).in_current_span(),
        );
        lease.report_to(Arc::clone(&shared));
        let interpreter = Interpreter {
            shared: Arc::clone(&shared),
            ctx: Arc::clone(&ctx),
            control: control.clone(),
            round_clock: std::sync::Mutex::new(None),
            started,
        };
        let stop_mcp = || async {
            if let Some(mcp) = &ctx.mcp {
                mcp.stop().await;
            }
        };
        let outcome = match interpreter.drive().await {
            Ok(outcome) => outcome,
            Err(e) => {
                stop_mcp().await;
                applier.abort();
                shared.close_memory(writer, false).await;
                crate::usage::record(&shared, &ctx.models, &ctx.usage_baseline)
                    .await
                    .ok();
                self.store.set_status(id, RunStatus::Failed).await.ok();
                lease.release().await;
                tracing::warn!(error = %e, "run failed");
                return Err(e);
            }
        };
        if outcome != RunOutcome::Finished {
            let finish = !control.abort.is_cancelled();
            if finish {
                interpreter.drain().await.ok();
            }
            stop_mcp().await;
            applier.abort();
            shared.close_memory(writer, finish).await;
            crate::usage::record(&shared, &ctx.models, &ctx.usage_baseline).await?;
            let status = if outcome == RunOutcome::SliceDone {
                RunStatus::Queued
            } else {
                RunStatus::Interrupted
            };
            self.store.set_status(id, status).await?;
        } else {
            stop_mcp().await;
            applier.abort();
            shared.close_memory(writer, true).await;
            let status = shared.read(finished_status).await;
            self.store.set_status(id, status).await?;
        }
        lease.release().await;
        Ok(outcome)
    }

    /// Deletes a debate from the store (its events, snapshots and lease, in
    /// one transaction) under its run lease, so a debate another live
    /// process runs is refused ([`agon_store::StoreError::Leased`]).
    /// Returns how many events it had. Its vector memories are the memory
    /// index's to delete (`MemoryIndex::delete_debate`).
    pub async fn delete(&self, id: &DebateId) -> Result<u64, OrchestratorError> {
        let record = self.store.debate(id).await?;
        let lease =
            agon_store::lease::acquire(self.store.as_ref(), id, &self.holder, self.lease_ttl)
                .await?;
        match self.store.delete_debate(id).await {
            Ok(()) => Ok(record.last_seq),
            Err(e) => {
                self.store.release_lease(&lease).await.ok();
                Err(e.into())
            }
        }
    }

    /// Appends `events` to a debate outside a run (a person's feedback on
    /// a finished debate), under the run lease, so no runner appends at the
    /// same time: a debate another live process runs is refused
    /// ([`agon_store::StoreError::Leased`]). Each event is checked by the
    /// blackboard as any other. Returns the new last sequence.
    pub async fn record(
        &self,
        id: &DebateId,
        events: &[agon_core::DebateEvent],
    ) -> Result<u64, OrchestratorError> {
        self.store.debate(id).await?;
        let lease =
            agon_store::lease::acquire(self.store.as_ref(), id, &self.holder, self.lease_ttl)
                .await?;
        let appended = async {
            let mut log = DebateLog::open(
                Arc::clone(&self.store),
                id.clone(),
                SnapshotPolicy::default(),
            )
            .await?;
            Ok::<u64, OrchestratorError>(log.append(events).await?)
        }
        .await;
        self.store.release_lease(&lease).await?;
        appended
    }

    /// Every stored event of a debate, in order (what a view of it is
    /// computed from: `agon_view::DebateView::from_log`); an unknown
    /// debate is an error naming it.
    pub async fn log(
        &self,
        id: &DebateId,
    ) -> Result<Vec<agon_core::DebateEvent>, OrchestratorError> {
        self.store.debate(id).await?;
        self.history(id).await
    }

    /// Every stored event of a debate, in order.
    async fn history(
        &self,
        id: &DebateId,
    ) -> Result<Vec<agon_core::DebateEvent>, OrchestratorError> {
        Ok(self
            .store
            .events_after(id, 0)
            .await?
            .into_iter()
            .map(|e| e.event)
            .collect())
    }

    /// Starts the memory writer over the debate's history so far; its
    /// failures become `step_failed` warnings.
    async fn spawn_memory_writer(
        &self,
        id: &DebateId,
        memory: &Memory,
        shared: &Arc<Shared>,
        rx: mpsc::UnboundedReceiver<agon_memory::MemoryMsg>,
    ) -> Result<tokio::task::JoinHandle<()>, OrchestratorError> {
        let history = self.history(id).await?;
        let weak = Arc::downgrade(shared);
        let warn: agon_memory::Warn = Arc::new(move |step, reason: String| {
            if let Some(shared) = weak.upgrade() {
                tokio::spawn(async move {
                    let _ = shared
                        .append(vec![agon_protocol::step_failed(
                            step,
                            reason,
                            chrono::Utc::now(),
                        )])
                        .await;
                });
            }
        });
        Ok(agon_memory::spawn_writer(memory.clone(), history, rx, warn))
    }
}

/// A new debate's id: the second it was created and 16 random bits
/// (debates created in the same second by many processes may draw the
/// same id, so the caller draws again when it is taken).
pub fn new_debate_id() -> DebateId {
    DebateId::new(format!(
        "d-{}-{:04x}",
        chrono::Utc::now().format("%Y%m%d-%H%M%S"),
        fastrand::u16(..)
    ))
}

/// The stored status of a finished debate: `budget` when it stopped at its
/// budget, `finished` otherwise.
fn finished_status(board: &agon_core::Blackboard) -> RunStatus {
    if board.budget_stop().is_some() {
        RunStatus::Budget
    } else {
        RunStatus::Finished
    }
}
