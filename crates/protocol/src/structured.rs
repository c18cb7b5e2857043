//! The structured debate (seed 000): openings, aspects × minirounds of
//! takes, background analysis of every message (position ledger,
//! disagreement judgement, contested claims), a round record after each
//! aspect and a reflection when the trigger is due, crux rooms on the
//! contested claims, closings, and the judge's synthesis.
//!
//! ## Where the critical path waits
//! Utterances are the critical path; everything derived from them is
//! background work, listed in a fixed order (transcript order: a message's
//! analysis, and after the last message of an aspect, its round record and
//! reflection) and applied in that order, so the blackboard evolves the
//! same way on every run and on resume.
//!
//! A speaker waits only for the analysis of **their own earlier
//! messages**: with the `message` cadence their previous one, with the
//! `miniround` cadence (default) everything before the group they last
//! spoke in (one group of staleness, which the view shows verbatim), so
//! the batch of the miniround that just ended never holds up the next. Round records and
//! reflections of aspect N are not waited for by aspect N+1's takes. The
//! debate waits for *all* background work (a barrier) only before the first
//! crux room, after each room, before the synthesis and before finishing;
//! with the `message` cadence also before the closings.

use std::collections::HashSet;

use agon_context::Phase;
use agon_context::prompts::Utterance;
use agon_core::{
    AspectId, Blackboard, CruxRoomId, DebateEvent, DebateStatus, DialogueMessage, MessageId,
    MessageKind, Persona, PersonaId, StepId, TurnKey,
};

use crate::crux::Rooms;
use crate::protocol::Protocol;
use crate::rules::{AnalysisCadence, DetectionMode, StructuredRules};
use crate::step::{AnalysisMode, Background, Next, Plan, Progress, ProgressUnit, Step};
use crate::turn::{AspectSource, Speak, Voice};

/// The judge's persona id (added when the rules ask for a synthesis).
pub const JUDGE_ID: &str = "judge";

/// The structured-debate protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredDebate {
    rules: StructuredRules,
}

/// The main-line turns the transcript shows as taken: (persona, kind,
/// aspect, miniround) of every message outside crux rooms, and every
/// recorded skip.
struct Taken<'a> {
    spoken: HashSet<(
        &'a PersonaId,
        &'a MessageKind,
        Option<&'a AspectId>,
        Option<u32>,
    )>,
    skipped: HashSet<&'a TurnKey>,
}

impl<'a> Taken<'a> {
    fn of(board: &'a Blackboard) -> Self {
        let mut spoken = HashSet::new();
        for m in board.messages() {
            if m.crux_room.is_some() {
                continue;
            }
            spoken.insert((&m.persona, &m.kind, m.aspect.as_ref(), m.miniround));
        }
        let skipped = board
            .warnings()
            .iter()
            .filter_map(|w| match &w.step {
                StepId::Utterance(key) => Some(key),
                _ => None,
            })
            .collect();
        Self { spoken, skipped }
    }

    /// Whether a main-line turn (not a room turn) is taken.
    fn has(&self, speak: &Speak) -> bool {
        self.skipped.contains(&speak.key)
            || self.spoken.contains(&(
                &speak.persona,
                &speak.kind,
                speak.aspect.as_ref(),
                speak.miniround,
            ))
    }
}

