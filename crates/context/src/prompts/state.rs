//! A speaker's position state as the analysis prompts show it: the whole
//! state within a token budget. When it is longer, whole entries give way,
//! the least important kind first and the oldest first within a kind, and
//! the open challenges (what `answered` must quote) last of all; the JSON
//! is never cut mid-way.

use std::collections::BTreeMap;

use agon_core::{Agreement, AspectId, Intensity, LedgerNote, PersonaId, PersonaPositionState};

use crate::tokens::{TiktokenCounter, TokenCounter};

/// The most tokens (o200k) a state takes in an analysis prompt.
pub(crate) const STATE_TOKENS: usize = 600;

/// A position state as the analysis prompt shows it: struct fields in
/// declaration order (never through a JSON map, whose key order depends on
/// serde_json's features). Empty lists and an initial stance equal to the
/// current one are left out (they say nothing and cost tokens in every
/// analysis call).
#[derive(serde::Serialize)]
struct StateView<'a> {
    overall_stance: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    initial_stance: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    aspects: BTreeMap<&'a AspectId, AspectView<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    agreements: Vec<&'a Agreement>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    disagreements: Vec<DisagreementView<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    concessions: Vec<&'a LedgerNote>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    shifts: Vec<&'a LedgerNote>,
}

/// An aspect position as `agon_core::AspectPosition` serializes it.
#[derive(serde::Serialize)]
struct AspectView<'a> {
    position: &'a str,
    evidence: Vec<&'a str>,
    challenged: Vec<&'a str>,
}

/// A ledger disagreement as the analysis prompts show it: without the
/// rubric criteria it was cited with (they serve the trust memory, and
/// would cost tokens in every later analysis).
#[derive(serde::Serialize)]
struct DisagreementView<'a> {
    with: &'a PersonaId,
    on: &'a str,
    intensity: Intensity,
    round: u32,
}

impl StateView<'_> {
    /// Drops the entry that gives way first; `false` when nothing is left
    /// to drop but the stances and the aspects' positions.
    fn give_way(&mut self) -> bool {
        fn oldest<T>(list: &mut Vec<T>) -> bool {
            if list.is_empty() {
                return false;
            }
            list.remove(0);
            true
        }
        // Least important first: how the stance moved, whom they agree
        // with, what they disagree on, what they conceded, then the
        // evidence, and the open challenges last.
        oldest(&mut self.shifts)
            || oldest(&mut self.agreements)
            || oldest(&mut self.disagreements)
            || oldest(&mut self.concessions)
            || self.initial_stance.take().is_some()
            || self.aspects.values_mut().any(|a| oldest(&mut a.evidence))
            || self.aspects.values_mut().any(|a| oldest(&mut a.challenged))
    }
}

/// `state`'s view as JSON within [`STATE_TOKENS`]; with `aspect`, only
/// that aspect's position among the aspects (a take is analysed against
/// the aspect it is about).
pub(crate) fn state_json(
    state: Option<&PersonaPositionState>,
    aspect: Option<&AspectId>,
) -> String {
    state_json_within(state, aspect, STATE_TOKENS)
}

fn state_json_within(
    state: Option<&PersonaPositionState>,
    aspect: Option<&AspectId>,
    budget: usize,
) -> String {
    let empty = PersonaPositionState::default();
    let state = state.unwrap_or(&empty);
    let mut view = StateView {
        overall_stance: &state.overall_stance,
        initial_stance: (state.initial_stance != state.overall_stance)
            .then_some(state.initial_stance.as_str()),
        aspects: state
            .aspects
            .iter()
            .filter(|(id, _)| aspect.is_none_or(|a| a == *id))
            .map(|(id, p)| {
                (
                    id,
                    AspectView {
                        position: &p.position,
                        evidence: p.evidence.iter().map(String::as_str).collect(),
                        challenged: p.challenged.iter().map(String::as_str).collect(),
                    },
                )
            })
            .collect(),
        agreements: state.agreements.iter().collect(),
        disagreements: state
            .disagreements
            .iter()
            .map(|d| DisagreementView {
                with: &d.with,
                on: &d.on,
                intensity: d.intensity,
                round: d.round,
            })
            .collect(),
        concessions: state.concessions.iter().collect(),
        shifts: state.shifts.iter().collect(),
    };
    let counter = TiktokenCounter::default();
    loop {
        let text = crate::fenced(&serde_json::to_string(&view).unwrap_or_default()).into_owned();
        if counter.count(&text) <= budget || !view.give_way() {
            return text;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::AspectPosition;

    fn long_state() -> PersonaPositionState {
        let aspect = AspectId::new("cost");
        let mut state = PersonaPositionState {
            overall_stance: "Cars should pay for the road space they use.".into(),
            ..PersonaPositionState::default()
        };
        state.aspects.insert(
            aspect,
            AspectPosition {
                position: "A congestion charge funds the buses.".into(),
                evidence: (0..40)
                    .map(|i| format!("evidence {i}: the 2019 ledger shows item {i}"))
                    .collect(),
                challenged: (0..60)
                    .map(|i| format!("challenge {i}: who pays for route {i}?"))
                    .collect(),
            },
        );
        state.concessions = (0..40)
            .map(|i| LedgerNote {
                text: format!("concession {i}: fares rise a little on line {i}"),
                round: i,
            })
            .collect();
        state
    }

    #[test]
    fn a_long_state_keeps_whole_entries_and_its_open_challenges_within_budget() {
        let state = long_state();
        let aspect = AspectId::new("cost");
        let json = state_json(Some(&state), Some(&aspect));
        let value: serde_json::Value = serde_json::from_str(&json).expect("whole JSON");
        assert!(TiktokenCounter::default().count(&json) <= STATE_TOKENS);
        // The concessions and the evidence gave way before any challenge.
        assert!(value.get("concessions").is_none(), "{json}");
        let challenged = value["aspects"]["cost"]["challenged"].as_array().unwrap();
        assert!(challenged.len() >= 10, "{json}");
        assert_eq!(
            challenged.last().unwrap(),
            "challenge 59: who pays for route 59?",
            "the newest challenge stays"
        );
        // Whole entries: every kept challenge is one of the state's.
        for c in challenged {
            assert!(
                state.aspects[&aspect]
                    .challenged
                    .contains(&c.as_str().unwrap().to_owned())
            );
        }
    }

    #[test]
    fn a_short_state_is_shown_whole() {
        let mut state = long_state();
        state.concessions.truncate(2);
        let aspect = AspectId::new("cost");
        if let Some(p) = state.aspects.get_mut(&aspect) {
            p.evidence.truncate(3);
            p.challenged.truncate(3);
        }
        let json = state_json(Some(&state), Some(&aspect));
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["concessions"].as_array().unwrap().len(), 2);
        assert_eq!(
            value["aspects"]["cost"]["evidence"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            value["aspects"]["cost"]["challenged"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(state_json_within(Some(&state), Some(&aspect), 10_000), json);
    }

    #[test]
    fn a_budget_too_small_keeps_the_stances_and_positions() {
        let state = long_state();
        let json = state_json_within(Some(&state), None, 10);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            value["overall_stance"],
            "Cars should pay for the road space they use."
        );
        assert_eq!(
            value["aspects"]["cost"]["position"],
            "A congestion charge funds the buses."
        );
        assert!(
            value["aspects"]["cost"]["challenged"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
}
