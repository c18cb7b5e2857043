//! Running a debate: the seed-000 protocol, resumable at any event.
//!
//! ## Where the critical path waits
//! Utterances are the critical path; everything derived from them runs in the
//! background and is *applied in a fixed order* by one applier task:
//! analysis of each message (position update + disagreement judgement, and
//! the claims that opens), the round record after each aspect, then the
//! reflection decision. Model calls for queued jobs run concurrently; only
//! their application is ordered, so the blackboard evolves the same way on
//! every run and on resume.
//!
//! A speaker waits only for the analysis of **their own previous message**,
//! so their ledger entry is current when they speak. Other participants'
//! entries may lag by the messages since the speaker last spoke; those
//! messages are in RECENT EXCHANGE verbatim. Round records and reflections
//! of aspect N are not waited for by aspect N+1's takes. The run waits for
//! *everything* queued (a barrier) only before the crux rooms, after each
//! room, before the closings and before finishing.

use std::collections::HashSet;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use agon_context::prompts::{self, Prompt, Utterance};
use agon_context::{
    Assembler, CachedCounter, ContextBudget, ContextExtras, Phase, TiktokenCounter,
};
use agon_core::extraction::{
    AspectPlan, DisagreementWindow, ExtractionContext, Payload, PositionUpdate, ReflectionBatch,
    RoundRecordPayload, TurnAnalysis, analysis_events, parse_payload, with_persona_names,
};
use agon_core::{
    AspectId, Blackboard, ClaimId, ClaimStatus, CruxRoomId, DebateAspect, DebateEvent, DebateId,
    DialogueMessage, MessageId, MessageKind, Persona, PersonaId, PersonaRole, ReflectionTrigger,
    Topic,
};
use agon_crux::{HostError, RoomConfig, RoomHost, RoomTurn, UTTERANCE_STEP};
use agon_llm::{ChatModel, ChatRequest, JsonSchema};
use agon_store::{DebateLog, EventStore, Lease, NewDebate, RunStatus, SnapshotPolicy, StoreError};
use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::{Mutex, broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{DebateConfig, DetectionMode};
use crate::error::OrchestratorError;
use crate::memory::MemoryMsg;
use crate::models::{Models, Role};
use crate::update::{DebateUpdate, DebateUpdates, subscription};
use agon_memory::Memory;

/// The judge's persona id (added when the config asks for a synthesis).
pub const JUDGE_ID: &str = "judge";
const LEASE_TTL: Duration = Duration::from_secs(60);

/// Stops a run from outside (the CLI wires Ctrl-C to it).
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// Finish the current utterance, then stop cleanly (resumable).
    pub stop: CancellationToken,
    /// Discard the utterance being generated and stop now (resumable).
    pub abort: CancellationToken,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// The debate finished.
    Finished,
    /// Stopped on request; `agon resume` continues it.
    Stopped,
}

