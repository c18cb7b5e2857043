//! The one [`Runtime`] of the `agon` binary: models built from a
//! configuration's specs, the store's vector memory as the configuration
//! asks, and every run in its debate's trace. `agon debate`, `agon
//! serve` and `agon worker` all run debates with it.

use std::collections::HashMap;
use std::sync::Arc;

use agon_app::Runtime;
use agon_config::DebateConfig;
use agon_core::DebateId;
use agon_llm::ModelFactory;
use agon_memory::{Memory, RetrievalConfig};
use agon_orchestrator::{Models, Orchestrator};
use async_trait::async_trait;

/// Models from the configuration's specs, memory from the store's URL.
pub(crate) struct CliRuntime {
    url: String,
    /// One factory for the process's life: a model (the local one above
    /// all) is built once, not once per run or per step; a worker's HTTP
    /// models wait for the shared rate limits.
    factory: Arc<ModelFactory>,
    /// The memory of each embedder and retrieval setting, opened once (a
    /// local embedder loads once per process).
    memories: tokio::sync::Mutex<HashMap<String, Result<Memory, String>>>,
}

impl CliRuntime {
    /// The runtime of the store at `url`, building models with `factory`.
    pub(crate) fn new(url: &str, factory: ModelFactory) -> Self {
        Self {
            url: url.to_owned(),
            factory: Arc::new(factory),
            memories: tokio::sync::Mutex::default(),
        }
    }

    /// The memory of `spec` with `retrieval`, opened once.
    async fn open_memory(&self, spec: &str, retrieval: RetrievalConfig) -> Result<Memory, String> {
        let key = format!("{spec}|{retrieval:?}");
        let mut memories = self.memories.lock().await;
        if let Some(memory) = memories.get(&key) {
            return memory.clone();
        }
        let opened = crate::memory::open_detached(&self.url, spec, retrieval).await;
        memories.insert(key, opened.clone());
        opened
    }
}

#[async_trait]
impl Runtime for CliRuntime {
    fn run_span(&self, id: &DebateId) -> tracing::Span {
        let span = tracing::info_span!("agon run", debate = %id);
        crate::telemetry::join_debate_trace(&span, id.as_str());
        span
    }

    async fn models(&self, config: &DebateConfig) -> Result<Models, String> {
        let config = config.clone();
        let factory = Arc::clone(&self.factory);
        tokio::task::spawn_blocking(move || {
            agon_app::models_from_config(
                &config,
                &factory,
                &|k| std::env::var(k).ok(),
                config.price_table(),
            )
        })
        .await
        .map_err(|e| format!("loading models: {e}"))?
        .map_err(|e| e.to_string())
    }

    async fn equip(&self, orch: Orchestrator, config: &DebateConfig) -> Orchestrator {
        if !config.memory.enabled {
            return orch;
        }
        match self
            .open_memory(&config.memory.embedder, config.memory.retrieval)
            .await
        {
            Ok(memory) => {
                for warning in crate::memory::index_config(&memory, config).await {
                    eprintln!("warning: {warning}");
                }
                orch.with_memory(memory)
            }
            Err(reason) => {
                eprintln!("warning: running without memory: {reason}");
                orch.with_memory_unavailable(reason)
            }
        }
    }

    async fn memory_index(&self) -> Option<Arc<dyn agon_memory::MemoryIndex>> {
        // Opening runs the index's migrator, a future the compiler cannot
        // prove `Send`: on a blocking thread of its own.
        let url = self.url.clone();
        let handle = tokio::runtime::Handle::current();
        let opened = tokio::task::spawn_blocking(move || handle.block_on(agon_memory::open(&url)))
            .await
            .map_err(|e| e.to_string())
            .and_then(|opened| opened.map_err(|e| e.to_string()));
        match opened {
            Ok(index) => Some(index),
            Err(e) => {
                eprintln!("warning: the vector memory cannot be opened ({e}); its memories stay");
                None
            }
        }
    }

    async fn memory(&self, embedder: &str) -> Result<Memory, String> {
        self.open_memory(embedder, RetrievalConfig::default()).await
    }
}

/// The model factory: HTTP providers, and the in-process models when the
/// binary is built with them (feature `local`, default).
pub(crate) fn model_factory() -> ModelFactory {
    #[cfg(feature = "local")]
    return agon_local::factory();
    #[cfg(not(feature = "local"))]
    return ModelFactory::new();
}
