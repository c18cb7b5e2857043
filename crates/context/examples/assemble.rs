//! Prints the context a persona would see at one moment of a recorded debate.
//!
//! ```text
//! cargo run -p agon-context --example assemble -- --persona mara --phase closing
//! cargo run -p agon-context --example assemble -- --persona theo --phase take:horizon:1 --events 20
//! cargo run -p agon-context --example assemble -- --persona mara --phase crux-entry:claim-1 --budget 400
//! ```
//!
//! By default it reads the fixture debate in `tests/fixtures/debate.json`
//! (a JSON array of events); `--events N` replays only the first N events.

use std::path::PathBuf;
use std::process::ExitCode;

use agon_context::{Assembler, ContextBudget, ContextExtras, Phase};
use agon_core::{Blackboard, DebateEvent};
use clap::Parser;

#[derive(Parser)]
#[command(about = "Print the assembled context of a persona at one phase of a debate")]
struct Args {
    /// Persona name or id.
    #[arg(long)]
    persona: String,
    /// opening | take:ASPECT:MINIROUND | crux-entry:CLAIM | crux-exchange:ROOM | closing
    #[arg(long, default_value = "closing")]
    phase: String,
    /// Token budget of the context.
    #[arg(long, default_value_t = ContextBudget::DEFAULT_TOKENS)]
    budget: usize,
    /// Event log (JSON array of events).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/debate.json"))]
    events_file: PathBuf,
    /// Replay only the first N events.
    #[arg(long)]
    events: Option<usize>,
}

fn parse_phase(text: &str) -> Result<Phase, String> {
    let parts: Vec<&str> = text.split(':').collect();
    match parts.as_slice() {
        ["opening"] => Ok(Phase::Opening),
        ["closing"] => Ok(Phase::Closing),
        ["take", aspect, miniround] => Ok(Phase::Take {
            aspect: (*aspect).into(),
            miniround: miniround
                .parse()
                .map_err(|_| format!("--phase: miniround {miniround:?} is not a number"))?,
        }),
        ["crux-entry", claim] => Ok(Phase::CruxEntry {
            claim: (*claim).into(),
        }),
        ["crux-exchange", room] => Ok(Phase::CruxExchange {
            room: (*room).into(),
        }),
        _ => Err(format!(
            "--phase: {text:?} is not one of opening, take:ASPECT:MINIROUND, crux-entry:CLAIM, crux-exchange:ROOM, closing"
        )),
    }
}

fn run(args: Args) -> Result<(), String> {
    let phase = parse_phase(&args.phase)?;
    let budget = ContextBudget::new(args.budget).map_err(|e| format!("--budget: {e}"))?;
    let path = args.events_file.display().to_string();
    let text = std::fs::read_to_string(&args.events_file).map_err(|e| format!("{path}: {e}"))?;
    let events: Vec<DebateEvent> =
        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let upto = args.events.unwrap_or(events.len()).min(events.len());
    let board =
        Blackboard::replay(&events[..upto]).map_err(|(i, e)| format!("{path}: event #{i}: {e}"))?;
    let context = Assembler::default()
        .assemble(
            &board,
            &args.persona,
            &phase,
            budget,
            &ContextExtras::default(),
        )
        .map_err(|e| e.to_string())?;
    println!("{}", context.text);
    eprintln!("\n{} of {} tokens:", context.total_tokens, context.budget);
    for report in &context.reports {
        eprintln!(
            "  {:<28} {:>5} tokens, {}/{} items",
            report.kind.title(),
            report.tokens,
            report.items,
            report.available
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
