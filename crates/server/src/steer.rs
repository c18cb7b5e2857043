//! Steering a running debate over HTTP: moderator notes, pause and resume.
//! Each request is queued for the run, which records it as an event before
//! its next step (so a resumed or replayed debate sees exactly what the
//! agents saw).

use std::sync::Arc;

use agon_core::DebateId;
use agon_protocol::Steer;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use crate::error::ApiError;
use crate::state::Server;

/// The routes of this module.
pub(crate) fn routes(server: Arc<Server>) -> Router {
    Router::new()
        .route("/api/debates/{id}/notes", post(note))
        .route("/api/debates/{id}/pause", post(pause))
        .route("/api/debates/{id}/resume", post(resume))
        .with_state(server)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Note {
    /// What every agent's next context shows.
    text: String,
    /// Who posts it.
    author: Option<String>,
}

async fn note(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Result<Json<Note>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    server.store.debate(&id).await?;
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    server.steer(
        &id,
        Steer::Note {
            text: body.text,
            author: body.author,
        },
    )?;
    Ok(accepted(&id, "note"))
}

/// Who pauses or resumes (an optional body).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct By {
    by: Option<String>,
}

fn by(body: &Bytes) -> Result<Option<String>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice::<By>(body)
        .map(|b| b.by)
        .map_err(|e| ApiError::bad_request(format!("body: {e}")))
}

async fn pause(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    server.store.debate(&id).await?;
    server.steer(&id, Steer::Pause { by: by(&body)? })?;
    Ok(accepted(&id, "pause"))
}

/// Resumes a paused run, or runs an interrupted debate again (and lifts
/// the pause it was stopped in, if any).
async fn resume(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    let who = by(&body)?;
    let record = server.store.debate(&id).await?;
    if record.status.is_done() {
        return Err(ApiError::conflict(format!("debate `{id}` is finished")));
    }
    let restarted = if server.is_running(&id) {
        false
    } else {
        let config = server.orchestrator().config_of(&id).await?;
        server.spawn_run(id.clone(), config).await?;
        true
    };
    server.steer(&id, Steer::Resume { by: who })?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "id": id, "resumed": true, "restarted": restarted })),
    )
        .into_response())
}

fn accepted(id: &DebateId, what: &str) -> Response {
    (
        StatusCode::ACCEPTED,
        Json(json!({ "id": id, "queued": what })),
    )
        .into_response()
}
