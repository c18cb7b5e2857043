//! Errors of `agon-context`.

/// Why a context could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// The budget is below the minimum.
    #[error("context budget of {budget} tokens is below the minimum of {minimum}")]
    BudgetTooSmall {
        /// The budget asked for.
        budget: usize,
        /// The minimum.
        minimum: usize,
    },
    /// The blackboard has no `debate_started` yet.
    #[error("the blackboard has no debate yet (no debate_started event applied)")]
    NotStarted,
    /// The persona is not in the debate.
    #[error("unknown persona `{0}`")]
    UnknownPersona(String),
    /// The persona is the judge, who takes no part in the debate phases.
    #[error("persona `{0}` is not a debater")]
    NotADebater(String),
    /// The aspect is not in the debate.
    #[error("unknown aspect `{0}`")]
    UnknownAspect(String),
    /// The claim was never opened.
    #[error("unknown claim `{0}`")]
    UnknownClaim(String),
    /// No claim was sent to this crux room.
    #[error("unknown crux room `{0}`")]
    UnknownCruxRoom(String),
    /// A retrieval setting is out of range.
    #[error("retrieval setting `{field}`: {reason}")]
    InvalidRetrieval {
        /// The field of [`crate::RetrievalConfig`].
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The persona is not a party to the claim of a crux phase.
    #[error("persona `{persona}` is not a party to claim `{claim}`")]
    NotAParty {
        /// The persona.
        persona: String,
        /// The claim.
        claim: String,
    },
}
