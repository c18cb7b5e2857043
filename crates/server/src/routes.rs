//! The JSON API's routes.

use std::sync::Arc;

use agon_core::DebateId;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::api;
use crate::error::ApiError;
use crate::state::Server;

/// The API's routes over `server` (without the auth layer).
pub(crate) fn api(server: Arc<Server>) -> Router {
    Router::new()
        .route("/api/health", get(health))
        .route("/api/debates", get(list).post(start))
        .route("/api/debates/{id}", get(view).delete(delete))
        .route("/api/debates/{id}/export", get(export))
        .route("/api/debates/{id}/report", get(report))
        .route("/api/debates/{id}/metrics", get(metrics))
        .route("/api/debates/{id}/events", get(events))
        .route("/api/debates/{id}/stop", post(stop))
        .route("/api/debates/{id}/questions", get(questions))
        .route("/api/debates/{id}/answers", post(answers))
        .route("/api/debates/{id}/feedback", post(feedback))
        .with_state(Arc::clone(&server))
        .merge(crate::agents::routes(Arc::clone(&server)))
        .merge(crate::steer::routes(Arc::clone(&server)))
        .merge(crate::recall::routes(Arc::clone(&server)))
        .merge(crate::rubrics::routes(Arc::clone(&server)))
        .merge(crate::pages::routes(server))
        .fallback(|| async { ApiError::not_found("no such route") })
}

async fn health(State(server): State<Arc<Server>>) -> Json<api::Health> {
    Json(api::Health {
        ok: true,
        store: server.store.backend().to_owned(),
    })
}

/// Every stored debate, newest first, with whether this server runs it.
async fn list(State(server): State<Arc<Server>>) -> Result<Json<api::DebateList>, ApiError> {
    let debates = server.store.list_debates().await?;
    let debates = debates
        .iter()
        .map(|d| api::DebateRow {
            id: d.id.to_string(),
            topic: d.topic.clone(),
            protocol: crate::state::protocol_of(d).to_owned(),
            status: d.status.as_str().to_owned(),
            running_here: server.is_running(&d.id),
            messages: d.message_count,
            last_seq: d.last_seq,
            forked_from: d.forked_from.as_ref().map(|f| api::ForkPoint {
                debate: f.debate.to_string(),
                seq: f.seq,
            }),
            created_at: d.created_at.to_rfc3339(),
            updated_at: d.updated_at.to_rfc3339(),
        })
        .collect();
    Ok(Json(api::DebateList { debates }))
}

async fn start(
    State(server): State<Arc<Server>>,
    body: Result<Json<crate::settings::NewDebate>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let config = body.config()?;
    let id = if body.detach {
        server.app.submit(&config).await?
    } else {
        server.app.start(&config).await?
    };
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/api/debates/{id}"))],
        Json(api::Started { id: id.to_string() }),
    )
        .into_response())
}

/// The debate as the report's JSON (the blackboard, the transcript, the
/// metrics), with its run status.
async fn view(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Json<api::DebateDetail>, ApiError> {
    let id = DebateId::new(id);
    let (view, last_seq) = server.view_at(&id).await?;
    let view = server.app.with_remembered(view, &id).await;
    let record = server.store.debate(&id).await?;
    Ok(Json(api::DebateDetail {
        id: id.to_string(),
        status: record.status.as_str().to_owned(),
        running_here: server.is_running(&id),
        last_seq,
        view: view.json(),
    }))
}

/// Deletes a debate with its vector memories (`agon delete`), under its
/// run lease: one another live process runs is refused (`409`).
async fn delete(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Json<api::DeletedDebate>, ApiError> {
    let id = DebateId::new(id);
    let memory = server.app.runtime().memory_index().await;
    let done = server.app.delete(&id, memory.as_ref(), false).await?;
    Ok(Json(api::DeletedDebate {
        id: id.to_string(),
        events: done.events,
        memories: done.memories,
    }))
}

/// The event log (`agon export`): every stored event with its sequence.
async fn export(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Json<api::Document>, ApiError> {
    let id = DebateId::new(id);
    server.store.debate(&id).await?;
    let events = server.store.events_after(&id, 0).await?;
    serde_json::to_value(events)
        .map(|e| Json(api::Document(e)))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Which form of the report (`?format=`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReportFormat {
    /// Markdown (`agon report`), the default.
    #[default]
    Markdown,
    /// JSON (`agon report --json`).
    Json,
}

/// `GET /api/debates/{id}/report`'s query.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReportQuery {
    /// `markdown` (default) or `json`.
    #[serde(default)]
    format: ReportFormat,
}

/// The report: Markdown, or with `?format=json` its JSON form.
async fn report(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    query: Result<Query<ReportQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let id = DebateId::new(id);
    let view = server.view(&id).await?;
    let view = server.app.with_remembered(view, &id).await;
    Ok(match query.format {
        ReportFormat::Markdown => (
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            view.markdown(),
        )
            .into_response(),
        ReportFormat::Json => Json(view.json()).into_response(),
    })
}

/// The debate-quality metrics.
async fn metrics(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Json<api::Document>, ApiError> {
    let view = server.view(&DebateId::new(id)).await?;
    serde_json::to_value(view.metrics())
        .map(|m| Json(api::Document(m)))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// `GET /api/debates/{id}/events`' query.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct After {
    /// Events after this sequence (what `Last-Event-ID` says, for clients
    /// that cannot set it).
    after: Option<u64>,
}

async fn events(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    Query(query): Query<After>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    server.store.debate(&id).await?;
    let last = match headers.get("last-event-id") {
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError::bad_request("Last-Event-ID: not an event sequence number")
                })?,
        ),
        None => None,
    };
    let after = last.or(query.after).unwrap_or(0);
    let stream = crate::events::stream(Arc::clone(&server), id, after);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

async fn stop(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    let posted = server.app.stop(&id, None).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(api::Stopping {
            id: id.to_string(),
            stopping: true,
            runs: api::Runs::from(&posted.runs),
        }),
    )
        .into_response())
}

/// The clarifying questions the debate waits on, wherever it runs (none
/// when it waits on nothing).
async fn questions(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Json<api::Questions>, ApiError> {
    let id = DebateId::new(id);
    let questions = server.app.questions(&id).await?;
    Ok(Json(api::Questions::of(&questions)))
}

/// `POST /api/debates/{id}/answers`' body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answers {
    /// One answer per question, in order ("" for NA).
    answers: Vec<String>,
}

async fn answers(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Result<Json<Answers>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    server.store.debate(&id).await?;
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    server.app.answer(&id, body.answers).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(api::Answered {
            id: id.to_string(),
            answered: true,
        }),
    )
        .into_response())
}

/// `POST /api/debates/{id}/feedback`' body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Feedback {
    /// `"up"` or `"down"`.
    rating: String,
}

/// A person's rating of the outcome (`agon feedback`), recorded in the
/// debate's log under its run lease.
async fn feedback(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    body: Result<Json<Feedback>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let value = match body.rating.as_str() {
        "up" => 1,
        "down" => -1,
        other => {
            return Err(ApiError::bad_request(format!(
                "rating: `{other}` is not up or down"
            )));
        }
    };
    server.app.feedback(&id, value).await?;
    Ok((
        StatusCode::CREATED,
        Json(api::Rated {
            id: id.to_string(),
            user_feedback: value,
        }),
    )
        .into_response())
}
