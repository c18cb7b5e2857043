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
