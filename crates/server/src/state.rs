//! What the server shares between requests: the application (its store,
//! its runtime, the runs of this process) and a channel that says when a
//! debate changed.

use std::sync::Arc;

use agon_app::{App, LocalRun};
use agon_core::DebateId;
use agon_orchestrator::DebateUpdate;
use agon_store::EventStore;
use tokio::sync::broadcast;

use crate::error::ApiError;
use crate::live::Live;

/// The protocol a stored debate runs, by its configuration's name.
pub(crate) fn protocol_of(record: &agon_store::DebateRecord) -> &str {
    record
        .config
        .get("protocol")
        .and_then(|p| p.as_str())
        .unwrap_or("structured")
}

/// The server's shared state: an adapter over [`App`].
pub struct Server {
    pub(crate) app: App,
    pub(crate) store: Arc<dyn EventStore>,
    live: broadcast::Sender<(DebateId, Live)>,
    pub(crate) token: Option<String>,
    /// `/mcp` (streamable HTTP) is served: whether the server listens on a
    /// loopback address, and what ends its sessions.
    pub(crate) mcp: Option<(bool, tokio_util::sync::CancellationToken)>,
}

impl Server {
    /// A server over `app`; with `token`, every request must carry it.
    /// Call it inside a Tokio runtime: it forwards what the app's runs
    /// say to the live streams.
    pub fn new(app: App, token: Option<String>) -> Self {
        let (live, _) = broadcast::channel(4_096);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let mut runs = app.subscribe();
            let live = live.clone();
            runtime.spawn(async move {
                loop {
                    let (id, run) = match runs.recv().await {
                        Ok(item) => item,
                        Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => return,
                    };
                    let item = match run {
                        LocalRun::Update(DebateUpdate::Event { .. }) | LocalRun::Ended => {
                            Live::Appended
                        }
                        LocalRun::Update(DebateUpdate::Token {
                            persona,
                            turn,
                            delta,
                        }) => Live::Token {
                            turn: turn.to_string(),
                            persona: persona.to_string(),
                            delta,
                        },
                        LocalRun::Asked => Live::Questions,
                        LocalRun::Update(_) => continue,
                    };
                    let _ = live.send((id, item));
                }
            });
        }
        Self {
            store: Arc::clone(app.store()),
            app,
            live,
            token,
            mcp: None,
        }
    }

    /// Serves Agon over MCP's streamable HTTP at `/mcp` too (`agon serve
    /// --mcp`), behind the same token and cross-site checks as the API;
    /// `loopback`: the server listens on a loopback address, and the MCP
    /// endpoint accepts only a loopback `Host` (against DNS rebinding).
    #[must_use]
    pub fn with_mcp(mut self, loopback: bool) -> Self {
        self.mcp = Some((loopback, tokio_util::sync::CancellationToken::new()));
        self
    }

    /// The application the server is an adapter of.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The live updates of every debate (its runs here, and appends
    /// other processes announce).
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<(DebateId, Live)> {
        self.live.subscribe()
    }

    /// The view of `id` from its stored log (what the reports, the pages
    /// and the JSON API render).
    pub(crate) async fn view(&self, id: &DebateId) -> Result<agon_view::DebateView, ApiError> {
        self.view_at(id).await.map(|(view, _)| view)
    }

    /// The view of a debate and the sequence of the last event it holds
    /// (where a live stream of the page picks up, so no event is shown
    /// twice or missed).
    pub(crate) async fn view_at(
        &self,
        id: &DebateId,
    ) -> Result<(agon_view::DebateView, u64), ApiError> {
        Ok(self
            .app
            .view_at(id, agon_view::ReportOptions::default())
            .await?)
    }

    /// Wakes the live streams of `id`: another process (a worker on another
    /// machine) appended to it. The CLI forwards the PostgreSQL store's
    /// append notifications here (`PgStore::listen_appends`).
    pub fn appended_elsewhere(&self, id: DebateId) {
        let _ = self.live.send((id, Live::Appended));
    }

    /// Whether this server's process is running `id`.
    pub fn is_running(&self, id: &DebateId) -> bool {
        self.app.runs_here(id)
    }
}
