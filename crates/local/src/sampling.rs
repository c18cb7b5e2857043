//! The next token from a row of logits: the most likely one, or one drawn
//! by nucleus (top-p) sampling at a temperature with a seed; and the mild
//! penalty on recently generated tokens.
//!
//! The rules are those of candle-transformers' `LogitsProcessor` and
//! `apply_repeat_penalty`, which this crate used before; they work here on
//! the plain row of logits the forward pass returns (no tensor made and
//! copied three times per token) with fastrand's seeded generator.

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sampling {
    /// The most likely token (the first of equals).
    Greedy,
    /// A token drawn from the most likely ones whose probabilities, at
    /// `temperature`, add up to `top_p` (all tokens when `top_p` is not in
    /// (0, 1)).
    Nucleus {
        /// The share of probability mass sampled from.
        top_p: f32,
        /// Logits are divided by it before the softmax (> 0).
        temperature: f32,
    },
}

/// Chooses tokens one after another with a seeded generator, so that the
/// same seed gives the same tokens.
pub(crate) struct Sampler {
    sampling: Sampling,
    rng: fastrand::Rng,
}

impl Sampler {
    /// A sampler with its own generator seeded by `seed`.
    pub(crate) fn new(seed: u64, sampling: Sampling) -> Self {
        Self {
            sampling,
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// The chosen token's index in `logits`, or `None` when no token can be
    /// chosen (every logit is −∞ or not a number).
    pub(crate) fn sample(&mut self, logits: &[f32]) -> Option<u32> {
        let index = match self.sampling {
            Sampling::Greedy => most_likely(logits)?,
            Sampling::Nucleus { top_p, temperature } => {
                let probabilities = softmax(logits, temperature)?;
                nucleus(&probabilities, top_p, self.rng.f32())?
            }
        };
        u32::try_from(index).ok()
    }

    /// The token chosen from `logits` when `draft` was proposed for this
    /// position (speculative sampling with a one-token draft). Greedy
    /// choice ignores the draft. Sampling keeps the draft with its
    /// probability `p(draft)` in the nucleus and otherwise draws from the
    /// nucleus without it, renormalized: each token is then chosen with
    /// exactly the probability [`Self::sample`] gives it.
    pub(crate) fn sample_given(&mut self, logits: &[f32], draft: u32) -> Option<u32> {
        let Sampling::Nucleus { top_p, temperature } = self.sampling else {
            return self.sample(logits);
        };
        let probabilities = softmax(logits, temperature)?;
        let (kept, mass) = nucleus_set(&probabilities, top_p);
        let draft_mass = kept
            .iter()
            .find(|&&(index, _)| u32::try_from(index).ok() == Some(draft))
            .map_or(0.0, |&(_, p)| p);
        if self.rng.f32() * mass < draft_mass {
            return Some(draft);
        }
        let others: Vec<(usize, f32)> = kept
            .into_iter()
            .filter(|&(index, _)| u32::try_from(index).ok() != Some(draft))
            .collect();
        let index = draw_from(&others, mass - draft_mass, self.rng.f32())
            // Rounding: the draft held (nearly) all the mass.
            .or_else(|| (draft_mass > 0.0).then_some(draft as usize))?;
        u32::try_from(index).ok()
    }
}

/// Divides the positive logit, and multiplies the negative one, of each
/// distinct token of `recent` by `penalty` (1.0 changes nothing).
pub(crate) fn penalize_repeats(logits: &mut [f32], penalty: f32, recent: &[u32]) {
    let mut seen: Vec<u32> = Vec::with_capacity(recent.len());
    for &token in recent {
        if seen.contains(&token) {
            continue;
        }
        seen.push(token);
        if let Some(logit) = usize::try_from(token).ok().and_then(|i| logits.get_mut(i)) {
            if *logit >= 0.0 {
                *logit /= penalty;
            } else {
                *logit *= penalty;
            }
        }
    }
}

/// The index of the largest finite-or-infinite logit (the first of
/// equals); `None` when none is above −∞.
fn most_likely(logits: &[f32]) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &logit) in logits.iter().enumerate() {
        if logit.is_nan() || logit == f32::NEG_INFINITY {
            continue;
        }
        if best.is_none_or(|(_, top)| logit > top) {
            best = Some((i, logit));
        }
    }
    best.map(|(i, _)| i)
}

/// The probabilities of `logits` divided by `temperature`; `None` when no
/// logit is finite (NaN counts as impossible).
fn softmax(logits: &[f32], temperature: f32) -> Option<Vec<f32>> {
    let max = logits
        .iter()
        .copied()
        .filter(|l| l.is_finite())
        .fold(f32::NEG_INFINITY, f32::max);
    if !max.is_finite() {
        return None;
    }
    let temperature = temperature.max(f32::MIN_POSITIVE);
    let mut probabilities: Vec<f32> = logits
        .iter()
        .map(|&l| {
            if l.is_finite() {
                ((l - max) / temperature).exp()
            } else {
                0.0
            }
        })
        .collect();
    let sum: f32 = probabilities.iter().sum();
    if sum.is_nan() || sum <= 0.0 {
        return None;
    }
    for p in &mut probabilities {
        *p /= sum;
    }
    Some(probabilities)
}

