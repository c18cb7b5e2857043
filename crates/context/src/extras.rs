//! What assembly is given besides the blackboard.

use serde::Serialize;

/// A memory retrieved by the caller (vector memory, cross-debate recall),
/// shown under RELEVANT EARLIER CONTEXT in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RetrievedMemory {
    /// Where it comes from ("round 2", "debate on X, 2026-10-01", …).
    pub label: String,
    /// The remembered text.
    pub content: String,
}

/// A passage of the persona's own corpus found for the turn, shown under
/// EVIDENCE with the id the persona cites it by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvidencePassage {
    /// The citable id (`[E:ID]`).
    pub id: String,
    /// The file it comes from.
    pub source: String,
    /// The passage.
    pub content: String,
}

/// Inputs to assembly that do not live on the blackboard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ContextExtras {
    /// Retrieved memories, most relevant first.
    pub memories: Vec<RetrievedMemory>,
    /// Passages of the persona's corpus, most relevant first.
    pub evidence: Vec<EvidencePassage>,
}
