//! # agon-server
//!
//! Agon's HTTP surface, usable from a Rust program (the CLI's `agon serve`
//! is a thin wrapper):
//!
//! - a JSON API to list, read, start, stop and resume debates of every
//!   protocol, with the same configurations as the CLI, and their reports
//!   and metrics (docs/api.md);
//! - a live Server-Sent Events stream per debate: every event with its
//!   sequence number as the SSE id, the history first, `Last-Event-ID`
//!   resuming a broken connection with nothing lost or repeated, and the
//!   tokens of the turn being generated;
//! - steering any debate, wherever it runs (this server, a terminal, a
//!   worker): clarifying questions answered over HTTP, moderator notes
//!   every agent's next context shows, pause and resume, stop; each one a
//!   request recorded in the store (`agon_app`) that the run takes before
//!   its next step, and an event of the debate's log;
//! - Agon over the Model Context Protocol at `/mcp` (streamable HTTP),
//!   when asked ([`Server::with_mcp`]; `agon serve --mcp`): the tools of
//!   `agon mcp`, behind the same token;
//! - the web pages (a debate list with a form to start one, and a page per
//!   debate that follows it live), rendered from `agon_view`.
//!
//! Many debates run and stream at once. On a loopback address no token is
//! needed; on any other one the server requires one (`auth`).

mod agents;
mod api;
mod auth;
mod error;
mod events;
mod live;
mod openapi;
mod pages;
mod recall;
mod routes;
mod rubrics;
mod settings;
mod state;
mod steer;

use std::net::SocketAddr;
use std::sync::Arc;

pub use auth::new_token;
pub use error::ApiError;
pub use state::Server;

/// The whole router: the API (and `/mcp`, when the server serves MCP)
/// behind the token and cross-site checks.
pub fn router(server: Arc<Server>) -> axum::Router {
    let mut routes = routes::api(Arc::clone(&server)).merge(openapi::routes());
    if let Some((loopback, shutdown)) = &server.mcp {
        routes = routes.route_service(
            "/mcp",
            agon_mcp::http_service(server.app.clone(), *loopback, shutdown.clone()),
        );
    }
    routes.layer(axum::middleware::from_fn_with_state(server, auth::guard))
}

/// Whether an address needs a token: anything but loopback.
pub fn needs_token(addr: &SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

/// Serves `server` on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, server: Arc<Server>) -> std::io::Result<()> {
    axum::serve(listener, router(server)).await
}

/// Serves `server` on `listener` until `shutdown` resolves, then shuts
/// down gracefully: it accepts no new request, asks the runs of this
/// process to stop at their next step boundary, waits for them (at most
/// `grace`; their leases are released as they end), then lets the
/// requests in flight end (live streams get a second to close). Returns
/// how many runs were still going at the end of the grace period.
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    server: Arc<Server>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    grace: std::time::Duration,
) -> std::io::Result<usize> {
    let app = server.app.clone();
    let mcp_sessions = server.mcp.as_ref().map(|(_, shutdown)| shutdown.clone());
    let (close, closed) = tokio::sync::oneshot::channel::<()>();
    let mut serving = tokio::spawn(
        axum::serve(listener, router(server))
            .with_graceful_shutdown(async move {
                let _ = closed.await;
            })
            .into_future(),
    );
    shutdown.await;
    tracing::info!("shutting down: stopping the runs of this process");
    let left = app.shutdown(grace).await;
    if let Some(sessions) = mcp_sessions {
        sessions.cancel();
    }
    let _ = close.send(());
    match tokio::time::timeout(std::time::Duration::from_secs(1), &mut serving).await {
        Ok(Ok(served)) => served?,
        Ok(Err(joined)) => return Err(std::io::Error::other(joined)),
        // Live streams of debates other processes run stay open: cut.
        Err(_) => serving.abort(),
    }
    Ok(left)
}
