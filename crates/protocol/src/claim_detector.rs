//! Faultline's claim-opening rule over the judged disagreement windows:
//! which pair's repeated, confident disagreement becomes a contested claim,
//! and the claim promoted to a crux room.

use serde::{Deserialize, Serialize};

use agon_core::{
    AnalyzedTurn, Blackboard, ClaimId, DebateEvent, MessageId, PersonaId, TurnAnalyzedView,
};

/// A claim the detector wants opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimCandidate {
    /// The two parties, in id order.
    pub personas: [PersonaId; 2],
    /// The disputed statement (from the latest window).
    pub text: String,
    /// The messages whose windows surfaced it, oldest first.
    pub source_messages: Vec<MessageId>,
}

/// The claim-opening rule. Defaults are Faultline's published values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClaimDetector {
    /// Minimum confidence in percent (default 80, i.e. 0.8).
    pub min_confidence: u8,
    /// Consecutive windows at or above it (default 2).
    pub consecutive: u32,
    /// Messages that must pass after a pair's claim surfaced before another
    /// claim may open for the same pair (default 10, one window).
    pub cooldown_messages: u32,
}

impl Default for ClaimDetector {
    fn default() -> Self {
        Self {
            min_confidence: 80,
            consecutive: 2,
            cooldown_messages: 10,
        }
    }
}

impl ClaimDetector {
    /// Claims that open because of the most recently analysed window.
    ///
    /// For each pair judged in that window at or above `min_confidence`, the
    /// streak is the number of consecutive analysed windows (most recent
    /// first; turns that end no window, the earlier messages of a batch,
    /// are skipped) that judged the same pair at or above it. A claim opens when
    /// the streak reaches `consecutive`, the pair has no open claim, and the
    /// pair's last claim (if any) surfaced at least `cooldown_messages`
    /// messages earlier.
    pub fn claims_to_open(&self, board: &Blackboard) -> Vec<ClaimCandidate> {
        let turns = board.analyzed_turns();
        let Some((latest, prior)) = turns.split_last() else {
            return Vec::new();
        };
        self.candidates(board, latest.view(), prior)
    }

    /// [`Self::claims_to_open`] as if `latest` had just been analysed (and
    /// recorded after every analysed turn of `board`), without applying it.
    pub fn claims_to_open_after(
        &self,
        board: &Blackboard,
        latest: TurnAnalyzedView<'_>,
    ) -> Vec<ClaimCandidate> {
        self.candidates(board, latest, board.analyzed_turns())
    }

    fn candidates(
        &self,
        board: &Blackboard,
        latest: TurnAnalyzedView<'_>,
        prior: &[AnalyzedTurn],
    ) -> Vec<ClaimCandidate> {
        let Some(latest_index) = board.message_index(latest.message) else {
            return Vec::new();
        };
        let needed = self.consecutive.max(1) as usize;
        let newest_first = std::iter::once(latest).chain(
            prior
                .iter()
                .rev()
                .filter(|t| t.window_end)
                .map(AnalyzedTurn::view),
        );
        let mut out: Vec<ClaimCandidate> = Vec::new();
        for judged in latest.disagreements {
            if judged.confidence < self.min_confidence
                || out.iter().any(|c| c.personas == judged.personas)
            {
                continue;
            }
            let streak: Vec<TurnAnalyzedView<'_>> = newest_first
                .clone()
                .take_while(|turn| {
                    turn.disagreements.iter().any(|d| {
                        d.personas == judged.personas && d.confidence >= self.min_confidence
                    })
                })
                .take(needed)
                .collect();
            if streak.len() < needed || !self.pair_is_free(board, &judged.personas, latest_index) {
                continue;
            }
            out.push(ClaimCandidate {
                personas: judged.personas.clone(),
                text: judged.claim.clone(),
                source_messages: pair_messages(board, &judged.personas, &streak),
            });
        }
        out
    }

