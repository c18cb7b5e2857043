//! Turning provider SSE events into a [`ChatStream`] that ends cleanly only
//! at the provider's end marker: a stream that stops early is an error, not
//! a silently short turn.

use futures::{Stream, StreamExt};

use crate::error::ProviderError;
use crate::traits::ChatStream;
use crate::types::ChatChunk;

/// What one provider event means.
#[derive(Debug)]
pub(crate) enum Step {
    /// Text or usage to pass on.
    Chunk(ChatChunk),
    /// The end marker (`[DONE]`, `message_stop`).
    Done,
}

/// Passes chunks on until `Done`; an error ends the stream after being
/// yielded; the inner stream ending before `Done` yields a malformed-response error.
pub(crate) fn until_done<S>(steps: S, provider: &str, marker: &'static str) -> ChatStream
where
    S: Stream<Item = Result<Step, ProviderError>> + Send + 'static,
{
    let provider = provider.to_owned();
    let state = (Box::pin(steps), false);
    Box::pin(futures::stream::unfold(
        state,
        move |(mut steps, finished)| {
            let provider = provider.clone();
            async move {
                if finished {
                    return None;
                }
                match steps.next().await {
                    Some(Ok(Step::Chunk(chunk))) => Some((Ok(chunk), (steps, false))),
                    Some(Ok(Step::Done)) => None,
                    Some(Err(e)) => Some((Err(e), (steps, true))),
                    None => {
                        let error = ProviderError::MalformedResponse {
                            provider,
                            message: format!("the stream ended before `{marker}`"),
                        };
                        Some((Err(error), (steps, true)))
                    }
                }
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> Result<Step, ProviderError> {
        Ok(Step::Chunk(ChatChunk {
            delta: text.into(),
            ..ChatChunk::default()
        }))
    }

    #[tokio::test]
    async fn stops_at_done_and_ignores_what_follows() {
        let steps = futures::stream::iter(vec![chunk("a"), chunk("b"), Ok(Step::Done), chunk("c")]);
        let out: Vec<_> = until_done(steps, "p", "[DONE]").collect().await;
        let texts: Vec<String> = out.into_iter().map(|c| c.unwrap().delta).collect();
        assert_eq!(texts, ["a", "b"]);
    }

    #[tokio::test]
    async fn an_early_end_is_an_error() {
        let steps = futures::stream::iter(vec![chunk("a")]);
        let out: Vec<_> = until_done(steps, "p", "[DONE]").collect().await;
        assert_eq!(out.len(), 2);
        assert!(
            out[1]
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("ended before `[DONE]`")
        );
    }

    #[tokio::test]
    async fn an_error_ends_the_stream() {
        let bad = Err(ProviderError::MalformedResponse {
            provider: "p".into(),
            message: "x".into(),
        });
        let steps = futures::stream::iter(vec![chunk("a"), bad, chunk("b")]);
        let out: Vec<_> = until_done(steps, "p", "[DONE]").collect().await;
        assert_eq!(out.len(), 2);
        assert!(out[1].is_err());
    }
}
