//! What a run on this server tells the event streams.

/// A live update of one debate, for the event streams.
#[derive(Debug, Clone)]
pub enum Live {
    /// Events were appended (the stream reads them from the store).
    Appended,
    /// The run waits for answers to clarifying questions.
    Questions,
    /// A piece of a turn being generated.
    Token {
        /// The turn's key (its stored spelling).
        turn: String,
        /// Who speaks.
        persona: String,
        /// The text.
        delta: String,
    },
}
