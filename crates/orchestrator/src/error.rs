//! The orchestrator's errors.

use agon_store::{LogError, StoreError};

use crate::config::ConfigError;
use crate::models::ModelError;

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
        /// Which call ("utterance of Mara (take on cost, miniround 1)", …).
        what: String,
        /// The provider error.
        #[source]
        source: Box<agon_llm::ProviderError>,
    },
    /// Something the debate needs is missing or inconsistent.
    #[error("debate `{debate}`: {reason}")]
    Invalid {
        /// The debate.
        debate: String,
        /// What is wrong.
        reason: String,
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
    /// A crux room could not run.
    #[error(transparent)]
    Crux(#[from] agon_crux::CruxError),
}

impl OrchestratorError {
    /// Whether the error came from a model provider.
    pub fn is_provider(&self) -> bool {
        match self {
            Self::Provider { .. } | Self::Model(_) => true,
            Self::Crux(agon_crux::CruxError::Host { source, .. }) => source
                .downcast_ref::<OrchestratorError>()
                .is_some_and(OrchestratorError::is_provider),
            _ => false,
        }
    }

    /// Whether the error came from the store.
    pub fn is_store(&self) -> bool {
        matches!(self, Self::Store(_) | Self::Log(_))
    }
}
