//! Fitting section drafts into a token budget.
//!
//! 1. Each section with content gets its share of the budget (weights over
//!    the sections present) and takes items in priority order while they fit.
//! 2. Leftover budget goes to sections in reverse [`SectionKind::SHRINK_ORDER`]
//!    (most important first); there an item that does not fit whole is cut
//!    to fit (marked with `…`) if a useful part fits.
//! 3. The rendered text is counted as a whole; while it is over budget (token
//!    merges across joins can differ from the sum of parts), the section
//!    first in the shrink order gives up its last-chosen item. The debate
//!    state is only cut, never dropped, so the result always fits a budget at
//!    or above [`crate::ContextBudget::MIN_TOKENS`].

use crate::section::{Section, SectionKind, render};
use crate::tokens::TokenCounter;

/// The smallest part of an item worth keeping when it is cut.
const MIN_CUT_TOKENS: usize = 12;
/// Appended to a cut item.
const CUT_MARK: &str = " …";

/// One candidate item of a section.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// The item's text.
    pub text: String,
    /// Where it goes in display order (ascending).
    pub order: usize,
    /// Its token count (plus the newline), once measured: a candidate that
    /// does not fit its share is measured once, not again for the leftover.
    tokens: Option<usize>,
}

/// A section's candidates, most important first.
#[derive(Debug, Clone)]
pub(crate) struct Draft {
    pub kind: SectionKind,
    pub candidates: Vec<Candidate>,
    /// When the budget cannot show every candidate, the shown items start
    /// at a display position that is a multiple of this (see
    /// [`Draft::in_steps`]).
    pub step: Option<usize>,
}

impl Draft {
    pub fn new(kind: SectionKind) -> Self {
        Self {
            kind,
            candidates: Vec::new(),
            step: None,
        }
    }

    /// The same draft, cut in steps of `step` display positions: when the
    /// budget cannot show every candidate, the items shown start at a
    /// position that is a multiple of `step`, and none is cut to fit. A
    /// window of messages that grows by one a turn then starts at the same
    /// message for `step` turns, so that consecutive calls share it as a
    /// prefix (a provider caches it), at the cost of up to `step - 1` of
    /// its oldest items.
    pub fn in_steps(mut self, step: usize) -> Self {
        self.step = Some(step.max(1));
        self
    }

    /// Adds a candidate that displays in the order it was added.
    pub fn push(&mut self, text: impl Into<String>) {
        let order = self.candidates.len();
        self.push_at(text, order);
    }

    /// Adds a candidate with an explicit display position. Its text is
    /// [`crate::fenced`]: what a model or a person wrote cannot pass for a
    /// section heading, and every line after the item's first is quoted, so
    /// none of it can begin a line of the prompt. An item of several lines
    /// of its own is pushed with [`Draft::push_lines_at`].
    pub fn push_at(&mut self, text: impl Into<String>, order: usize) {
        let text: String = text.into();
        // Most items need nothing fenced: they are kept without a copy.
        let unchanged = matches!(
            crate::fenced(&text),
            std::borrow::Cow::Borrowed(fenced) if fenced.len() == text.len()
        );
        let text = if unchanged {
            text
        } else {
            let indent = &text[..text.len() - text.trim_start().len()];
            format!("{indent}{}", crate::fenced(&text))
        };
        self.push_fenced(text, order);
    }

    /// Adds a candidate made of several lines of Agon's own (a crux card:
    /// its question, then a line per position), each line [`crate::fenced`]
    /// on its own: the lines are structure, what they quote is not.
    pub fn push_lines_at(&mut self, lines: &[String], order: usize) {
        let text = lines
            .iter()
            .map(|line| {
                let indent = &line[..line.len() - line.trim_start().len()];
                format!("{indent}{}", crate::fenced(line))
            })
            .collect::<Vec<_>>()
            .join("\n");
        self.push_fenced(text, order);
    }

    fn push_fenced(&mut self, text: String, order: usize) {
        self.candidates.push(Candidate {
            text,
            order,
            tokens: None,
        });
    }
}

/// What happened to one section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fitted {
    pub section: Section,
    pub tokens: usize,
    pub available: usize,
}

