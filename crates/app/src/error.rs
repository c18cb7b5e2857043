//! [`AppError`]: why a use case failed, with the one [`ErrorKind`] each
//! front door maps once (the CLI to an exit code, the API to an HTTP
//! status).

use agon_orchestrator::OrchestratorError;
use agon_store::StoreError;

/// Why a use case failed. Every message names the debate (or the input)
/// it is about.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// No debate with this id.
    #[error("unknown debate `{debate}`")]
    NotFound {
        /// The id asked for.
        debate: String,
    },
    /// The debate cannot take the request in the state it is in (finished,
    /// not running, running in another process, no questions waiting).
    #[error("debate `{debate}`: {reason}")]
    Conflict {
        /// The debate.
        debate: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// The request itself is wrong (an empty note, answers that do not
    /// match the questions, a fork point past the log's end).
    #[error("debate `{debate}`: {reason}")]
    Invalid {
        /// The debate.
        debate: String,
        /// What is wrong, naming the field.
        reason: String,
    },
    /// What a debate needs cannot be had here (its models, a vector
    /// memory, a job queue).
    #[error("{0}")]
    Unavailable(String),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
    /// The vector memory refused or failed (a bad query, an index written
    /// by another embedder, an embedder or database that failed).
    #[error(transparent)]
    Memory(agon_memory::MemoryError),
    /// The engine failed.
    #[error(transparent)]
    Engine(OrchestratorError),
}

/// What kind of failure an [`AppError`] is: what a front door maps to an
/// exit code or an HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An unknown debate (HTTP 404).
    NotFound,
    /// A request the debate cannot take now (HTTP 409).
    Conflict,
    /// A malformed request (HTTP 400; CLI usage error).
    Invalid,
    /// Something the debate needs is missing here (HTTP 503).
    Unavailable,
    /// A configuration that does not hold (HTTP 400; CLI exit 3).
    Config,
    /// A model provider failed (HTTP 502; CLI exit 4).
    Provider,
    /// The store failed (HTTP 500; CLI exit 5).
    Store,
    /// Anything else (HTTP 500; CLI exit 1).
    Internal,
}

impl AppError {
    /// A conflict about `debate`.
    pub fn conflict(debate: impl ToString, reason: impl Into<String>) -> Self {
        Self::Conflict {
            debate: debate.to_string(),
            reason: reason.into(),
        }
    }

    /// An invalid request about `debate`.
    pub fn invalid(debate: impl ToString, reason: impl Into<String>) -> Self {
        Self::Invalid {
            debate: debate.to_string(),
            reason: reason.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::NotFound { .. } => ErrorKind::NotFound,
            Self::Conflict { .. } => ErrorKind::Conflict,
            Self::Invalid { .. } => ErrorKind::Invalid,
            Self::Unavailable(_) => ErrorKind::Unavailable,
            Self::Store(_) => ErrorKind::Store,
            Self::Memory(e) => match e {
                agon_memory::MemoryError::Invalid { .. }
                | agon_memory::MemoryError::BadRecord { .. } => ErrorKind::Invalid,
                agon_memory::MemoryError::EmbedderMismatch { .. } => ErrorKind::Config,
                agon_memory::MemoryError::Embedding { .. } => ErrorKind::Provider,
                _ => ErrorKind::Store,
            },
            Self::Engine(e) => match e.kind() {
                agon_orchestrator::ErrorKind::Config => ErrorKind::Config,
                agon_orchestrator::ErrorKind::Provider => ErrorKind::Provider,
                agon_orchestrator::ErrorKind::Store => ErrorKind::Store,
                _ => ErrorKind::Internal,
            },
        }
    }

    /// The HTTP status the API answers with.
    pub fn http_status(&self) -> u16 {
        match self.kind() {
            ErrorKind::NotFound => 404,
            ErrorKind::Conflict => 409,
            ErrorKind::Invalid | ErrorKind::Config => 400,
            ErrorKind::Unavailable => 503,
            ErrorKind::Provider => 502,
            ErrorKind::Store | ErrorKind::Internal => 500,
        }
    }

    /// The exit code the CLI ends with (its documented codes: 2 usage, 3
    /// configuration, 4 provider, 5 store, 1 anything else).
    pub fn exit_code(&self) -> u8 {
        match self.kind() {
            ErrorKind::Invalid => 2,
            ErrorKind::Config => 3,
            ErrorKind::Provider => 4,
            ErrorKind::Store => 5,
            ErrorKind::NotFound
            | ErrorKind::Conflict
            | ErrorKind::Unavailable
            | ErrorKind::Internal => 1,
        }
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::DebateNotFound { debate } => Self::NotFound { debate },
            StoreError::Leased { debate, holder, .. } => Self::Conflict {
                debate,
                reason: format!("another process runs it (`{holder}`)"),
            },
            StoreError::ForkBeyondLog { debate, seq, last } => Self::Invalid {
                reason: format!("it has {last} events; a fork cannot copy it up to event #{seq}"),
                debate,
            },
            e => Self::Store(e),
        }
    }
}

impl From<agon_memory::MemoryError> for AppError {
    fn from(e: agon_memory::MemoryError) -> Self {
        Self::Memory(e)
    }
}

impl From<OrchestratorError> for AppError {
    fn from(e: OrchestratorError) -> Self {
        match e {
            OrchestratorError::Store(e) => e.into(),
            e => Self::Engine(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_maps_once_to_a_status_and_an_exit_code() {
        let missing = AppError::from(StoreError::DebateNotFound {
            debate: "d-1".into(),
        });
        assert_eq!((missing.http_status(), missing.exit_code()), (404, 1));
        assert_eq!(missing.to_string(), "unknown debate `d-1`");
        let held = AppError::from(StoreError::Leased {
            debate: "d-1".into(),
            holder: "host:7".into(),
            since: chrono::DateTime::UNIX_EPOCH,
            until: chrono::DateTime::UNIX_EPOCH,
        });
        assert_eq!(held.http_status(), 409);
        assert!(held.to_string().contains("host:7"), "{held}");
        let beyond = AppError::from(StoreError::ForkBeyondLog {
            debate: "d-1".into(),
            seq: 9,
            last: 4,
        });
        assert_eq!((beyond.http_status(), beyond.exit_code()), (400, 2));
        assert!(beyond.to_string().contains("d-1"), "{beyond}");
        let store = AppError::from(StoreError::Locked {
            url: "sqlite://x".into(),
            message: "busy".into(),
        });
        assert_eq!((store.http_status(), store.exit_code()), (500, 5));
        assert_eq!(AppError::Unavailable("no memory".into()).http_status(), 503);
    }
}
