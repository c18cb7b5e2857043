//! Steering any debate, wherever it runs: `agon note`, `agon pause`, `agon
//! stop`, `agon answer`; and `agon feedback`.

use std::io::{BufRead as _, Write as _};
use std::process::ExitCode;

use agon_app::{App, Posted, RunsWhere};
use agon_core::DebateId;

use crate::args::Rating;
use crate::failure::Failure;

/// Who takes a request, as a person reads it.
fn taken_by(posted: &Posted) -> String {
    match &posted.runs {
        RunsWhere::Here => "this process runs it".to_owned(),
        RunsWhere::Elsewhere { holder } => {
            format!("`{holder}` runs it and takes it before its next step")
        }
        RunsWhere::Queued => "the next worker to take it records it".to_owned(),
        RunsWhere::Idle => format!(
            "it runs nowhere now; its next run records it (`agon resume {}`)",
            posted.debate
        ),
    }
}

/// `agon note`.
pub(crate) async fn note(
    app: &App,
    id: String,
    text: String,
    author: Option<String>,
) -> Result<ExitCode, Failure> {
    let posted = app.note(&DebateId::new(id), text, author).await?;
    eprintln!(
        "Note posted to debate {} (request #{}): {}.",
        posted.debate,
        posted.request,
        taken_by(&posted)
    );
    Ok(ExitCode::SUCCESS)
}

/// `agon pause`.
pub(crate) async fn pause(app: &App, id: String, by: Option<String>) -> Result<ExitCode, Failure> {
    let posted = app.pause(&DebateId::new(id), by).await?;
    eprintln!(
        "Pause posted to debate {} (request #{}): {}; `agon resume {}` lifts it.",
        posted.debate,
        posted.request,
        taken_by(&posted),
        posted.debate
    );
    Ok(ExitCode::SUCCESS)
}

/// `agon stop`.
pub(crate) async fn stop(app: &App, id: String) -> Result<ExitCode, Failure> {
    let posted = app.stop(&DebateId::new(id), None).await?;
    eprintln!(
        "Stop posted to debate {} (request #{}): {}; `agon resume {}` continues it.",
        posted.debate,
        posted.request,
        taken_by(&posted),
        posted.debate
    );
    Ok(ExitCode::SUCCESS)
}

/// `agon answer`: the answers given, or each asked on the terminal.
pub(crate) async fn answer(
    app: &App,
    id: String,
    answers: Vec<String>,
) -> Result<ExitCode, Failure> {
    let id = DebateId::new(id);
    let answers = if answers.is_empty() {
        let questions = app.questions(&id).await?;
        if questions.is_empty() {
            return Err(agon_app::AppError::conflict(&id, "it is not waiting for answers").into());
        }
        let stdin = std::io::stdin();
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "Debate {id} asks {} clarifying question(s). Answer each one, or press Enter to skip (NA).",
            questions.len()
        );
        let mut given = Vec::with_capacity(questions.len());
        for q in &questions {
            let role = q.role.as_deref().unwrap_or("agent");
            let _ = write!(
                err,
                "\n[{}] ({role}) {}: {}\n  > ",
                q.agent_name, q.id, q.text
            );
            let _ = err.flush();
            let mut line = String::new();
            stdin
                .lock()
                .read_line(&mut line)
                .map_err(anyhow::Error::from)?;
            given.push(line.trim().to_owned());
        }
        given
    } else {
        answers
    };
    let posted = app.answer(&id, answers).await?;
    eprintln!(
        "Answers posted to debate {} (request #{}): {}.",
        posted.debate,
        posted.request,
        taken_by(&posted)
    );
    Ok(ExitCode::SUCCESS)
}

/// `agon feedback`.
pub(crate) async fn feedback(app: &App, id: String, rating: Rating) -> Result<ExitCode, Failure> {
    let id = DebateId::new(id);
    let value = match rating {
        Rating::Up => 1,
        Rating::Down => -1,
    };
    app.feedback(&id, value).await?;
    eprintln!("Recorded feedback {value:+} for debate {id}");
    Ok(ExitCode::SUCCESS)
}
