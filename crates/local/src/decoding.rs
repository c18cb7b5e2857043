//! One generation's token loop, step by step: choosing a token from a row of
//! logits (repeat penalty, grammar mask, sampling), taking it (the tokens
//! the grammar forces after it, the text so far, stop sequences), and
//! drafting the tokens that may come next from what was already read
//! (prompt-lookup decoding).
//!
//! A draft is verified, never trusted: the model reads the chosen token and
//! the draft in one batch (a batch gives the same logits as the tokens one
//! at a time), and each drafted token is kept only while the choice from
//! the logits before it (after the same penalty and grammar mask) keeps
//! it. Greedy choice keeps a draft that is the most likely token, so the
//! text is the same as without drafts; sampling keeps it with its
//! probability and otherwise draws from the rest (speculative sampling), so
//! every token has the probability it had without drafts. Only the number
//! of forward passes falls: analyses quote the messages they read, so their
//! drafts are often right.

use llguidance::Matcher;
use tokenizers::Tokenizer;

use super::guidance::logit_mask;
use super::inference;
use super::output::GrowingText;
use super::sampling::{Sampler, penalize_repeats};
use agon_llm::ProviderError;

/// Penalty on recently generated tokens (1.0 = none).
pub(crate) const REPEAT_PENALTY: f32 = 1.2;
/// How many recent tokens the penalty looks at.
pub(crate) const REPEAT_WINDOW: usize = 48;

/// Longest and shortest run of last tokens a draft is looked up by.
const DRAFT_NGRAM: [usize; 3] = [4, 3, 2];

/// Most tokens drafted for one forward pass.
pub(crate) const MAX_DRAFT: usize = 7;

/// The tokens that followed the latest earlier occurrence of the last `n`
/// tokens of `tokens` (the longest `n` of [`DRAFT_NGRAM`] that occurs), at
/// most `limit` of them; empty when none occurs.
pub(crate) fn draft(tokens: &[u32], limit: usize) -> &[u32] {
    if limit == 0 {
        return &[];
    }
    for n in DRAFT_NGRAM {
        let Some(tail_start) = tokens.len().checked_sub(n) else {
            continue;
        };
        let tail = &tokens[tail_start..];
        // Occurrences that end before the last token, so one token follows.
        if let Some(start) = (0..tail_start).rev().find(|&i| &tokens[i..i + n] == tail) {
            let from = start + n;
            return &tokens[from..(from + limit).min(tokens.len())];
        }
    }
    &[]
}

/// What [`Decoding::verify`] found after a pass.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// The generation ends: an end-of-sequence token, the grammar complete
    /// or a stop sequence.
    Finished,
    /// The generation goes on.
    Continue {
        /// Drafted tokens that stay read (the rest are to be forgotten).
        kept: usize,
        /// Tokens chosen that the model has not read: the next pass starts
        /// with them. When empty, `logits` are those after the kept tokens.
        unread: Vec<u32>,
        /// The logits after the last kept token (empty when `unread` is not).
        logits: Vec<f32>,
    },
}

/// What one generation has chosen so far, and the rules it chooses by.
pub(crate) struct Decoding<'a> {
    matcher: Option<Matcher>,
    sampler: Sampler,
    /// The prompt's tokens, then the generated ones.
    tokens: Vec<u32>,
    prompt_len: usize,
    max_tokens: usize,
    eos: &'a [u32],
    text: GrowingText<'a>,
    /// Generated tokens the grammar forced.
    pub forced: usize,
}

impl<'a> Decoding<'a> {
    /// A generation after `prompt`, of at most `max_tokens` tokens, ending
    /// at any of `eos` or (unconstrained only) of `stops`.
    pub fn new(
        prompt: Vec<u32>,
        max_tokens: usize,
        matcher: Option<Matcher>,
        sampler: Sampler,
        eos: &'a [u32],
        stops: &'a [String],
    ) -> Self {
        let stops: &[String] = if matcher.is_some() { &[] } else { stops };
        Self {
            matcher,
            sampler,
            prompt_len: prompt.len(),
            tokens: prompt,
            max_tokens,
            eos,
            text: GrowingText::new(stops),
            forced: 0,
        }
    }

    /// Tokens generated so far.
    pub fn generated(&self) -> &[u32] {
        &self.tokens[self.prompt_len..]
    }

    /// How many more tokens may be generated.
    pub fn room(&self) -> usize {
        self.max_tokens.saturating_sub(self.generated().len())
    }

