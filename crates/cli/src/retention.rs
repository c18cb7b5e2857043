//! `agon delete` and `agon prune`: removing debates, with their vector
//! memories, from the store.

use std::process::ExitCode;

use agon_app::App;
use agon_core::DebateId;

use crate::failure::Failure;

/// An age like `30d`, `12h`, `45m`, `2w` or `90s`.
pub(crate) fn parse_age(text: &str) -> Result<chrono::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{text}` has no unit (s, m, h, d or w)"))?;
    let (n, unit) = text.split_at(split);
    let n: i64 = n
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        other => return Err(format!("`{other}` is not a unit (s, m, h, d or w)")),
    };
    n.checked_mul(seconds)
        .map(chrono::Duration::seconds)
        .ok_or_else(|| format!("`{text}` is too long"))
}

/// Deletes `ids` (with `dry_run`, only says what would go): each debate
/// under its run lease, then its vector memories (`App::delete`).
pub(crate) async fn delete(
    app: &App,
    ids: &[DebateId],
    dry_run: bool,
) -> Result<ExitCode, Failure> {
    let memory = app.runtime().memory_index().await;
    for id in ids {
        let done = app.delete(id, memory.as_ref(), dry_run).await?;
        if dry_run {
            println!(
                "would delete {id}: {} events, {} memories",
                done.events, done.memories
            );
        } else {
            println!(
                "deleted {id}: {} events, {} memories",
                done.events, done.memories
            );
        }
    }
    if !dry_run {
        eprintln!("`agon compact` gives the space back to the file system");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_with_their_units() {
        assert_eq!(parse_age("30d"), Ok(chrono::Duration::days(30)));
        assert_eq!(parse_age("2w"), Ok(chrono::Duration::weeks(2)));
        assert_eq!(parse_age("0s"), Ok(chrono::Duration::zero()));
        assert!(parse_age("30").unwrap_err().contains("no unit"));
        assert!(parse_age("3y").unwrap_err().contains("`y` is not a unit"));
        assert!(parse_age("d").unwrap_err().contains("number"));
    }
}