/// Creates and runs debates on a store, publishing updates to subscribers.
pub struct Orchestrator {
    store: Arc<dyn EventStore>,
    updates: broadcast::Sender<DebateUpdate>,
    holder: String,
    memory: Option<Memory>,
    memory_unavailable: Option<String>,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orchestrator")
            .field("store", &self.store.url())
            .finish()
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether a lease holder `host:pid` is a dead process on this host.
fn holder_is_dead(holder: &str) -> bool {
    let Some((host, pid)) = holder.rsplit_once(':') else {
        return false;
    };
    host == hostname()
        && pid.parse::<u32>().is_ok()
        && std::path::Path::new("/proc/self").exists()
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

impl Orchestrator {
    /// An orchestrator over `store`.
    pub fn new(store: Arc<dyn EventStore>) -> Self {
        let (updates, _) = broadcast::channel(4_096);
        Self {
            store,
            updates,
            holder: format!("{}:{}", hostname(), std::process::id()),
            memory: None,
            memory_unavailable: None,
        }
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
        let id = DebateId::new(format!(
            "d-{}-{:04x}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S"),
            std::process::id() as u16 ^ (chrono::Utc::now().timestamp_subsec_nanos() as u16)
        ));
        let value = serde_json::to_value(config).map_err(|e| OrchestratorError::Invalid {
            debate: id.to_string(),
            reason: format!("config does not serialize: {e}"),
        })?;
        self.store
            .create_debate(&NewDebate {
                id: id.clone(),
                topic: config.topic.clone(),
                config: value,
            })
            .await?;
        Ok(id)
    }

    /// The configuration a debate was created with.
    pub async fn config_of(&self, id: &DebateId) -> Result<DebateConfig, OrchestratorError> {
        let record = self.store.debate(id).await?;
        serde_json::from_value(record.config).map_err(|e| OrchestratorError::Invalid {
            debate: id.to_string(),
            reason: format!("stored config is unreadable: {e}"),
        })
    }

    async fn lease(&self, id: &DebateId) -> Result<Lease, OrchestratorError> {
        match self.store.acquire_lease(id, &self.holder, LEASE_TTL).await {
            Err(StoreError::Leased {
                holder,
                since,
                until,
                ..
            }) if holder_is_dead(&holder) => {
                self.store
                    .release_lease(&Lease {
                        debate: id.clone(),
                        holder,
                        acquired_at: since,
                        expires_at: until,
                    })
                    .await?;
                Ok(self
                    .store
                    .acquire_lease(id, &self.holder, LEASE_TTL)
                    .await?)
            }
            other => Ok(other?),
        }
    }

    /// Runs the debate from wherever its log ends (a new debate from the
    /// start, an interrupted one from its last persisted event) until it
    /// finishes or `control` stops it.
    pub async fn run(
        &self,
        id: &DebateId,
        models: &Models,
        control: RunControl,
    ) -> Result<RunOutcome, OrchestratorError> {
        let config = self.config_of(id).await?;
        let lease = self.lease(id).await?;
        self.store.set_status(id, RunStatus::Running).await?;
        let log = DebateLog::open(
            Arc::clone(&self.store),
            id.clone(),
            SnapshotPolicy::default(),
        )
        .await?;
        if log.blackboard().status() == agon_core::DebateStatus::Finished {
            self.store.release_lease(&lease).await?;
            self.store.set_status(id, RunStatus::Finished).await?;
            return Ok(RunOutcome::Finished);
        }
        let (applied, _) = watch::channel(log.seq());
        let memory = self.memory.clone().filter(|_| config.memory.enabled);
        let (memory_tx, memory_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            debate: id.clone(),
            log: Mutex::new(log),
            updates: self.updates.clone(),
            applied,
            failure: StdMutex::new(None),
            memory_tx: StdMutex::new(memory.as_ref().map(|_| memory_tx)),
        });
        let writer = match &memory {
            Some(memory) => {
                let history = self
                    .store
                    .events_after(id, 0)
                    .await?
                    .into_iter()
                    .map(|e| e.event)
                    .collect();
                let weak = Arc::downgrade(&shared);
                let warn: crate::memory::Warn = Arc::new(move |step: String, reason: String| {
                    if let Some(shared) = weak.upgrade() {
                        tokio::spawn(async move {
                            let _ = shared
                                .append(vec![step_failed(&step, reason, None, None)])
                                .await;
                        });
                    }
                });
                Some(crate::memory::spawn_writer(
                    memory.clone(),
                    history,
                    memory_rx,
                    warn,
                ))
            }
            None => None,
        };
        let memory_unavailable = if config.memory.enabled {
            self.memory_unavailable.clone()
        } else {
            None
        };
        let budget = ContextBudget::new(config.budget.context_tokens).map_err(|e| {
            OrchestratorError::Invalid {
                debate: id.to_string(),
                reason: format!("budget.context_tokens: {e}"),
            }
        })?;
        let ctx = Arc::new(RunCtx {
            config,
            models: models.clone(),
            assembler: Assembler::new(CachedCounter::new(TiktokenCounter::default())),
            budget,
            memory,
            memory_unavailable,
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let applier = tokio::spawn(apply_jobs(Arc::clone(&shared), Arc::clone(&ctx), rx));
        let run = Run {
            shared: Arc::clone(&shared),
            ctx,
            jobs: tx,
            queued: StdMutex::new(HashSet::new()),
            control: control.clone(),
            store: Arc::clone(&self.store),
            lease: Mutex::new((lease, Instant::now())),
            usage_baseline: models.ledger().snapshot(),
        };
        let result = run.protocol().await;
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(e) => {
                applier.abort();
                run.close_memory(writer, false).await;
                run.record_usage().await.ok();
                self.store.set_status(id, RunStatus::Failed).await.ok();
                run.release().await;
                return Err(e);
            }
        };
        if outcome == RunOutcome::Stopped {
            let finish = !control.abort.is_cancelled();
            if finish {
                run.barrier().await.ok();
            }
            applier.abort();
            run.close_memory(writer, finish).await;
            run.record_usage().await?;
            self.store.set_status(id, RunStatus::Interrupted).await?;
        } else {
            run.close_memory(writer, true).await;
            self.store.set_status(id, RunStatus::Finished).await?;
        }
        run.release().await;
        Ok(outcome)
    }
}

/// Everything a run shares between the protocol and the applier.
struct Shared {
    debate: DebateId,
    log: Mutex<DebateLog>,
    updates: broadcast::Sender<DebateUpdate>,
    applied: watch::Sender<u64>,
    failure: StdMutex<Option<String>>,
    /// Persisted events go to the memory writer, in order.
    memory_tx: StdMutex<Option<mpsc::UnboundedSender<MemoryMsg>>>,
}

impl Shared {
    async fn append(&self, events: Vec<DebateEvent>) -> Result<u64, OrchestratorError> {
        if events.is_empty() {
            return Ok(self.log.lock().await.seq());
        }
        let mut log = self.log.lock().await;
        let before = log.seq();
        let seq = log.append(&events).await?;
        // Published under the log lock, so subscribers see sequence order.
        self.publish(before, events);
        drop(log);
        self.applied.send_replace(seq);
        Ok(seq)
    }

    /// Sends persisted events (the first has sequence `before + 1`) to the
    /// memory writer and the subscribers. Call it under the log lock.
    fn publish(&self, before: u64, events: Vec<DebateEvent>) {
        if let Ok(tx) = self.memory_tx.lock()
            && let Some(tx) = tx.as_ref()
        {
            for event in &events {
                let _ = tx.send(MemoryMsg::Event(event.clone()));
            }
        }
        for (i, event) in events.into_iter().enumerate() {
            let _ = self.updates.send(DebateUpdate::Event {
                debate: self.debate.clone(),
                seq: before + 1 + i as u64,
                event,
            });
        }
    }

    async fn read<R>(&self, f: impl FnOnce(&Blackboard) -> R) -> R {
        let log = self.log.lock().await;
        f(log.blackboard())
    }

    fn failed(&self, reason: String) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert(reason);
        }
        self.applied.send_modify(|_| {});
    }

    fn check(&self) -> Result<(), OrchestratorError> {
        match self.failure.lock().ok().and_then(|f| f.clone()) {
            Some(reason) => Err(OrchestratorError::Invalid {
                debate: self.debate.to_string(),
                reason: format!("background step failed: {reason}"),
            }),
            None => Ok(()),
        }
    }
}

struct RunCtx {
    config: DebateConfig,
    models: Models,
    assembler: Assembler<CachedCounter<TiktokenCounter>>,
    budget: ContextBudget,
    memory: Option<Memory>,
    memory_unavailable: Option<String>,
}

impl RunCtx {
    fn temperature(&self, role: Role) -> f32 {
        let t = &self.config.temperature;
        match role {
            Role::Debater => t.debater,
            Role::Extractor => t.extractor,
            Role::Detector => t.detector,
            Role::Reflector => t.reflector,
            Role::Crux => t.crux,
            Role::Judge => t.judge,
        }
    }

