//! Top-10 search latency with a persona filter (`cargo xtask bench memory`):
//! the embedded exact index at 10k, 100k and 1M memories (384-d), and
//! pgvector HNSW at 10k and 100k with its recall@10 against exact search
//! (when `AGON_BENCH_DATABASE_URL` names a PostgreSQL database; the xtask
//! sets it to the embedded server). Vectors are clustered (1,000 random
//! centres + noise), 10 personas; p50/p95 over 200 queries.

use std::time::Instant;

use agon_core::{DebateId, PersonaId};
use agon_memory::{
    EmbeddingSpace, ExactIndex, MemoryFilter, MemoryIndex, MemoryKind, MemoryRecord, PgMemory,
    normalize,
};
use chrono::{TimeZone, Utc};

const DIMS: usize = 384;
const QUERIES: usize = 200;

fn vectors(n: usize, rng: &mut fastrand::Rng) -> Vec<Vec<f32>> {
    let centres: Vec<Vec<f32>> = (0..1_000)
        .map(|_| (0..DIMS).map(|_| rng.f32() - 0.5).collect())
        .collect();
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
    }
}

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 * p) as usize).min(ms.len() - 1)];
    (at(0.5), at(0.95))
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
        let data = vectors(n, &mut rng);
        let queries = vectors(QUERIES, &mut rng);
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
        runtime.block_on(async {
            let pg = PgMemory::connect(url).await.unwrap_or_else(|e| panic!("{e}"));
            let space = EmbeddingSpace { model: "bench".into(), dimensions: DIMS };
            pg.reset_space(&space).await.unwrap_or_else(|e| panic!("{e}"));
            sqlx::query("TRUNCATE memories CASCADE").execute(pg.pool()).await.unwrap_or_else(|e| panic!("{e}"));
            let started = Instant::now();
            for chunk in data.chunks(1_000).enumerate() {
                let (c, vs) = chunk;
                let records = vs.iter().enumerate().map(|(j, v)| record(c * 1_000 + j, v.clone())).collect();
                pg.insert(records).await.unwrap_or_else(|e| panic!("{e}"));
            }
            sqlx::query("ANALYZE memories").execute(pg.pool()).await.unwrap_or_else(|e| panic!("{e}"));
            println!("pgvector insert + HNSW {n} memories: {:.1} s", started.elapsed().as_secs_f64());
            let mut times = Vec::new();
            let mut recall = 0.0;
            for (q, truth) in queries.iter().zip(&exact) {
                let t = Instant::now();
                let hits = pg.search(q, &filter, 10).await.unwrap_or_else(|e| panic!("{e}"));
                times.push(t.elapsed().as_secs_f64() * 1e3);
                recall += hits.iter().filter(|h| truth.contains(&h.memory.id)).count() as f64 / truth.len().max(1) as f64;
            }
            let (p50, p95) = percentiles(times);
            println!(
                "pgvector hnsw   {n:>9} memories: top-10 (persona filter) p50 {p50:.2} ms, p95 {p95:.2} ms, recall@10 vs exact {:.3}",
                recall / queries.len() as f64
            );
        });
    }
}
