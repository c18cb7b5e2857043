//! Steering a debate over HTTP, wherever it runs: moderator notes, pause
//! and resume. Each request is recorded in the store; the process that
//! holds the run's lease (this server, a terminal's `agon debate`, a
//! worker) records it as an event before its next step, so a resumed or
//! replayed debate sees exactly what the agents saw.

use std::sync::Arc;

use agon_core::DebateId;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::api;
use crate::error::ApiError;
use crate::state::Server;

/// The routes of this module.
pub(crate) fn routes(server: Arc<Server>) -> Router {
    Router::new()
        .route("/api/debates/{id}/notes", post(note))
        .route("/api/debates/{id}/pause", post(pause))
        .route("/api/debates/{id}/resume", post(resume))
        .route("/api/debates/{id}/fork", post(fork))
        .with_state(server)
}

/// `POST /api/debates/{id}/notes`' body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Note {
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
    let posted = server.app.note(&id, body.text, body.author).await?;
    Ok(accepted(&posted, "note"))
}

/// Who pauses or resumes (an optional body).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct By {
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
    let posted = server.app.pause(&id, by(&body)?).await?;
    Ok(accepted(&posted, "pause"))
}

/// Resumes a paused run, or runs an interrupted debate again (and lifts
/// the pause it was stopped in, if any): here, or queued for the workers
/// when they ran it.
async fn resume(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    let who = by(&body)?;
    let resumed = server.app.resume(&id, who, true).await?;
    let how = match resumed {
        agon_app::Resumed::Running => "running",
        agon_app::Resumed::Queued => "queued",
        agon_app::Resumed::Started => "started",
        agon_app::Resumed::Idle => "idle",
    };
    Ok((
        StatusCode::ACCEPTED,
        Json(api::Resumed {
            id: id.to_string(),
            resumed: true,
            restarted: resumed == agon_app::Resumed::Started,
            how: how.to_owned(),
        }),
    )
        .into_response())
}

fn accepted(posted: &agon_app::Posted, what: &str) -> Response {
    (
        StatusCode::ACCEPTED,
        Json(api::Queued {
            id: posted.debate.to_string(),
            queued: what.to_owned(),
            request: posted.request,
            runs: api::Runs::from(&posted.runs),
        }),
    )
        .into_response()
}

/// What a fork changes (every field optional; an empty body forks before
/// the last step with the parent's settings).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Fork {
    /// The last event to copy (default: before the last step).
    at: Option<u64>,
    /// One model spec for every role of the fork.
    model: Option<String>,
    /// Dialectic: rounds.
    rounds: Option<u32>,
    /// Structured debate: minirounds per aspect.
    minirounds: Option<u32>,
    /// Run the fork here at once (default: it waits for a resume, so a
    /// note can be posted first).
    #[serde(default)]
    run: bool,
}

/// Forks a debate at any event (`agon fork`): 201 with the new debate.
async fn fork(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    let body: Fork = if body.iter().all(u8::is_ascii_whitespace) {
        Fork::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(format!("body: {e}")))?
    };
    let mut overrides = agon_config::Overrides {
        model: body.model,
        ..agon_config::Overrides::default()
    };
    overrides.dialectic.rounds = body.rounds;
    overrides.structured.minirounds = body.minirounds;
    let forked = server.app.fork(&id, body.at, &overrides).await?;
    if body.run {
        server.app.spawn(&forked.id).await?;
    }
    Ok((
        StatusCode::CREATED,
        [(
            axum::http::header::LOCATION,
            format!("/api/debates/{}", forked.id),
        )],
        Json(api::Forked {
            id: forked.id.to_string(),
            forked_from: api::ForkPoint {
                debate: forked.from.to_string(),
                seq: forked.seq,
            },
            running: body.run,
        }),
    )
        .into_response())
}
