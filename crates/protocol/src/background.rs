//! Converting background work's model output into events: a message's
//! analysis (and the claims it opens), a round record, reflections.

use agon_core::{
    AnalysisPart, AspectId, Blackboard, DebateEvent, MessageId, StepId, TurnAnalyzedView,
};
use agon_extract::{
    DisagreementWindow, ExtractionContext, MessagePositionUpdate, PositionUpdate, ReflectionBatch,
    RoundRecordPayload, TurnAnalysis, analysis_events,
};
use std::collections::HashSet;

use chrono::{DateTime, Utc};

use crate::extract::{Converted, ModelOutput, extract, step_failed};
use crate::step::AnalysisMode;

/// The model output of one message's analysis.
#[derive(Debug)]
pub struct AnalysisOutput {
    /// `turn_analysis` (combined) or `position_update`.
    pub primary: ModelOutput,
    /// `disagreement_window` from a separate detector, if one ran.
    pub window: Option<ModelOutput>,
    /// Whether `primary` is the combined analysis.
    pub combined: bool,
}

/// The events of one message's analysis: the speaker's position events,
/// `turn_analyzed`, the claims that opens, and the record of any repair. A
/// failed part is a `step_failed` warning and the message is still marked
/// analysed.
pub fn analysis(
    board: &Blackboard,
    message: &MessageId,
    out: AnalysisOutput,
    mode: &AnalysisMode,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let Some(m) = board.message(message) else {
        return Vec::new();
    };
    let primary = StepId::Analysis {
        message: m.id.clone(),
        part: if out.combined {
            AnalysisPart::Combined
        } else {
            AnalysisPart::Position
        },
    };
    let ctx = ExtractionContext::new(board).with_speaker(&m.persona);
    let failed = |part| {
        move |failure| {
            step_failed(
                StepId::Analysis {
                    message: m.id.clone(),
                    part,
                },
                failure,
                time,
            )
        }
    };
    let mut events = Vec::new();
    let mut repairs = Vec::new();
    let (position, judgments) = if out.combined {
        match extract(out.primary, |a: TurnAnalysis| a.validate(&ctx)) {
            Ok((p, j)) => (Some(p), Some(j)),
            Err(e) => {
                events.push(failed(AnalysisPart::Combined)(e));
                (None, None)
            }
        }
    } else {
        let position = extract(out.primary, |p: PositionUpdate| p.validate(&ctx))
            .map_err(|e| events.push(failed(AnalysisPart::Position)(e)))
            .ok();
        let judgments = out.window.and_then(|w| {
            extract(w, |w: DisagreementWindow| Ok(w.validate(&ctx)))
                .map_err(|e| events.push(failed(AnalysisPart::Disagreement)(e)))
                .ok()
        });
        (position, judgments)
    };
    for notes in [
        position.as_ref().map(|p| p.notes()),
        judgments.as_ref().map(|j| j.notes()),
    ]
    .into_iter()
    .flatten()
    {
        repairs.extend(notes.iter().cloned());
    }
    // An opening comes before the aspects: what it cites is filed under
    // the first aspect, so the evidence is not lost.
    let aspect = m.aspect.as_ref().or_else(|| {
        (m.kind == agon_core::MessageKind::Opening)
            .then(|| board.aspects().first().map(|a| &a.id))
            .flatten()
    });
    events.extend(analysis_events(
        &m.id, &m.persona, aspect, m.round, position, judgments,
    ));
    if let Some(detector) = &mode.claims
        && let Some(DebateEvent::TurnAnalyzed {
            message,
            disagreements,
            ..
        }) = events.last()
    {
        let latest = TurnAnalyzedView {
            message,
            disagreements,
        };
        let opened = detector.open_events_after(board, latest);
        events.extend(opened);
    }
    Converted { events, repairs }.into_events(primary)
}

