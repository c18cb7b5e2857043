//! Top-10 search latency with a persona filter (`cargo xtask bench memory`):
//! the embedded exact index at 10k, 100k and 1M memories (384-d), and
//! pgvector HNSW at 10k and 100k with its recall@10 against exact search
//! (when `AGON_BENCH_DATABASE_URL` names a PostgreSQL database whose
//! `memories` table the bench may empty; the xtask creates a fresh database
//! `agon_bench_memory` on the embedded server for it), with the plan chosen.
//! Memories and queries are clustered (1,000 random centres + noise), 10
//! personas; p50/p95 over 200 queries.

use std::time::Instant;

use agon_core::{DebateId, PersonaId};
use agon_memory::{
    EmbeddingSpace, ExactIndex, MemoryFilter, MemoryIndex, MemoryKind, MemoryRecord, PgMemory,
    normalize,
};
use chrono::{TimeZone, Utc};

const DIMS: usize = 384;
const QUERIES: usize = 200;

/// 1,000 random cluster centres: memories and queries are drawn around the
/// same centres, as a query is about something that was said.
fn centres(rng: &mut fastrand::Rng) -> Vec<Vec<f32>> {
    (0..1_000)
        .map(|_| (0..DIMS).map(|_| rng.f32() - 0.5).collect())
        .collect()
}

fn vectors(n: usize, centres: &[Vec<f32>], rng: &mut fastrand::Rng) -> Vec<Vec<f32>> {
    (0..n)
        .map(|_| {
            let c = &centres[rng.usize(..centres.len())];
            let mut v: Vec<f32> = c.iter().map(|x| x + 0.15 * (rng.f32() - 0.5)).collect();
            let _ = normalize(&mut v);
            v
        })
        .collect()
}

fn record(i: usize, v: Vec<f32>) -> MemoryRecord {
    MemoryRecord {
        id: format!("m{i}"),
        debate: DebateId::new(format!("d{}", i % 50)),
        persona: PersonaId::new(format!("p{}", i % 10)),
        content: format!("memory {i}"),
        kind: MemoryKind::Message,
        importance: 5,
        round: 1,
        created: Utc
            .timestamp_opt(1_700_000_000 + i as i64, 0)
            .single()
            .unwrap_or_default(),
        embedding: v,
        subject: None,
    }
}

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 * p) as usize).min(ms.len() - 1)];
    (at(0.5), at(0.95))
}

/// A failed benchmark step: the error is the report.
fn fail<T>(e: agon_memory::MemoryError) -> T {
    panic!("{e}")
}

/// Loads `data` into a fresh `memories` table (the xtask gives this bench a
/// database of its own), then times filtered top-10 searches, measures their
/// recall@10 against the exact answers, and prints the plan PostgreSQL chose.
async fn pgvector_run(
    url: &str,
    data: &[Vec<f32>],
    queries: &[Vec<f32>],
    exact: &[Vec<String>],
    filter: &MemoryFilter,
) {
    let pg = PgMemory::connect(url).await.unwrap_or_else(fail);
    let space = EmbeddingSpace {
        model: "bench".into(),
        dimensions: DIMS,
    };
    pg.reset_space(&space).await.unwrap_or_else(fail);
    sqlx::query("TRUNCATE memories CASCADE")
        .execute(pg.pool())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let n = data.len();
    let started = Instant::now();
    for (c, chunk) in data.chunks(1_000).enumerate() {
        let records = chunk
            .iter()
            .enumerate()
            .map(|(j, v)| record(c * 1_000 + j, v.clone()))
            .collect();
        pg.insert(records).await.unwrap_or_else(fail);
    }
    sqlx::query("ANALYZE memories")
        .execute(pg.pool())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "pgvector insert + HNSW {n} memories: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let mut times = Vec::new();
    let mut recall = 0.0;
    for (q, truth) in queries.iter().zip(exact) {
        let t = Instant::now();
        let hits = pg.search(q, filter, 10).await.unwrap_or_else(fail);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        let found = hits.iter().filter(|h| truth.contains(&h.memory.id)).count();
        recall += found as f64 / truth.len().max(1) as f64;
    }
    let (p50, p95) = percentiles(times);
    println!(
        "pgvector hnsw   {n:>9} memories: top-10 (persona filter) p50 {p50:.2} ms, p95 {p95:.2} ms, recall@10 vs exact {:.3}",
        recall / queries.len() as f64
    );
    let plan = pg
        .explain_dense(&queries[0], filter, 10)
        .await
        .unwrap_or_else(fail);
    let uses_hnsw = plan.contains("memories_embedding_hnsw");
    println!("pgvector plan   {n:>9} memories (persona filter): HNSW index scan: {uses_hnsw}");
    for line in plan.lines() {
        // The query vector is printed inline: keep the plan readable.
        let short: String = line.chars().take(120).collect();
        let cut = if short.len() < line.len() { " …" } else { "" };
        println!("    {short}{cut}");
    }
}

fn main() {
    let mut rng = fastrand::Rng::with_seed(42);
    let filter = MemoryFilter::persona("p3");
    let pg_url = std::env::var("AGON_BENCH_DATABASE_URL").ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    for n in [10_000usize, 100_000, 1_000_000] {
        let centres = centres(&mut rng);
        let data = vectors(n, &centres, &mut rng);
        let queries = vectors(QUERIES, &centres, &mut rng);
        let mut index = ExactIndex::new(DIMS);
        for (i, v) in data.iter().enumerate() {
            index.insert(record(i, v.clone()));
        }
        let mut times = Vec::new();
        let mut exact = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let hits = index.search(q, &filter, 10);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            exact.push(
                hits.into_iter()
                    .map(|(s, _)| index.meta(s).id.clone())
                    .collect::<Vec<_>>(),
            );
        }
        let (p50, p95) = percentiles(times);
        println!(
            "embedded exact {n:>9} memories: top-10 (persona filter) p50 {p50:.2} ms, p95 {p95:.2} ms"
        );
        if n > 100_000 {
            continue;
        }
        let Some(url) = &pg_url else { continue };
        runtime.block_on(pgvector_run(url, &data, &queries, &exact, &filter));
    }
}