/// The token drawn by `draw` (uniform in [0, 1)) from the most likely
/// tokens whose probabilities add up to `top_p` ([`nucleus_set`]).
fn nucleus(probabilities: &[f32], top_p: f32, draw: f32) -> Option<usize> {
    let (kept, mass) = nucleus_set(probabilities, top_p);
    draw_from(&kept, mass, draw)
}

/// The most likely tokens whose probabilities add up to `top_p`, most
/// likely first (a token is kept while the mass kept before it is below
/// `top_p`; all of them when `top_p` is not in (0, 1)), and their mass.
fn nucleus_set(probabilities: &[f32], top_p: f32) -> (Vec<(usize, f32)>, f32) {
    nucleus_sorting(probabilities, top_p, NUCLEUS_HEAD)
}

/// [`nucleus_set`], sorting the most likely `first_head` tokens first.
fn nucleus_sorting(
    probabilities: &[f32],
    top_p: f32,
    first_head: usize,
) -> (Vec<(usize, f32)>, f32) {
    let mut order: Vec<(usize, f32)> = probabilities
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, p)| p > 0.0)
        .collect();
    // Most likely first, then by index: a strict order, so the nucleus is
    // the same prefix however much of the order is sorted.
    let most_likely_first =
        |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let whole = top_p.is_nan() || top_p <= 0.0 || top_p >= 1.0;
    // The nucleus is usually a small part of the vocabulary's ~50,000
    // tokens: sort only the most likely `head` (selected in linear time
    // from the rest), then four times more while the mass they hold stays
    // below `top_p`; the mass is added in the same order as a whole sort.
    let mut sorted = 0;
    let mut kept = 0.0f32;
    let mut head = if whole {
        order.len()
    } else {
        first_head.clamp(1, order.len().max(1)).min(order.len())
    };
    while sorted < head {
        let rest = &mut order[sorted..];
        let take = head - sorted;
        if take < rest.len() {
            rest.select_nth_unstable_by(take - 1, most_likely_first);
        }
        rest[..take].sort_unstable_by(most_likely_first);
        for n in sorted..head {
            if !whole && kept >= top_p {
                order.truncate(n);
                return (order, kept);
            }
            kept += order[n].1;
        }
        sorted = head;
        head = (head * 4).min(order.len());
    }
    (order, kept)
}

/// Tokens sorted first when looking for the nucleus (see [`nucleus_set`]).
const NUCLEUS_HEAD: usize = 64;

