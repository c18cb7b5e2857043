//! `cargo xtask bench scale`: debates per minute with 1, 2 and 4 `agon
//! worker` processes on one PostgreSQL (the embedded server; a database of
//! its own per run, next to `AGON_BENCH_DATABASE_URL`), against a stub
//! provider that answers every call after 50 ms with the scripted model.
//!
//! Reported per run: wall time, debates per minute, scaling efficiency
//! (throughput ÷ (workers × the 1-worker throughput)), queue latency
//! (a debate created and queued → its first step appended: median and
//! p95), the machine's CPU use and the workers' CPU time, and
//! PostgreSQL's load from `pg_stat_database` (transactions, rows written
//! and read, per debate).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::Connection;
use support::{AGON, fresh_database};

const DEBATES: usize = 24;
const CONCURRENCY: &str = "4";
const STUB_DELAY: Duration = Duration::from_millis(50);
const REPEATS: usize = 3;

fn agon(store: &str, args: &[&str]) -> std::process::Output {
    let out = Command::new(AGON)
        .env("AGON_STORE", store)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "agon {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn listed(store: &str) -> Vec<Value> {
    serde_json::from_slice(&agon(store, &["--json", "list"]).stdout).unwrap()
}

/// `pg_stat_database` counters of `name`: commits, rows inserted, rows
/// updated, rows returned.
async fn pg_stats(admin: &str, name: &str) -> [i64; 4] {
    let mut c = sqlx::PgConnection::connect(admin).await.unwrap();
    let row: (i64, i64, i64, i64) = sqlx::query_as(
        "SELECT xact_commit, tup_inserted, tup_updated, tup_returned \
         FROM pg_stat_database WHERE datname = $1",
    )
    .bind(name)
    .fetch_one(&mut c)
    .await
    .unwrap();
    [row.0, row.1, row.2, row.3]
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

struct Run {
    workers: usize,
    seconds: f64,
    per_minute: f64,
    latency_median_ms: f64,
    latency_p95_ms: f64,
    messages: u64,
    events: u64,
    jobs: i64,
    stats: [i64; 4],
    /// The machine's busy share of its cores over the run.
    busy: f64,
    /// CPU seconds the worker processes used.
    worker_cpu: f64,
}

/// The machine's (busy, total) CPU ticks so far (`/proc/stat`).
fn machine_cpu() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    let total: u64 = ticks.iter().sum();
    let idle = ticks.get(3).copied().unwrap_or(0) + ticks.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// CPU seconds (user + system) a live process has used (`/proc/PID/stat`).
fn process_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|t| t.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

async fn run(admin: &str, cfg: &str, workers: usize) -> Run {
    let name = format!("agon_bench_scale_{workers}");
    let store = fresh_database(admin, &name).await;
    // The schemas are installed before the clock starts.
    agon(&store, &["list"]);
    drop(agon_worker::JobQueue::connect(&store).await.unwrap());
    let mut children: Vec<Child> = (0..workers)
        .map(|_| {
            Command::new(AGON)
                .env("AGON_STORE", &store)
                .args(["worker", "--concurrency", CONCURRENCY])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    for c in &mut children {
        assert!(c.try_wait().unwrap().is_none(), "a worker exited at start");
    }
    // pg_stat_database lags by up to a second: let it settle either side.
    let before = pg_stats(admin, &name).await;
    let start = Instant::now();
    agon(&store, &["submit", cfg, "--repeat", &DEBATES.to_string()]);
    let created: Vec<(String, i64, i64)> = {
        let mut pg = sqlx::PgConnection::connect(&store).await.unwrap();
        sqlx::query_as("SELECT id, last_seq, created_at FROM debates")
            .fetch_all(&mut pg)
            .await
            .unwrap()
    };
    let mut pg = sqlx::PgConnection::connect(&store).await.unwrap();
    let cpu_before = machine_cpu();
    loop {
        // Polled with one query, not `agon list`, which would load every
        // debate and weigh on the numbers it measures.
        let unfinished: i64 =
            sqlx::query_scalar("SELECT count(*) FROM debates WHERE status <> 'finished'")
                .fetch_one(&mut pg)
                .await
                .unwrap();
        if unfinished == 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "stuck: {unfinished} debates unfinished after 900 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_after = machine_cpu();
    let worker_cpu: f64 = children.iter().map(|c| process_cpu(c.id())).sum();
    for c in &mut children {
        c.kill().unwrap();
        c.wait().unwrap();
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = pg_stats(admin, &name).await;
    let mut latencies = Vec::new();
    // Enqueue → first step: a debate is queued right after it is created.
    for (id, created_seq, created_at) in &created {
        let first: i64 =
            sqlx::query_scalar("SELECT created_at FROM events WHERE debate_id = $1 AND seq = $2")
                .bind(id)
                .bind(created_seq + 1)
                .fetch_one(&mut pg)
                .await
                .unwrap();
        latencies.push((first - created_at) as f64);
    }
    latencies.sort_by(f64::total_cmp);
    let jobs: i64 = sqlx::query_scalar(
        "SELECT n_tup_ins FROM pg_stat_user_tables \
         WHERE schemaname = 'graphile_worker' AND relname = '_private_jobs'",
    )
    .fetch_one(&mut pg)
    .await
    .unwrap();
    let rows = listed(&store);
    Run {
        workers,
        seconds,
        per_minute: DEBATES as f64 / seconds * 60.0,
        latency_median_ms: percentile(&latencies, 0.5),
        latency_p95_ms: percentile(&latencies, 0.95),
        messages: rows.iter().map(|r| r["messages"].as_u64().unwrap()).sum(),
        events: rows.iter().map(|r| r["events"].as_u64().unwrap()).sum(),
        jobs,
        busy: (cpu_after.0 - cpu_before.0) as f64 / (cpu_after.1 - cpu_before.1).max(1) as f64,
        worker_cpu,
        stats: [
            after[0] - before[0],
            after[1] - before[1],
            after[2] - before[2],
            after[3] - before[3],
        ],
    }
}

/// The baseline without a queue: one `agon debate` process per debate,
/// all started at once on the same store and stub. Returns (wall seconds,
/// machine busy share).
async fn baseline(admin: &str, cfg: &str) -> (f64, f64) {
    let store = fresh_database(admin, "agon_bench_scale_baseline").await;
    agon(&store, &["list"]);
    let cpu_before = machine_cpu();
    let start = Instant::now();
    let mut children: Vec<Child> = (0..DEBATES)
        .map(|_| {
            Command::new(AGON)
                .env("AGON_STORE", &store)
                .args(["debate", "--quiet", "--config", cfg])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in &mut children {
        assert!(c.wait().unwrap().success(), "a baseline debate failed");
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_after = machine_cpu();
    let busy = (cpu_after.0 - cpu_before.0) as f64 / (cpu_after.1 - cpu_before.1).max(1) as f64;
    (seconds, busy)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Ok(admin) = std::env::var("AGON_BENCH_DATABASE_URL") else {
        println!("scale: AGON_BENCH_DATABASE_URL is not set; run `cargo xtask bench scale`");
        return;
    };
    let (server, _) = support::stub(STUB_DELAY).await;
    let dir = tempfile::tempdir().unwrap();
    // The small structured debate of the tests.
    let (_, cfg) = support::configs(dir.path(), &server.uri()).swap_remove(0);
    let cfg = cfg.to_str().unwrap();
    println!(
        "scale: {DEBATES} structured debates (2 personas, 2 aspects, 2 minirounds, 1 crux room), \
         stub provider {} ms a call, `agon worker --concurrency {CONCURRENCY}` processes, \
         embedded PostgreSQL",
        STUB_DELAY.as_millis()
    );
    // Three runs of each size, interleaved (the machine is shared and
    // noisy); each row is the run of median wall time.
    let mut all: Vec<Vec<Run>> = vec![Vec::new(), Vec::new(), Vec::new()];
    let mut baselines = Vec::new();
    for round in 0..REPEATS {
        let (seconds, busy) = baseline(&admin, cfg).await;
        println!("scale: round {round}: {DEBATES} `agon debate` processes at once: {seconds:.1} s");
        baselines.push((seconds, busy));
        for (i, workers) in [1, 2, 4].into_iter().enumerate() {
            let r = run(&admin, cfg, workers).await;
            println!(
                "scale: round {round}: {} worker(s): {:.1} s, {:.1} debates/min",
                r.workers, r.seconds, r.per_minute
            );
            all[i].push(r);
        }
    }
    let runs: Vec<Run> = all
        .into_iter()
        .map(|mut rs| {
            rs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
            rs.swap_remove(rs.len() / 2)
        })
        .collect();
    let base = runs[0].per_minute;
    let d = DEBATES as f64;
    println!();
    println!(
        "| workers | wall time | debates/min | scaling efficiency | queue latency median / p95 | \
         machine CPU busy | worker CPU s per debate | jobs per debate | commits per job | \
         rows written per debate | rows read per debate | commits/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    baselines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (seconds, busy) = baselines[baselines.len() / 2];
    println!(
        "| baseline: {DEBATES} `agon debate` processes at once, no queue | {seconds:.1} s | {:.1} | – | – | {:.0} % | – | – | – | – | – | – |",
        d / seconds * 60.0,
        busy * 100.0
    );
    for r in &runs {
        println!(
            "| {} | {:.1} s | {:.1} | {:.2} | {:.0} / {:.0} ms | {:.0} % | {:.2} | {:.1} | {:.1} | {:.0} | {:.0} | {:.0} |",
            r.workers,
            r.seconds,
            r.per_minute,
            r.per_minute / (r.workers as f64 * base),
            r.latency_median_ms,
            r.latency_p95_ms,
            r.busy * 100.0,
            r.worker_cpu / d,
            r.jobs as f64 / d,
            r.stats[0] as f64 / r.jobs.max(1) as f64,
            (r.stats[1] + r.stats[2]) as f64 / d,
            r.stats[3] as f64 / d,
            r.stats[0] as f64 / r.seconds,
        );
    }
    let last = &runs[runs.len() - 1];
    println!();
    println!(
        "scale: per debate {:.0} messages, {:.0} events",
        last.messages as f64 / d,
        last.events as f64 / d
    );
}
