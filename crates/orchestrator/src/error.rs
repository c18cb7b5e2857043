//! The orchestrator's errors.

use agon_store::{LogError, StoreError};

use crate::models::ModelError;
use agon_config::ConfigError;

/// Why a debate could not be created or run. A run that fails can be
/// resumed: everything acknowledged is in the store.
#[derive(Debug, thiserror::Error)]
pub enum OrchestratorError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A model could not be built.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The debate log rejected or failed an append.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A model call that the debate cannot do without failed.
    #[error("debate `{debate}`: {what}: {source}")]
    Provider {
        /// The debate.
        debate: String,
        /// Which call ("utterance of Mara (take/aspect-1/0/mara)", …).
        what: String,
        /// The provider error.
        #[source]
        source: Box<agon_llm::ProviderError>,
    },
    /// The configuration stored with a debate cannot be written or read back.
    #[error("debate `{debate}`: stored config: {source}")]
    StoredConfig {
        /// The debate.
        debate: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// The context budget of the configuration is unusable.
    #[error("debate `{debate}`: budget.context_tokens: {source}")]
    Budget {
        /// The debate.
        debate: String,
        /// Why.
        #[source]
        source: agon_context::ContextError,
    },
    /// The judge model could not split the topic into aspects.
    #[error(
        "debate `{debate}`: the judge model could not split the topic into aspects ({reason}); list them under [[aspects]] in the config"
    )]
    AspectPlan {
        /// The debate.
        debate: String,
        /// What went wrong with the plan.
        reason: String,
    },
    /// A step names a persona the debate does not have.
    #[error("debate `{debate}`: unknown persona `{persona}`")]
    UnknownPersona {
        /// The debate.
        debate: String,
        /// The persona id.
        persona: String,
    },
    /// A crux room has no claim to write a card for.
    #[error("debate `{debate}`: crux room `{room}` has no claim")]
    RoomWithoutClaim {
        /// The debate.
        debate: String,
        /// The room.
        room: String,
    },
    /// Context assembly failed.
    #[error("debate `{debate}`: context for {persona}: {source}")]
    Context {
        /// The debate.
        debate: String,
        /// Whose context.
        persona: String,
        /// The assembler's error.
        #[source]
        source: agon_context::ContextError,
    },
    /// The stored log does not replay (computing a view of the debate).
    #[error("debate `{debate}`: the stored log does not replay: {source}")]
    Replay {
        /// The debate.
        debate: String,
        /// The rejection.
        #[source]
        source: agon_core::ApplyError,
    },
    /// Background work (analysis, round record, reflection) could not be
    /// applied: the store failed under it.
    #[error("debate `{debate}`: background step failed: {reason}")]
    Background {
        /// The debate.
        debate: String,
        /// What failed.
        reason: String,
    },
    /// The answers to clarifying questions cannot be used (an answers file
    /// that does not match the questions). The debate can be resumed with
    /// corrected answers.
    #[error("debate `{debate}`: {source}")]
    Answers {
        /// The debate.
        debate: String,
        /// What is wrong, naming the file and field.
        #[source]
        source: crate::answers::AnswerError,
    },
    /// An agent's tools cannot be set up (a context directory that does
    /// not exist, a tool that needs memory when memory is off).
    #[error("debate `{debate}`: tools of {persona}: {source}")]
    Tools {
        /// The debate.
        debate: String,
        /// The agent.
        persona: String,
        /// What is wrong.
        #[source]
        source: agon_tools::ToolError,
    },
    /// The debate's MCP servers cannot be started, or one lacks a tool a
    /// participant is granted: refused before the first turn.
    #[error("debate `{debate}`: {source}")]
    Mcp {
        /// The debate.
        debate: String,
        /// The server and what is wrong.
        #[source]
        source: agon_tools::ToolError,
    },
    /// A step's answers cannot become events (a call the debate cannot do
    /// without failed, or could not be made).
    #[error("debate `{debate}`: {source}")]
    Step {
        /// The debate.
        debate: String,
        /// Why.
        #[source]
        source: agon_protocol::ConvertError,
    },
    /// The protocol waits for background work but none is pending: a bug
    /// in the protocol's rules.
    #[error("debate `{debate}`: the protocol is waiting with nothing pending ({phase})")]
    Stalled {
        /// The debate.
        debate: String,
        /// Where it stands.
        phase: String,
    },
}

/// What kind of failure an [`OrchestratorError`] is (the CLI maps kinds to
/// exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The configuration (or what is stored of it) is unusable.
    Config,
    /// A model could not be built or a required model call failed.
    Provider,
    /// The store failed.
    Store,
    /// Anything else (a bug, an inconsistent debate).
    Internal,
}

impl OrchestratorError {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Config(_)
            | Self::Budget { .. }
            | Self::StoredConfig { .. }
            | Self::Answers { .. }
            | Self::Tools { .. }
            | Self::Mcp { .. } => ErrorKind::Config,
            Self::Model(_) | Self::Provider { .. } | Self::AspectPlan { .. } => ErrorKind::Provider,
            Self::Step {
                source: agon_protocol::ConvertError::Model { .. },
                ..
            } => ErrorKind::Provider,
            Self::Store(_) | Self::Log(_) | Self::Replay { .. } | Self::Background { .. } => {
                ErrorKind::Store
            }
            Self::UnknownPersona { .. }
            | Self::RoomWithoutClaim { .. }
            | Self::Context { .. }
            | Self::Step { .. }
            | Self::Stalled { .. } => ErrorKind::Internal,
        }
    }

    /// Whether the error came from a model provider.
    pub fn is_provider(&self) -> bool {
        self.kind() == ErrorKind::Provider
    }

    /// Whether the error came from the store.
    pub fn is_store(&self) -> bool {
        self.kind() == ErrorKind::Store
    }
}
