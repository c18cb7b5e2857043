//! [`Failure`]: an error with the exit code it maps to, and how it is
//! printed.

use agon_config::ConfigError;
use agon_orchestrator::OrchestratorError;
use agon_store::StoreError;

/// An error with the exit code it maps to.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        let error = e.into();
        let code = if let Some(app) = error.downcast_ref::<agon_app::AppError>() {
            app.exit_code()
        } else if error.downcast_ref::<ConfigError>().is_some() {
            3
        } else if let Some(o) = error.downcast_ref::<OrchestratorError>() {
            if matches!(o, OrchestratorError::Config(_)) {
                3
            } else if o.is_provider() {
                4
            } else if o.is_store() {
                5
            } else {
                1
            }
        } else if error
            .downcast_ref::<agon_orchestrator::ModelError>()
            .is_some()
        {
            4
        } else if error.downcast_ref::<StoreError>().is_some() {
            5
        } else if let Some(w) = error.downcast_ref::<agon_worker::WorkerError>() {
            match w {
                agon_worker::WorkerError::NotPostgres { .. }
                | agon_worker::WorkerError::RateLimit { .. } => 2,
                _ => 5,
            }
        } else {
            1
        };
        Self { code, error }
    }
}

/// The error and its causes on one line, each cause once: errors that
/// already name their source in their message are not followed by it again.
pub(crate) fn error_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
