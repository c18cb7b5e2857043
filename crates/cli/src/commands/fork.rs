//! `agon fork`: a new debate whose log is another's up to any event.

use std::process::ExitCode;

use agon_app::App;
use agon_config::Overrides;
use agon_core::DebateId;

use crate::failure::Failure;

/// What `agon fork` changes in the fork's configuration.
#[derive(Debug, Default)]
pub(crate) struct ForkSettings {
    /// One model for every role.
    pub(crate) model: Option<String>,
    /// Dialectic rounds.
    pub(crate) rounds: Option<u32>,
    /// Structured minirounds per aspect.
    pub(crate) minirounds: Option<u32>,
}

/// `agon fork`: prints the fork's id on standard output.
pub(crate) async fn run(
    app: &App,
    id: String,
    at: Option<u64>,
    settings: ForkSettings,
) -> Result<ExitCode, Failure> {
    let id = DebateId::new(id);
    let mut overrides = Overrides {
        model: settings.model,
        ..Overrides::default()
    };
    overrides.dialectic.rounds = settings.rounds;
    overrides.structured.minirounds = settings.minirounds;
    let forked = app.fork(&id, at, &overrides).await?;
    println!("{}", forked.id);
    eprintln!(
        "Forked debate {} at event #{} as {}: run it on with `agon resume {}` (a note first: `agon note {} TEXT`); `agon compare {} {}` shows where they part.",
        forked.from, forked.seq, forked.id, forked.id, forked.id, forked.from, forked.id
    );
    Ok(ExitCode::SUCCESS)
}