    fn structured_call(
        &self,
        role: Role,
        prompt: Prompt,
        name: &'static str,
        schema: serde_json::Value,
    ) -> impl Future<Output = Result<serde_json::Value, String>> + Send + 'static {
        let model = self.models.get(role, None);
        let request = ChatRequest::new(prompt.user)
            .with_system(prompt.system)
            .with_temperature(self.temperature(role))
            .with_max_tokens(self.config.budget.structured_max_tokens);
        async move {
            model
                .complete_json(request, &JsonSchema::new(name, schema))
                .await
                .map(|r| r.value)
                .map_err(|e| e.to_string())
        }
    }
}

/// The model output of one message's analysis.
struct AnalysisOutput {
    /// `TurnAnalysis` (combined), or `PositionUpdate`.
    primary: Result<serde_json::Value, String>,
    /// `DisagreementWindow` from a separate detector.
    window: Option<Result<serde_json::Value, String>>,
    combined: bool,
}

enum Job {
    Analysis {
        message: MessageId,
        call: JoinHandle<AnalysisOutput>,
    },
    RoundRecord {
        aspect: AspectId,
        round: u32,
        call: JoinHandle<Result<serde_json::Value, String>>,
    },
    Reflection {
        aspect: AspectId,
        round: u32,
    },
    Barrier(oneshot::Sender<()>),
}

fn step_failed(
    step: &str,
    reason: String,
    message: Option<MessageId>,
    scope: Option<String>,
) -> DebateEvent {
    DebateEvent::StepFailed {
        step: step.to_owned(),
        reason,
        message,
        scope,
        time: chrono::Utc::now(),
    }
}

fn joined<T>(r: Result<Result<T, String>, tokio::task::JoinError>) -> Result<T, String> {
    r.unwrap_or_else(|e| Err(format!("task failed: {e}")))
}

/// Display names of the debaters (the values persona fields may take).
fn debater_names(bb: &Blackboard) -> Vec<String> {
    bb.debaters().map(|p| p.name.clone()).collect()
}

/// The events of one message's analysis, then the claims it opens.
fn analysis_batch(
    bb: &Blackboard,
    message: &MessageId,
    out: AnalysisOutput,
    ctx: &RunCtx,
) -> Vec<DebateEvent> {
    let Some(m) = bb.message(message) else {
        return Vec::new();
    };
    let ectx = ExtractionContext::new(bb).with_speaker(&m.persona);
    let mut events = Vec::new();
    let (position, judgments) = if out.combined {
        match out
            .primary
            .and_then(|v| parse_payload::<TurnAnalysis>(v).map_err(|e| e.to_string()))
            .and_then(|a| a.validate(&ectx).map_err(|e| e.to_string()))
        {
            Ok((p, j)) => (Some(p), Some(j)),
            Err(reason) => {
                events.push(step_failed(
                    "turn_analysis",
                    reason,
                    Some(m.id.clone()),
                    None,
                ));
                (None, None)
            }
        }
    } else {
        let position = match out
            .primary
            .and_then(|v| parse_payload::<PositionUpdate>(v).map_err(|e| e.to_string()))
            .and_then(|p| p.validate(&ectx).map_err(|e| e.to_string()))
        {
            Ok(p) => Some(p),
            Err(reason) => {
                events.push(step_failed(
                    "position_extraction",
                    reason,
                    Some(m.id.clone()),
                    None,
                ));
                None
            }
        };
        let judgments = match out.window.map(|w| {
            w.and_then(|v| parse_payload::<DisagreementWindow>(v).map_err(|e| e.to_string()))
        }) {
            Some(Ok(w)) => Some(w.validate(&ectx)),
            Some(Err(reason)) => {
                events.push(step_failed(
                    "disagreement_detection",
                    reason,
                    Some(m.id.clone()),
                    None,
                ));
                None
            }
            None => None,
        };
        (position, judgments)
    };
    events.extend(analysis_events(
        &m.id,
        &m.persona,
        m.aspect.as_ref(),
        m.round,
        position,
        judgments,
    ));
    if ctx.config.detection.mode != DetectionMode::Off {
        let mut scratch = bb.clone();
        if events.iter().all(|e| scratch.apply(e).is_ok()) {
            events.extend(ctx.config.detection.detector().open_events(&scratch));
        }
    }
    events
}

/// The applier: takes jobs in order, waits for each one's model call, and
/// appends its events. Optional steps that fail become `step_failed` events;
/// a store failure stops the applier and is reported to the protocol.
async fn apply_jobs(shared: Arc<Shared>, ctx: Arc<RunCtx>, mut rx: mpsc::UnboundedReceiver<Job>) {
    while let Some(job) = rx.recv().await {
        let result = match job {
            Job::Barrier(done) => {
                let _ = done.send(());
                Ok(())
            }
            Job::Analysis { message, call } => {
                let out = match call.await {
                    Ok(out) => out,
                    Err(e) => AnalysisOutput {
                        primary: Err(format!("task failed: {e}")),
                        window: None,
                        combined: false,
                    },
                };
                let events = shared
                    .read(|bb| {
                        if bb.is_analyzed(&message) {
                            Vec::new()
                        } else {
                            analysis_batch(bb, &message, out, &ctx)
                        }
                    })
                    .await;
                shared.append(events).await.map(|_| ())
            }
            Job::RoundRecord {
                aspect,
                round,
                call,
            } => {
                let value = joined(call.await);
                let events = shared
                    .read(|bb| {
                        let ectx = ExtractionContext::new(bb);
                        match value
                            .and_then(|v| {
                                parse_payload::<RoundRecordPayload>(v).map_err(|e| e.to_string())
                            })
                            .and_then(|p| p.validate(&ectx).map_err(|e| e.to_string()))
                        {
                            Ok(valid) => valid.into_events(&aspect, round),
                            Err(reason) => vec![step_failed(
                                "round_record",
                                reason,
                                None,
                                Some(aspect.to_string()),
                            )],
                        }
                    })
                    .await;
                shared.append(events).await.map(|_| ())
            }
            Job::Reflection { aspect, round } => reflect(&shared, &ctx, &aspect, round).await,
        };
        if let Err(e) = result {
            shared.failed(e.to_string());
            return;
        }
    }
}

