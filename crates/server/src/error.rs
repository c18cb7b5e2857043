//! The API's errors: a status and a JSON body that names what was wrong.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A failed request: its status and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What was wrong, naming the field, file or debate.
    pub message: String,
}

impl ApiError {
    /// An error with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// 400: the request is unusable.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such debate (or route).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 409: the debate is not in a state that allows it.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// 500: the store or a model failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl From<agon_store::StoreError> for ApiError {
    fn from(e: agon_store::StoreError) -> Self {
        if matches!(e, agon_store::StoreError::DebateNotFound { .. }) {
            Self::not_found(e.to_string())
        } else {
            Self::internal(e.to_string())
        }
    }
}

impl From<agon_orchestrator::OrchestratorError> for ApiError {
    fn from(e: agon_orchestrator::OrchestratorError) -> Self {
        use agon_orchestrator::ErrorKind;
        match &e {
            agon_orchestrator::OrchestratorError::Store(
                agon_store::StoreError::DebateNotFound { .. },
            ) => Self::not_found(e.to_string()),
            _ => match e.kind() {
                ErrorKind::Config => Self::bad_request(e.to_string()),
                _ => Self::internal(e.to_string()),
            },
        }
    }
}

impl From<agon_app::AppError> for ApiError {
    fn from(e: agon_app::AppError) -> Self {
        let status =
            StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Self::new(status, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}
