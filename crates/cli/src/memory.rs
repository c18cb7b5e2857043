//! `agon recall`, `agon memory reindex`, and setting up a debate's memory
//! (with the corpus files its config names).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use agon_config::{DebateConfig, PersonaConfig};
use agon_core::{DebateId, PersonaId};
use agon_llm::{Embedder, EmbedderSpec};
use agon_memory::corpus::{CorpusFormat, chunk};
use agon_memory::{Memory, MemoryError, MemoryFilter, RetrievalConfig};
use anyhow::Context;

use crate::failure::Failure;

pub(crate) fn memory_failure(e: MemoryError) -> Failure {
    let code = match &e {
        MemoryError::Database { .. }
        | MemoryError::Store(_)
        | MemoryError::UnsupportedUrl { .. }
        | MemoryError::NotBuilt { .. } => 5,
        MemoryError::Embedding { .. } => 4,
        MemoryError::EmbedderMismatch { .. } => 3,
        MemoryError::Invalid { .. } | MemoryError::BadRecord { .. } => 2,
    };
    Failure {
        code,
        error: e.into(),
    }
}

/// Parses and loads an embedder (a local model loads on a blocking thread).
pub(crate) async fn embedder(spec: &str) -> Result<Arc<dyn Embedder>, Failure> {
    let spec: EmbedderSpec = spec.parse().map_err(|e| Failure {
        code: 3,
        error: anyhow::Error::from(e),
    })?;
    let shown = spec.to_string();
    tokio::task::spawn_blocking(move || {
        let lookup = |k: &str| std::env::var(k).ok();
        #[cfg(feature = "local")]
        return agon_local::embedder(&spec, &lookup);
        #[cfg(not(feature = "local"))]
        return spec.build(&lookup);
    })
    .await
    .context("loading the embedder")?
    .map_err(|e| Failure {
        code: 4,
        error: anyhow::Error::from(e).context(format!("embedder {shown}")),
    })
}

pub(crate) async fn open(
    url: &str,
    spec: &str,
    retrieval: RetrievalConfig,
) -> Result<Memory, Failure> {
    let index = agon_memory::open(url).await.map_err(memory_failure)?;
    let embedder = embedder(spec).await?;
    Memory::open(index, embedder, retrieval)
        .await
        .map_err(memory_failure)
}

/// [`open`] on a blocking thread of its own, for futures that must be
/// `Send` (a server's handlers, a worker's jobs): opening the memory's
/// store is a future the compiler cannot prove `Send` (sqlx's migrator).
/// The error is the failure's text.
pub(crate) async fn open_detached(
    url: &str,
    spec: &str,
    retrieval: RetrievalConfig,
) -> Result<Memory, String> {
    let (url, spec) = (url.to_owned(), spec.to_owned());
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(open(&url, &spec, retrieval)))
        .await
        .map_err(|e| format!("opening the memory: {e}"))?
        .map_err(|f| format!("{:#}", f.error))
}

/// `agon recall`.
pub(crate) async fn recall(
    url: &str,
    query: &str,
    persona: &str,
    debate: Option<&str>,
    k: usize,
    spec: &str,
    json: bool,
) -> Result<ExitCode, Failure> {
    let memory = open(url, spec, RetrievalConfig::default()).await?;
    let id = PersonaConfig::id_of(persona);
    let filter = MemoryFilter {
        persona: Some(PersonaId::new(id)),
        debate: debate.map(DebateId::new),
        ..MemoryFilter::default()
    };
    let result = memory
        .recall(query, &filter, k)
        .await
        .map_err(memory_failure)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).context("writing the recall as JSON")?
        );
        return Ok(ExitCode::SUCCESS);
    }
    for note in &result.notes {
        eprintln!("note: {note}");
    }
    print!("{}", table(&result));
    Ok(ExitCode::SUCCESS)
}

/// `agon recall`'s table: a hit a row, with its score components, followed
/// by what replaced it and the memories around it. Relative times are
/// shown with their dates ("last Friday (12 May 2023)"), as agents see them.
fn table(result: &agon_memory::Recall) -> String {
    use std::fmt::Write as _;
    // On one line, its relative times with their dates.
    let shown = |m: &agon_memory::MemoryMeta| {
        agon_memory::dates::annotated(&m.content, m.created.date_naive()).replace('\n', " ")
    };
    let mut out = String::new();
    if !result.memories.is_empty() {
        let _ = writeln!(
            out,
            "{:>6} {:>7} {:>9} {:>10} {:>7}  {:<10} {:<26} memory",
            "score", "recency", "relevance", "importance", "speaker", "kind", "debate · round"
        );
    }
    for m in &result.memories {
        let _ = writeln!(
            out,
            "{:>6.3} {:>7.3} {:>9.3} {:>10.3} {:>7.0}  {:<10} {:<26} {}",
            m.score,
            m.recency,
            m.relevance,
            m.importance,
            m.speaker,
            m.memory.kind.as_str(),
            format!("{} · {}", m.memory.debate, m.memory.round),
            shown(&m.memory)
        );
        if let Some(s) = &m.successor {
            let _ = writeln!(
                out,
                "{:>45}  {:<10} {:<26} {}",
                format!("(held until {})", s.until.format("%Y-%m-%d")),
                "then",
                format!("{} · {}", s.memory.debate, s.memory.round),
                shown(&s.memory)
            );
        }
        for c in &m.context {
            let _ = writeln!(
                out,
                "{:>45}  {:<10} {:<26} {}",
                "(context)",
                c.kind.as_str(),
                format!("{} · {}", c.debate, c.round),
                shown(c)
            );
        }
    }
    out
}