/// The reflection decision after an aspect, and the reflection if due.
async fn reflect(
    shared: &Shared,
    ctx: &RunCtx,
    aspect: &AspectId,
    round: u32,
) -> Result<(), OrchestratorError> {
    let trigger = ReflectionTrigger::new(ctx.config.reflection_threshold);
    let Some((prompt, names)) = shared
        .read(|bb| {
            trigger
                .is_due(bb)
                .then(|| (prompts::reflection(bb), debater_names(bb)))
        })
        .await
    else {
        return Ok(());
    };
    let schema = with_persona_names(&ReflectionBatch::json_schema(), &names);
    let value = ctx
        .structured_call(Role::Reflector, prompt, ReflectionBatch::NAME, schema)
        .await;
    let events = shared
        .read(|bb| {
            let sources: Vec<MessageId> = bb
                .message_indices_for_aspect(aspect)
                .iter()
                .map(|&i| bb.messages()[i].id.clone())
                .collect();
            match value
                .and_then(|v| parse_payload::<ReflectionBatch>(v).map_err(|e| e.to_string()))
                .and_then(|b| {
                    b.validate(&ExtractionContext::new(bb))
                        .map_err(|e| e.to_string())
                }) {
                Ok(valid) => valid.into_events(round, &sources),
                Err(reason) => vec![step_failed(
                    "reflection",
                    reason,
                    None,
                    Some(aspect.to_string()),
                )],
            }
        })
        .await;
    shared.append(events).await.map(|_| ())
}

/// One utterance turn.
#[derive(Debug, Clone)]
struct Turn {
    persona: PersonaId,
    kind: MessageKind,
    phase: Option<Phase>,
    instruction: Utterance,
    aspect: Option<AspectId>,
    miniround: Option<u32>,
    room: Option<CruxRoomId>,
    key: String,
    role: Role,
}

impl Turn {
    /// A debater's turn in the main protocol (no aspect, miniround or room).
    fn debater(
        persona: &PersonaId,
        kind: MessageKind,
        phase: Phase,
        instruction: Utterance,
        key: String,
    ) -> Self {
        Self {
            persona: persona.clone(),
            kind,
            phase: Some(phase),
            instruction,
            aspect: None,
            miniround: None,
            room: None,
            key,
            role: Role::Debater,
        }
    }
}

enum Spoken {
    Message(MessageId),
    Skipped,
    Aborted,
}

struct Run {
    shared: Arc<Shared>,
    ctx: Arc<RunCtx>,
    jobs: mpsc::UnboundedSender<Job>,
    queued: StdMutex<HashSet<MessageId>>,
    control: RunControl,
    store: Arc<dyn EventStore>,
    lease: Mutex<(Lease, Instant)>,
    /// The ledger when the run began: a run records only its own usage.
    usage_baseline: std::collections::BTreeMap<String, agon_llm::ScopeUsage>,
}

fn clean_utterance(text: &str, name: &str) -> String {
    let mut t = text.trim();
    for prefix in [
        format!("{name}:"),
        format!("**{name}:**"),
        format!("{name} :"),
    ] {
        if let Some(rest) = t.strip_prefix(prefix.as_str()) {
            t = rest.trim_start();
        }
    }
    t.trim().to_owned()
}

impl Run {
    fn debate(&self) -> String {
        self.shared.debate.to_string()
    }

    fn send(&self, update: DebateUpdate) {
        let _ = self.shared.updates.send(update);
    }

    fn enqueue(&self, job: Job) -> Result<(), OrchestratorError> {
        self.jobs.send(job).map_err(|_| OrchestratorError::Invalid {
            debate: self.debate(),
            reason: "the background applier stopped".into(),
        })
    }

    /// Waits until everything queued so far has been applied.
    async fn barrier(&self) -> Result<(), OrchestratorError> {
        let (tx, rx) = oneshot::channel();
        self.enqueue(Job::Barrier(tx))?;
        let _ = rx.await;
        self.shared.check()
    }

    async fn wait_until(
        &self,
        cond: impl Fn(&Blackboard) -> bool,
    ) -> Result<(), OrchestratorError> {
        let mut rx = self.shared.applied.subscribe();
        loop {
            self.shared.check()?;
            if self.shared.read(&cond).await {
                return Ok(());
            }
            if rx.changed().await.is_err() {
                return self.shared.check();
            }
        }
    }

    async fn renew(&self) -> Result<(), OrchestratorError> {
        let mut lease = self.lease.lock().await;
        if lease.1.elapsed() > LEASE_TTL / 3 {
            let renewed = self.store.renew_lease(&lease.0, LEASE_TTL).await?;
            *lease = (renewed, Instant::now());
        }
        Ok(())
    }

    async fn release(&self) {
        let lease = self.lease.lock().await;
        self.store.release_lease(&lease.0).await.ok();
    }

    async fn record_usage(&self) -> Result<(), OrchestratorError> {
        let events: Vec<DebateEvent> = self
            .ctx
            .models
            .ledger()
            .snapshot()
            .into_iter()
            .map(|(scope, mut u)| {
                if let Some(before) = self.usage_baseline.get(&scope) {
                    u.calls -= before.calls.min(u.calls);
                    u.usage.input_tokens -= before.usage.input_tokens.min(u.usage.input_tokens);
                    u.usage.output_tokens -= before.usage.output_tokens.min(u.usage.output_tokens);
                    u.cost_usd = (u.cost_usd - before.cost_usd).max(0.0);
                    u.unpriced_calls -= before.unpriced_calls.min(u.unpriced_calls);
                }
                (scope, u)
            })
            .filter(|(_, u)| u.calls > 0)
            .map(|(scope, u)| {
                let (role, model) = scope.split_once('|').unwrap_or((scope.as_str(), ""));
                DebateEvent::UsageRecorded {
                    role: role.to_owned(),
                    model: model.to_owned(),
                    calls: u.calls,
                    input_tokens: u.usage.input_tokens,
                    output_tokens: u.usage.output_tokens,
                    cost_micro_usd: (u.unpriced_calls < u.calls)
                        .then(|| (u.cost_usd * 1e6).round() as u64),
                }
            })
            .collect();
        let finished = self
            .shared
            .read(|bb| bb.status() == agon_core::DebateStatus::Finished)
            .await;
        if finished {
            return Ok(());
        }
        self.shared.append(events).await.map(|_| ())
    }

