//! Errors of `agon-core`.

use crate::claim::ClaimStatus;

/// Why [`crate::Blackboard::apply`] rejected an event. The blackboard is left unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// An event other than `debate_started` arrived first.
    #[error("event `{event}` arrived before `debate_started`")]
    NotStarted {
        /// The offending event's name.
        event: &'static str,
    },
    /// A second `debate_started`.
    #[error("debate `{debate}` has already started")]
    AlreadyStarted {
        /// The debate id.
        debate: String,
    },
    /// An event after `debate_finished`.
    #[error("debate `{debate}` is finished; event `{event}` rejected")]
    Finished {
        /// The debate id.
        debate: String,
        /// The offending event's name.
        event: &'static str,
    },
    /// A reference to a persona the debate does not have.
    #[error("unknown persona `{id}` in {field}")]
    UnknownPersona {
        /// The id.
        id: String,
        /// Where it was referenced.
        field: &'static str,
    },
    /// A position or ledger event for the judge, who has no ledger.
    #[error("persona `{id}` is not a debater and has no position ledger ({field})")]
    NotADebater {
        /// The id.
        id: String,
        /// Where it was referenced.
        field: &'static str,
    },
    /// A reference to an aspect the debate does not have.
    #[error("unknown aspect `{id}` in {field}")]
    UnknownAspect {
        /// The id.
        id: String,
        /// Where it was referenced.
        field: &'static str,
    },
    /// A reference to a message that is not in the transcript.
    #[error("unknown message `{id}` in {field}")]
    UnknownMessage {
        /// The id.
        id: String,
        /// Where it was referenced.
        field: &'static str,
    },
    /// A reference to a claim that was never opened.
    #[error("unknown claim `{id}` in {field}")]
    UnknownClaim {
        /// The id.
        id: String,
        /// Where it was referenced.
        field: &'static str,
    },
    /// A reference to a crux room no claim was sent to.
    #[error("unknown crux room `{id}` in {field}")]
    UnknownCruxRoom {
        /// The id.
        id: String,
        /// Where it was referenced.
        field: &'static str,
    },
    /// A reference to a proposal that was never recorded.
    #[error("unknown proposal `{id}` in {field}")]
    UnknownProposal {
        /// The id.
        id: String,
        /// Where it was referenced.
        field: &'static str,
    },
    /// An id that is already taken.
    #[error("duplicate {kind} id `{id}`")]
    DuplicateId {
        /// What kind of entity.
        kind: &'static str,
        /// The id.
        id: String,
    },
    /// A claim transition the lifecycle does not allow.
    #[error("claim `{claim}` cannot go from {from} to {to}", from = .from.label(), to = .to.label())]
    IllegalClaimTransition {
        /// The claim.
        claim: String,
        /// Its current status.
        from: ClaimStatus,
        /// The requested status.
        to: ClaimStatus,
    },
    /// Importance outside 1..=10.
    #[error("importance {value} of `{id}` is outside 1..=10")]
    ImportanceOutOfRange {
        /// The entity id.
        id: String,
        /// The value given.
        value: u8,
    },
    /// A required text or id field is empty (or only whitespace).
    #[error("{field} must not be empty (in {at})")]
    EmptyField {
        /// The field.
        field: &'static str,
        /// The entity it belongs to (an id, or the event name).
        at: String,
    },
    /// A persona paired with itself (agreement, disagreement, claim).
    #[error("persona `{id}` cannot be paired with itself in {field}")]
    SelfReference {
        /// The persona.
        id: String,
        /// Where.
        field: &'static str,
    },
    /// A round number going backwards.
    #[error("round {round} of aspect `{aspect}` is not after the current round {current}")]
    RoundOutOfOrder {
        /// The aspect.
        aspect: String,
        /// The round given.
        round: u32,
        /// The current round.
        current: u32,
    },
    /// A `round_started` whose round is not the next one.
    #[error("round_started: round {round} is not the round after {current}")]
    RoundNotNext {
        /// The round given.
        round: u32,
        /// The current round.
        current: u32,
    },
    /// A confidence outside 0..=100 percent.
    #[error("confidence {value} in {field} is outside 0..=100")]
    ConfidenceOutOfRange {
        /// Where.
        field: &'static str,
        /// The value given.
        value: u8,
    },
    /// A requirement id that no `requirements_recorded` event gave.
    #[error("unknown requirement `{id}` in {field}")]
    UnknownRequirement {
        /// The id.
        id: String,
        /// Where.
        field: &'static str,
    },
    /// More requirements than [`crate::MAX_REQUIREMENTS`].
    #[error("requirements_recorded: {count} requirements, more than the {max} a debate tracks")]
    TooManyRequirements {
        /// How many were given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// An urgency above [`crate::deliberation::MAX_URGENCY`].
    #[error("urgency {value} of {persona} in speakers_evaluated is above 10")]
    UrgencyOutOfRange {
        /// Whose bid.
        persona: String,
        /// The value given.
        value: u8,
    },
    /// `debate_paused` on a paused debate, or `debate_resumed` on one
    /// that is not paused.
    #[error("debate `{debate}` is {state}; `{event}` rejected")]
    PauseState {
        /// The debate.
        debate: String,
        /// "already paused" or "not paused".
        state: &'static str,
        /// The rejected event.
        event: &'static str,
    },
    /// A moderator note longer than [`crate::steering::MAX_NOTE_CHARS`].
    #[error("note_added: the note has {chars} characters, more than the {max} allowed")]
    NoteTooLong {
        /// Its length in characters.
        chars: usize,
        /// The limit.
        max: usize,
    },
    /// Feedback other than `1` or `-1`.
    #[error("feedback_recorded: value {value} is not 1 (up) or -1 (down)")]
    FeedbackOutOfRange {
        /// The value given.
        value: i8,
    },
    /// Citations recorded for a message under another persona than its
    /// speaker.
    #[error("evidence_cited: message `{message}` is not {persona}'s")]
    NotTheSpeaker {
        /// The message.
        message: String,
        /// The persona given.
        persona: String,
    },
}