/// The token `draw` (uniform in [0, 1)) falls on among `tokens`, whose
/// probabilities add up to `mass`.
fn draw_from(tokens: &[(usize, f32)], mass: f32, draw: f32) -> Option<usize> {
    let mut left = draw.clamp(0.0, 1.0) * mass;
    for &(index, p) in tokens {
        if left < p {
            return Some(index);
        }
        left -= p;
    }
    // Rounding left a sliver past the last kept token.
    tokens.last().map(|&(index, _)| index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_takes_the_first_largest_and_skips_what_is_masked() {
        let mut greedy = Sampler::new(1, Sampling::Greedy);
        assert_eq!(greedy.sample(&[0.1, 2.0, 2.0, -1.0]), Some(1));
        assert_eq!(greedy.sample(&[f32::NAN, f32::NEG_INFINITY, -3.0]), Some(2));
        assert_eq!(greedy.sample(&[f32::NEG_INFINITY, f32::NAN]), None);
        assert_eq!(greedy.sample(&[]), None);
    }

    /// The nucleus found by sorting only its head is the one a full sort
    /// finds, with the same mass to the bit: for flat and peaked
    /// distributions over a vocabulary's size, nuclei of a few tokens to
    /// thousands, with ties.
    #[test]
    fn the_nucleus_from_a_partial_sort_is_the_full_sorts() {
        let mut rng = fastrand::Rng::with_seed(7);
        for temperature in [0.05f32, 0.3, 1.0, 3.0] {
            let logits: Vec<f32> = (0..49_152)
                .map(|i| {
                    if i % 97 == 0 {
                        f32::NEG_INFINITY
                    } else {
                        (rng.f32() * 8.0).round() / 2.0
                    }
                })
                .collect();
            let probabilities = softmax(&logits, temperature).unwrap();
            for top_p in [0.1f32, 0.5, 0.95, 0.999] {
                let (ours, ours_mass) = nucleus_set(&probabilities, top_p);
                // Every token sorted at once: the order the nucleus is defined by.
                let (reference, reference_mass) =
                    nucleus_sorting(&probabilities, top_p, usize::MAX);
                assert_eq!(ours, reference, "t {temperature}, top-p {top_p}");
                assert_eq!(ours_mass.to_bits(), reference_mass.to_bits());
            }
        }
    }

    #[test]
    fn the_nucleus_keeps_the_most_likely_tokens_up_to_top_p() {
        // Probabilities 0.5, 0.3, 0.2 (as logits): top-p 0.6 keeps the
        // first two (0.5 < 0.6, then 0.8 ≥ 0.6 stops), never the third.
        let probabilities = [0.2, 0.5, 0.3];
        for step in 0..100 {
            let draw = step as f32 / 100.0;
            let token = nucleus(&probabilities, 0.6, draw).unwrap();
            assert!(token == 1 || token == 2, "draw {draw}: {token}");
            let expected = if draw * 0.8 < 0.5 { 1 } else { 2 };
            assert_eq!(token, expected, "draw {draw}");
        }
        // Outside (0, 1): every token can be drawn.
        assert_eq!(nucleus(&probabilities, 1.0, 0.99), Some(0));
        assert_eq!(nucleus(&probabilities, 0.0, 0.0), Some(1));
        assert_eq!(nucleus(&[0.0, 0.0], 0.9, 0.5), None);
    }

    #[test]
    fn sampling_is_seeded_follows_the_temperature_and_never_draws_a_masked_token() {
        let logits = [1.0, 3.0, f32::NEG_INFINITY, 2.5, 0.0];
        let draws = |seed: u64, temperature: f32| -> Vec<u32> {
            let mut sampler = Sampler::new(
                seed,
                Sampling::Nucleus {
                    top_p: 0.95,
                    temperature,
                },
            );
            (0..400).map(|_| sampler.sample(&logits).unwrap()).collect()
        };
        assert_eq!(draws(7, 1.0), draws(7, 1.0));
        assert_ne!(draws(7, 1.0), draws(8, 1.0));
        assert!(!draws(7, 1.0).contains(&2));
        let share_of_best = |tokens: Vec<u32>| tokens.iter().filter(|&&t| t == 1).count();
        // A colder temperature favours the best token more.
        assert!(share_of_best(draws(7, 0.2)) > share_of_best(draws(7, 2.0)));
        // At a very low temperature, the best token nearly always.
        assert!(share_of_best(draws(7, 0.01)) >= 399);
    }

    #[test]
    fn a_draft_is_kept_as_often_as_sampling_would_choose_it() {
        // Probabilities about 0.6, 0.3, 0.1 at temperature 1.
        let logits = [0.6f32.ln(), 0.3f32.ln(), 0.1f32.ln()];
        let nucleus = Sampling::Nucleus {
            top_p: 1.0,
            temperature: 1.0,
        };
        let shares = |draft: Option<u32>| -> Vec<f32> {
            let mut sampler = Sampler::new(11, nucleus);
            let mut counts = [0usize; 3];
            let n = 20_000;
            for _ in 0..n {
                let token = match draft {
                    Some(d) => sampler.sample_given(&logits, d),
                    None => sampler.sample(&logits),
                };
                counts[token.unwrap() as usize] += 1;
            }
            counts.iter().map(|&c| c as f32 / n as f32).collect()
        };
        for draft in [None, Some(0), Some(1), Some(2)] {
            let shares = shares(draft);
            for (share, expected) in shares.iter().zip([0.6, 0.3, 0.1]) {
                assert!((share - expected).abs() < 0.015, "{draft:?}: {shares:?}");
            }
        }
        // Outside the nucleus a draft is never kept; a sure draft always is.
        let mut sampler = Sampler::new(
            3,
            Sampling::Nucleus {
                top_p: 0.5,
                temperature: 1.0,
            },
        );
        assert!((0..200).all(|_| sampler.sample_given(&logits, 2) == Some(0)));
        let sure = [0.0, f32::NEG_INFINITY, f32::NEG_INFINITY];
        assert!((0..200).all(|_| sampler.sample_given(&sure, 0) == Some(0)));
        // Greedy choice ignores the draft.
        let mut greedy = Sampler::new(3, Sampling::Greedy);
        assert_eq!(greedy.sample_given(&logits, 2), Some(0));
    }

    #[test]
    fn repeats_are_penalized_once_per_distinct_token() {
        let mut logits = [2.4, -1.0, 0.5, 3.0];
        penalize_repeats(&mut logits, 1.2, &[0, 1, 0, 9]);
        assert!((logits[0] - 2.0).abs() < 1e-6);
        assert!((logits[1] + 1.2).abs() < 1e-6);
        assert_eq!(logits[2..], [0.5, 3.0]);
    }
}
