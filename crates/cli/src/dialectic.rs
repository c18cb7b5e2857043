//! `agon debate --protocol dialectic`: the problem and configuration from
//! the command line (dialectic's flags), answers to clarifying questions
//! on the terminal, and the outputs (`--output`, `--report`, the solution
//! on standard output).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agon_orchestrator::{AnswerError, Answerer, Question};
use agon_view::{DebateView, export};
use anyhow::Context as _;
use async_trait::async_trait;

use crate::failure::Failure;

/// A usage error (exit code 2) naming the flag.
pub(crate) fn usage_error(flag: &str, reason: impl std::fmt::Display) -> Failure {
    Failure {
        code: 2,
        error: anyhow::anyhow!("{flag}: {reason}"),
    }
}

/// Reads a non-empty UTF-8 text file named by `flag`.
pub(crate) fn read_text(flag: &str, path: &Path) -> Result<String, Failure> {
    if path.is_dir() {
        return Err(usage_error(
            flag,
            format!("{} is a directory", path.display()),
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage_error(flag, format!("cannot read {}: {e}", path.display())))?;
    if text.trim().is_empty() {
        return Err(usage_error(flag, format!("{} is empty", path.display())));
    }
    Ok(text)
}

/// Answers clarifying questions on the terminal (or from standard input
/// when it is piped): one line per question, an empty line is "NA", the
/// end of input answers the rest "NA". The live view is hidden meanwhile.
pub(crate) struct TerminalAnswers {
    pub(crate) bars: indicatif::MultiProgress,
}

#[async_trait]
impl Answerer for TerminalAnswers {
    async fn answer(&self, questions: &[Question]) -> Result<Vec<String>, AnswerError> {
        let questions = questions.to_vec();
        let bars = self.bars.clone();
        tokio::task::spawn_blocking(move || {
            bars.suspend(|| {
                let stdin = std::io::stdin();
                let mut err = std::io::stderr();
                let _ = writeln!(
                    err,
                    "\nThe agents ask {} clarifying question(s). Answer each one, or press Enter to skip (NA).",
                    questions.len()
                );
                let mut answers = Vec::new();
                let mut last = None;
                let mut open = true;
                for q in &questions {
                    if last.as_ref() != Some(&q.agent) {
                        let role = q.role.map_or("agent", agon_core::AgentRole::as_str);
                        let _ = writeln!(err, "\n[{}] ({role})", q.agent_name);
                        last = Some(q.agent.clone());
                    }
                    let _ = write!(err, "  Q ({}): {}\n  > ", q.id, q.text);
                    let _ = err.flush();
                    let mut line = String::new();
                    if open {
                        match stdin.read_line(&mut line) {
                            Ok(0) | Err(_) => open = false,
                            Ok(_) => {}
                        }
                    }
                    let answer = line.trim().to_owned();
                    if answer.is_empty() {
                        let _ = writeln!(err, "  {}: NA", q.id);
                    }
                    answers.push(answer);
                }
                answers
            })
        })
        .await
        .map_err(|e| AnswerError {
            source_name: "the terminal".into(),
            reason: e.to_string(),
        })
    }
}

/// Where the results go.
pub(crate) struct Outputs {
    pub output: Option<PathBuf>,
    pub report: Option<PathBuf>,
}

impl Outputs {
    /// Writes the outputs of a finished debate: `--output` (full state as
    /// JSON, or the solution text), else the solution on standard output
    /// (dialectic); `--report`, the same report as `agon report`
    /// (non-fatal: a failure is a warning).
    pub(crate) fn write(&self, view: &DebateView, dialectic: bool) -> Result<(), Failure> {
        let bb = view.board();
        match &self.output {
            Some(path) => {
                let is_json = path
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"));
                let text = if is_json {
                    let state = if dialectic {
                        export::dialectic_state(bb)
                    } else {
                        serde_json::to_value(bb).context("serializing the debate")?
                    };
                    serde_json::to_string_pretty(&state).context("serializing the debate")? + "\n"
                } else {
                    agon_view::terminal::solution_text(view).unwrap_or_default()
                };
                create_parent(path)?;
                std::fs::write(path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("Wrote {}", path.display());
            }
            None if dialectic => {
                if let Some(text) = agon_view::terminal::solution_text(view) {
                    println!("\n{text}");
                }
            }
            None => {}
        }
        if let Some(path) = &self.report {
            let path = if path.extension().is_some_and(|e| e == "md") {
                path.clone()
            } else {
                PathBuf::from(format!("{}.md", path.display()))
            };
            let md = view.markdown();
            match create_parent(&path).and_then(|()| {
                std::fs::write(&path, md)
                    .with_context(|| format!("writing {}", path.display()))
                    .map_err(Failure::from)
            }) {
                Ok(()) => eprintln!("Generated report: {}", path.display()),
                Err(f) => eprintln!("warning: the report was not written: {:#}", f.error),
            }
        }
        Ok(())
    }
}

fn create_parent(path: &Path) -> Result<(), Failure> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(())
}

/// The terminal answerer, or the answers file, for a run.
pub(crate) fn answerer(
    answers: Option<&Path>,
    bars: &indicatif::MultiProgress,
) -> Result<Arc<dyn Answerer>, Failure> {
    Ok(match answers {
        Some(path) => {
            Arc::new(agon_app::AnswersFile::load(path).map_err(|e| usage_error("--answers", e))?)
        }
        None => Arc::new(TerminalAnswers { bars: bars.clone() }),
    })
}

/// Whether this binary was started through a link named `dialectic`
/// (`ln -s "$(command -v agon)" dialectic`): `debate` then runs dialectic
/// and reads `./debate-config.json` by default, as dialectic does.
pub(crate) fn invoked_as_dialectic() -> bool {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_stem().map(|s| s.to_os_string()))
        .is_some_and(|stem| stem == "dialectic")
}