/// The events of a batch analysis (several messages in one call): each
/// message's entry converted as its own analysis (position events,
/// `turn_analyzed`, repairs); a message the batch has no entry for, or a
/// batch that failed, is a `step_failed` warning and the message is still
/// marked analysed.
///
/// When the batch judges disagreements (`batch_turn_analysis`, or a
/// separate detector's `out.window`), the judgement is the window of the
/// batch's **last** message, which opens the claims; the earlier messages'
/// `turn_analyzed` say they end no window (`window_end: false`), so claim
/// detection counts the batch as one window.
pub fn batch_analysis(
    board: &Blackboard,
    messages: &[MessageId],
    out: AnalysisOutput,
    mode: &AnalysisMode,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    use agon_extract::{
        BatchPositionUpdate, BatchTurnAnalysis, ContributionUpdate, RoundAnalysis, parse_payload,
    };
    // A dialectic round's entries, kept for the critiques' impact.
    let mut contributions: Vec<ContributionUpdate> = Vec::new();
    let malformed = |e: agon_extract::ExtractionError| {
        crate::ModelFailure::new(crate::FailureKind::Malformed, e.to_string())
    };
    let parsed: Result<(Vec<MessagePositionUpdate>, Option<ModelOutput>), crate::ModelFailure> =
        out.primary.and_then(|v| {
            if let crate::step::BatchShape::Contributions { .. } = mode.shape {
                parse_payload::<RoundAnalysis>(v)
                    .map(|r| {
                        let updates = r
                            .updates
                            .iter()
                            .map(|u| MessagePositionUpdate {
                                message: u.message.clone(),
                                position: u.position(),
                            })
                            .collect();
                        contributions = r.updates;
                        (updates, None)
                    })
                    .map_err(malformed)
            } else if out.combined {
                parse_payload::<BatchTurnAnalysis>(v)
                    .map(|b| {
                        let window = serde_json::json!({ "disagreements": b.disagreements });
                        (b.updates, Some(Ok(window)))
                    })
                    .map_err(malformed)
            } else {
                parse_payload::<BatchPositionUpdate>(v)
                    .map(|b| (b.updates, None))
                    .map_err(malformed)
            }
        });
    let (updates, mut window) = match parsed {
        Ok((updates, judged)) => (Ok(updates), judged.or(out.window)),
        Err(reason) => (Err(reason), out.window),
    };
    let judges = out.combined || mode.detector;
    let id_of = |u: &MessagePositionUpdate| u.message.trim().trim_matches(['[', ']']).to_owned();
    // A small model may name one message twice and skip the next; when the
    // batch has one entry per message in order, the entries then go by
    // position (recorded as a repair).
    let by_position = updates.as_ref().is_ok_and(|u| {
        let ids: HashSet<String> = u.iter().map(id_of).collect();
        u.len() == messages.len() && ids.len() < u.len()
    });
    let mut events = Vec::new();
    let impact = mode.shape == (crate::step::BatchShape::Contributions { impact: true });
    for (i, message) in messages.iter().enumerate() {
        let last = i + 1 == messages.len();
        let mut repaired = None;
        // The entry of this message: its index and its position update.
        let found: Result<(usize, &MessagePositionUpdate), crate::ModelFailure> = match &updates
        {
            Err(reason) => Err(crate::ModelFailure::new(
                reason.kind,
                format!("batch analysis: {reason}"),
            )),
            Ok(updates) => updates
                .iter()
                .position(|u| id_of(u) == message.as_str())
                .or_else(|| {
                    let entry = updates.get(i).filter(|_| by_position)?;
                    repaired = Some(format!(
                        "updates[{i}]: named {} again; taken as the entry for {message} by its position",
                        id_of(entry)
                    ));
                    Some(i)
                })
                .map(|j| (j, &updates[j]))
                .ok_or_else(|| {
                    crate::ModelFailure::other(format!("the batch analysis has no entry for {message}"))
                }),
        };
        let index = found.as_ref().ok().map(|(j, _)| *j);
        let entry: ModelOutput =
            found.map(|(_, u)| serde_json::to_value(&u.position).unwrap_or_default());
        let single = AnalysisOutput {
            primary: entry,
            window: if last { window.take() } else { None },
            combined: false,
        };
        let mut converted = analysis(board, message, single, mode, time);
        if let Some(note) = repaired {
            converted.push(DebateEvent::OutputRepaired {
                step: StepId::Analysis {
                    message: message.clone(),
                    part: AnalysisPart::Position,
                },
                notes: vec![note],
            });
        }
        if judges && !last {
            for event in &mut converted {
                if let DebateEvent::TurnAnalyzed { window_end, .. } = event {
                    *window_end = false;
                }
            }
        }
        events.extend(converted);
        if impact && let Some(entry) = index.and_then(|j| contributions.get(j)) {
            events.extend(critiques_judged(board, message, messages, entry));
        }
        if let Some((j, entry)) = index.and_then(|j| contributions.get(j).map(|e| (j, e))) {
            events.extend(crate::requirements::coverage_events(
                board, message, entry, j,
            ));
        }
    }
    // Entries for messages outside the batch change nothing; say so.
    if let (Ok(updates), Some(last)) = (&updates, messages.last()) {
        let strays: Vec<String> = updates
            .iter()
            .enumerate()
            .filter(|(_, u)| !messages.iter().any(|m| m.as_str() == id_of(u)))
            .filter(|(j, _)| !by_position || *j >= messages.len())
            .map(|(j, u)| {
                format!(
                    "updates[{j}]: {:?} is not a message of this batch; ignored",
                    agon_extract::truncate_chars(&id_of(u), 40)
                )
            })
            .collect();
        if !strays.is_empty() {
            events.push(DebateEvent::OutputRepaired {
                step: StepId::Analysis {
                    message: last.clone(),
                    part: AnalysisPart::Position,
                },
                notes: strays,
            });
        }
    }
    events
}