    /// The tokens that may follow, looked up in what was read: at most
    /// [`MAX_DRAFT`] and the room left.
    pub fn draft(&self) -> &[u32] {
        draft(&self.tokens, MAX_DRAFT.min(self.room()))
    }

    /// The token chosen from `logits` (penalized and masked in place), given
    /// the `draft` proposed for this position if any; `None` when the
    /// generation ends here (an end-of-sequence token, or the grammar complete).
    pub fn choose(
        &mut self,
        logits: &mut [f32],
        draft: Option<u32>,
    ) -> Result<Option<u32>, ProviderError> {
        let generated = self.generated();
        // A mild repeat penalty keeps a tiny model out of loops ("Theo, Theo, …").
        let recent = &generated[generated.len().saturating_sub(REPEAT_WINDOW)..];
        penalize_repeats(logits, REPEAT_PENALTY, recent);
        if let Some(matcher) = self.matcher.as_mut() {
            if matcher.is_stopped() {
                return Ok(None);
            }
            let mask = logit_mask(matcher, logits.len())
                .map_err(|e| inference(format!("grammar: {e}")))?;
            for (logit, masked) in logits.iter_mut().zip(mask) {
                *logit += masked;
            }
        }
        let next = match draft {
            Some(draft) => self.sampler.sample_given(logits, draft),
            None => self.sampler.sample(logits),
        };
        let next = next.ok_or_else(|| {
            inference("no token can be chosen: every logit is masked or not a number")
        })?;
        Ok((!self.eos.contains(&next)).then_some(next))
    }

    /// Takes `next` and the tokens the grammar forces after it (a JSON key,
    /// its quotes and colon), sends the new text to `on_text`; returns the
    /// tokens taken and whether a stop sequence has appeared.
    pub fn take(
        &mut self,
        next: u32,
        tokenizer: &Tokenizer,
        on_text: &mut impl FnMut(&str),
    ) -> Result<(Vec<u32>, bool), ProviderError> {
        let mut step = vec![next];
        let room = self.room().saturating_sub(1);
        if let Some(matcher) = self.matcher.as_mut() {
            matcher
                .consume_token(next)
                .map_err(|e| inference(format!("grammar rejected token {next}: {e}")))?;
            let mut forced = matcher.compute_ff_tokens();
            forced.truncate(room);
            if !forced.is_empty() {
                matcher.consume_tokens(&forced).map_err(|e| {
                    inference(format!("grammar rejected its own forced tokens: {e}"))
                })?;
                self.forced += forced.len();
                step.extend(forced);
            }
        }
        self.tokens.extend_from_slice(&step);
        let decoded = tokenizer
            .decode(self.generated(), true)
            .map_err(|e| inference(format!("decoding: {e}")))?;
        // Emit only whole characters (a token may end inside one).
        let stop = !decoded.ends_with('\u{FFFD}') && self.text.update(decoded, on_text);
        Ok((step, stop))
    }

    /// Chooses the tokens after a pass that read `drafted` at its end;
    /// `rows` are that pass's logits for its last `drafted.len() + 1`
    /// positions. Each drafted token is kept while the choice keeps it; the
    /// first token chosen in place of a draft, and the forced tokens after
    /// a kept one that the draft does not have, are left to read.
    pub fn verify(
        &mut self,
        drafted: &[u32],
        rows: &[f32],
        tokenizer: &Tokenizer,
        on_text: &mut impl FnMut(&str),
    ) -> Result<Verdict, ProviderError> {
        let vocab = rows.len() / (drafted.len() + 1);
        let mut kept = 0;
        loop {
            let mut logits = rows[kept * vocab..(kept + 1) * vocab].to_vec();
            if kept == drafted.len() || self.room() == 0 {
                return Ok(Verdict::Continue {
                    kept,
                    unread: Vec::new(),
                    logits,
                });
            }
            let Some(next) = self.choose(&mut logits, Some(drafted[kept]))? else {
                return Ok(Verdict::Finished);
            };
            let (step, stop) = self.take(next, tokenizer, on_text)?;
            if stop {
                return Ok(Verdict::Finished);
            }
            if next != drafted[kept] {
                return Ok(Verdict::Continue {
                    kept,
                    unread: step,
                    logits: Vec::new(),
                });
            }
            // The forced tokens after a kept one are read where the draft has them.
            let forced = &step[1..];
            let matching = forced
                .iter()
                .zip(&drafted[kept + 1..])
                .take_while(|(f, d)| f == d)
                .count();
            kept += 1 + matching;
            if matching < forced.len() {
                return Ok(Verdict::Continue {
                    kept,
                    unread: forced[matching..].to_vec(),
                    logits: Vec::new(),
                });
            }
        }
    }

