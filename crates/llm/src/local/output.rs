//! What both in-process chat backends hand back: responses, structured-output
//! attempts and streamed chunks, built from one generation's outcome.

use std::time::Instant;

use super::PROVIDER;
use super::chat::GenerationStats;
use crate::error::ProviderError;
use crate::json::{Attempt, extract_json};
use crate::traits::ChatStream;
use crate::types::{ChatChunk, ChatResponse, Usage};

/// One generation: the text, the finish reason and its timings.
pub(crate) type Outcome = Result<(String, String, GenerationStats), ProviderError>;

fn usage(stats: &GenerationStats) -> Usage {
    Usage {
        input_tokens: stats.prompt_tokens as u64,
        output_tokens: stats.generated_tokens as u64,
    }
}

/// The response of model `model` for a generation started at `started`.
pub(crate) fn response(
    model: &str,
    (text, finish, stats): (String, String, GenerationStats),
    started: Instant,
) -> ChatResponse {
    ChatResponse {
        content: text,
        usage: usage(&stats),
        latency: started.elapsed(),
        provider: PROVIDER.to_owned(),
        model: model.to_owned(),
        finish_reason: Some(finish),
    }
}

/// A structured-output attempt from a response (its JSON, if any parses).
pub(crate) fn attempt(response: ChatResponse) -> Attempt {
    Attempt {
        value: extract_json(&response.content),
        raw: response.content.clone(),
        response,
    }
}

/// Where a streaming generation sends its chunks.
pub(crate) type ChunkSender = tokio::sync::mpsc::UnboundedSender<Result<ChatChunk, ProviderError>>;

/// A channel for streamed chunks and the [`ChatStream`] that reads it.
pub(crate) fn chunk_channel() -> (ChunkSender, ChatStream) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    });
    (sender, Box::pin(stream))
}

/// Sends one piece of generated text.
pub(crate) fn send_text(sender: &ChunkSender, piece: &str) {
    let _ = sender.send(Ok(ChatChunk {
        delta: piece.to_owned(),
        ..ChatChunk::default()
    }));
}

/// Sends the last chunk (usage and finish reason), or the error that ended
/// the generation.
pub(crate) fn send_end(sender: &ChunkSender, outcome: Outcome) {
    let _ = sender.send(outcome.map(|(_, finish, stats)| ChatChunk {
        delta: String::new(),
        usage: Some(usage(&stats)),
        finish_reason: Some(finish),
    }));
}