/// The `critiques_judged` event of a refinement in a dialectic round's
/// analysis, when its entry says which critiques it took in: the verdict on
/// every critique of the batch it answers (ids it cannot answer are
/// dropped, recorded as a repair). Nothing for other messages, or for a
/// refinement whose entry judged nothing; those critiques' impact falls
/// back to embeddings or the words and ledger.
fn critiques_judged(
    board: &Blackboard,
    message: &MessageId,
    batch: &[MessageId],
    entry: &agon_extract::ContributionUpdate,
) -> Vec<DebateEvent> {
    let Some(m) = board
        .message(message)
        .filter(|m| m.kind == agon_core::MessageKind::Refinement)
    else {
        return Vec::new();
    };
    let answered = crate::trust_harvest::critiques_answered(board, m, batch);
    if answered.is_empty() {
        return Vec::new();
    }
    let mut notes = Vec::new();
    let mut events: Vec<DebateEvent> = entry
        .judged(&answered, &mut notes)
        .map(|critiques| DebateEvent::CritiquesJudged {
            refinement: message.clone(),
            critiques,
        })
        .into_iter()
        .collect();
    if !notes.is_empty() {
        events.push(DebateEvent::OutputRepaired {
            step: StepId::Analysis {
                message: message.clone(),
                part: AnalysisPart::Position,
            },
            notes,
        });
    }
    events
}

/// A validated payload's events followed by the record of its repairs, or
/// its step's failure.
pub(crate) fn converted<T>(
    extracted: Result<agon_extract::Validated<T>, crate::ExtractFailure>,
    into_events: impl FnOnce(agon_extract::Validated<T>) -> Vec<DebateEvent>,
    step: StepId,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    match extracted {
        Ok(valid) => Converted {
            repairs: valid.notes().to_vec(),
            events: into_events(valid),
        }
        .into_events(step),
        Err(e) => vec![step_failed(step, e, time)],
    }
}

/// The `round_recorded` event of an aspect, or its failure.
pub fn round_record(
    board: &Blackboard,
    aspect: &AspectId,
    round: u32,
    output: ModelOutput,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let ctx = ExtractionContext::new(board);
    converted(
        extract(output, |p: RoundRecordPayload| p.validate(&ctx)),
        |valid| valid.into_events(aspect, round),
        StepId::RoundRecord(aspect.clone()),
        time,
    )
}

/// The reflections written after an aspect (sourced from its messages), or
/// their failure.
pub fn reflection(
    board: &Blackboard,
    aspect: &AspectId,
    round: u32,
    output: ModelOutput,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let sources: Vec<MessageId> = board
        .message_indices_for_aspect(aspect)
        .iter()
        .map(|&i| board.messages()[i].id.clone())
        .collect();
    let ctx = ExtractionContext::new(board);
    converted(
        extract(output, |b: ReflectionBatch| b.validate(&ctx)),
        |valid| valid.into_events(round, &sources),
        StepId::Reflection(aspect.clone()),
        time,
    )
}
