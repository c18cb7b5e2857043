//! The JSON report: the debate's records themselves (the API's shape: the
//! personas, the ledger, claims, crux cards, the transcript, usage…), the
//! header's fields, and why each empty section is empty, from the same
//! [`Sections`] the other formats lay out.

use agon_core::{Blackboard, DialogueMessage, MessageKind};

use crate::empty::ReportOptions;
use crate::sections::Sections;

/// The report as JSON: the same sections as the markdown (personas,
/// aspects, the position ledger, claims, crux cards, reflections, round
/// records, closings, synthesis or solution, warnings, repairs, usage with
/// totals) and, for each empty section, why it is empty.
pub fn json(bb: &Blackboard, options: ReportOptions) -> serde_json::Value {
    json_of(bb, &Sections::of(bb, options))
}

/// [`json`] with the sections already computed.
pub(crate) fn json_of(bb: &Blackboard, sections: &Sections) -> serde_json::Value {
    let messages = |kind: MessageKind| -> Vec<&DialogueMessage> {
        bb.messages().iter().filter(|m| m.kind == kind).collect()
    };
    let total = bb.usage_total();
    serde_json::json!({
        "debate": bb.debate(),
        "protocol": bb.protocol().as_str(),
        "deliberation": (bb.protocol() == agon_core::ProtocolKind::Deliberation).then(|| serde_json::json!({
            "stats": crate::MemoryStats::of(bb),
            "summaries": bb.summaries(),
            "decisions": bb.decisions(),
            "proposals": bb.proposals(),
        })),
        "topic": bb.topic(),
        "status": bb.status(),
        "started_at": bb.started_at(),
        "personas": bb.personas(),
        "aspects": bb.aspects(),
        "ledger": bb.positions(),
        "claims": bb.claims(),
        "crux_cards": bb.crux_cards(),
        "reflections": bb.reflections(),
        "round_records": bb.rounds(),
        "openings": messages(MessageKind::Opening),
        "closings": messages(MessageKind::Closing),
        "synthesis": messages(MessageKind::Synthesis).last(),
        "solution": bb.solution(),
        "requirements": (!bb.requirements().requirements.is_empty()).then(|| bb.requirements()),
        "devils_advocates": bb.devils_advocates(),
        "transcript": bb.messages(),
        "moderator_notes": bb.notes(),
        "user_feedback": bb.user_feedback(),
        "paused": bb.is_paused(),
        "warnings": bb.warnings(),
        "repairs": bb.repairs(),
        "citations": bb.citations(),
        "tool_calls": bb.tool_calls(),
        "usage": bb.usage(),
        "totals": {
            "calls": total.calls,
            "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens,
            "cached_input_tokens": total.cached_input_tokens,
            "cache_write_tokens": total.cache_write_tokens,
            "cost_usd": total.cost_micro_usd as f64 / 1e6,
            "cache_saving_usd": total.cache_saving_micro_usd() as f64 / 1e6,
            "unpriced": total.unpriced,
        },
        "empty_sections": &sections.empty,
    })
}
