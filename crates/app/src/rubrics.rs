//! The living rubric's use cases (seed 003): read a rubric's book, accept
//! or reject a proposed change.

use std::sync::Arc;

use agon_trust::rubric::{Rubric, RubricBook};

use crate::rubric::{RubricStore, RubricStoreError};
use crate::{App, AppError};

fn rubric_error(name: &str, e: RubricStoreError) -> AppError {
    match e {
        RubricStoreError::Store(e) => e.into(),
        e => AppError::Invalid {
            debate: format!("(rubric `{name}`)"),
            reason: e.to_string(),
        },
    }
}

impl App {
    /// Rubric `name`'s book: its versions and the changes proposed to it.
    pub async fn rubric_book(&self, name: &str) -> Result<RubricBook, AppError> {
        RubricStore::new(Arc::clone(self.store()))
            .book(name)
            .await
            .map_err(|e| rubric_error(name, e))
    }

    /// Accepts proposal `id` of rubric `name`: the rubric's new version,
    /// which later debates and `agon eval` judge by.
    pub async fn rubric_accept(&self, name: &str, id: u32) -> Result<Rubric, AppError> {
        let now = chrono::Utc::now();
        RubricStore::new(Arc::clone(self.store()))
            .update(name, now, &|book| book.accept(id, now))
            .await
            .map_err(|e| rubric_error(name, e))
    }

    /// Rejects proposal `id` of rubric `name`, with the reason.
    pub async fn rubric_reject(&self, name: &str, id: u32, reason: &str) -> Result<(), AppError> {
        let now = chrono::Utc::now();
        let reason = reason.to_owned();
        RubricStore::new(Arc::clone(self.store()))
            .update(name, now, &|book| book.reject(id, &reason, now))
            .await
            .map_err(|e| rubric_error(name, e))
    }
}
