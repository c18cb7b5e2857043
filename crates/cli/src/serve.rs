//! `agon serve`: the HTTP API and live event streams of `agon-server`, an
//! adapter over the application, its debates run with the binary's one
//! runtime (as `agon debate` runs them).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agon_server::Server;
use agon_store::EventStore;
use anyhow::Context as _;

use crate::failure::Failure;

/// Serves until Ctrl-C or SIGTERM, then shuts down gracefully: no new
/// requests, the runs in flight stop at a step boundary (within `grace`)
/// and release their leases.
pub(crate) async fn run(
    store: Arc<dyn EventStore>,
    url: String,
    addr: SocketAddr,
    grace: Duration,
    mcp: bool,
) -> Result<ExitCode, Failure> {
    let token = match std::env::var("AGON_SERVER_TOKEN") {
        Ok(token) if !token.trim().is_empty() => Some(token.trim().to_owned()),
        _ if agon_server::needs_token(&addr) => {
            let token = agon_server::new_token().context("generating the server's token")?;
            eprintln!("Token (send it as `Authorization: Bearer TOKEN`): {token}");
            Some(token)
        }
        _ => None,
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {addr}"))?;
    let local = listener.local_addr().context("the listening address")?;
    eprintln!(
        "Serving Agon on http://{local} (store {}); Ctrl-C to stop.",
        store.url()
    );
    if mcp {
        eprintln!("MCP (streamable HTTP): http://{local}/mcp");
    }
    let app = crate::app(store, &url).await;
    let mut server = Server::new(app, token);
    if mcp {
        server = server.with_mcp(local.ip().is_loopback());
    }
    let server = Arc::new(server);
    // Debates other processes run (workers, on any machine) stream live:
    // the PostgreSQL store announces every append.
    if agon_worker::is_postgres(&url) {
        match agon_store::PgStore::listen_appends(&url).await {
            Ok(mut appends) => {
                let server = Arc::clone(&server);
                tokio::spawn(async move {
                    while let Some(id) = appends.recv().await {
                        server.appended_elsewhere(id);
                    }
                });
            }
            Err(e) => eprintln!("warning: debates other processes run update every 0.5 s: {e}"),
        }
    }
    let left = agon_server::serve_until(listener, server, crate::live::terminated(), grace)
        .await
        .context("serving")?;
    if left > 0 {
        eprintln!(
            "\nStopped; {left} run(s) were cut off at the grace period (`agon resume` continues them)."
        );
    } else {
        eprintln!("\nStopped.");
    }
    Ok(ExitCode::SUCCESS)
}
