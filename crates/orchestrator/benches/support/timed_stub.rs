//! A stub OpenAI-compatible server whose every answer takes the delay
//! asked, to a tenth of a millisecond: the model a timed benchmark runs on.
//!
//! wiremock's `set_delay` sleeps on tokio's timer, whose 1 ms ticks round
//! a deadline up and fire late: its 50 ms answers took 51.3–52 ms as a
//! caller saw them on the 2-core machine, 3–4 % of every call that an
//! overhead ratio over the 50 ms asked charged to the orchestrator. Here
//! the wait is a thread's sleep to the request's arrival plus the delay
//! (on tokio's blocking pool, so concurrent calls wait side by side); the
//! answer is the scripted model's (`agon_testkit::openai_reply`), as
//! wiremock's stub gives it. The server runs on a thread and runtime of
//! its own, as wiremock's does, so it takes nothing from the caller's.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;

/// A running timed stub; it stops when the process ends.
pub struct TimedStub {
    uri: String,
    shared: Arc<Shared>,
}

struct Shared {
    delay: Duration,
    received: Mutex<Vec<serde_json::Value>>,
}

impl TimedStub {
    /// Starts a stub answering every POST after `delay`.
    pub fn start(delay: Duration) -> Self {
        let shared = Arc::new(Shared {
            delay,
            received: Mutex::new(Vec::new()),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::clone(&shared);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = axum::Router::new()
                    .fallback(axum::routing::post(answer))
                    .with_state(state);
                axum::serve(listener, app).await.unwrap();
            });
        });
        Self { uri, shared }
    }

    /// The server's base address (`http://127.0.0.1:PORT`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The request bodies received since the last call, in arrival order.
    pub fn take_received(&self) -> Vec<serde_json::Value> {
        std::mem::take(&mut *self.shared.received.lock().unwrap())
    }
}

async fn answer(State(shared): State<Arc<Shared>>, body: Bytes) -> impl IntoResponse {
    let due = Instant::now() + shared.delay;
    let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let (content_type, text) = agon_testkit::openai_reply(&request);
    shared.received.lock().unwrap().push(request);
    tokio::task::spawn_blocking(move || {
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    })
    .await
    .unwrap();
    ([(CONTENT_TYPE, content_type)], text)
}
