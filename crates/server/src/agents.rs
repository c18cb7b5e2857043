//! The agents' trust memory (seed 003) over the API: read every agent's
//! memory or one, and record that a person overrode a debate's final
//! output; and the metrics of several debates side by side.

use std::sync::Arc;

use agon_app::trust::{TrustStore, TrustStoreError};
use agon_core::DebateId;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::api;
use crate::error::ApiError;
use crate::state::Server;

impl From<TrustStoreError> for ApiError {
    fn from(e: TrustStoreError) -> Self {
        match e {
            TrustStoreError::Store(s) => Self::from(s),
            e @ TrustStoreError::UnknownAgent { .. } => Self::not_found(e.to_string()),
            e @ (TrustStoreError::EmptyDecision { .. }
            | TrustStoreError::NotAParticipant { .. }) => Self::bad_request(e.to_string()),
            e @ TrustStoreError::NoFinalOutput { .. } => Self::conflict(e.to_string()),
            e => Self::internal(e.to_string()),
        }
    }
}

/// The routes of this module.
pub(crate) fn routes(server: Arc<Server>) -> Router {
    Router::new()
        .route("/api/agents", get(list))
        .route("/api/agents/{name}", get(one))
        .route("/api/debates/{id}/override", post(record_override))
        .route("/api/compare", get(compare))
        .with_state(server)
}

fn trust(server: &Server) -> TrustStore {
    TrustStore::new(Arc::clone(&server.store))
}

/// Every agent's memory, with its trust, probation and regret rate.
async fn list(State(server): State<Arc<Server>>) -> Result<Json<api::Agents>, ApiError> {
    let all = trust(&server).all().await?;
    let agents = all
        .iter()
        .map(|m| api::AgentRow {
            agent: m.agent_name.clone(),
            trust: m.trust_score,
            on_probation: m.on_probation(),
            regret_rate: m.regret_rate(),
            rounds: u64::from(m.rounds_participated),
            memory: serde_json::to_value(m).unwrap_or_default(),
        })
        .collect();
    Ok(Json(api::Agents { agents }))
}

/// One agent's memory (seed 003's layout, as `agon agents export`).
async fn one(
    State(server): State<Arc<Server>>,
    Path(name): Path<String>,
) -> Result<Json<api::Document>, ApiError> {
    let memory = trust(&server).require(&name).await?;
    serde_json::to_value(memory)
        .map(|m| Json(api::Document(m)))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// `POST /api/debates/{id}/override`' body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Override {
    /// What the person decided instead of the debate's final output.
    decision: String,
    /// The one agent it concerns (default: every debater).
    agent: Option<String>,
    /// Propose this criterion (`"NAME: description"`) for the debate's
    /// rubric (as `agon override --criterion`).
    criterion: Option<String>,
    /// Propose removing this criterion (as `agon override --drop-criterion`).
    drop_criterion: Option<String>,
}

/// Records that a person overrode the debate's final output (as `agon
/// override`); regret is inferred after 24 h by `agon trust check`.
async fn record_override(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Result<Json<Override>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let ask = match (body.criterion, body.drop_criterion) {
        (_, Some(name)) => Some(agon_app::RubricAsk::Drop(name)),
        (Some(text), None) => Some(agon_app::RubricAsk::Criterion(text)),
        (None, None) => None,
    };
    let done = server
        .app
        .override_output(&id, &body.decision, body.agent.as_deref(), ask)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(api::Overridden {
            id: id.to_string(),
            agents: done.agents,
            proposal: done.proposal.map(|p| api::RubricProposal {
                rubric: p.rubric,
                id: p.id,
                by: p.by,
            }),
            not_proposed: done.not_proposed,
        }),
    )
        .into_response())
}

/// `GET /api/compare`'s query.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Ids {
    /// Debate ids, comma-separated.
    ids: String,
}

/// The debate-quality metrics of several debates side by side (`agon
/// compare --json`).
async fn compare(
    State(server): State<Arc<Server>>,
    Query(query): Query<Ids>,
) -> Result<Json<api::Comparison>, ApiError> {
    let ids: Vec<&str> = query
        .ids
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if ids.is_empty() {
        return Err(ApiError::bad_request("ids: name at least one debate"));
    }
    let mut rows = Vec::with_capacity(ids.len());
    for id in &ids {
        let view = server.view(&DebateId::new(*id)).await?;
        rows.push(api::Compared {
            debate: (*id).to_owned(),
            metrics: serde_json::to_value(view.metrics()).unwrap_or_default(),
        });
    }
    let divergence = match ids.as_slice() {
        [a, b] => Some(
            server
                .app
                .divergence(&DebateId::new(*a), &DebateId::new(*b))
                .await?,
        ),
        _ => None,
    };
    Ok(Json(api::Comparison {
        debates: rows,
        divergence: divergence.and_then(|d| serde_json::to_value(d).ok()),
    }))
}