struct Slot {
    kind: SectionKind,
    step: Option<usize>,
    weight: u32,
    heading_tokens: usize,
    candidates: Vec<Candidate>,
    /// (candidate index, text as included, tokens incl. newline)
    chosen: Vec<(usize, String, usize)>,
    next: usize,
    used: usize,
}

impl Slot {
    /// Tokens the section costs if `extra` more are added.
    fn cost_with(&self, extra: usize) -> usize {
        let heading = if self.chosen.is_empty() {
            self.heading_tokens + 2
        } else {
            0
        };
        self.used + heading + extra
    }

    fn take(&mut self, text: String, tokens: usize) {
        if self.chosen.is_empty() {
            self.used += self.heading_tokens + 2;
        }
        self.used += tokens;
        self.chosen.push((self.next, text, tokens));
        self.next += 1;
    }

    /// Takes whole items while the section stays within `allowance`.
    fn fill(&mut self, allowance: usize, counter: &dyn TokenCounter) {
        while let Some(candidate) = self.candidates.get_mut(self.next) {
            let tokens = *candidate
                .tokens
                .get_or_insert_with(|| counter.count(&candidate.text) + 1);
            if self.cost_with(tokens) > allowance {
                return;
            }
            let text = self.candidates[self.next].text.clone();
            self.take(text, tokens);
        }
    }

    /// Like `fill`, but a candidate that does not fit whole is cut to fit.
    fn fill_cutting(&mut self, allowance: usize, counter: &dyn TokenCounter) {
        self.fill(allowance, counter);
        let Some(candidate) = self.candidates.get(self.next) else {
            return;
        };
        let room = allowance.saturating_sub(self.cost_with(1));
        let mark = counter.count(CUT_MARK);
        if room < MIN_CUT_TOKENS + mark {
            return;
        }
        let cut = format!(
            "{}{CUT_MARK}",
            counter.truncate(&candidate.text, room - mark).trim_end()
        );
        let tokens = counter.count(&cut) + 1;
        if self.cost_with(tokens) <= allowance {
            self.take(cut, tokens);
        }
        // The rest of this section's candidates stay out: order matters more
        // than squeezing in a later item.
        self.next = self.candidates.len();
    }

    /// For a section cut in steps ([`Draft::in_steps`]) that could not show
    /// every candidate: gives back the chosen items before the first
    /// multiple of the step at or after the oldest one chosen, unless that
    /// would leave none.
    fn align(&mut self) {
        let Some(step) = self.step else {
            return;
        };
        if self.chosen.len() == self.candidates.len() {
            return;
        }
        let candidates = &self.candidates;
        let order = |(i, _, _): &(usize, String, usize)| candidates[*i].order;
        let Some(oldest) = self.chosen.iter().map(order).min() else {
            return;
        };
        let start = oldest.div_ceil(step) * step;
        if self.chosen.iter().any(|c| order(c) >= start) {
            self.chosen.retain(|c| order(c) >= start);
            self.used =
                self.heading_tokens + 2 + self.chosen.iter().map(|(_, _, t)| t).sum::<usize>();
        }
    }

    fn section(&self) -> Section {
        let mut chosen: Vec<&(usize, String, usize)> = self.chosen.iter().collect();
        chosen.sort_by_key(|(i, _, _)| self.candidates[*i].order);
        Section {
            kind: self.kind,
            items: chosen
                .into_iter()
                .map(|(_, text, _)| text.clone())
                .collect(),
        }
    }
}

