//! A fallback chain: model A, then B, … (as dialectic's provider fallbacks).

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;

use crate::error::ProviderError;
use crate::traits::{ChatModel, ChatStream};
use crate::types::{ChatRequest, ChatResponse, JsonResponse, JsonSchema};

/// Tries each model in order; moves on when a model fails with anything but
/// a problem of the request itself ([`ProviderError::InvalidRequest`],
/// [`ProviderError::InvalidSchema`]), which no other model would fix.
/// Each model has already done its own retries.
#[derive(Clone)]
pub struct Fallback {
    models: Vec<Arc<dyn ChatModel>>,
}

impl std::fmt::Debug for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self
            .models
            .iter()
            .map(|m| format!("{}/{}", m.provider(), m.model_id()))
            .collect();
        f.debug_struct("Fallback").field("models", &ids).finish()
    }
}

impl Fallback {
    /// A chain over `models` (at least one).
    pub fn new(models: Vec<Arc<dyn ChatModel>>) -> Result<Self, ProviderError> {
        if models.is_empty() {
            return Err(ProviderError::InvalidRequest {
                reason: "a fallback chain needs at least one model".into(),
            });
        }
        Ok(Self { models })
    }

    async fn first_success<'a, T, F, Fut>(&'a self, mut call: F) -> Result<T, ProviderError>
    where
        F: FnMut(&'a Arc<dyn ChatModel>) -> Fut,
        Fut: std::future::Future<Output = Result<T, ProviderError>>,
    {
        let mut last = None;
        for model in &self.models {
            match call(model).await {
                Ok(value) => return Ok(value),
                Err(
                    e
                    @ (ProviderError::InvalidRequest { .. } | ProviderError::InvalidSchema { .. }),
                ) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        let last = last.unwrap_or(ProviderError::InvalidRequest {
            reason: "empty fallback chain".into(),
        });
        if self.models.len() == 1 {
            return Err(last);
        }
        Err(ProviderError::AllFailed {
            tried: self.models.len(),
            last: Box::new(last),
        })
    }
}

#[async_trait]
impl ChatModel for Fallback {
    fn provider(&self) -> &str {
        self.models[0].provider()
    }

    fn model_id(&self) -> &str {
        self.models[0].model_id()
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        self.first_success(|m| m.complete(request.clone())).await
    }

    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        self.first_success(|m| m.complete_json(request.clone(), schema))
            .await
    }

    async fn complete_tools(
        &self,
        request: ChatRequest,
        tools: &[crate::types::ToolSpec],
        call_number: usize,
    ) -> Result<crate::types::ToolTurn, ProviderError> {
        self.first_success(|m| m.complete_tools(request.clone(), tools, call_number))
            .await
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        let (model, stream) = self
            .first_success(|m| {
                let request = request.clone();
                async move { Ok((m.model_id().to_owned(), m.stream(request).await?)) }
            })
            .await?;
        // The final chunk names the model that answered (the usage ledger
        // and message metadata read it).
        Ok(Box::pin(stream.map(move |chunk| {
            chunk.map(|mut c| {
                if c.finish_reason.is_some() || c.usage.is_some() {
                    c.model.get_or_insert_with(|| model.clone());
                }
                c
            })
        })))
    }
}
