#![allow(missing_docs, clippy::unwrap_used)]
use agon_core::extraction::{Payload, TurnAnalysis, with_persona_names};
fn main() {
    let names = vec!["Mara".to_owned(), "Theo".to_owned(), "Priya".to_owned()];
    println!(
        "{}",
        with_persona_names(&TurnAnalysis::json_schema(), &names)
    );
}
