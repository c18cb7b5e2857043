//! `cargo xtask bench local`: throughput of the in-process models in release
//! mode. Prints lines scripts can read (`embeddings: X sentences/s`).

use std::time::Instant;

use agon_llm::LocalEmbedder;

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let embedder = LocalEmbedder::minilm()?;
    println!("embedder load: {:.2} s", started.elapsed().as_secs_f64());
    let sentences: Vec<String> = (0..512)
        .map(|i| {
            format!(
                "In round {} the treasurer argued that a capped allocation of {} percent survives a bad quarter without forcing a sale.",
                i % 9,
                i % 13 + 1
            )
        })
        .collect();
    embedder.embed_blocking(&sentences[..64])?; // warm-up
    let mut rates = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let vectors = embedder.embed_blocking(&sentences)?;
        assert_eq!(vectors.len(), sentences.len());
        rates.push(sentences.len() as f64 / t.elapsed().as_secs_f64());
    }
    println!(
        "embeddings: {:.1} sentences/s (median of 3 runs of {} sentences, batch {})",
        median(rates),
        sentences.len(),
        LocalEmbedder::DEFAULT_BATCH
    );
    if let Some(rss) = peak_rss_mib() {
        println!("peak RSS: {rss:.0} MiB");
    }
    Ok(())
}
