//! `cargo xtask bench local`: throughput of the in-process models in release
//! mode. Prints lines scripts can read (`prompt: X tok/s`, `generation: X
//! tok/s`, `embeddings: X sentences/s`). Built with the `llama-cpp` feature
//! (`cargo xtask bench llama-cpp`) it measures the llama.cpp backend on the
//! same file too and prints the local / llama.cpp ratios.

use std::time::Instant;

use agon_llm::ChatRequest;
use agon_local::GenerationStats;
use agon_local::{LocalChat, LocalEmbedder, Precision};

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

type Outcome = (String, String, GenerationStats);

/// Chat numbers of one backend; returns (prompt tok/s, generation tok/s).
fn bench_chat(
    name: &str,
    generate: impl Fn(&ChatRequest) -> Result<Outcome, agon_llm::ProviderError>,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let system = "You are Theo, a blunt macro trader in a structured debate about corporate treasury policy. \
        You judge assets by drawdowns and liquidity cycles, you measure risk per quarter, and you distrust narratives \
        that cannot survive a margin call. Keep every answer short, concrete and numbers-first."
        .repeat(3);
    let turn = |i: usize| {
        ChatRequest::new(format!("Round {i}: Mara says every four-year holding period in Bitcoin has ended in profit. Reply in two sentences."))
            .with_system(system.clone())
            .with_max_tokens(64)
    };
    let (_, _, cold) = generate(&turn(0))?;
    let mut prompt_rates = Vec::new();
    let mut generation_rates = Vec::new();
    let mut warm_prompt_ms = Vec::new();
    for i in 1..=3 {
        let (_, _, stats) = generate(&turn(i))?;
        warm_prompt_ms.push(stats.prompt_time.as_secs_f64() * 1000.0);
        generation_rates.push(stats.generated_tokens as f64 / stats.generation_time.as_secs_f64());
    }
    // Prompt throughput without prefix reuse: a fresh system prompt each time.
    for i in 0..3 {
        let request = turn(i).with_system(format!("(variant {i}) {system}"));
        let (_, _, stats) = generate(&request.with_max_tokens(1))?;
        prompt_rates.push(
            (stats.prompt_tokens - stats.reused_tokens) as f64 / stats.prompt_time.as_secs_f64(),
        );
    }
    let (prompt, generation) = (median(prompt_rates), median(generation_rates));
    println!("[{name}] prompt tokens per call: {}", cold.prompt_tokens);
    println!("prompt: {prompt:.1} tok/s [{name}]");
    println!("generation: {generation:.1} tok/s [{name}]");
    println!(
        "[{name}] prompt time with the shared prefix reused: {:.0} ms median vs {:.0} ms cold",
        median(warm_prompt_ms),
        cold.prompt_time.as_secs_f64() * 1000.0
    );
    Ok((prompt, generation))
}

/// The default backend (`LocalChat`).
fn local() -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let chat = LocalChat::smollm2()?;
    println!(
        "[local] chat load: {:.2} s (reading and packing the weights)",
        started.elapsed().as_secs_f64()
    );
    println!("[local] int8 kernels: {}", agon_local::cpu_kernels());
    let rates = bench_chat("local", |r| chat.generate_blocking(r, |_| {}))?;
    if let Some(rss) = peak_rss_mib() {
        println!("[local] peak RSS after chat: {rss:.0} MiB");
    }
    Ok(rates)
}

#[cfg(feature = "llama-cpp")]
fn llama_cpp(local: (f64, f64)) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let chat = agon_local::LlamaCppChat::smollm2()?;
    println!(
        "[llama-cpp] chat load: {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let (prompt, generation) =
        bench_chat("llama-cpp", |r| chat.generate_blocking(r, None, |_| {}))?;
    println!(
        "local / llama.cpp: prompt {:.2}x, generation {:.2}x",
        local.0 / prompt,
        local.1 / generation
    );
    Ok(())
}

/// Sentences per second of `embedder` over `sentences` (one call).
fn embedding_rate(
    embedder: &LocalEmbedder,
    sentences: &[String],
) -> Result<f64, Box<dyn std::error::Error>> {
    let t = Instant::now();
    let vectors = embedder.embed_blocking(sentences)?;
    assert_eq!(vectors.len(), sentences.len());
    Ok(sentences.len() as f64 / t.elapsed().as_secs_f64())
}

/// The embedder at both precisions, runs alternated: the default (int8)
/// and the f32 reference, and how far their vectors are apart.
fn bench_embeddings() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let int8 = LocalEmbedder::minilm()?;
    println!("embedder load: {:.2} s", started.elapsed().as_secs_f64());
    let f32 = LocalEmbedder::minilm_at(Precision::F32)?;
    let sentences: Vec<String> = (0..512)
        .map(|i| {
            format!(
                "In round {} the treasurer argued that a capped allocation of {} percent survives a bad quarter without forcing a sale.",
                i % 9,
                i % 13 + 1
            )
        })
        .collect();
    // Warm-up.
    int8.embed_blocking(&sentences[..64])?;
    f32.embed_blocking(&sentences[..64])?;
    let (mut rates, mut f32_rates) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        rates.push(embedding_rate(&int8, &sentences)?);
        f32_rates.push(embedding_rate(&f32, &sentences)?);
    }
    let (rate, f32_rate) = (median(rates), median(f32_rates));
    println!(
        "embeddings: {rate:.1} sentences/s (int8, median of 3 runs of {} sentences, batch {})",
        sentences.len(),
        LocalEmbedder::DEFAULT_BATCH
    );
    println!(
        "embeddings f32: {f32_rate:.1} sentences/s (runs alternated with int8's; int8 {:.2}x)",
        rate / f32_rate
    );
    let sample = &sentences[..16];
    let worst = int8
        .embed_blocking(sample)?
        .iter()
        .zip(f32.embed_blocking(sample)?)
        .map(|(a, b)| a.iter().zip(&b).map(|(x, y)| x * y).sum::<f32>())
        .fold(1f32, f32::min);
    println!(
        "int8 vs f32: lowest cosine {worst:.5} over {} sentences",
        sample.len()
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `-- embeddings`: the embedder's numbers only.
    if std::env::args().nth(1).as_deref() != Some("embeddings") {
        let rates = local()?;
        #[cfg(feature = "llama-cpp")]
        llama_cpp(rates)?;
        #[cfg(not(feature = "llama-cpp"))]
        let _ = rates;
    }
    bench_embeddings()?;
    if let Some(rss) = peak_rss_mib() {
        println!("peak RSS: {rss:.0} MiB");
    }
    Ok(())
}
