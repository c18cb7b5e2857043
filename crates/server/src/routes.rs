//! The JSON API's routes.

use std::sync::Arc;

use agon_core::DebateId;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::state::Server;

/// The API's routes over `server` (without the auth layer).
pub(crate) fn api(server: Arc<Server>) -> Router {
    Router::new()
        .route("/api/health", get(health))
        .route("/api/debates", get(list).post(start))
        .route("/api/debates/{id}", get(view))
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
        .merge(crate::pages::routes(server))
        .fallback(|| async { ApiError::not_found("no such route") })
}

async fn health(State(server): State<Arc<Server>>) -> Json<Value> {
    Json(json!({ "ok": true, "store": server.store.backend() }))
}

/// Every stored debate, newest first, with whether this server runs it.
async fn list(State(server): State<Arc<Server>>) -> Result<Json<Value>, ApiError> {
    let debates = server.store.list_debates().await?;
    let rows: Vec<Value> = debates
        .iter()
        .map(|d| {
            json!({
                "id": d.id,
                "topic": d.topic,
                "protocol": crate::state::protocol_of(d),
                "status": d.status.as_str(),
                "running_here": server.is_running(&d.id),
                "messages": d.message_count,
                "last_seq": d.last_seq,
                "created_at": d.created_at,
                "updated_at": d.updated_at,
            })
        })
        .collect();
    Ok(Json(json!({ "debates": rows })))
}

async fn start(
    State(server): State<Arc<Server>>,
    body: Result<Json<crate::settings::NewDebate>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let config = body.config()?;
    let id = server.app.start(&config).await?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, format!("/api/debates/{id}"))],
        Json(json!({ "id": id })),
    )
        .into_response())
}

/// The debate as the report's JSON (the blackboard, the transcript, the
/// metrics), with its run status.
async fn view(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = DebateId::new(id);
    let (view, last_seq) = server.view_at(&id).await?;
    let record = server.store.debate(&id).await?;
    Ok(Json(json!({
        "id": id,
        "status": record.status.as_str(),
        "running_here": server.is_running(&id),
        "last_seq": last_seq,
        "view": view.json(),
    })))
}

/// Which form of the report (`?format=`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ReportFormat {
    /// Markdown (`agon report`), the default.
    #[default]
    Markdown,
    /// JSON (`agon report --json`).
    Json,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportQuery {
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
    let view = server.view(&DebateId::new(id)).await?;
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
) -> Result<Json<Value>, ApiError> {
    let view = server.view(&DebateId::new(id)).await?;
    serde_json::to_value(view.metrics())
        .map(Json)
        .map_err(|e| ApiError::internal(e.to_string()))
}

#[derive(Debug, Deserialize)]
struct After {
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
        Json(json!({ "id": id, "stopping": true, "runs": posted.runs })),
    )
        .into_response())
}

/// The clarifying questions the debate waits on, wherever it runs (none
/// when it waits on nothing).
async fn questions(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = DebateId::new(id);
    let questions = server.app.questions(&id).await?;
    Ok(Json(crate::answers::questions_json(&questions)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answers {
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
        Json(json!({ "id": id, "answered": true })),
    )
        .into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Feedback {
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
        Json(json!({ "id": id, "user_feedback": value })),
    )
        .into_response())
}
