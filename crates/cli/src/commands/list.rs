//! `agon list`: every stored debate, with its job on the workers.

use std::process::ExitCode;
use std::sync::Arc;

use agon_store::EventStore;

use crate::failure::Failure;
use crate::queue;
use crate::view::first_line;

/// `agon list` (`--json`: one object per debate).
pub(crate) async fn run(
    store: &Arc<dyn EventStore>,
    url: &str,
    json: bool,
) -> Result<ExitCode, Failure> {
    let debates = store.list_debates().await?;
    let jobs = queue::jobs(url).await;
    // A person's rating is in each debate's log.
    let mut feedback = Vec::with_capacity(debates.len());
    for d in &debates {
        feedback.push(store.load(&d.id).await?.0.user_feedback());
    }
    if json {
        let rows: Vec<serde_json::Value> = debates
            .iter()
            .zip(&feedback)
            .map(|(d, feedback)| {
                serde_json::json!({
                    "id": d.id,
                    "topic": d.topic,
                    "protocol": d.config.get("protocol").and_then(|p| p.as_str()).unwrap_or("structured"),
                    "status": d.status,
                    "messages": d.message_count,
                    "events": d.last_seq,
                    "user_feedback": feedback,
                    "job": jobs.get(&d.id).map(|job| {
                        let (state, detail) = queue::job_state(job);
                        serde_json::json!({
                            "state": state,
                            "worker": job.locked_by,
                            "attempts": job.attempts,
                            "max_attempts": job.max_attempts,
                            "last_error": job.last_error,
                            "detail": detail,
                        })
                    }),
                    "created_at": d.created_at,
                    "updated_at": d.updated_at,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if debates.is_empty() {
        eprintln!("No debates in {}", store.url());
    }
    for (d, feedback) in debates.iter().zip(feedback) {
        let rated = match feedback {
            Some(1) => "+1",
            Some(_) => "-1",
            None => "  ",
        };
        // A queued debate's job says more than its stored status.
        let (status, detail) = match jobs.get(&d.id) {
            Some(job) if !d.status.is_done() => queue::job_state(job),
            _ => (d.status.as_str(), String::new()),
        };
        let detail = if detail.is_empty() {
            detail
        } else {
            format!("  [{detail}]")
        };
        println!(
            "{}  {:<11}  {:>3} msgs  {rated}  {}  {}{detail}",
            d.id,
            status,
            d.message_count,
            d.created_at.format("%Y-%m-%d %H:%M"),
            first_line(&d.topic)
        );
    }
    Ok(ExitCode::SUCCESS)
}
