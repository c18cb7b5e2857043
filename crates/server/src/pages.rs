//! The web pages, rendered from the same view as the reports
//! (`agon_view::html`), with a content security policy that allows no
//! inline script: even a text that escaped the escaping could not run.

use std::sync::Arc;

use agon_core::DebateId;
use agon_view::html;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::error::ApiError;
use crate::state::Server;

const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                      connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";

fn html(body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// The pages' routes.
pub(crate) fn routes(server: Arc<Server>) -> Router {
    Router::new()
        .route("/", get(list))
        .route("/debates/{id}", get(debate))
        .route("/debates/{id}/panels", get(panels))
        .route("/static/debate.js", get(|| async { script(html::SCRIPT) }))
        .route(
            "/static/list.js",
            get(|| async { script(html::LIST_SCRIPT) }),
        )
        .with_state(server)
}

/// The list page: the debates `query` picks out (newest first), one page
/// of them; only the shown rows read their recorded cost.
async fn list(
    State(server): State<Arc<Server>>,
    Query(query): Query<html::ListQuery>,
) -> Result<Response, ApiError> {
    let matching: Vec<_> = server
        .store
        .list_debates()
        .await?
        .into_iter()
        .filter(|d| query.matches(crate::state::protocol_of(d), d.status.as_str()))
        .collect();
    let shown = &matching[query.range(matching.len())];
    let mut rows = Vec::with_capacity(shown.len());
    for d in shown {
        // The cost the debate's runs recorded (each run records its usage
        // when it stops).
        let usage = server.store.load(&d.id).await?.0.usage_total();
        rows.push(html::ListRow {
            protocol: crate::state::protocol_of(d).to_owned(),
            id: d.id.to_string(),
            topic: d.topic.clone(),
            status: d.status.as_str().to_owned(),
            messages: d.message_count,
            cost_usd: (!usage.unpriced || usage.cost_micro_usd > 0)
                .then(|| usage.cost_micro_usd as f64 / 1e6),
            created: d.created_at,
        });
    }
    Ok(html(html::list_page(
        &rows,
        &query,
        matching.len(),
        chrono::Utc::now(),
    )))
}

async fn debate(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = DebateId::new(id);
    let record = server.store.debate(&id).await?;
    // The page's stream picks up after the last event the page shows.
    let (view, last_seq) = server.view_at(&id).await?;
    // Wherever it runs: a paused debate that a worker left waits for its
    // resume, as one this server holds does.
    let status = if !record.status.is_done() && view.board().is_paused() {
        "paused"
    } else if server.is_running(&id) {
        "running"
    } else {
        record.status.as_str()
    };
    Ok(html(html::debate_page(
        &view,
        id.as_str(),
        status,
        last_seq,
    )))
}

async fn panels(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = server.view(&DebateId::new(id)).await?;
    Ok(html(html::panels(&view)))
}

fn script(text: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        text,
    )
        .into_response()
}
