//! A model with a test's hook run before each of its calls: a probe that
//! notes when calls start, a recorder of requests, a gate that holds calls
//! until the test has done something.

use std::sync::Arc;

use agon_llm::{
    ChatModel, ChatRequest, ChatResponse, ChatStream, JsonResponse, JsonSchema, ProviderError,
};
use async_trait::async_trait;
use futures::future::BoxFuture;

/// Which call a [`BeforeEachCall`] hook is run before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// [`ChatModel::complete`].
    Complete,
    /// [`ChatModel::complete_json`] (and tool turns, which default to it).
    Json,
    /// [`ChatModel::stream`].
    Stream,
}

/// What a [`BeforeEachCall`] runs: it sees the call's kind and request,
/// and the call waits for the future it returns.
pub type CallHook = dyn Fn(CallKind, &ChatRequest) -> BoxFuture<'static, ()> + Send + Sync;

/// `inner`, with a hook awaited before each of its calls.
pub struct BeforeEachCall {
    inner: Arc<dyn ChatModel>,
    hook: Box<CallHook>,
}

impl BeforeEachCall {
    /// `inner`, running `hook` before each call.
    pub fn new(
        inner: Arc<dyn ChatModel>,
        hook: impl Fn(CallKind, &ChatRequest) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner,
            hook: Box::new(hook),
        }
    }
}

impl std::fmt::Debug for BeforeEachCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BeforeEachCall")
            .field("inner", &self.inner.model_id())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ChatModel for BeforeEachCall {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        (self.hook)(CallKind::Complete, &request).await;
        self.inner.complete(request).await
    }

    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        (self.hook)(CallKind::Json, &request).await;
        self.inner.complete_json(request, schema).await
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        (self.hook)(CallKind::Stream, &request).await;
        self.inner.stream(request).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;
    use std::time::Duration;

    use futures::FutureExt;

    use super::*;
    use crate::ScriptedModel;

    #[tokio::test]
    async fn the_hook_sees_each_call_before_it_is_made() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let noted = Arc::clone(&seen);
        let model = BeforeEachCall::new(
            Arc::new(ScriptedModel::new(Duration::ZERO)),
            move |kind, request| {
                noted.lock().unwrap().push((kind, request.messages.len()));
                async {}.boxed()
            },
        );
        let request = ChatRequest::new("Say something.");
        assert!(
            !model
                .complete(request.clone())
                .await
                .unwrap()
                .content
                .is_empty()
        );
        let _ = model.stream(request).await.unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            [(CallKind::Complete, 1), (CallKind::Stream, 1)]
        );
        assert_eq!(model.model_id(), "scripted");
    }
}
