//! `agon corpus add|list|remove|search`: a persona's own sources, and the
//! indexing of the corpus files a config names (on first use).

use std::process::ExitCode;

use agon_config::PersonaConfig;
use agon_core::PersonaId;
use agon_memory::{MemoryError, RetrievalConfig};
use anyhow::Context;
use clap::Subcommand;

use crate::failure::Failure;

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
    PersonaId::new(PersonaConfig::id_of(persona))
}

fn failure(e: MemoryError) -> Failure {
    crate::memory::memory_failure(e)
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
                let (chunks, added) = crate::memory::add_file(&memory, &id, path).await?;
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