/// Fits `drafts` into `budget` tokens with the phase's `weights`.
pub(crate) fn fit(
    drafts: Vec<Draft>,
    weights: &[(SectionKind, u32)],
    budget: usize,
    counter: &dyn TokenCounter,
) -> (Vec<Fitted>, usize) {
    let mut slots: Vec<Slot> = drafts
        .into_iter()
        .filter(|d| !d.candidates.is_empty())
        .map(|d| Slot {
            kind: d.kind,
            step: d.step,
            weight: weights
                .iter()
                .find(|(k, _)| *k == d.kind)
                .map_or(0, |(_, w)| *w),
            heading_tokens: counter.count(&d.kind.heading()),
            candidates: d.candidates,
            chosen: Vec::new(),
            next: 0,
            used: 0,
        })
        .collect();
    slots.sort_by_key(|s| std::cmp::Reverse(s.kind.shrink_rank()));

    // 1. Shares.
    let total_weight: u64 = slots
        .iter()
        .map(|s| u64::from(s.weight))
        .sum::<u64>()
        .max(1);
    for slot in &mut slots {
        let share = (budget as u64 * u64::from(slot.weight) / total_weight) as usize;
        slot.fill(share, counter);
    }
    // 2. Leftover, most important section first (slots are in that order),
    // keeping back what rendering adds between sections, so step 3 rarely
    // has to shed the shares step 1 gave the least important sections.
    let reserve = 2 * slots.len() + 2;
    // The debate state is never dropped: when its share could not hold its
    // first item and the others' shares leave too little for even a cut
    // one, the least important sections give items back first.
    if let Some(state) = slots
        .iter()
        .position(|s| s.kind == SectionKind::DebateState && s.chosen.is_empty())
    {
        let need = slots[state].heading_tokens + 2 + MIN_CUT_TOKENS + counter.count(CUT_MARK) + 1;
        loop {
            let used_elsewhere: usize = slots.iter().map(|s| s.used).sum();
            if budget.saturating_sub(used_elsewhere + reserve) >= need
                || !shed_one(&mut slots, 0, counter)
            {
                break;
            }
        }
    }
    for i in 0..slots.len() {
        let used_elsewhere: usize = slots
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, s)| s.used)
            .sum();
        let allowance = budget.saturating_sub(used_elsewhere + reserve);
        if slots[i].step.is_some() {
            slots[i].fill(allowance, counter);
            slots[i].align();
        } else {
            slots[i].fill_cutting(allowance, counter);
        }
    }
    // 3. Exact check on the rendered text.
    let total = loop {
        let sections: Vec<Section> = slots.iter().map(Slot::section).collect();
        let total = counter.count(&render(&sections));
        if total <= budget || !shed_one(&mut slots, total - budget, counter) {
            break total;
        }
    };
    slots.sort_by_key(|s| s.kind.shrink_rank());
    let fitted = slots
        .iter()
        .filter(|s| !s.chosen.is_empty())
        .map(|s| Fitted {
            section: s.section(),
            tokens: s.used,
            available: s.candidates.len(),
        })
        .collect();
    (fitted, total)
}

