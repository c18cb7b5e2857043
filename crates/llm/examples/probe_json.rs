//! Times constrained JSON generation and prefix reuse on the local model.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use agon_llm::{ChatRequest, JsonSchema, LocalChat};
fn main() {
    let chat = LocalChat::smollm2().unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap())
            .unwrap();
    let schema = JsonSchema::new("turn_analysis", schema);
    let system = "You track positions in a debate. Output JSON with position (overallStance, aspectPosition, newAgreement, newDisagreement, concession, shift) and disagreements.".to_owned();
    for i in 0..3 {
        let req = ChatRequest::new(format!("Mara just said: cars are bad number {i}. Update."))
            .with_system(system.clone())
            .with_temperature(0.2)
            .with_max_tokens(256);
        let t = std::time::Instant::now();
        let (text, _, stats) = chat.generate_json_blocking(&req, &schema).unwrap();
        println!(
            "{:?} total {:?} text {} chars",
            stats,
            t.elapsed(),
            text.len()
        );
    }
}
