//! Recall over the API: a persona's memories across debates, with their
//! score components (`agon recall --json`).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::error::ApiError;
use crate::state::Server;

/// The embedder recall uses unless the request names one (the default of
/// a debate's `[memory] embedder`).
const DEFAULT_EMBEDDER: &str = "local";

/// The routes of this module.
pub(crate) fn routes(server: Arc<Server>) -> Router {
    Router::new()
        .route("/api/recall", get(recall))
        .with_state(server)
}

/// `GET /api/recall`'s query.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecallQuery {
    /// What to recall.
    q: String,
    /// Whose memories (a persona's name or id; default: everyone's).
    persona: Option<String>,
    /// Only memories of this debate.
    debate: Option<String>,
    /// How many (default 8; at most 1,000).
    k: Option<usize>,
    /// The embedder the memories were written with.
    embedder: Option<String>,
}

async fn recall(
    State(server): State<Arc<Server>>,
    query: Result<Query<RecallQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<crate::api::Document>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let embedder = query.embedder.as_deref().unwrap_or(DEFAULT_EMBEDDER);
    let result = server
        .app
        .recall(
            &query.q,
            query.persona.as_deref(),
            query.debate.as_deref(),
            query.k.unwrap_or(8),
            embedder,
        )
        .await?;
    serde_json::to_value(result)
        .map(|r| Json(crate::api::Document(r)))
        .map_err(|e| ApiError::internal(e.to_string()))
}