    /// The text generated.
    pub fn into_text(self) -> String {
        self.text.into_text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_continues_the_latest_longest_match() {
        // The tail "2 3" occurred before 9, then before 8; the longer tails
        // "5 2 3" and "8 5 2 3" never did.
        let tokens = [1, 2, 3, 9, 9, 7, 2, 3, 8, 8, 5, 2, 3];
        assert_eq!(draft(&tokens, 4), &[8, 8, 5, 2]);
        assert_eq!(draft(&tokens, 1), &[8]);
        // A longer match wins over a later shorter one.
        let tokens = [4, 5, 6, 1, 0, 5, 6, 2, 4, 5, 6];
        assert_eq!(draft(&tokens, 2), &[1, 0]);
    }

    /// A six-token vocabulary ("a" to "e", then the end token 5).
    fn tokenizer() -> Tokenizer {
        use tokenizers::models::wordlevel::WordLevel;
        let vocab = ["a", "b", "c", "d", "e", "<end>"]
            .iter()
            .enumerate()
            .map(|(i, w)| ((*w).to_owned(), i as u32))
            .collect();
        let model = WordLevel::builder()
            .vocab(vocab)
            .unk_token("<end>".into())
            .build()
            .unwrap();
        Tokenizer::new(model)
    }

    /// Logit rows, each favouring one token.
    fn rows(best: &[u32]) -> Vec<f32> {
        best.iter()
            .flat_map(|&b| (0..6u32).map(move |t| if t == b { 10.0 } else { 0.0 }))
            .collect()
    }

    fn greedy(max_tokens: usize) -> Decoding<'static> {
        use crate::sampling::Sampling;
        Decoding::new(
            vec![0, 1],
            max_tokens,
            None,
            Sampler::new(1, Sampling::Greedy),
            &[5],
            &[],
        )
    }

    #[test]
    fn drafted_tokens_are_kept_while_the_model_chooses_them() {
        let tokenizer = tokenizer();
        let mut text = String::new();
        let mut on_text = |t: &str| text.push_str(t);
        // The model agrees with the first two drafted tokens, then picks 1.
        let mut decoding = greedy(10);
        let verdict = decoding
            .verify(&[2, 3, 4], &rows(&[2, 3, 1, 4]), &tokenizer, &mut on_text)
            .unwrap();
        assert_eq!(
            verdict,
            Verdict::Continue {
                kept: 2,
                unread: vec![1],
                logits: Vec::new()
            }
        );
        assert_eq!(decoding.generated(), &[2, 3, 1]);
        // Every drafted token kept: the logits after the last one come back.
        let mut decoding = greedy(10);
        let all = rows(&[2, 3, 4, 1]);
        let verdict = decoding
            .verify(&[2, 3, 4], &all, &tokenizer, &mut on_text)
            .unwrap();
        assert_eq!(
            verdict,
            Verdict::Continue {
                kept: 3,
                unread: Vec::new(),
                logits: all[18..].to_vec()
            }
        );
        assert_eq!(decoding.generated(), &[2, 3, 4]);
        // The end token chosen ends the generation; so does the room.
        let mut decoding = greedy(10);
        let verdict = decoding
            .verify(&[2, 3], &rows(&[2, 5, 1]), &tokenizer, &mut on_text)
            .unwrap();
        assert_eq!(verdict, Verdict::Finished);
        assert_eq!(decoding.generated(), &[2]);
        let mut decoding = greedy(1);
        let verdict = decoding
            .verify(&[2, 3], &rows(&[2, 3, 1]), &tokenizer, &mut on_text)
            .unwrap();
        assert!(matches!(verdict, Verdict::Continue { kept: 1, .. }));
        assert_eq!(decoding.room(), 0);
        // The text of each generation streamed as it grew: "c d b", "c d e", "c", "c".
        assert_eq!(text, "c d bc d ecc");
    }

    #[test]
    fn nothing_is_drafted_without_a_match_or_room() {
        assert!(draft(&[1, 2, 3, 4], 5).is_empty());
        assert!(draft(&[1, 2, 1, 2], 0).is_empty());
        assert!(draft(&[], 5).is_empty());
        // A match at the very end of the history is the tail itself, not a match.
        assert!(draft(&[1, 2], 5).is_empty());
        // A run of one token drafts more of it, as far as what was read goes.
        assert_eq!(draft(&[7, 7, 7], 5), &[7]);
    }
}
