//! `agon serve`: the HTTP API and live event streams of `agon-server`,
//! with runs prepared as `agon debate` prepares them (memory attached as
//! the configuration asks, models built from its specs).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use agon_config::DebateConfig;
use agon_memory::Memory;
use agon_orchestrator::{Models, Orchestrator};
use agon_server::{Runner, Server};
use agon_store::EventStore;
use anyhow::Context as _;
use async_trait::async_trait;

use crate::Failure;

/// Prepares runs like `agon debate`, and recalls from the store's memory.
struct CliRunner {
    url: String,
    /// The memory recall reads, by embedder spec (an embedder loads once).
    memories: tokio::sync::Mutex<HashMap<String, Memory>>,
}

#[async_trait]
impl Runner for CliRunner {
    async fn prepare(
        &self,
        store: Arc<dyn EventStore>,
        config: &DebateConfig,
    ) -> Result<(Orchestrator, Models), String> {
        // Opening the memory's store is a future the compiler cannot prove
        // Send (sqlx's migrator): it runs on a blocking thread of its own.
        let (url, memory_config) = (self.url.clone(), config.clone());
        let handle = tokio::runtime::Handle::current();
        let orch = tokio::task::spawn_blocking(move || {
            handle.block_on(crate::memory::attach(
                Orchestrator::new(store),
                &url,
                &memory_config,
            ))
        })
        .await
        .map_err(|e| format!("setting up memory: {e}"))?;
        let models = crate::build_models(config)
            .await
            .map_err(|f| format!("{:#}", f.error))?;
        Ok((orch, models))
    }

    async fn memory(&self, embedder: &str) -> Result<Memory, String> {
        let mut memories = self.memories.lock().await;
        if let Some(memory) = memories.get(embedder) {
            return Ok(memory.clone());
        }
        let memory = crate::memory::open_detached(
            &self.url,
            embedder,
            agon_memory::RetrievalConfig::default(),
        )
        .await?;
        memories.insert(embedder.to_owned(), memory.clone());
        Ok(memory)
    }
}

/// Serves until the process is stopped.
pub(crate) async fn run(
    store: Arc<dyn EventStore>,
    url: String,
    addr: SocketAddr,
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
    let url_for_listen = url.clone();
    let runner = CliRunner {
        url,
        memories: tokio::sync::Mutex::default(),
    };
    let server = Arc::new(Server::new(store, Arc::new(runner), token));
    // Debates other processes run (workers, on any machine) stream live:
    // the PostgreSQL store announces every append.
    if agon_worker::is_postgres(&url_for_listen) {
        match agon_store::PgStore::listen_appends(&url_for_listen).await {
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
    tokio::select! {
        served = agon_server::serve(listener, server) => served.context("serving")?,
        _ = tokio::signal::ctrl_c() => eprintln!("\nStopped."),
    }
    Ok(ExitCode::SUCCESS)
}