    /// Queues the analysis of `message` unless it is done or queued.
    async fn analyse(&self, message: &MessageId) -> Result<(), OrchestratorError> {
        if let Ok(mut q) = self.queued.lock()
            && !q.insert(message.clone())
        {
            return Ok(());
        }
        let mode = self.ctx.config.detection.mode;
        let window = self.ctx.config.detection.window;
        let built = self
            .shared
            .read(|bb| {
                if bb.is_analyzed(message) {
                    return None;
                }
                let m = bb.message(message)?;
                if !bb.persona(&m.persona).is_some_and(Persona::is_debater) {
                    return None;
                }
                let judge = matches!(m.kind, MessageKind::Opening | MessageKind::Take);
                let combined = judge && mode == DetectionMode::Combined;
                let primary = prompts::analysis(bb, message, if combined { window } else { 0 })?;
                let detector = (judge && mode == DetectionMode::Separate)
                    .then(|| prompts::disagreement_window(bb, message, window))
                    .flatten();
                Some((primary, detector, combined, debater_names(bb)))
            })
            .await;
        let Some((primary, detector, combined, names)) = built else {
            return Ok(());
        };
        let (name, schema) = if combined {
            (TurnAnalysis::NAME, TurnAnalysis::json_schema())
        } else {
            (PositionUpdate::NAME, PositionUpdate::json_schema())
        };
        let schema = with_persona_names(&schema, &names);
        let primary_call = self
            .ctx
            .structured_call(Role::Extractor, primary, name, schema);
        let detector_call = detector.map(|p| {
            self.ctx.structured_call(
                Role::Detector,
                p,
                DisagreementWindow::NAME,
                with_persona_names(&DisagreementWindow::json_schema(), &names),
            )
        });
        let call = tokio::spawn(async move {
            let (primary, window) = match detector_call {
                Some(d) => {
                    let (p, w) = futures::join!(primary_call, d);
                    (p, Some(w))
                }
                None => (primary_call.await, None),
            };
            AnalysisOutput {
                primary,
                window,
                combined,
            }
        });
        self.enqueue(Job::Analysis {
            message: message.clone(),
            call,
        })
    }

    /// Queues, in transcript order, every message not yet analysed or queued
    /// (after a resume: messages whose analysis the interrupted run lost).
    async fn analyse_pending(&self) -> Result<(), OrchestratorError> {
        let pending: Vec<MessageId> = self
            .shared
            .read(|bb| {
                bb.messages()
                    .iter()
                    .filter(|m| !bb.is_analyzed(&m.id))
                    .map(|m| m.id.clone())
                    .collect()
            })
            .await;
        for message in pending {
            self.analyse(&message).await?;
        }
        Ok(())
    }

    /// Finds a main-protocol turn already taken: its message, or a recorded skip.
    async fn turn_done(&self, turn: &Turn) -> Option<Option<MessageId>> {
        self.shared
            .read(|bb| {
                if bb.step_failed(UTTERANCE_STEP, &turn.key) {
                    return Some(None);
                }
                bb.messages()
                    .iter()
                    .find(|m| {
                        m.persona == turn.persona
                            && m.kind == turn.kind
                            && m.aspect == turn.aspect
                            && m.miniround == turn.miniround
                            && m.crux_room == turn.room
                    })
                    .map(|m| Some(m.id.clone()))
            })
            .await
    }

    /// Takes a main-protocol turn unless the log shows it was taken.
    async fn turn(&self, turn: Turn) -> Result<bool, OrchestratorError> {
        if let Some(done) = self.turn_done(&turn).await {
            if let Some(message) = done {
                self.analyse(&message).await?;
            }
            return Ok(true);
        }
        if self.control.stop.is_cancelled() || self.control.abort.is_cancelled() {
            return Ok(false);
        }
        match self.speak(&turn).await? {
            Spoken::Aborted => Ok(false),
            Spoken::Message(_) | Spoken::Skipped => Ok(!self.control.stop.is_cancelled()),
        }
    }

    /// Memories for a turn's context (none for openings, the judge, or
    /// when memory is off); a failed recall is recorded and skipped.
    async fn memories_for(&self, turn: &Turn) -> Result<ContextExtras, OrchestratorError> {
        let (Some(memory), Some(phase)) = (&self.ctx.memory, &turn.phase) else {
            return Ok(ContextExtras::default());
        };
        if turn.role == Role::Judge {
            return Ok(ContextExtras::default());
        }
        let query = self
            .shared
            .read(|bb| crate::memory::query_for(bb, &turn.persona, phase))
            .await;
        let Some(query) = query else {
            return Ok(ContextExtras::default());
        };
        let debate = self.shared.debate.clone();
        match crate::memory::recall(
            memory,
            &debate,
            &turn.persona,
            &query,
            self.ctx.config.memory.cross_debate,
        )
        .await
        {
            Ok(memories) => Ok(ContextExtras { memories }),
            Err(e) => {
                self.shared
                    .append(vec![step_failed(
                        "memory_recall",
                        e.to_string(),
                        None,
                        Some(turn.key.clone()),
                    )])
                    .await?;
                Ok(ContextExtras::default())
            }
        }
    }

    /// Stores what the writer harvested, then (when `close`) ends it.
    async fn memory_flush(&self) {
        let tx = self.shared.memory_tx.lock().ok().and_then(|t| t.clone());
        if let Some(tx) = tx {
            let (done, wait) = oneshot::channel();
            if tx.send(MemoryMsg::Flush(done)).is_ok() {
                let _ = wait.await;
            }
        }
    }

    /// Ends the memory writer: after a last flush when `finish`, at once otherwise.
    async fn close_memory(&self, writer: Option<JoinHandle<()>>, finish: bool) {
        let Some(writer) = writer else { return };
        if finish {
            self.memory_flush().await;
        }
        if let Ok(mut tx) = self.shared.memory_tx.lock() {
            tx.take();
        }
        if finish {
            let _ = writer.await;
        } else {
            writer.abort();
        }
    }

