//! Use cases over the whole store: queue a debate for the workers, recall
//! a persona's memories, give deleted debates' space back.

use agon_config::DebateConfig;
use agon_core::{DebateId, PersonaId};
use agon_memory::{MemoryFilter, Recall};

use crate::{App, AppError};

impl App {
    /// Creates a debate with `config` (validated first) and queues its
    /// first step for the workers. Needs the app's job queue (a PostgreSQL
    /// store: `App::with_queue`).
    pub async fn submit(&self, config: &DebateConfig) -> Result<DebateId, AppError> {
        let Some(queue) = &self.inner.queue else {
            return Err(AppError::Unavailable(
                "no job queue here: debates are queued on a PostgreSQL store where `agon worker` runs"
                    .into(),
            ));
        };
        let id = self.orchestrator().create(config).await?;
        queue
            .submit(&id)
            .await
            .map_err(|e| AppError::Unavailable(format!("debate `{id}`: queuing it: {e}")))?;
        Ok(id)
    }

    /// Recalls `k` memories for `query` with the embedder `embedder` wrote
    /// them with: `persona`'s (a name or an id; everyone's without one), of
    /// `debate` only when given, each with its score components.
    pub async fn recall(
        &self,
        query: &str,
        persona: Option<&str>,
        debate: Option<&str>,
        k: usize,
        embedder: &str,
    ) -> Result<Recall, AppError> {
        let memory = self
            .runtime()
            .memory(embedder)
            .await
            .map_err(AppError::Unavailable)?;
        let filter = MemoryFilter {
            // Names and ids alike: a persona's id is the slug of its name.
            persona: persona.map(|p| PersonaId::new(agon_protocol::persona_slug(p))),
            debate: debate.map(DebateId::new),
            ..MemoryFilter::default()
        };
        Ok(memory.recall(query, &filter, k).await?)
    }

    /// Gives the space of deleted debates and replaced snapshots back to
    /// the file system; the store's size before and after, in bytes.
    pub async fn compact(&self) -> Result<(u64, u64), AppError> {
        Ok(self.store().compact().await?)
    }
}