/// `agon memory reindex`.
pub(crate) async fn reindex(url: &str, spec: &str) -> Result<ExitCode, Failure> {
    let index = agon_memory::open(url).await.map_err(memory_failure)?;
    let before = index.space().await.map_err(memory_failure)?;
    let embedder = embedder(spec).await?;
    let target = agon_memory::EmbeddingSpace::of(embedder.as_ref());
    eprintln!(
        "Re-embedding every memory with {target} (was {})",
        before.map_or_else(|| "unbound".to_owned(), |s| s.to_string())
    );
    let done = Memory::reindex(index, embedder, |n| eprint!("\r{n} memories re-embedded"))
        .await
        .map_err(memory_failure)?;
    eprintln!("\r{done} memories re-embedded with {target}");
    Ok(ExitCode::SUCCESS)
}

/// Reads, chunks and adds one file to `persona`'s corpus; returns (chunks
/// in the file, chunks new).
pub(crate) async fn add_file(
    memory: &Memory,
    persona: &PersonaId,
    path: &Path,
) -> Result<(usize, usize), Failure> {
    let format = CorpusFormat::of_path(path).map_err(memory_failure)?;
    let text = std::fs::read_to_string(path).map_err(|e| Failure {
        code: 2,
        error: anyhow::anyhow!("reading corpus file {}: {e}", path.display()),
    })?;
    let shown = path.display().to_string();
    let chunks = chunk(&text, format, &shown).map_err(memory_failure)?;
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| Failure {
            code: 2,
            error: anyhow::anyhow!("corpus file {shown} has no usable file name"),
        })?;
    let added = memory
        .add_corpus(persona, file, &chunks, chrono::Utc::now())
        .await
        .map_err(memory_failure)?;
    Ok((chunks.len(), added))
}

/// Indexes the corpus files the config's personas name (their chunks
/// already stored are skipped, so a second debate embeds nothing). A file
/// that cannot be read or chunked is a warning: the debate runs without it.
pub(crate) async fn index_config(memory: &Memory, config: &DebateConfig) -> Vec<String> {
    let mut warnings = Vec::new();
    for persona in &config.personas {
        let id = PersonaId::new(persona.resolved_id());
        for path in &persona.corpus {
            match add_file(memory, &id, path).await {
                Ok((_, 0)) => {}
                Ok((chunks, added)) => eprintln!(
                    "Indexed {added} of {chunks} chunk(s) of {} for {}",
                    path.display(),
                    persona.name
                ),
                Err(f) => warnings.push(format!(
                    "corpus file {} of {} not indexed: {:#}",
                    path.display(),
                    persona.name,
                    f.error
                )),
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    fn memory(id: &str, content: &str, created: &str) -> serde_json::Value {
        json!({
            "id": id, "debate": "d", "persona": "mara", "content": content,
            "kind": "message", "importance": 5, "round": 2, "created": created
        })
    }

    #[test]
    fn the_table_shows_relative_times_with_their_dates_on_every_line() {
        let recall: agon_memory::Recall = serde_json::from_value(json!({
            "memories": [{
                "memory": memory("d/1", "The council voted\nlast Friday.", "2023-05-15T10:00:00Z"),
                "score": 3.9, "recency": 1.0, "relevance": 1.0,
                "importance": 0.5, "speaker": 0.0, "similarity": 0.7, "lexical": 1.2,
                "context": [memory("d/2", "It rained yesterday.", "2023-05-16T10:00:00Z")]
            }],
            "notes": []
        }))
        .unwrap();
        let table = super::table(&recall);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[0].starts_with(" score recency"), "{table}");
        assert!(
            lines[1].starts_with(" 3.900   1.000     1.000      0.500       0  message")
                && lines[1].ends_with(
                    "d · 2                      The council voted last Friday (12 May 2023)."
                ),
            "{table}"
        );
        assert!(
            lines[2].trim_start().starts_with("(context)")
                && lines[2].ends_with("It rained yesterday (15 May 2023)."),
            "{table}"
        );
        let empty = agon_memory::Recall::default();
        assert_eq!(super::table(&empty), "");
    }
}
