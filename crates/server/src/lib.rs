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
//! - steering while a debate runs: clarifying questions answered over
//!   HTTP, moderator notes every agent's next context shows, pause and
//!   resume, stop; each one an event of the debate's log;
//! - the web pages (a debate list with a form to start one, and a page per
//!   debate that follows it live), rendered from `agon_view`.
//!
//! Many debates run and stream at once. On a loopback address no token is
//! needed; on any other one the server requires one (`auth`).

mod agents;
mod answers;
mod auth;
mod error;
mod events;
mod live;
mod pages;
mod recall;
mod routes;
mod settings;
mod state;
mod steer;

use std::net::SocketAddr;
use std::sync::Arc;

pub use auth::new_token;
pub use error::ApiError;
pub use state::{Runner, Server};

/// The whole router: the API behind the token and cross-site checks.
pub fn router(server: Arc<Server>) -> axum::Router {
    routes::api(Arc::clone(&server))
        .layer(axum::middleware::from_fn_with_state(server, auth::guard))
}

/// Whether an address needs a token: anything but loopback.
pub fn needs_token(addr: &SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

/// Serves `server` on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, server: Arc<Server>) -> std::io::Result<()> {
    axum::serve(listener, router(server)).await
}
