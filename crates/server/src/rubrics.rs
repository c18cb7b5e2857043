//! The living rubric over HTTP (`agon rubric`): a rubric's book, and a
//! person accepting or rejecting a change an override proposed.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::api;
use crate::error::ApiError;
use crate::state::Server;

/// The routes of this module.
pub(crate) fn routes(server: Arc<Server>) -> Router {
    Router::new()
        .route("/api/rubrics/{name}", get(book))
        .route("/api/rubrics/{name}/proposals/{id}/accept", post(accept))
        .route("/api/rubrics/{name}/proposals/{id}/reject", post(reject))
        .with_state(server)
}

/// A rubric's versions and proposals (`agon rubric history --json`).
async fn book(
    State(server): State<Arc<Server>>,
    Path(name): Path<String>,
) -> Result<Json<api::Document>, ApiError> {
    let book = server.app.rubric_book(&name).await?;
    serde_json::to_value(book)
        .map(|b| Json(api::Document(b)))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Accepts a proposal (`agon rubric accept`): the rubric's new version.
async fn accept(
    State(server): State<Arc<Server>>,
    Path((name, id)): Path<(String, u32)>,
) -> Result<Json<api::RubricVersion>, ApiError> {
    let version = server.app.rubric_accept(&name, id).await?;
    Ok(Json(api::RubricVersion {
        rubric: version.name.clone(),
        version: version.version,
        criteria: version.criteria.iter().map(|c| c.name.clone()).collect(),
    }))
}

/// Why a proposal is rejected (an optional body).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rejection {
    /// The reason, kept with the proposal.
    #[serde(default)]
    reason: String,
}

/// Rejects a proposal (`agon rubric reject`).
async fn reject(
    State(server): State<Arc<Server>>,
    Path((name, id)): Path<(String, u32)>,
    body: Bytes,
) -> Result<Json<api::Rejected>, ApiError> {
    let body: Rejection = if body.iter().all(u8::is_ascii_whitespace) {
        Rejection::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(format!("body: {e}")))?
    };
    server.app.rubric_reject(&name, id, &body.reason).await?;
    Ok(Json(api::Rejected {
        rubric: name,
        proposal: id,
    }))
}
