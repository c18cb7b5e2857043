//! What both in-process chat backends share: the [`ChatModel`] methods on
//! top of one generation ([`LocalGeneration`]), and the responses,
//! structured-output attempts and streamed chunks built from its outcome.

use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::PROVIDER;
use agon_llm::ChatStream;
use agon_llm::ProviderError;
use agon_llm::json::{Attempt, extract_json, structured};
use agon_llm::{CallTiming, ChatChunk, ChatRequest, ChatResponse, JsonResponse, JsonSchema, Usage};

/// One generation: the text, the finish reason and its timings.
/// Timings of one generation, for benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GenerationStats {
    /// Prompt tokens.
    pub prompt_tokens: usize,
    /// Prompt tokens served from a prefix checkpoint (not recomputed).
    pub reused_tokens: usize,
    /// Time spent on the prompt.
    pub prompt_time: Duration,
    /// Tokens generated.
    pub generated_tokens: usize,
    /// Time spent generating.
    pub generation_time: Duration,
    /// Of the generated tokens, those a grammar forced (read in one pass
    /// with the token before them).
    pub forced_tokens: usize,
    /// Tokens drafted from what was already read (prompt lookup), each
    /// read in the pass of the token before it.
    pub draft_tokens: usize,
    /// Of the drafted tokens, those kept: the model chose each of them.
    pub accepted_draft_tokens: usize,
}

pub(crate) type Outcome = Result<(String, String, GenerationStats), ProviderError>;

/// Where a generation's compute time went.
fn timing(stats: &GenerationStats) -> CallTiming {
    CallTiming {
        prompt: stats.prompt_time,
        generation: stats.generation_time,
    }
}

fn usage(stats: &GenerationStats) -> Usage {
    // The prefix checkpoint is the local model's prompt cache: the
    // prompt tokens it served are reported as cached.
    Usage {
        input_tokens: stats.prompt_tokens as u64,
        output_tokens: stats.generated_tokens as u64,
        cached_input_tokens: stats.reused_tokens.min(stats.prompt_tokens) as u64,
        cache_write_tokens: 0,
    }
}

/// The response of model `model` for a generation started at `started`.
fn response(
    model: &str,
    (text, finish, stats): (String, String, GenerationStats),
    started: Instant,
) -> ChatResponse {
    tracing::debug!(
        model,
        prompt_tokens = stats.prompt_tokens,
        cached_tokens = stats.reused_tokens,
        generated_tokens = stats.generated_tokens,
        forced_tokens = stats.forced_tokens,
        draft_tokens = stats.draft_tokens,
        accepted_draft_tokens = stats.accepted_draft_tokens,
        prompt_ms = stats.prompt_time.as_millis() as u64,
        generation_ms = stats.generation_time.as_millis() as u64,
        "local generation"
    );
    ChatResponse {
        content: text,
        usage: usage(&stats),
        timing: Some(timing(&stats)),
        latency: started.elapsed(),
        provider: PROVIDER.to_owned(),
        model: model.to_owned(),
        finish_reason: Some(finish),
    }
}

/// The callback that receives each new piece of generated text.
pub(crate) type OnText = Box<dyn FnMut(&str) + Send>;

/// An in-process chat backend: how it runs one generation (without
/// blocking the async runtime). The `ChatModel` methods below build on it.
#[async_trait]
pub(crate) trait LocalGeneration: Clone + Send + Sync + 'static {
    /// The model id reported in responses.
    fn model_id(&self) -> &str;

    /// One generation, constrained to `schema` if given, streaming its text
    /// to `on_text`.
    async fn run(
        &self,
        request: ChatRequest,
        schema: Option<JsonSchema>,
        on_text: OnText,
    ) -> Outcome;
}

/// Makes a local backend a [`ChatModel`] through its generation (one
/// implementation for every backend; a macro because a blanket impl of a
/// foreign trait is not allowed).
macro_rules! local_chat_model {
    ($backend:ty) => {
        #[async_trait::async_trait]
        impl agon_llm::ChatModel for $backend {
            fn provider(&self) -> &str {
                $crate::PROVIDER
            }

            fn model_id(&self) -> &str {
                $crate::output::LocalGeneration::model_id(self)
            }

            async fn complete(
                &self,
                request: agon_llm::ChatRequest,
            ) -> Result<agon_llm::ChatResponse, agon_llm::ProviderError> {
                $crate::output::complete(self, request).await
            }

            /// Schema-constrained decoding (llguidance): the output always
            /// parses and follows the schema's structure; it is still
            /// validated, with the usual single repair attempt.
            async fn complete_json(
                &self,
                request: agon_llm::ChatRequest,
                schema: &agon_llm::JsonSchema,
            ) -> Result<agon_llm::JsonResponse, agon_llm::ProviderError> {
                $crate::output::complete_json(self, request, schema).await
            }

            async fn stream(
                &self,
                request: agon_llm::ChatRequest,
            ) -> Result<agon_llm::ChatStream, agon_llm::ProviderError> {
                $crate::output::stream(self, request)
            }
        }
    };
}
pub(crate) use local_chat_model;

/// `ChatModel::complete` of a local backend.
pub(crate) async fn complete(
    backend: &impl LocalGeneration,
    request: ChatRequest,
) -> Result<ChatResponse, ProviderError> {
    request.validate()?;
    let started = Instant::now();
    let outcome = backend.run(request, None, Box::new(|_| {})).await;
    Ok(response(backend.model_id(), outcome?, started))
}

