//! A fault-injecting OpenAI-compatible provider: a raw HTTP/1.1 server on
//! loopback that answers with the scripted model ([`crate::openai_reply`])
//! and, on a seeded schedule, with one of the faults real providers
//! produce. Every request draws from one seeded generator in arrival
//! order, so a run with the same seed and the same call order meets the
//! same faults. A plan ([`FaultServer::start_planned`]) puts named faults
//! into the first requests of their kind (a streamed answer cut mid-way, a
//! truncated JSON answer) in place of their draw, so a run surely meets
//! them; [`FaultStats::met`] lists every fault injected.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A fault the server can inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// 429 with `Retry-After: 1`.
    RateLimited,
    /// 500.
    ServerError,
    /// 503.
    Unavailable,
    /// 529 overloaded (Anthropic's).
    Overloaded,
    /// The connection is closed without an answer.
    Reset,
    /// No headers before the client's timeout.
    SlowHeaders,
    /// Headers and half the answer, then nothing until the client gives up.
    Stall,
    /// Headers and half the answer, then the connection closes.
    Truncated,
    /// 200 with a body that is not JSON.
    MalformedJson,
    /// 200 with `"choices": []`.
    EmptyChoices,
    /// 200 with a structured answer that does not match its schema (a
    /// plain request gets an answer of whitespace instead).
    SchemaInvalid,
    /// 200 with an answer that is all whitespace.
    Whitespace,
}

impl Fault {
    /// Every fault, in the order the draw picks from.
    pub const ALL: [Fault; 12] = [
        Fault::RateLimited,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::Overloaded,
        Fault::Reset,
        Fault::SlowHeaders,
        Fault::Stall,
        Fault::Truncated,
        Fault::MalformedJson,
        Fault::EmptyChoices,
        Fault::SchemaInvalid,
        Fault::Whitespace,
    ];

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Fault::RateLimited => "429",
            Fault::ServerError => "500",
            Fault::Unavailable => "503",
            Fault::Overloaded => "529",
            Fault::Reset => "reset",
            Fault::SlowHeaders => "slow headers",
            Fault::Stall => "stall",
            Fault::Truncated => "truncated",
            Fault::MalformedJson => "malformed JSON",
            Fault::EmptyChoices => "empty choices",
            Fault::SchemaInvalid => "schema-invalid",
            Fault::Whitespace => "whitespace",
        }
    }
}

/// Which requests a planned fault waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// A streamed answer (`"stream": true`): a cut here breaks a stream
    /// mid-way.
    Streamed,
    /// A structured answer (`response_format` set): a cut here is a
    /// truncated JSON answer.
    Structured,
    /// Any other request.
    Plain,
}

impl Target {
    /// What `request` asks for.
    fn of(request: &Value) -> Self {
        if request["stream"] == json!(true) {
            Self::Streamed
        } else if !request["response_format"].is_null() {
            Self::Structured
        } else {
            Self::Plain
        }
    }

    /// A short name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Streamed => "streamed",
            Self::Structured => "structured",
            Self::Plain => "plain",
        }
    }
}

/// A fault the server injects into a request of its target, in place of
/// that request's draw: a plan makes sure a run meets the faults it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    /// Which request it waits for.
    pub target: Target,
    /// What it does to it.
    pub fault: Fault,
    /// Requests of its target to let pass first (drawn as usual), counted
    /// once the plan's earlier faults for that target were injected: with
    /// a gap, two planned stream faults rarely hit the same turn (a turn
    /// is generated at most three times).
    pub skip: u32,
}

impl Planned {
    /// `fault` in the next request of `target`.
    pub fn next(target: Target, fault: Fault) -> Self {
        Self {
            target,
            fault,
            skip: 0,
        }
    }
}

/// One fault the server injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Met {
    /// The request's number (1 is the first).
    pub request: u64,
    /// What the request asked for.
    pub target: Target,
    /// The fault.
    pub fault: Fault,
    /// Whether a plan put it there (else it was drawn).
    pub planned: bool,
}

impl std::fmt::Display for Met {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "#{} {} {}{}",
            self.request,
            self.target.name(),
            self.fault.name(),
            if self.planned { " (planned)" } else { "" }
        )
    }
}

/// What the server saw and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Requests received.
    pub requests: u64,
    /// Requests received, by what they asked for.
    pub requests_by: BTreeMap<Target, u64>,
    /// Faults injected, by kind.
    pub faults: BTreeMap<Fault, u64>,
    /// Every fault injected, in order.
    pub met: Vec<Met>,
}

impl FaultStats {
    /// Faults injected in all.
    pub fn injected(&self) -> u64 {
        self.faults.values().sum()
    }

    /// Whether a request of `target` met `fault`.
    pub fn met(&self, target: Target, fault: Fault) -> bool {
        self.met
            .iter()
            .any(|m| m.target == target && m.fault == fault)
    }
}

struct Schedule {
    rate: f64,
    rng: fastrand::Rng,
    plan: Vec<Planned>,
    stats: FaultStats,
}

impl Schedule {
    /// The fault for the next request, which asks for `target`: the first
    /// planned one waiting for it, else a draw.
    fn next(&mut self, target: Target) -> Option<Fault> {
        self.stats.requests += 1;
        *self.stats.requests_by.entry(target).or_default() += 1;
        let due = match self.plan.iter().position(|p| p.target == target) {
            Some(i) if self.plan[i].skip > 0 => {
                self.plan[i].skip -= 1;
                None
            }
            due => due,
        };
        let (fault, planned) = match due {
            Some(i) => (Some(self.plan.remove(i).fault), true),
            None => (
                (self.rng.f64() < self.rate)
                    .then(|| Fault::ALL[self.rng.usize(..Fault::ALL.len())]),
                false,
            ),
        };
        if let Some(fault) = fault {
            *self.stats.faults.entry(fault).or_default() += 1;
            self.stats.met.push(Met {
                request: self.stats.requests,
                target,
                fault,
                planned,
            });
        }
        fault
    }
}