    fn pair_is_free(&self, board: &Blackboard, pair: &[PersonaId; 2], at: usize) -> bool {
        board.claims().iter().all(|claim| {
            let same = claim.involves(&pair[0]) && claim.involves(&pair[1]);
            if !same {
                return true;
            }
            if claim.status.is_open() {
                return false;
            }
            let surfaced = claim
                .source_messages
                .iter()
                .filter_map(|m| board.message_index(m))
                .max()
                .unwrap_or(0);
            at >= surfaced + self.cooldown_messages as usize
        })
    }

    /// The `claim_opened` events for [`Self::claims_to_open`], with ids
    /// `claim-N` continuing the blackboard's numbering, in the round of the
    /// message whose window opened them.
    pub fn open_events(&self, board: &Blackboard) -> Vec<DebateEvent> {
        let round = board
            .analyzed_turns()
            .last()
            .and_then(|t| board.message(&t.message))
            .map_or_else(|| board.current_round(), |m| m.round);
        self.events_for(board, self.claims_to_open(board), round)
    }

    /// The `claim_opened` events for [`Self::claims_to_open_after`]: what
    /// [`Self::open_events`] returns once `latest` is applied, computed
    /// without applying it (no copy of the blackboard).
    pub fn open_events_after(
        &self,
        board: &Blackboard,
        latest: TurnAnalyzedView<'_>,
    ) -> Vec<DebateEvent> {
        let round = board
            .message(latest.message)
            .map_or_else(|| board.current_round(), |m| m.round);
        self.events_for(board, self.claims_to_open_after(board, latest), round)
    }

    fn events_for(
        &self,
        board: &Blackboard,
        candidates: Vec<ClaimCandidate>,
        round: u32,
    ) -> Vec<DebateEvent> {
        let mut ids = ClaimIds::new(board);
        candidates
            .into_iter()
            .map(|c| DebateEvent::ClaimOpened {
                claim: ids.next(),
                text: c.text,
                personas: c.personas,
                round,
                source_messages: c.source_messages,
            })
            .collect()
    }
}

/// Messages searched back from a window's last message for one of the
/// pair's own (a window is at most this long by default).
const WINDOW_SEARCH: usize = 10;