/// The group of turns a message belongs to, analysed together under the
/// miniround cadence.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Group<'a> {
    Openings,
    Takes(&'a AspectId, u32),
    Room(&'a CruxRoomId),
    Closings,
    /// Anything else (analysed alone).
    Alone(&'a MessageId),
}

impl<'a> Group<'a> {
    fn of(m: &'a DialogueMessage) -> Self {
        match (&m.kind, &m.crux_room, &m.aspect, m.miniround) {
            (_, Some(room), ..) => Self::Room(room),
            (MessageKind::Opening, ..) => Self::Openings,
            (MessageKind::Take, None, Some(aspect), Some(mr)) => Self::Takes(aspect, mr),
            (MessageKind::Closing, ..) => Self::Closings,
            _ => Self::Alone(&m.id),
        }
    }
}

/// Whether the crux room `room` is still running (its claim is in it).
fn room_is_open(board: &Blackboard, room: &CruxRoomId) -> bool {
    board.claims().iter().any(|c| {
        c.crux_room.as_ref() == Some(room) && c.status == agon_core::ClaimStatus::InCruxRoom
    })
}

impl StructuredDebate {
    /// The protocol with these rules.
    pub fn new(rules: StructuredRules) -> Self {
        Self { rules }
    }

    /// Its rules.
    pub fn rules(&self) -> &StructuredRules {
        &self.rules
    }

    /// The contributions the debate is planned to have: each debater's
    /// opening, takes and closing, and the synthesis. A started debate
    /// counts its cast and aspects; a new one what the start lists or asks
    /// for.
    fn contributions(&self, board: &Blackboard, debaters: usize) -> u64 {
        let start = &self.rules.start;
        let (debaters, aspects) = if board.topic().is_some() {
            (debaters, board.aspects().len())
        } else {
            (
                start.cast.unwrap_or(0) + start.personas.iter().filter(|p| p.is_debater()).count(),
                match &start.aspects {
                    AspectSource::Configured(a) => a.len(),
                    AspectSource::Planned { count } => *count,
                },
            )
        };
        let (debaters, aspects) = (debaters as u64, aspects as u64);
        debaters * 2
            + aspects * u64::from(self.rules.minirounds) * debaters
            + u64::from(self.rules.synthesis)
    }

    fn opening(persona: &PersonaId) -> Speak {
        Speak {
            key: TurnKey::Opening {
                persona: persona.clone(),
            },
            persona: persona.clone(),
            kind: MessageKind::Opening,
            phase: Some(Phase::Opening),
            instruction: Utterance::Opening,
            aspect: None,
            miniround: None,
            room: None,
            voice: Voice::Debater,
        }
    }

    fn take(aspect: &AspectId, miniround: u32, persona: &PersonaId) -> Speak {
        Speak {
            key: TurnKey::Take {
                aspect: aspect.clone(),
                miniround,
                persona: persona.clone(),
            },
            persona: persona.clone(),
            kind: MessageKind::Take,
            phase: Some(Phase::Take {
                aspect: aspect.clone(),
                miniround,
            }),
            instruction: Utterance::Take {
                aspect: aspect.clone(),
                miniround,
                challenger: false,
            },
            aspect: Some(aspect.clone()),
            miniround: Some(miniround),
            room: None,
            voice: Voice::Debater,
        }
    }

    fn closing(persona: &PersonaId) -> Speak {
        Speak {
            key: TurnKey::Closing {
                persona: persona.clone(),
            },
            persona: persona.clone(),
            kind: MessageKind::Closing,
            phase: Some(Phase::Closing),
            instruction: Utterance::Closing,
            aspect: None,
            miniround: None,
            room: None,
            voice: Voice::Debater,
        }
    }

    fn synthesis() -> Speak {
        Speak {
            key: TurnKey::Synthesis,
            persona: PersonaId::new(JUDGE_ID),
            kind: MessageKind::Synthesis,
            phase: None,
            instruction: Utterance::Synthesis,
            aspect: None,
            miniround: None,
            room: None,
            voice: Voice::Judge,
        }
    }

    /// Whether every take of the aspect at `index` is taken.
    fn aspect_done(&self, taken: &Taken<'_>, aspect: &AspectId, debaters: &[PersonaId]) -> bool {
        (0..self.rules.minirounds).all(|mr| {
            debaters
                .iter()
                .all(|p| taken.has(&Self::take(aspect, mr, p)))
        })
    }

    /// How a message is analysed; `None` for messages that are not (the judge's).
    fn analysis_mode(
        &self,
        board: &Blackboard,
        kind: &MessageKind,
        persona: &PersonaId,
    ) -> Option<AnalysisMode> {
        if !board.persona(persona).is_some_and(Persona::is_debater) {
            return None;
        }
        let detection = &self.rules.detection;
        let judged = matches!(kind, MessageKind::Opening | MessageKind::Take);
        Some(AnalysisMode {
            combined: judged && detection.mode == DetectionMode::Combined,
            detector: judged && detection.mode == DetectionMode::Separate,
            window: detection.window,
            context: 3,
            claims: (detection.mode != DetectionMode::Off).then_some(detection.detector),
            shape: crate::step::BatchShape::Positions,
        })
    }

    /// Background work not yet applied, in application order.
    fn background(
        &self,
        board: &Blackboard,
        taken: &Taken<'_>,
        debaters: &[PersonaId],
    ) -> Vec<Background> {
        let mut out = Vec::new();
        let aspects = board.aspects();
        let mut closed = 0; // aspects whose round record and reflection are listed
        let close_until = |limit: usize, out: &mut Vec<Background>, closed: &mut usize| {
            while *closed < limit {
                let aspect = &aspects[*closed].id;
                if self.aspect_done(taken, aspect, debaters) {
                    self.after_aspect(board, *closed, out);
                } else {
                    return;
                }
                *closed += 1;
            }
        };
        // The group being collected (miniround cadence): its key, mode and
        // unanalysed messages.
        let mut group: Option<(Group<'_>, AnalysisMode, Vec<MessageId>)> = None;
        for m in board.messages() {
            let key = Group::of(m);
            // A later message in another group means the group is complete.
            if group.as_ref().is_some_and(|(k, ..)| *k != key)
                && let Some((_, mode, messages)) = group.take()
            {
                out.push(Background::AnalyseBatch {
                    messages,
                    mode,
                    summaries: Vec::new(),
                });
            }
            let position = match (&m.aspect, &m.crux_room) {
                (Some(aspect), None) => aspects.iter().position(|a| &a.id == aspect),
                (None, None) if m.kind == MessageKind::Opening => Some(0),
                _ => Some(aspects.len()),
            };
            if let Some(limit) = position {
                close_until(limit, &mut out, &mut closed);
            }
            if board.is_analyzed(&m.id) {
                continue;
            }
            let Some(mode) = self.analysis_mode(board, &m.kind, &m.persona) else {
                continue;
            };
            match self.rules.analysis {
                AnalysisCadence::Message => out.push(Background::Analyse {
                    message: m.id.clone(),
                    mode,
                }),
                AnalysisCadence::Miniround => match &mut group {
                    Some((_, _, messages)) => messages.push(m.id.clone()),
                    None => group = Some((key, mode, vec![m.id.clone()])),
                },
            }
        }
        // The last group is listed once every turn of it is taken.
        if let Some((key, mode, messages)) = group {
            if !self.group_complete(board, taken, debaters, &key) {
                return out;
            }
            out.push(Background::AnalyseBatch {
                messages,
                mode,
                summaries: Vec::new(),
            });
        }
        close_until(aspects.len(), &mut out, &mut closed);
        out
    }

    /// Whether every turn of the group `key` is taken (a crux room: the
    /// room is over).
    fn group_complete(
        &self,
        board: &Blackboard,
        taken: &Taken<'_>,
        debaters: &[PersonaId],
        key: &Group<'_>,
    ) -> bool {
        match key {
            Group::Openings => debaters.iter().all(|p| taken.has(&Self::opening(p))),
            Group::Takes(aspect, mr) => debaters
                .iter()
                .all(|p| taken.has(&Self::take(aspect, *mr, p))),
            Group::Closings => debaters.iter().all(|p| taken.has(&Self::closing(p))),
            Group::Room(room) => !room_is_open(board, room),
            Group::Alone(_) => true,
        }
    }

    /// The round record and reflection of the aspect at `index`, where due.
    fn after_aspect(&self, board: &Blackboard, index: usize, out: &mut Vec<Background>) {
        let aspect = &board.aspects()[index].id;
        let round = index as u32 + 1;
        let recorded = board.rounds().iter().any(|r| &r.aspect == aspect)
            || board.step_failed(&StepId::RoundRecord(aspect.clone()));
        if !recorded {
            out.push(Background::RoundRecord {
                aspect: aspect.clone(),
                round,
            });
            return;
        }
        // The reflection is decided at its place in the order: after the
        // round record, before any later analysis. A decision that wrote
        // nothing leaves no event, but a later analysis applied shows it
        // was made.
        let reflected = board.reflections().iter().any(|r| r.round == round)
            || board.step_failed(&StepId::Reflection(aspect.clone()));
        if reflected || !out.is_empty() {
            return;
        }
        let last = board
            .message_indices_for_aspect(aspect)
            .iter()
            .copied()
            .filter(|&i| board.messages()[i].crux_room.is_none())
            .max()
            .unwrap_or(0);
        let later_applied = board
            .analyzed_turns()
            .iter()
            .filter_map(|t| board.message_index(&t.message))
            .any(|i| i > last);
        if !later_applied && self.rules.reflection.is_due(board) {
            out.push(Background::Reflect {
                aspect: aspect.clone(),
                round,
            });
        }
    }

    /// Whether `persona` must wait for the ledger before speaking.
    ///
    /// With the `message` cadence: until their previous message is
    /// analysed. With the `miniround` cadence the speaker accepts **one
    /// group of staleness**: the group they last spoke in (a miniround's
    /// takes, the openings, a crux room) may still be in analysis, since
    /// its batch starts only when the group ends and the view shows that
    /// group's messages verbatim (RECENT EXCHANGE); everything they said
    /// before it must be in the ledger. So a miniround's first speaker
    /// never waits for the batch of the miniround that just ended, and the
    /// analysis stays off the critical path. The closings follow the same
    /// rule (their view shows what is not analysed yet verbatim).
    fn awaits_own_analysis(&self, board: &Blackboard, persona: &PersonaId) -> bool {
        let mut own = board.messages().iter().rev().filter(|m| {
            &m.persona == persona && board.persona(&m.persona).is_some_and(Persona::is_debater)
        });
        let Some(last) = own.next() else {
            return false;
        };
        match self.rules.analysis {
            AnalysisCadence::Message => !board.is_analyzed(&last.id),
            AnalysisCadence::Miniround => {
                let group = Group::of(last);
                own.find(|m| Group::of(m) != group)
                    .is_some_and(|m| !board.is_analyzed(&m.id))
            }
        }
    }

    /// The step, or a wait while its speaker's previous message is not
    /// analysed yet.
    fn when_ready(&self, board: &Blackboard, step: Step) -> Next {
        match step.speaker() {
            Some(persona) if self.awaits_own_analysis(board, persona) => Next::Wait,
            _ => Next::step(step),
        }
    }

    /// The speak step, once its speaker is ready.
    fn speak_when_ready(&self, board: &Blackboard, speak: Speak) -> Next {
        self.when_ready(board, Step::Speak(speak))
    }

    fn next(
        &self,
        board: &Blackboard,
        taken: &Taken<'_>,
        debaters: &[PersonaId],
        background: &[Background],
        progress: &mut Progress,
    ) -> Next {
        let idle = background.is_empty();
        let ledger_complete = background
            .iter()
            .all(|b| matches!(b, Background::Reflect { .. }));
        if board.topic().is_none() {
            progress.phase = match self.rules.start.aspects {
                AspectSource::Planned { .. } => "planning aspects".into(),
                AspectSource::Configured(_) => "openings".into(),
            };
            return Next::step(Step::start(self.rules.start.clone()));
        }
        if board.status() == DebateStatus::Finished {
            return Next::Finished;
        }
        progress.phase = "openings".into();
        for p in debaters {
            let speak = Self::opening(p);
            if !taken.has(&speak) {
                return self.speak_when_ready(board, speak);
            }
        }
        for (k, aspect) in board.aspects().iter().enumerate() {
            let round = k as u32 + 1;
            *progress = Progress {
                at: k + 1,
                miniround: 0,
                phase: "takes".into(),
                ..progress.clone()
            };
            if board.current_round() < round {
                return Next::step(Step::Record {
                    label: format!("aspect {round}: {}", aspect.label),
                    events: vec![DebateEvent::AspectStarted {
                        aspect: aspect.id.clone(),
                        round,
                    }],
                });
            }
            for mr in 0..self.rules.minirounds {
                progress.miniround = mr;
                let replies = mr >= 1 && self.rules.challenger && debaters.len() >= 2;
                if replies && board.devils_advocate(round).is_none() {
                    progress.phase = "drawing the challenger".into();
                    return Next::step(Step::ReadTrust(crate::TrustRead::DevilsAdvocate {
                        round,
                        candidates: debaters.to_vec(),
                    }));
                }
                let challenger = board.devils_advocate(round).filter(|_| replies);
                for p in debaters {
                    let mut speak = Self::take(&aspect.id, mr, p);
                    if !taken.has(&speak) {
                        if challenger == Some(p) {
                            speak.instruction = Utterance::Take {
                                aspect: aspect.id.clone(),
                                miniround: mr,
                                challenger: true,
                            };
                        }
                        return self.speak_when_ready(board, speak);
                    }
                }
            }
        }
        *progress = Progress {
            at: board.aspects().len(),
            miniround: 0,
            phase: "waiting for analyses".into(),
            ..progress.clone()
        };
        let closings_begun = debaters.iter().any(|p| taken.has(&Self::closing(p)));
        if self.rules.crux.enabled
            && !closings_begun
            && let Some(next) = self.crux(board, idle, progress)
        {
            return next;
        }
        progress.phase = "closings".into();
        // With the `message` cadence the closings see the complete ledger
        // (every analysis and round record applied; a reflection still
        // being written does not hold them up). With the `miniround`
        // cadence a closing speaker accepts one group of staleness like any
        // speaker: the last miniround's batch may still be running, and the
        // closing view shows the messages not analysed yet verbatim.
        if self.rules.analysis == AnalysisCadence::Message && !closings_begun && !ledger_complete {
            return Next::Wait;
        }
        for p in debaters {
            let speak = Self::closing(p);
            if !taken.has(&speak) {
                return self.speak_when_ready(board, speak);
            }
        }
        if !idle {
            return Next::Wait;
        }
        let synthesis = Self::synthesis();
        if self.rules.synthesis
            && board.persona(&synthesis.persona).is_some()
            && !taken.has(&synthesis)
        {
            progress.phase = "synthesis".into();
            return self.speak_when_ready(board, synthesis);
        }
        progress.phase = "finishing".into();
        Next::step(Step::Finish(crate::Finish::default()))
    }

    /// The crux phase: the open room's next step; otherwise (once all
    /// background work is applied) the next claim into a room, promoting
    /// the strongest judged disagreement while fewer than `min_rooms`
    /// claims got rooms. `None` when the phase is over.
    fn crux(&self, board: &Blackboard, idle: bool, progress: &mut Progress) -> Option<Next> {
        let rules = self.rules.crux;
        let rooms = match crate::crux::rooms(board, rules, idle, progress) {
            Rooms::Open(step) => return Some(self.when_ready(board, step)),
            Rooms::Busy => return Some(Next::Wait),
            Rooms::Enter(step) => return Some(Next::step(step)),
            Rooms::Full => return None,
            Rooms::Free { rooms } => rooms,
        };
        if rooms >= rules.min_rooms {
            return None;
        }
        let event = crate::promote_strongest(board)?;
        let label = match &event {
            DebateEvent::ClaimOpened { claim, .. } => format!("promoting {claim}"),
            _ => "promoting a claim".into(),
        };
        Some(Next::step(Step::Record {
            label,
            events: vec![event],
        }))
    }
}

impl Protocol for StructuredDebate {
    fn weighs_by_trust(&self) -> bool {
        self.rules.start.weigh_by_trust
    }

    fn rubric(&self) -> Option<&'static str> {
        self.kind().and_then(agon_core::rubric::rubric_of)
    }

    fn kind(&self) -> Option<agon_core::ProtocolKind> {
        Some(agon_core::ProtocolKind::Structured)
    }

    /// The judge's synthesis of what was said, when the debate has one
    /// and it is not written yet (closings and remaining aspects are
    /// skipped); then the finish.
    fn wrap_up(&self, board: &Blackboard) -> Step {
        let taken = Taken::of(board);
        let synthesis = Self::synthesis();
        let said = board
            .messages()
            .iter()
            .any(|m| board.persona(&m.persona).is_some_and(Persona::is_debater));
        if self.rules.synthesis
            && said
            && board.persona(&synthesis.persona).is_some()
            && !taken.has(&synthesis)
        {
            return Step::Speak(synthesis);
        }
        Step::Finish(crate::Finish::default())
    }

    fn plan(&self, board: &Blackboard) -> Plan {
        let taken = Taken::of(board);
        let debaters: Vec<PersonaId> = board.debaters().map(|p| p.id.clone()).collect();
        let background = self.background(board, &taken, &debaters);
        let mut progress = Progress {
            unit: ProgressUnit::Aspect,
            of: board.aspects().len(),
            contributions: Some(self.contributions(board, debaters.len())),
            ..Progress::default()
        };
        let next = self.next(board, &taken, &debaters, &background, &mut progress);
        Plan {
            background,
            next,
            progress,
        }
    }
}