    async fn prompt_for(&self, turn: &Turn) -> Result<Prompt, OrchestratorError> {
        let extras = self.memories_for(turn).await?;
        let ctx = &self.ctx;
        let words = ctx.config.budget.utterance_words;
        self.shared
            .read(|bb| {
                let persona =
                    bb.persona(&turn.persona)
                        .ok_or_else(|| OrchestratorError::Invalid {
                            debate: self.debate(),
                            reason: format!("unknown persona `{}`", turn.persona),
                        })?;
                let instruction = prompts::utterance_instruction(bb, persona, &turn.instruction);
                if turn.role == Role::Judge {
                    let brief = prompts::judge_brief(bb, ctx.budget.total() * 4);
                    return Ok(Prompt {
                        system: prompts::judge_system(bb, words.max(150)),
                        user: format!("{brief}\n\n{instruction}"),
                    });
                }
                let context = match &turn.phase {
                    Some(phase) => {
                        ctx.assembler
                            .assemble(bb, turn.persona.as_str(), phase, ctx.budget, &extras)
                            .map_err(|source| OrchestratorError::Context {
                                debate: self.debate(),
                                persona: turn.persona.to_string(),
                                source,
                            })?
                            .text
                    }
                    None => String::new(),
                };
                Ok(Prompt {
                    system: prompts::persona_system(bb, persona, words),
                    user: if context.is_empty() {
                        instruction
                    } else {
                        format!("{context}\n\n{instruction}")
                    },
                })
            })
            .await
    }

    /// Generates, streams and appends one utterance.
    async fn speak(&self, turn: &Turn) -> Result<Spoken, OrchestratorError> {
        self.renew().await?;
        // The speaker's own previous message must be analysed (module docs).
        let persona = turn.persona.clone();
        let previous = self
            .shared
            .read(|bb| {
                bb.messages()
                    .iter()
                    .rev()
                    .find(|m| m.persona == persona)
                    .map(|m| m.id.clone())
            })
            .await;
        if let Some(previous) = previous {
            self.analyse_pending().await?;
            self.wait_until(|bb| bb.is_analyzed(&previous)).await?;
        }
        let prompt = self.prompt_for(turn).await?;
        let name = self
            .shared
            .read(|bb| bb.persona_name(&turn.persona).to_owned())
            .await;
        let model = self.ctx.models.get(turn.role, Some(&turn.persona));
        let request = ChatRequest::new(prompt.user)
            .with_system(prompt.system)
            .with_temperature(self.ctx.temperature(turn.role))
            .with_max_tokens(self.ctx.config.budget.utterance_max_tokens);
        let mut text = String::new();
        for attempt in 0..2 {
            self.send(DebateUpdate::TurnStarted {
                persona: turn.persona.clone(),
                name: name.clone(),
                label: turn.key.clone(),
            });
            match self.generate(&model, request.clone(), &turn.persona).await {
                Ok(Some(t)) => text = clean_utterance(&t, &name),
                Ok(None) => {
                    self.send(DebateUpdate::TurnDiscarded {
                        persona: turn.persona.clone(),
                        reason: "interrupted".into(),
                    });
                    return Ok(Spoken::Aborted);
                }
                Err(source) => {
                    return Err(OrchestratorError::Provider {
                        debate: self.debate(),
                        what: format!("utterance of {name} ({})", turn.key),
                        source: Box::new(source),
                    });
                }
            }
            if !text.is_empty() {
                break;
            }
            self.send(DebateUpdate::TurnDiscarded {
                persona: turn.persona.clone(),
                reason: if attempt == 0 {
                    "empty utterance, retrying".into()
                } else {
                    "empty utterance twice, turn skipped".into()
                },
            });
        }
        self.send(DebateUpdate::Usage(self.ctx.models.ledger().total()));
        if text.is_empty() {
            self.shared
                .append(vec![step_failed(
                    UTTERANCE_STEP,
                    format!("{name} produced an empty utterance twice; turn skipped"),
                    None,
                    Some(turn.key.clone()),
                )])
                .await?;
            return Ok(Spoken::Skipped);
        }
        let message = {
            let mut log = self.shared.log.lock().await;
            let bb = log.blackboard();
            let id = MessageId::new(format!("msg-{}", bb.messages().len() + 1));
            let message = DialogueMessage {
                id: id.clone(),
                persona: turn.persona.clone(),
                kind: turn.kind.clone(),
                aspect: turn.aspect.clone(),
                round: bb.current_round(),
                miniround: turn.miniround,
                crux_room: turn.room.clone(),
                content: text,
                time: chrono::Utc::now(),
                reply_to: None,
            };
            let before = log.seq();
            let event = DebateEvent::MessageAppended { message };
            let seq = log.append(std::slice::from_ref(&event)).await?;
            self.shared.publish(before, vec![event]);
            drop(log);
            self.shared.applied.send_replace(seq);
            id
        };
        self.analyse(&message).await?;
        Ok(Spoken::Message(message))
    }

    /// Streams one generation; `None` when aborted.
    async fn generate(
        &self,
        model: &Arc<dyn ChatModel>,
        request: ChatRequest,
        persona: &PersonaId,
    ) -> Result<Option<String>, agon_llm::ProviderError> {
        let abort = self.control.abort.clone();
        let mut stream = tokio::select! {
            s = model.stream(request) => s?,
            () = abort.cancelled() => return Ok(None),
        };
        let mut text = String::new();
        loop {
            tokio::select! {
                chunk = stream.next() => match chunk {
                    Some(chunk) => {
                        let chunk = chunk?;
                        if !chunk.delta.is_empty() {
                            text.push_str(&chunk.delta);
                            self.send(DebateUpdate::Token { persona: persona.clone(), delta: chunk.delta });
                        }
                    }
                    None => return Ok(Some(text)),
                },
                () = abort.cancelled() => return Ok(None),
            }
        }
    }

