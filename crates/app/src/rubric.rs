//! The living rubric in the store (seed 003): each rubric's
//! [`RubricBook`] (versions and proposals) is one document of the store,
//! changed only through the store's transactional update. A human override
//! of a debate whose agent holds high trust may propose a change
//! ([`RubricStore::propose_from_override`]); a person accepts or rejects
//! it (`agon rubric accept|reject`). Debates read the current version when
//! they start; `agon eval` scores by it.

use std::sync::{Arc, Mutex};

use agon_core::{Blackboard, DebateId};
use agon_store::{EventStore, StoreError};
use agon_trust::rubric::{Rubric, RubricBook, RubricChange, RubricError};
use chrono::{DateTime, Utc};

use crate::trust::{TrustStore, TrustStoreError};

/// Why a rubric operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RubricStoreError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The operation breaks a rubric rule (unknown criterion, low trust…).
    #[error(transparent)]
    Rubric(#[from] RubricError),
    /// The trust memory could not be read.
    #[error(transparent)]
    Trust(#[from] TrustStoreError),
    /// The stored book does not decode.
    #[error("rubric `{name}` in the store: {source}")]
    Malformed {
        /// Which rubric.
        name: String,
        /// What did not fit.
        #[source]
        source: serde_json::Error,
    },
    /// The debate's protocol has no rubric.
    #[error("debate `{debate}` is a {protocol}, which is judged by no rubric")]
    NoRubric {
        /// The debate.
        debate: String,
        /// Its protocol.
        protocol: String,
    },
}

pub use agon_core::rubric::rubric_of;

/// The rubrics in a store.
#[derive(Clone)]
pub struct RubricStore {
    store: Arc<dyn EventStore>,
}

fn decode(name: &str, doc: &serde_json::Value) -> Result<RubricBook, RubricStoreError> {
    serde_json::from_value(doc.clone()).map_err(|source| RubricStoreError::Malformed {
        name: name.to_owned(),
        source,
    })
}

impl RubricStore {
    /// The rubrics of `store`.
    pub fn new(store: Arc<dyn EventStore>) -> Self {
        Self { store }
    }

    /// The book of `name`: as stored, or its built-in version 1 when it
    /// was never changed.
    pub async fn book(&self, name: &str) -> Result<RubricBook, RubricStoreError> {
        match self.store.rubric_record(name).await? {
            Some(record) => decode(name, &record.doc),
            None => Ok(RubricBook::new(name, Utc::now())?),
        }
    }

    /// The current version of `name`.
    pub async fn current(&self, name: &str) -> Result<Rubric, RubricStoreError> {
        Ok(self.book(name).await?.current())
    }

    /// Changes the book of `name` in one transaction. `change` is tried on
    /// the book as read first: when it refuses, nothing is written; when a
    /// concurrent writer got there in between, it runs again on the new
    /// book, and a refusal then leaves that book as it is.
    pub async fn update<T: Send + 'static>(
        &self,
        name: &str,
        now: DateTime<Utc>,
        change: &(dyn Fn(&mut RubricBook) -> Result<T, RubricError> + Send + Sync),
    ) -> Result<T, RubricStoreError> {
        let mut probe = self.book(name).await?;
        change(&mut probe)?;
        let outcome: Mutex<Option<Result<T, RubricStoreError>>> = Mutex::new(None);
        self.store
            .update_rubric_record(name, &|doc| {
                let book = match doc {
                    Some(d) => decode(name, d),
                    None => RubricBook::new(name, now).map_err(RubricStoreError::from),
                };
                let (result, written) = match book {
                    Err(e) => (Err(e), doc.cloned()),
                    Ok(mut book) => match change(&mut book) {
                        Ok(v) => (Ok(v), serde_json::to_value(&book).ok()),
                        Err(e) => (Err(e.into()), doc.cloned()),
                    },
                };
                if let Ok(mut slot) = outcome.lock() {
                    *slot = Some(result);
                }
                written.unwrap_or(serde_json::Value::Null)
            })
            .await?;
        outcome.into_inner().ok().flatten().unwrap_or_else(|| {
            Err(RubricError::Invalid("the rubric was not updated".into()).into())
        })
    }

    /// Proposes `change` to the rubric of the debate `bb`, on behalf of its
    /// overridden agents (`agents`, as [`TrustStore::record_override`]
    /// returns them): the one holding the highest trust proposes, and must
    /// hold [`agon_trust::rubric::HIGH_TRUST`]. Returns the rubric's name,
    /// the proposal's id and who proposed it.
    pub async fn propose_from_override(
        &self,
        trust: &TrustStore,
        debate: &DebateId,
        bb: &Blackboard,
        agents: &[String],
        change: RubricChange,
        now: DateTime<Utc>,
    ) -> Result<(String, u32, String), RubricStoreError> {
        let name = rubric_of(bb.protocol()).ok_or_else(|| RubricStoreError::NoRubric {
            debate: debate.to_string(),
            protocol: bb.protocol().to_string(),
        })?;
        let mut best: Option<(String, f64)> = None;
        for agent in agents {
            let score = trust
                .get(agent)
                .await?
                .map_or(agon_trust::INITIAL_TRUST, |m| m.trust_score);
            if best.as_ref().is_none_or(|(_, s)| score > *s) {
                best = Some((agent.clone(), score));
            }
        }
        let (agent, score) = best.unwrap_or_default();
        let id = self
            .update(name, now, &|book| {
                book.propose(debate.as_str(), &agent, score, change.clone(), now)
            })
            .await?;
        Ok((name.to_owned(), id, agent))
    }
}
