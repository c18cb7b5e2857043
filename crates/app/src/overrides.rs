//! A person overrides a debate's final output (seed 003): recorded in the
//! trust memory of the agents it concerns, with an optional change to the
//! debate's rubric that the overridden agent with the highest trust
//! proposes.

use std::sync::Arc;

use crate::rubric::{RubricStore, RubricStoreError};
use crate::trust::{TrustStore, TrustStoreError};
use agon_core::DebateId;
use agon_trust::rubric::{Criterion, RubricChange, RubricError, rubric_of};
use serde::Serialize;

use crate::{App, AppError};

/// The rubric change an override asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RubricAsk {
    /// Add this criterion (`"NAME: description"`), or reword the rubric's
    /// criterion of that name.
    Criterion(String),
    /// Remove the criterion of this name.
    Drop(String),
}

/// What an override recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overridden {
    /// The agents whose trust memory took it.
    pub agents: Vec<String>,
    /// The rubric change proposed, if one was asked and made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<RubricProposal>,
    /// Why the change asked for was not proposed (the proposer's trust is
    /// too low); the override stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_proposed: Option<String>,
}

/// A rubric change proposed on an override.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RubricProposal {
    /// The rubric.
    pub rubric: String,
    /// The proposal's number (`agon rubric accept N`).
    pub id: u32,
    /// The agent on whose behalf it is proposed.
    pub by: String,
}

fn trust_error(id: &DebateId, e: TrustStoreError) -> AppError {
    match e {
        TrustStoreError::Store(e) => e.into(),
        e @ TrustStoreError::UnknownAgent { .. } => AppError::NotFound {
            debate: format!("{id}: {e}"),
        },
        e @ TrustStoreError::NoFinalOutput { .. } => AppError::conflict(id, e.to_string()),
        e => AppError::invalid(id, e.to_string()),
    }
}

fn rubric_error(id: &DebateId, e: RubricStoreError) -> AppError {
    match e {
        RubricStoreError::Store(e) => e.into(),
        RubricStoreError::Trust(e) => trust_error(id, e),
        e => AppError::invalid(id, e.to_string()),
    }
}

impl App {
    /// Records that a person replaced `id`'s final output with `decision`,
    /// in the trust memory of `agent` (or of every debater); a later
    /// override of the same debate reverts the earlier ones. With `ask`,
    /// proposes that change to the debate's rubric (checked before
    /// anything is written; proposed only when the overridden agent with
    /// the highest trust holds at least 0.70).
    pub async fn override_output(
        &self,
        id: &DebateId,
        decision: &str,
        agent: Option<&str>,
        ask: Option<RubricAsk>,
    ) -> Result<Overridden, AppError> {
        let (board, _) = self.store().load(id).await?;
        let rubrics = RubricStore::new(Arc::clone(self.store()));
        let change = match ask {
            None => None,
            Some(ask) => {
                let name = rubric_of(board.protocol()).ok_or_else(|| {
                    AppError::invalid(
                        id,
                        format!(
                            "a {} is judged by no rubric; a rubric change is for dialectic and structured debates",
                            board.protocol()
                        ),
                    )
                })?;
                let current = rubrics
                    .current(name)
                    .await
                    .map_err(|e| rubric_error(id, e))?;
                let change = match ask {
                    RubricAsk::Drop(name) => RubricChange::removal(&current, &name)
                        .map_err(|e| AppError::invalid(id, format!("--drop-criterion: {e}")))?,
                    RubricAsk::Criterion(text) => {
                        let criterion = Criterion::parse(&text)
                            .map_err(|e| AppError::invalid(id, format!("--criterion: {e}")))?;
                        RubricChange::for_criterion(&current, criterion)
                            .map_err(|e| AppError::invalid(id, format!("--criterion: {e}")))?
                    }
                };
                Some(change)
            }
        };
        let now = chrono::Utc::now();
        let trust = TrustStore::new(Arc::clone(self.store()));
        let agents = trust
            .record_override(id, &board, decision, agent, now)
            .await
            .map_err(|e| trust_error(id, e))?;
        let mut done = Overridden {
            agents,
            proposal: None,
            not_proposed: None,
        };
        if let Some(change) = change {
            match rubrics
                .propose_from_override(&trust, id, &board, &done.agents, change, now)
                .await
            {
                Ok((rubric, proposal, by)) => {
                    done.proposal = Some(RubricProposal {
                        rubric,
                        id: proposal,
                        by,
                    });
                }
                // The override stands; only the proposal is not made.
                Err(RubricStoreError::Rubric(e @ RubricError::LowTrust { .. })) => {
                    done.not_proposed = Some(e.to_string());
                }
                Err(e) => return Err(rubric_error(id, e)),
            }
        }
        Ok(done)
    }
}