    async fn progress(&self, aspect: usize, miniround: u32, phase: &str) {
        let aspects = self.shared.read(|bb| bb.aspects().len()).await;
        self.send(DebateUpdate::Progress {
            aspect,
            aspects,
            miniround,
            phase: phase.to_owned(),
        });
    }

    async fn start(&self) -> Result<(), OrchestratorError> {
        if self.shared.read(|bb| bb.topic().is_some()).await {
            return Ok(());
        }
        let config = &self.ctx.config;
        let aspects: Vec<DebateAspect> = if config.aspects.is_empty() {
            self.progress(0, 0, "planning aspects").await;
            let value = self
                .ctx
                .structured_call(
                    Role::Judge,
                    prompts::aspect_plan(&config.topic, config.aspect_count),
                    AspectPlan::NAME,
                    AspectPlan::json_schema(),
                )
                .await;
            let plan = value
                .and_then(|v| parse_payload::<AspectPlan>(v).map_err(|e| e.to_string()))
                .and_then(|p| p.validate(config.aspect_count).map_err(|e| e.to_string()))
                .map_err(|reason| OrchestratorError::Invalid {
                    debate: self.debate(),
                    reason: format!("the judge model could not split the topic into aspects ({reason}); list them under [[aspects]] in the config"),
                })?;
            plan.value()
                .aspects
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    DebateAspect::new(
                        format!("aspect-{}", i + 1),
                        a.label.clone(),
                        a.description.clone(),
                    )
                })
                .collect()
        } else {
            config
                .aspects
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    DebateAspect::new(
                        format!("aspect-{}", i + 1),
                        a.label.trim(),
                        a.description.trim(),
                    )
                })
                .collect()
        };
        let mut personas: Vec<Persona> = config
            .personas
            .iter()
            .map(|p| {
                Persona::debater(
                    p.resolved_id(),
                    p.name.trim(),
                    p.contract.trim(),
                    p.voice.trim(),
                )
            })
            .collect();
        if config.synthesis {
            personas.push(Persona {
                id: PersonaId::new(JUDGE_ID),
                name: "Judge".into(),
                contract: "Impartial judge who writes the final synthesis.".into(),
                voice: "measured".into(),
                role: PersonaRole::Judge,
            });
        }
        self.shared
            .append(vec![DebateEvent::DebateStarted {
                debate: self.shared.debate.clone(),
                topic: Topic {
                    question: config.topic.trim().to_owned(),
                    context: config.context.clone(),
                },
                aspects,
                personas,
                time: chrono::Utc::now(),
            }])
            .await
            .map(|_| ())
    }

    async fn debaters(&self) -> Vec<PersonaId> {
        self.shared
            .read(|bb| bb.debaters().map(|p| p.id.clone()).collect())
            .await
    }

    /// The protocol, skipping whatever the log shows as done.
    async fn protocol(&self) -> Result<RunOutcome, OrchestratorError> {
        self.start().await?;
        if let Some(reason) = &self.ctx.memory_unavailable
            && !self
                .shared
                .read(|bb| bb.step_failed("memory", "setup"))
                .await
        {
            self.shared
                .append(vec![step_failed(
                    "memory",
                    format!("running without memory: {reason}"),
                    None,
                    Some("setup".into()),
                )])
                .await?;
        }
        let debaters = self.debaters().await;
        let aspects: Vec<AspectId> = self
            .shared
            .read(|bb| bb.aspects().iter().map(|a| a.id.clone()).collect())
            .await;
        self.progress(0, 0, "openings").await;
        for p in &debaters {
            let turn = Turn::debater(
                p,
                MessageKind::Opening,
                Phase::Opening,
                Utterance::Opening,
                format!("opening/{p}"),
            );
            if !self.turn(turn).await? {
                return Ok(RunOutcome::Stopped);
            }
        }
        for (k, aspect) in aspects.iter().enumerate() {
            let round = k as u32 + 1;
            if self.shared.read(|bb| bb.current_round() < round).await {
                if self.control.stop.is_cancelled() || self.control.abort.is_cancelled() {
                    return Ok(RunOutcome::Stopped);
                }
                self.shared
                    .append(vec![DebateEvent::AspectStarted {
                        aspect: aspect.clone(),
                        round,
                    }])
                    .await?;
            }
            for mr in 0..self.ctx.config.minirounds {
                self.progress(k + 1, mr, "takes").await;
                for p in &debaters {
                    let turn = Turn {
                        aspect: Some(aspect.clone()),
                        miniround: Some(mr),
                        ..Turn::debater(
                            p,
                            MessageKind::Take,
                            Phase::Take {
                                aspect: aspect.clone(),
                                miniround: mr,
                            },
                            Utterance::Take {
                                aspect: aspect.clone(),
                                miniround: mr,
                            },
                            format!("take/{aspect}/{mr}/{p}"),
                        )
                    };
                    if !self.turn(turn).await? {
                        return Ok(RunOutcome::Stopped);
                    }
                }
            }
            self.after_aspect(aspect, round).await?;
        }
        self.progress(aspects.len(), 0, "waiting for analyses")
            .await;
        self.barrier().await?;
        if self.ctx.config.crux.enabled && !self.crux_rooms().await? {
            return Ok(RunOutcome::Stopped);
        }
        self.barrier().await?;
        self.progress(aspects.len(), 0, "closings").await;
        for p in &debaters {
            let turn = Turn::debater(
                p,
                MessageKind::Closing,
                Phase::Closing,
                Utterance::Closing,
                format!("closing/{p}"),
            );
            if !self.turn(turn).await? {
                return Ok(RunOutcome::Stopped);
            }
        }
        self.barrier().await?;
        if self.ctx.config.synthesis {
            self.progress(aspects.len(), 0, "synthesis").await;
            let turn = Turn {
                persona: PersonaId::new(JUDGE_ID),
                kind: MessageKind::Synthesis,
                phase: None,
                instruction: Utterance::Synthesis,
                aspect: None,
                miniround: None,
                room: None,
                key: "synthesis".into(),
                role: Role::Judge,
            };
            if !self.turn(turn).await? {
                return Ok(RunOutcome::Stopped);
            }
        }
        self.barrier().await?;
        self.memory_flush().await;
        self.record_usage().await?;
        self.shared
            .append(vec![DebateEvent::DebateFinished {
                time: chrono::Utc::now(),
            }])
            .await?;
        Ok(RunOutcome::Finished)
    }

    /// Queues the round record and the reflection decision of an aspect
    /// unless the log shows them done.
    async fn after_aspect(&self, aspect: &AspectId, round: u32) -> Result<(), OrchestratorError> {
        let (record_needed, reflection_needed, prompt, names) = self
            .shared
            .read(|bb| {
                let recorded = bb.rounds().iter().any(|r| &r.aspect == aspect)
                    || bb.step_failed("round_record", aspect.as_str());
                let last = bb
                    .message_indices_for_aspect(aspect)
                    .iter()
                    .copied()
                    .filter(|&i| bb.messages()[i].crux_room.is_none())
                    .max()
                    .unwrap_or(0);
                let later_applied = bb
                    .analyzed_turns()
                    .iter()
                    .filter_map(|t| bb.message_index(&t.message))
                    .any(|i| i > last);
                let reflected = bb.reflections().iter().any(|r| r.round == round)
                    || bb.step_failed("reflection", aspect.as_str());
                let reflection_needed = !recorded || (!reflected && !later_applied);
                (
                    !recorded,
                    reflection_needed,
                    prompts::round_record(bb, aspect),
                    debater_names(bb),
                )
            })
            .await;
        if record_needed && let Some(prompt) = prompt {
            let call = tokio::spawn(self.ctx.structured_call(
                Role::Reflector,
                prompt,
                RoundRecordPayload::NAME,
                with_persona_names(&RoundRecordPayload::json_schema(), &names),
            ));
            self.enqueue(Job::RoundRecord {
                aspect: aspect.clone(),
                round,
                call,
            })?;
        }
        if reflection_needed {
            self.enqueue(Job::Reflection {
                aspect: aspect.clone(),
                round,
            })?;
        }
        Ok(())
    }

    /// Picks the next claim for a room; promotes the strongest judged
    /// disagreement when fewer than `min_rooms` claims got rooms.
    async fn next_claim(&self) -> Result<Option<ClaimId>, OrchestratorError> {
        let crux = self.ctx.config.crux;
        let (claim, promote) = self
            .shared
            .read(|bb| {
                if let Some(c) = bb
                    .claims()
                    .iter()
                    .find(|c| c.status == ClaimStatus::InCruxRoom)
                {
                    return (Some(c.id.clone()), None);
                }
                let rooms = bb.claims().iter().filter(|c| c.crux_room.is_some()).count() as u32;
                if rooms >= crux.max_rooms {
                    return (None, None);
                }
                if let Some(c) = bb.claims().iter().find(|c| c.status == ClaimStatus::Active) {
                    return (Some(c.id.clone()), None);
                }
                if rooms >= crux.min_rooms {
                    return (None, None);
                }
                (None, agon_core::promote_strongest(bb))
            })
            .await;
        if claim.is_some() {
            return Ok(claim);
        }
        let Some(event) = promote else {
            return Ok(None);
        };
        let id = match &event {
            DebateEvent::ClaimOpened { claim, .. } => claim.clone(),
            _ => return Ok(None),
        };
        self.shared.append(vec![event]).await?;
        Ok(Some(id))
    }

    async fn crux_rooms(&self) -> Result<bool, OrchestratorError> {
        let room = RoomConfig {
            max_turns: self.ctx.config.crux.max_turns,
            check_every: self.ctx.config.crux.check_every,
        };
        while let Some(claim) = self.next_claim().await? {
            if self.control.stop.is_cancelled() || self.control.abort.is_cancelled() {
                return Ok(false);
            }
            self.progress(0, 0, &format!("crux room on {claim}")).await;
            let host = Host { run: self };
            match agon_crux::run_room(&host, &claim, room).await {
                Ok(_) => {}
                Err(agon_crux::CruxError::Host { source, .. })
                    if source.downcast_ref::<Stop>().is_some() =>
                {
                    return Ok(false);
                }
                Err(agon_crux::CruxError::Host { source, claim }) => {
                    return Err(match source.downcast::<OrchestratorError>() {
                        Ok(e) => *e,
                        Err(other) => OrchestratorError::Invalid {
                            debate: self.debate(),
                            reason: format!("crux room for {claim}: {other}"),
                        },
                    });
                }
                Err(e) => return Err(e.into()),
            }
            self.barrier().await?;
        }
        Ok(true)
    }
}