/// The fault-injecting server.
pub struct FaultServer {
    url: String,
    schedule: Arc<Mutex<Schedule>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultServer {
    /// Starts a server on loopback injecting a fault into `rate` of the
    /// requests (0.0–1.0), drawn with `seed`. `stall` is how long a slow
    /// or stalled answer hangs (longer than the client's timeout).
    pub async fn start(rate: f64, seed: u64, stall: Duration) -> std::io::Result<Self> {
        Self::start_planned(rate, seed, stall, Vec::new()).await
    }

    /// [`FaultServer::start`], with `plan`'s faults injected first, each
    /// into the next request of its target.
    pub async fn start_planned(
        rate: f64,
        seed: u64,
        stall: Duration,
        plan: Vec<Planned>,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/v1", listener.local_addr()?);
        let schedule = Arc::new(Mutex::new(Schedule {
            rate: rate.clamp(0.0, 1.0),
            rng: fastrand::Rng::with_seed(seed),
            plan,
            stats: FaultStats::default(),
        }));
        let shared = Arc::clone(&schedule);
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let schedule = Arc::clone(&shared);
                tokio::spawn(async move {
                    // A client that went away is not the server's error.
                    let _ = serve(socket, &schedule, stall).await;
                });
            }
        });
        Ok(Self {
            url,
            schedule,
            task,
        })
    }

    /// The base URL (`http://127.0.0.1:PORT/v1`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Changes the fault rate from now on (0.0: a healthy provider; the
    /// faults still planned are dropped too).
    pub fn set_rate(&self, rate: f64) {
        if let Ok(mut s) = self.schedule.lock() {
            s.rate = rate.clamp(0.0, 1.0);
            if s.rate == 0.0 {
                s.plan.clear();
            }
        }
    }

    /// What the server saw so far.
    pub fn stats(&self) -> FaultStats {
        self.schedule
            .lock()
            .map(|s| s.stats.clone())
            .unwrap_or_default()
    }
}

/// Reads one request: its body as JSON.
async fn read_request(socket: &mut TcpStream) -> std::io::Result<Option<Value>> {
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(serde_json::from_slice(&buf[header_end..header_end + length]).ok())
}

fn head(status: &str, content_type: &str, length: usize, extra: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\n{extra}connection: close\r\n\r\n"
    )
}

async fn serve(
    mut socket: TcpStream,
    schedule: &Mutex<Schedule>,
    stall: Duration,
) -> std::io::Result<()> {
    let Some(request) = read_request(&mut socket).await? else {
        return Ok(());
    };
    let fault = schedule
        .lock()
        .map_err(|_| std::io::ErrorKind::Other)?
        .next(Target::of(&request));
    let error = |status: &str, message: &str| {
        let body = json!({"error": {"message": message, "type": "server_error"}}).to_string();
        format!("{}{body}", head(status, "application/json", body.len(), ""))
    };
    let (content_type, body) = crate::openai_reply(&request);
    let out = match fault {
        None => format!("{}{body}", head("200 OK", content_type, body.len(), "")),
        Some(Fault::RateLimited) => {
            let body = json!({"error": {"message": "rate limit reached", "type": "rate_limit"}})
                .to_string();
            format!(
                "{}{body}",
                head(
                    "429 Too Many Requests",
                    "application/json",
                    body.len(),
                    "retry-after: 1\r\n"
                )
            )
        }
        Some(Fault::ServerError) => error("500 Internal Server Error", "internal error"),
        Some(Fault::Unavailable) => error("503 Service Unavailable", "unavailable"),
        Some(Fault::Overloaded) => error("529 Overloaded", "overloaded"),
        Some(Fault::Reset) => return Ok(()),
        Some(Fault::SlowHeaders) => {
            tokio::time::sleep(stall).await;
            return Ok(());
        }
        Some(Fault::Stall | Fault::Truncated) => {
            let half = &body[..floor_char_boundary(&body, body.len() / 2)];
            socket
                .write_all(
                    format!("{}{half}", head("200 OK", content_type, body.len(), "")).as_bytes(),
                )
                .await?;
            socket.flush().await?;
            if fault == Some(Fault::Stall) {
                tokio::time::sleep(stall).await;
            }
            return Ok(());
        }
        Some(Fault::MalformedJson) => {
            let body = "{\"choices\": [{\"message\": ";
            format!(
                "{}{body}",
                head("200 OK", "application/json", body.len(), "")
            )
        }
        Some(Fault::EmptyChoices) => {
            let body = json!({"id": "c", "object": "chat.completion", "choices": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": 0}})
            .to_string();
            format!(
                "{}{body}",
                head("200 OK", "application/json", body.len(), "")
            )
        }
        Some(Fault::SchemaInvalid | Fault::Whitespace) => {
            let structured = !request["response_format"].is_null();
            let text = if fault == Some(Fault::SchemaInvalid) && structured {
                r#"{"unexpected": [1, 2, 3]}"#
            } else {
                "  \n\t  "
            };
            let (content_type, body) = crate::openai_body(&request, text);
            format!("{}{body}", head("200 OK", content_type, body.len(), ""))
        }
    };
    socket.write_all(out.as_bytes()).await?;
    socket.flush().await?;
    socket.shutdown().await
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