/// `ChatModel::complete_json` of a local backend: schema-constrained
/// decoding (llguidance), so the output always parses and follows the
/// schema's structure; it is still validated, with the usual single repair
/// attempt for constraints a grammar cannot express.
///
/// The grammar holds the output to the schema, so the schema text is not
/// added to the prompt: on a small model a long prompt costs far more
/// (prompt time, and slower generation over a longer context) than it
/// helps. The caller's prompt should name the fields.
pub(crate) async fn complete_json(
    backend: &impl LocalGeneration,
    request: ChatRequest,
    schema: &JsonSchema,
) -> Result<JsonResponse, ProviderError> {
    request.validate()?;
    let request = with_json_reminder(request);
    structured(PROVIDER, schema, request, |request| {
        let schema = schema.clone();
        async move {
            let started = Instant::now();
            let outcome = backend.run(request, Some(schema), Box::new(|_| {})).await;
            Ok(attempt(response(backend.model_id(), outcome?, started)))
        }
    })
    .await
}

/// `ChatModel::stream` of a local backend: each piece of text as it is
/// decoded, then a last chunk with usage and the finish reason.
pub(crate) fn stream(
    backend: &impl LocalGeneration,
    request: ChatRequest,
) -> Result<ChatStream, ProviderError> {
    request.validate()?;
    let (sender, stream) = chunk_channel();
    let chunks = sender.clone();
    let on_text: OnText = Box::new(move |piece| send_text(&chunks, piece));
    let backend = backend.clone();
    tokio::spawn(async move {
        let outcome = backend.run(request, None, on_text).await;
        send_end(&sender, outcome);
    });
    Ok(stream)
}

/// Appends a one-line JSON reminder to the system prompt.
pub(crate) fn with_json_reminder(mut request: ChatRequest) -> ChatRequest {
    let reminder = "Reply with a single JSON object and nothing else.";
    request.system = Some(match request.system.take() {
        Some(system) => format!("{system}\n{reminder}"),
        None => reminder.to_owned(),
    });
    request
}

/// A structured-output attempt from a response (its JSON, if any parses).
fn attempt(response: ChatResponse) -> Attempt {
    Attempt {
        value: extract_json(&response.content),
        raw: response.content.clone(),
        response,
    }
}

/// Where a streaming generation sends its chunks.
type ChunkSender = tokio::sync::mpsc::UnboundedSender<Result<ChatChunk, ProviderError>>;

/// A channel for streamed chunks and the [`ChatStream`] that reads it.
fn chunk_channel() -> (ChunkSender, ChatStream) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    });
    (sender, Box::pin(stream))
}

/// Sends one piece of generated text.
fn send_text(sender: &ChunkSender, piece: &str) {
    let _ = sender.send(Ok(ChatChunk {
        delta: piece.to_owned(),
        ..ChatChunk::default()
    }));
}

/// Sends the last chunk (usage and finish reason), or the error that ended
/// the generation.
fn send_end(sender: &ChunkSender, outcome: Outcome) {
    let _ = sender.send(outcome.map(|(_, finish, stats)| ChatChunk {
        delta: String::new(),
        usage: Some(usage(&stats)),
        finish_reason: Some(finish),
        model: None,
        timing: Some(timing(&stats)),
    }));
}

/// The text of a generation as it grows: new whole characters go to the
/// caller's callback, and a stop sequence ends the text just before it.
pub(crate) struct GrowingText<'a> {
    text: String,
    stops: &'a [String],
}

impl<'a> GrowingText<'a> {
    /// Watches for `stops` (empty ones are ignored).
    pub fn new(stops: &'a [String]) -> Self {
        Self {
            text: String::new(),
            stops,
        }
    }

    /// Takes everything generated so far, decoded up to its last whole
    /// character; sends what is new to `on_text` and returns `true` when a
    /// stop sequence has appeared (the text then ends before it, and only the
    /// part before it was sent).
    pub fn update(&mut self, decoded: String, on_text: &mut impl FnMut(&str)) -> bool {
        if decoded.len() <= self.text.len() {
            return false;
        }
        let already = self.text.len();
        self.text = decoded;
        let stop = self
            .stops
            .iter()
            .filter(|s| !s.is_empty())
            .filter_map(|s| self.text.find(s.as_str()))
            .min();
        match stop {
            Some(cut) => {
                if cut > already {
                    on_text(&self.text[already..cut]);
                }
                self.text.truncate(cut);
                true
            }
            None => {
                on_text(&self.text[already..]);
                false
            }
        }
    }

    /// The text so far.
    pub fn into_text(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_sent_once_and_a_stop_sequence_cuts_the_text() {
        let stops = vec!["END".to_owned(), String::new()];
        let mut text = GrowingText::new(&stops);
        let mut sent = Vec::new();
        let mut on_text = |p: &str| sent.push(p.to_owned());
        assert!(!text.update("Hel".into(), &mut on_text));
        assert!(!text.update("Hel".into(), &mut on_text), "nothing new");
        assert!(!text.update("Hello E".into(), &mut on_text));
        assert!(text.update("Hello END more".into(), &mut on_text));
        assert_eq!(sent, ["Hel", "lo E"]);
        assert_eq!(text.into_text(), "Hello ");
    }

    #[test]
    fn the_earliest_stop_sequence_wins() {
        let stops = vec!["b".to_owned(), "a".to_owned()];
        let mut text = GrowingText::new(&stops);
        assert!(text.update("xxab".into(), &mut |_| {}));
        assert_eq!(text.into_text(), "xx");
    }
}