/// A stop requested while a room was running.
#[derive(Debug, thiserror::Error)]
#[error("stopped on request")]
struct Stop;

struct Host<'a> {
    run: &'a Run,
}

#[async_trait]
impl RoomHost for Host<'_> {
    async fn board(&self) -> Blackboard {
        self.run.shared.read(Blackboard::clone).await
    }

    async fn append(&self, events: Vec<DebateEvent>) -> Result<(), HostError> {
        self.run
            .shared
            .append(events)
            .await
            .map(|_| ())
            .map_err(|e| Box::new(e) as HostError)
    }

    async fn speak(&self, turn: RoomTurn) -> Result<Option<MessageId>, HostError> {
        let run = self.run;
        if run.control.stop.is_cancelled() || run.control.abort.is_cancelled() {
            return Err(Box::new(Stop));
        }
        let t = Turn {
            persona: turn.persona,
            kind: turn.kind,
            phase: Some(turn.phase),
            instruction: turn.instruction,
            aspect: None,
            miniround: None,
            room: Some(turn.room),
            key: turn.key,
            role: Role::Debater,
        };
        match run.speak(&t).await.map_err(|e| Box::new(e) as HostError)? {
            Spoken::Message(id) => Ok(Some(id)),
            Spoken::Skipped => Ok(None),
            Spoken::Aborted => Err(Box::new(Stop)),
        }
    }

    async fn structured(
        &self,
        prompt: Prompt,
        name: &'static str,
        schema: serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        self.run
            .ctx
            .structured_call(Role::Crux, prompt, name, schema)
            .await
    }
}