/// The claim's source messages, oldest first: for each window of the
/// streak, the latest message in it spoken by one of the pair (a window can
/// end with a third persona's message, e.g. the last take of a batched
/// miniround), else the window's last message; each once.
fn pair_messages(
    board: &Blackboard,
    pair: &[PersonaId; 2],
    streak: &[TurnAnalyzedView<'_>],
) -> Vec<MessageId> {
    let mut out: Vec<MessageId> = Vec::new();
    for turn in streak.iter().rev() {
        let own = board.message_index(turn.message).and_then(|end| {
            let start = (end + 1).saturating_sub(WINDOW_SEARCH);
            board.messages()[start..=end]
                .iter()
                .rev()
                .find(|m| pair.contains(&m.persona))
                .map(|m| m.id.clone())
        });
        let id = own.unwrap_or_else(|| turn.message.clone());
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// Hands out `claim-N` ids not yet used on a blackboard.
struct ClaimIds<'a> {
    board: &'a Blackboard,
    next: usize,
}

impl<'a> ClaimIds<'a> {
    fn new(board: &'a Blackboard) -> Self {
        Self {
            board,
            next: board.claims().len() + 1,
        }
    }

    fn next(&mut self) -> ClaimId {
        loop {
            let id = ClaimId::new(format!("claim-{}", self.next));
            self.next += 1;
            if self.board.claim(&id).is_none() {
                return id;
            }
        }
    }
}

/// A claim for the strongest disagreement between a pair that has no claim
/// yet, for debates that want a crux room even when no judgement reached the
/// threshold: the highest-confidence judged disagreement (earliest on ties),
/// or failing any judgement, the first disagreement in the position ledger.
/// `None` when no unclaimed pair disagrees at all.
pub fn promote_strongest(board: &Blackboard) -> Option<DebateEvent> {
    let claimed = |a: &PersonaId, b: &PersonaId| {
        board
            .claims()
            .iter()
            .any(|c| c.involves(a) && c.involves(b))
    };
    let mut best: Option<(u8, [PersonaId; 2], String, MessageId)> = None;
    for turn in board.analyzed_turns() {
        for d in &turn.disagreements {
            if !claimed(&d.personas[0], &d.personas[1])
                && best.as_ref().is_none_or(|b| d.confidence > b.0)
            {
                best = Some((
                    d.confidence,
                    d.personas.clone(),
                    d.claim.clone(),
                    turn.message.clone(),
                ));
            }
        }
    }
    if best.is_none() {
        best = board.positions().iter().find_map(|(persona, state)| {
            let d = state
                .disagreements
                .iter()
                .find(|d| !claimed(persona, &d.with))?;
            let mut pair = [persona.clone(), d.with.clone()];
            pair.sort();
            let source = board
                .messages()
                .iter()
                .rev()
                .find(|m| &m.persona == persona)?;
            Some((0, pair, d.on.clone(), source.id.clone()))
        });
    }
    let (_, personas, text, source) = best?;
    Some(DebateEvent::ClaimOpened {
        claim: ClaimIds::new(board).next(),
        text,
        personas,
        round: board.current_round(),
        source_messages: vec![source],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::{DialogueMessage, JudgedDisagreement, MessageKind, Persona, Topic};

    fn board() -> Blackboard {
        let mut bb = Blackboard::new();
        bb.apply(&DebateEvent::DebateStarted {
            debate: "d".into(),
            topic: Topic::new("t"),
            aspects: vec![],
            personas: vec![
                Persona::debater("ada", "Ada", "c", "v"),
                Persona::debater("bo", "Bo", "c", "v"),
                Persona::debater("cy", "Cy", "c", "v"),
            ],
            time: chrono::DateTime::UNIX_EPOCH,
            protocol: None,
        })
        .unwrap();
        bb
    }

    /// Appends a message and its analysis judging `pairs` at `confidence`;
    /// returns the claims the detector opens right after.
    fn turn(bb: &mut Blackboard, pairs: &[(&str, &str, u8)]) -> Vec<ClaimCandidate> {
        turn_in(bb, pairs, true)
    }

    /// [`turn`] for a message that ends a window (`window_end`) or sits
    /// inside a batch's window.
    fn turn_in(
        bb: &mut Blackboard,
        pairs: &[(&str, &str, u8)],
        window_end: bool,
    ) -> Vec<ClaimCandidate> {
        turn_by(bb, "ada", pairs, window_end)
    }

    /// [`turn_in`] for a message by `speaker`.
    fn turn_by(
        bb: &mut Blackboard,
        speaker: &str,
        pairs: &[(&str, &str, u8)],
        window_end: bool,
    ) -> Vec<ClaimCandidate> {
        let n = bb.messages().len() + 1;
        let id = MessageId::new(format!("m{n}"));
        bb.apply(&DebateEvent::MessageAppended {
            message: DialogueMessage {
                id: id.clone(),
                persona: speaker.into(),
                kind: MessageKind::Take,
                aspect: None,
                round: 0,
                miniround: None,
                crux_room: None,
                content: "x".into(),
                time: chrono::DateTime::UNIX_EPOCH,
                reply_to: None,
                meta: None,
            },
        })
        .unwrap();
        bb.apply(&DebateEvent::TurnAnalyzed {
            message: id,
            importance: None,
            contradiction: None,
            disagreements: pairs
                .iter()
                .map(|(a, b, c)| JudgedDisagreement::new((*a).into(), (*b).into(), "claim", *c))
                .collect(),
            window_end,
        })
        .unwrap();
        let detector = ClaimDetector::default();
        let events = detector.open_events(bb);
        for e in &events {
            bb.apply(e).unwrap();
        }
        detector.claims_to_open(bb)
    }

    #[test]
    fn opens_after_two_consecutive_confident_windows_only() {
        let mut bb = board();
        turn(&mut bb, &[("ada", "bo", 90)]);
        assert!(bb.claims().is_empty(), "one window is not enough");
        turn(&mut bb, &[("bo", "ada", 79)]);
        assert!(bb.claims().is_empty(), "79 is below 0.8");
        turn(&mut bb, &[("bo", "ada", 80)]);
        assert!(bb.claims().is_empty(), "streak restarted");
        turn(&mut bb, &[("ada", "bo", 85), ("bo", "cy", 95)]);
        assert_eq!(bb.claims().len(), 1);
        let claim = &bb.claims()[0];
        assert_eq!(claim.id.as_str(), "claim-1");
        assert_eq!(claim.personas, ["ada".into(), "bo".into()]);
        assert_eq!(claim.source_messages, vec!["m3".into(), "m4".into()]);
    }

    #[test]
    fn messages_inside_a_batch_window_neither_count_nor_break_a_streak() {
        let mut bb = board();
        // Batch 1: two messages, judged once with the last.
        turn_in(&mut bb, &[], false);
        turn_in(&mut bb, &[("ada", "bo", 90)], true);
        // Batch 2: the earlier messages end no window.
        turn_in(&mut bb, &[], false);
        turn_in(&mut bb, &[], false);
        assert!(bb.claims().is_empty(), "one window is not enough");
        turn_in(&mut bb, &[("ada", "bo", 90)], true);
        assert_eq!(bb.claims().len(), 1, "two consecutive windows");
        assert_eq!(
            bb.claims()[0].source_messages,
            vec!["m2".into(), "m5".into()]
        );
    }

    #[test]
    fn a_claims_sources_are_the_pairs_own_messages_in_its_windows() {
        let mut bb = board();
        turn_by(&mut bb, "ada", &[], false);
        // The window ends with a third persona's message.
        turn_by(&mut bb, "cy", &[("ada", "bo", 90)], true);
        turn_by(&mut bb, "bo", &[], false);
        turn_by(&mut bb, "cy", &[("ada", "bo", 90)], true);
        assert_eq!(bb.claims().len(), 1);
        assert_eq!(
            bb.claims()[0].source_messages,
            vec!["m1".into(), "m3".into()]
        );
    }

    #[test]
    fn an_open_claim_and_the_cooldown_block_the_pair() {
        let mut bb = board();
        turn(&mut bb, &[("ada", "bo", 90)]);
        turn(&mut bb, &[("ada", "bo", 90)]);
        assert_eq!(bb.claims().len(), 1);
        turn(&mut bb, &[("ada", "bo", 90)]);
        assert_eq!(bb.claims().len(), 1, "the pair already has an open claim");
        bb.apply(&DebateEvent::ClaimStatusChanged {
            claim: "claim-1".into(),
            transition: agon_core::ClaimTransition::Abandoned { reason: "r".into() },
        })
        .unwrap();
        for _ in 0..8 {
            turn(&mut bb, &[("ada", "bo", 90)]);
        }
        assert_eq!(bb.claims().len(), 1, "still inside the cooldown");
        turn(&mut bb, &[("ada", "bo", 90)]);
        assert_eq!(bb.claims().len(), 2, "cooldown of 10 messages passed");
        assert_eq!(bb.claims()[1].id.as_str(), "claim-2");
    }

    #[test]
    fn analysing_a_message_twice_is_rejected() {
        let mut bb = board();
        turn(&mut bb, &[]);
        let err = bb
            .apply(&DebateEvent::TurnAnalyzed {
                message: "m1".into(),
                disagreements: vec![],
                importance: None,
                contradiction: None,
                window_end: true,
            })
            .unwrap_err();
        assert!(err.to_string().contains("m1"), "{err}");
        assert!(bb.is_analyzed(&"m1".into()));
    }
}