/// Removes the least important chosen item (or cuts the debate state's last
/// item when nothing else is left). Returns false when nothing can be shed.
fn shed_one(slots: &mut [Slot], excess: usize, counter: &dyn TokenCounter) -> bool {
    let victim = slots
        .iter_mut()
        .filter(|s| !s.chosen.is_empty())
        .min_by_key(|s| s.kind.shrink_rank());
    let Some(slot) = victim else {
        return false;
    };
    let only_state_left = slot.kind == SectionKind::DebateState;
    if !only_state_left || slot.chosen.len() > 1 {
        if let Some((_, _, tokens)) = slot.chosen.pop() {
            slot.used -= tokens;
            if slot.chosen.is_empty() {
                slot.used = 0;
            }
        }
        return true;
    }
    // Only the debate state's first item is left: cut it further.
    let Some((index, text, tokens)) = slot.chosen.pop() else {
        return false;
    };
    let keep = tokens.saturating_sub(excess + 2);
    let mark = counter.count(CUT_MARK);
    if keep <= mark {
        slot.used = 0;
        return true;
    }
    let cut = format!(
        "{}{CUT_MARK}",
        counter.truncate(&text, keep - mark).trim_end()
    );
    let cut_tokens = counter.count(&cut) + 1;
    slot.used = slot.used - tokens + cut_tokens;
    slot.chosen.push((index, cut, cut_tokens));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::PerChar;

    fn draft(kind: SectionKind, items: &[&str]) -> Draft {
        let mut d = Draft::new(kind);
        for item in items {
            d.push(*item);
        }
        d
    }

    /// A window of `n` messages, newest first, each 20 characters.
    fn window(n: usize) -> Draft {
        let mut d = Draft::new(SectionKind::RecentExchange);
        for i in (0..n).rev() {
            d.push_at(format!("message number {i:>5}"), i);
        }
        d
    }

    fn shown(drafts: Vec<Draft>, budget: usize) -> Vec<String> {
        let (fitted, _) = fit(
            drafts,
            &[
                (SectionKind::DebateState, 1),
                (SectionKind::RecentExchange, 9),
            ],
            budget,
            &PerChar,
        );
        fitted
            .into_iter()
            .find(|f| f.section.kind == SectionKind::RecentExchange)
            .map(|f| f.section.items)
            .unwrap_or_default()
    }

    #[test]
    fn a_window_cut_in_steps_starts_at_the_same_message_while_it_grows() {
        let state = || draft(SectionKind::DebateState, &["Topic: t"]);
        let budget = 400;
        // Uncut, the budget shows the newest messages, starting wherever
        // they run out (the oldest cut to fit): one message later each
        // time the window grows.
        let plain: Vec<String> = (20..24)
            .map(|n| shown(vec![state(), window(n)], budget)[1].clone())
            .collect();
        assert_eq!(
            plain
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            4,
            "{plain:?}"
        );
        // In steps of 4: every window starts at a multiple of 4, the same
        // one while it grows by up to 4, none cut, none beyond the budget.
        let stepped: Vec<Vec<String>> = (20..24)
            .map(|n| shown(vec![state(), window(n).in_steps(4)], budget))
            .collect();
        for items in &stepped {
            let first: usize = items[0]
                .trim_start_matches("message number")
                .trim()
                .parse()
                .unwrap();
            assert_eq!(first % 4, 0, "{items:?}");
            assert!(items.iter().all(|i| !i.ends_with(CUT_MARK)), "{items:?}");
        }
        let starts: std::collections::BTreeSet<&String> =
            stepped.iter().map(|items| &items[0]).collect();
        assert!(starts.len() <= 2, "{starts:?}");
        // Each window shows the one before it, then the newer messages.
        for pair in stepped.windows(2) {
            if pair[0][0] == pair[1][0] {
                assert!(pair[1].starts_with(&pair[0]), "{pair:?}");
            }
        }
        // Everything that fits is shown whole when nothing has to go.
        assert_eq!(shown(vec![state(), window(3).in_steps(4)], budget).len(), 3);
    }

    #[test]
    fn everything_fits_a_large_budget_in_display_order() {
        let mut exchange = Draft::new(SectionKind::RecentExchange);
        exchange.push_at("newest", 2);
        exchange.push_at("older", 1);
        let (fitted, total) = fit(
            vec![draft(SectionKind::DebateState, &["Topic: t"]), exchange],
            &[
                (SectionKind::DebateState, 1),
                (SectionKind::RecentExchange, 1),
            ],
            1_000,
            &PerChar,
        );
        let exchange = fitted
            .iter()
            .find(|f| f.section.kind == SectionKind::RecentExchange)
            .unwrap();
        assert_eq!(exchange.section.items, ["older", "newest"]);
        let text = render(&fitted.iter().map(|f| f.section.clone()).collect::<Vec<_>>());
        assert_eq!(total, text.chars().count());
    }

    #[test]
    fn over_budget_the_shrink_order_decides_what_goes() {
        let state = draft(SectionKind::DebateState, &["Topic: a question"]);
        let insights = draft(
            SectionKind::KeyInsights,
            &["• an insight that is fairly long"],
        );
        let mine = draft(SectionKind::YourPosition, &["You've argued: x"]);
        let weights = [
            (SectionKind::DebateState, 1),
            (SectionKind::KeyInsights, 1),
            (SectionKind::YourPosition, 1),
        ];
        // Room for the state and one more section, not both.
        let budget = 46 + 1 + 17 + 2 + 46 + 1 + 16 + 10;
        let (fitted, total) = fit(vec![state, insights, mine], &weights, budget, &PerChar);
        let kinds: Vec<SectionKind> = fitted.iter().map(|f| f.section.kind).collect();
        assert!(kinds.contains(&SectionKind::YourPosition), "{kinds:?}");
        assert!(!kinds.contains(&SectionKind::KeyInsights), "{kinds:?}");
        assert!(total <= budget);
    }

    #[test]
    fn an_item_too_long_for_the_budget_is_cut_and_marked() {
        let long = "word ".repeat(200);
        let (fitted, total) = fit(
            vec![draft(SectionKind::DebateState, &[long.as_str()])],
            &[(SectionKind::DebateState, 1)],
            150,
            &PerChar,
        );
        assert!(total <= 150);
        assert!(fitted[0].section.items[0].ends_with(" …"));
    }
}
