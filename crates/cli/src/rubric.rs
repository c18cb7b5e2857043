//! `agon rubric …`: the living rubric (seed 003) — the criteria debates and
//! `agon eval` judge by, their versions, and the changes high-trust
//! overrides proposed.

use std::process::ExitCode;

use agon_app::App;
use agon_trust::rubric::{ProposalStatus, RubricBook};
use clap::Subcommand;

use crate::failure::Failure;

/// `agon rubric …`.
#[derive(Debug, Subcommand)]
pub(crate) enum RubricCommand {
    /// The current version (or `--version N`) with its criteria.
    Show {
        /// `dialectic` (also what `agon eval` scores by) or `structured`.
        #[arg(default_value = agon_core::rubric::DIALECTIC)]
        rubric: String,
        /// A past version.
        #[arg(long)]
        version: Option<u32>,
    },
    /// Every version and every proposal, oldest first.
    History {
        /// `dialectic` or `structured`.
        #[arg(default_value = agon_core::rubric::DIALECTIC)]
        rubric: String,
    },
    /// Accept a pending proposal: its change is the next version, which
    /// later debates and `agon eval` use.
    Accept {
        /// The proposal's number (`agon rubric history`).
        id: u32,
        /// `dialectic` or `structured`.
        #[arg(long, default_value = agon_core::rubric::DIALECTIC)]
        rubric: String,
    },
    /// Reject a pending proposal.
    Reject {
        /// The proposal's number.
        id: u32,
        /// `dialectic` or `structured`.
        #[arg(long, default_value = agon_core::rubric::DIALECTIC)]
        rubric: String,
        /// Why (kept in the history).
        #[arg(long, default_value = "")]
        reason: String,
    },
}

/// Runs `agon rubric …`.
pub(crate) async fn run(
    app: &App,
    command: RubricCommand,
    json: bool,
) -> Result<ExitCode, Failure> {
    match command {
        RubricCommand::Show { rubric, version } => {
            let book = app.rubric_book(&rubric).await?;
            let shown = match version {
                None => book.current(),
                Some(v) => book.version(v).ok_or_else(|| {
                    anyhow::anyhow!(
                        "rubric `{rubric}` has no version {v} (it has 1 to {})",
                        book.current().version
                    )
                })?,
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                println!("Rubric `{}`, version {}:", shown.name, shown.version);
                println!("{}", shown.lines());
                let pending = pending(&book);
                if pending > 0 {
                    println!(
                        "\n{pending} proposal(s) pending: `agon rubric history {}`",
                        shown.name
                    );
                }
            }
        }
        RubricCommand::History { rubric } => {
            let book = app.rubric_book(&rubric).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&book)?);
            } else {
                print!("{}", history(&book));
            }
        }
        RubricCommand::Accept { id, rubric } => {
            let v = app.rubric_accept(&rubric, id).await?;
            eprintln!(
                "Accepted proposal {id}: rubric `{rubric}` is now version {} ({} criteria); later debates and `agon eval` use it.",
                v.version,
                v.criteria.len()
            );
        }
        RubricCommand::Reject { id, rubric, reason } => {
            app.rubric_reject(&rubric, id, &reason).await?;
            eprintln!("Rejected proposal {id} of rubric `{rubric}`.");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn pending(book: &RubricBook) -> usize {
    book.proposals
        .iter()
        .filter(|p| p.status == ProposalStatus::Pending)
        .count()
}

/// The versions and proposals of `book`, as `agon rubric history` prints
/// them.
fn history(book: &RubricBook) -> String {
    let mut out = format!("Rubric `{}`\n\nVersions:\n", book.name);
    for v in &book.versions {
        let names: Vec<&str> = v.criteria.iter().map(|c| c.name.as_str()).collect();
        out.push_str(&format!(
            "  v{}  {}  {}\n      {}\n",
            v.version,
            v.at.format("%Y-%m-%d %H:%M"),
            v.note,
            names.join(", ")
        ));
    }
    out.push_str("\nProposals:\n");
    if book.proposals.is_empty() {
        out.push_str("  none yet (a human override of a high-trust agent's debate proposes one: `agon override ID --file F --criterion \"NAME: description\"`)\n");
    }
    for p in &book.proposals {
        let state = match &p.status {
            ProposalStatus::Pending => "pending".to_owned(),
            ProposalStatus::Accepted { version, .. } => format!("accepted as v{version}"),
            ProposalStatus::Rejected { reason, .. } if reason.is_empty() => "rejected".to_owned(),
            ProposalStatus::Rejected { reason, .. } => format!("rejected: {reason}"),
        };
        out.push_str(&format!(
            "  #{}  {}  {}  (debate {}, {} trust {:.2}, against v{})  {}\n",
            p.id,
            p.at.format("%Y-%m-%d %H:%M"),
            p.change.describe(),
            p.debate,
            p.agent,
            p.trust,
            p.base_version,
            state
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agon_trust::rubric::{Criterion, RubricChange};

    #[test]
    fn the_history_lists_versions_and_proposals_with_their_state() {
        let t0 = chrono::DateTime::from_timestamp(1_780_000_000, 0).unwrap();
        let mut book = RubricBook::new("structured", t0).unwrap();
        let add = RubricChange::Add {
            criterion: Criterion::new("Operability", "It can be run and rolled back."),
        };
        let id = book.propose("d-1", "Ben", 0.81, add, t0).unwrap();
        book.accept(id, t0).unwrap();
        let text = history(&book);
        assert!(
            text.contains("v2  2026-05-28 20:26  add `Operability`"),
            "{text}"
        );
        assert!(
            text.contains("#1  2026-05-28 20:26  add `Operability`: It can be run and rolled back.  (debate d-1, Ben trust 0.81, against v1)  accepted as v2"),
            "{text}"
        );
    }
}
