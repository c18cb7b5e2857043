//! A downstream project's use of agon-memory alone (default features off):
//! it keeps what its own agents said in the embedded SQLite index and
//! recalls it by meaning, with an embedder of its own; no debate, no
//! orchestrator, no PostgreSQL, no local model.

use std::sync::Arc;

// Built on its own (CI checks this crate without the rest of the workspace,
// feature `alone`), agon-memory must come without PostgreSQL: a layer above
// that pulled its `postgres` feature in fails this check at compile time.
#[cfg(feature = "alone")]
const _: () = assert!(
    !agon_memory::WITH_POSTGRES,
    "agon-memory was built with its `postgres` feature: something above it turned it on"
);

use agon_core::{DebateId, PersonaId};
use agon_memory::{Memory, MemoryError, MemoryKind, MemoryMeta, RetrievalConfig};

/// The project's embedder: each word hashed into one of 64 buckets.
pub struct HashedWords;

#[async_trait::async_trait]
impl agon_llm::Embedder for HashedWords {
    async fn embed(
        &self,
        texts: &[String],
        _: agon_llm::InputType,
    ) -> Result<Vec<Vec<f32>>, agon_llm::ProviderError> {
        Ok(texts.iter().map(|t| bucketed(t)).collect())
    }

    fn dimensions(&self) -> usize {
        64
    }

    fn max_batch(&self) -> usize {
        32
    }

    fn model_id(&self) -> &str {
        "hashed-words-64"
    }
}

fn bucketed(text: &str) -> Vec<f32> {
    let mut v = vec![0.0_f32; 64];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 3)
    {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(7_u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        v[(h % 64) as usize] += 1.0;
    }
    v[0] += 0.01;
    v
}

/// The memory of the embedded store at `url` (`sqlite:…`).
pub async fn open(url: &str) -> Result<Memory, MemoryError> {
    let index = agon_memory::open(url).await?;
    Memory::open(index, Arc::new(HashedWords), RetrievalConfig::default()).await
}

/// One line an agent of the project said, in its session `session`.
pub fn line(session: &str, n: u32, agent: &str, text: &str) -> MemoryMeta {
    MemoryMeta {
        id: format!("{session}/{n}"),
        debate: DebateId::new(session),
        persona: PersonaId::new(agent),
        content: text.into(),
        kind: MemoryKind::Message,
        importance: 5,
        round: n,
        created: chrono::Utc::now(),
        subject: None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_memory::{MemoryError, MemoryFilter};

    #[tokio::test]
    async fn remembers_and_recalls_in_sqlite_and_has_no_postgres() {
        let memory = super::open("sqlite::memory:").await.unwrap();
        memory
            .remember(vec![
                super::line(
                    "s-1",
                    1,
                    "planner",
                    "The bridge closes for repairs in March.",
                ),
                super::line(
                    "s-1",
                    2,
                    "critic",
                    "Ferry tickets doubled in price last winter.",
                ),
            ])
            .await
            .unwrap();
        let recall = memory
            .recall("When does the bridge close?", &MemoryFilter::default(), 1)
            .await
            .unwrap();
        assert_eq!(recall.memories[0].memory.id, "s-1/1");
        // Built on its own, without the `postgres` feature: a PostgreSQL
        // URL is refused, naming the feature (in the workspace's build the
        // feature is on, and the URL is tried).
        if cfg!(feature = "alone") {
            let refused = super::open("postgres://127.0.0.1:1/x").await.err().unwrap();
            assert!(matches!(refused, MemoryError::NotBuilt { .. }), "{refused}");
            assert!(
                refused.to_string().contains("feature `postgres`"),
                "{refused}"
            );
        }
    }
}
