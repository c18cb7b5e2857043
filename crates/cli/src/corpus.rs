//! `agon corpus add|list|remove|search`: a persona's own sources, and the
//! indexing of the corpus files a config names (on first use).

use std::path::Path;
use std::process::ExitCode;

use agon_config::{DebateConfig, PersonaConfig};
use agon_core::PersonaId;
use agon_memory::corpus::{CorpusFormat, chunk};
use agon_memory::{Memory, MemoryError, RetrievalConfig};
use anyhow::Context;
use clap::Subcommand;

use crate::Failure;

/// `agon corpus …`.
#[derive(Debug, Subcommand)]
pub(crate) enum CorpusCommand {
    /// Add files to a persona's corpus: Markdown (chunked on headings and
    /// paragraphs), plain text (paragraphs) or JSON lines (one post per
    /// line, its text in `text`, `content` or `body`). A file added twice
    /// adds nothing.
    Add {
        /// The persona (name or id; a dialectic agent by its id, such as
        /// `agent-architect`).
        persona: String,
        /// The files.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// The embedder the store is written with.
        #[arg(long, default_value = "local")]
        embedder: String,
    },
    /// List the sources of every persona's corpus, or of one.
    List {
        /// Only this persona (name or id).
        persona: Option<String>,
        /// The embedder the store is written with.
        #[arg(long, default_value = "local")]
        embedder: String,
    },
    /// Remove a source (by its file name) from a persona's corpus.
    Remove {
        /// The persona (name or id).
        persona: String,
        /// The file name, as `agon corpus list` shows it.
        file: String,
        /// The embedder the store is written with.
        #[arg(long, default_value = "local")]
        embedder: String,
    },
    /// The passages of a persona's corpus most relevant to a query, as
    /// EVIDENCE would show them.
    Search {
        /// The persona (name or id).
        persona: String,
        /// What to look for.
        query: String,
        /// How many passages.
        #[arg(short, default_value_t = 5)]
        k: usize,
        /// The embedder the store is written with.
        #[arg(long, default_value = "local")]
        embedder: String,
    },
}

/// A persona's id from its name or id (`Zoë Brandt` → `zoë-brandt`).
fn persona_id(persona: &str) -> PersonaId {
    PersonaId::new(
        PersonaConfig {
            id: None,
            name: persona.to_owned(),
            contract: String::new(),
            voice: String::new(),
            model: None,
            corpus: Vec::new(),
            tools: Vec::new(),
            tool_call_limit: None,
        }
        .resolved_id(),
    )
}

fn failure(e: MemoryError) -> Failure {
    crate::memory::memory_failure(e)
}

/// Reads, chunks and adds one file to `persona`'s corpus; returns (chunks
/// in the file, chunks new).
pub(crate) async fn add_file(
    memory: &Memory,
    persona: &PersonaId,
    path: &Path,
) -> Result<(usize, usize), Failure> {
    let format = CorpusFormat::of_path(path).map_err(failure)?;
    let text = std::fs::read_to_string(path).map_err(|e| Failure {
        code: 2,
        error: anyhow::anyhow!("reading corpus file {}: {e}", path.display()),
    })?;
    let shown = path.display().to_string();
    let chunks = chunk(&text, format, &shown).map_err(failure)?;
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
        .map_err(failure)?;
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

/// Runs `agon corpus …` on the store at `url`.
pub(crate) async fn run(
    url: &str,
    command: CorpusCommand,
    json: bool,
) -> Result<ExitCode, Failure> {
    match command {
        CorpusCommand::Add {
            persona,
            files,
            embedder,
        } => {
            let memory = crate::memory::open(url, &embedder, RetrievalConfig::default()).await?;
            let id = persona_id(&persona);
            let mut rows = Vec::new();
            for path in &files {
                let (chunks, added) = add_file(&memory, &id, path).await?;
                rows.push(serde_json::json!({"file": path.display().to_string(), "chunks": chunks, "added": added}));
                if !json {
                    println!(
                        "{}: {chunks} chunk(s), {added} new, for {id}",
                        path.display()
                    );
                }
            }
            if json {
                println!("{}", serde_json::json!({"persona": id, "files": rows}));
            }
        }
        CorpusCommand::List { persona, embedder } => {
            let memory = crate::memory::open(url, &embedder, RetrievalConfig::default()).await?;
            let id = persona.as_deref().map(persona_id);
            let sources = memory.corpus_sources(id.as_ref()).await.map_err(failure)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&sources).context("writing the list as JSON")?
                );
            } else if sources.is_empty() {
                eprintln!(
                    "note: no corpus{}",
                    id.map_or_else(String::new, |p| format!(" for {p}"))
                );
            } else {
                println!("{:<24} {:>6}  {:<17} file", "persona", "chunks", "added");
                for s in &sources {
                    println!(
                        "{:<24} {:>6}  {:<17} {}",
                        s.persona.as_str(),
                        s.chunks,
                        s.added.format("%Y-%m-%d %H:%M"),
                        s.file
                    );
                }
            }
        }
        CorpusCommand::Remove {
            persona,
            file,
            embedder,
        } => {
            let memory = crate::memory::open(url, &embedder, RetrievalConfig::default()).await?;
            let id = persona_id(&persona);
            let removed = memory.remove_corpus(&id, &file).await.map_err(failure)?;
            if removed == 0 {
                return Err(Failure {
                    code: 3,
                    error: anyhow::anyhow!(
                        "{id} has no corpus source {file:?} (see `agon corpus list`)"
                    ),
                });
            }
            println!("Removed {file} ({removed} chunk(s)) from {id}'s corpus");
        }
        CorpusCommand::Search {
            persona,
            query,
            k,
            embedder,
        } => {
            let memory = crate::memory::open(url, &embedder, RetrievalConfig::default()).await?;
            let id = persona_id(&persona);
            if !memory.has_corpus(&id).await.map_err(failure)? {
                return Err(Failure {
                    code: 3,
                    error: anyhow::anyhow!("{id} has no corpus (add one with `agon corpus add`)"),
                });
            }
            let found = memory
                .evidence(&id, &query, k.clamp(1, 100))
                .await
                .map_err(failure)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&found).context("writing the passages as JSON")?
                );
            } else {
                for e in &found {
                    println!(
                        "[E:{}] {:.3} ({} #{}) {}",
                        e.hash,
                        e.relevance,
                        e.file,
                        e.position,
                        e.content.replace('\n', " ")
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
