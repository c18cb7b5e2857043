//! Dialectic's summaries and the judge's solution (seed 004), turned from
//! model answers into events: what is recorded, what is a warning, and
//! when the plain-text synthesis replaces the structured one. The
//! interpreter only makes the calls.

use agon_core::{DebateEvent, DebateSummary, MessageSpan, PersonaId, Solution, StepId};
use agon_extract::{FoldedSummaries, PlainSolution, SolutionPayload, SummaryText, truncate_chars};
use chrono::{DateTime, Utc};

use crate::extract::{ModelOutput, extract, step_failed};
use crate::question::TextAnswer;
use crate::turn::SummaryJob;

/// The events of a summary job: `summary_recorded` (the text cut to the
/// job's `max_chars`, then cleaned as a text field of `board`, spanning
/// the transcript's first `end` messages) with the repairs cleaning made
/// (`output_repaired`), or a `summary` warning when the call failed, came
/// back empty or was junk (the full history is then used).
pub fn summary_event(
    board: &agon_core::Blackboard,
    job: &SummaryJob,
    end: usize,
    before_chars: usize,
    answer: Result<TextAnswer, String>,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let a = match answer {
        Ok(a) => a,
        Err(reason) => {
            return vec![step_failed(
                job.step_id(),
                format!("{reason}; the full history is used"),
                time,
            )];
        }
    };
    let valid = SummaryText::validate(
        &truncate_chars(a.text.trim(), job.max_chars),
        job.max_chars,
        "summary",
        board,
    );
    let Some(text) = valid.value().clone() else {
        let why = valid.notes().join("; ");
        let why = if why.is_empty() {
            "the summary came back empty".to_owned()
        } else {
            format!("the summary was unusable ({why})")
        };
        return vec![step_failed(
            job.step_id(),
            format!("{why}; the full history is used"),
            time,
        )];
    };
    let mut events = vec![recorded(job, end, before_chars, &text, Some(&a), time)];
    if !valid.notes().is_empty() {
        events.push(DebateEvent::OutputRepaired {
            step: job.step_id(),
            notes: valid.notes().to_vec(),
        });
    }
    events
}

/// The `summary_recorded` of `job`: `text` cut to its length, spanning the
/// transcript's first `end` messages, with the call's metadata when the
/// summary had a call of its own (`call`).
fn recorded(
    job: &SummaryJob,
    end: usize,
    before_chars: usize,
    text: &SummaryText,
    call: Option<&TextAnswer>,
    time: DateTime<Utc>,
) -> DebateEvent {
    let text = truncate_chars(&text.0, job.max_chars);
    DebateEvent::SummaryRecorded {
        summary: DebateSummary {
            scope: job.scope.clone(),
            span: MessageSpan { start: 0, end },
            after_chars: text.chars().count(),
            text,
            before_chars,
            method: job.method.clone(),
            round: Some(job.round),
            temperature_centi: call
                .map(|a| (a.temperature * 100.0).round().clamp(0.0, 1000.0) as u16),
            latency_ms: call.map(|a| a.latency_ms),
            tokens: call.map(|a| a.tokens),
            model: call.map(|a| a.model.clone()),
            time,
        },
    }
}

/// The perspective summaries a dialectic round's analysis wrote
/// (`answer`'s `summaries`), one `summary_recorded` per job, spanning the
/// transcript up to the batch's last message. A job the answer has no
/// usable entry for (missing, empty, or the whole call failed) records a
/// repair note on the analysis step and nothing else: the planner then
/// asks that summary on its own, so no agent loses its summary. Entries
/// for agents not asked are ignored (noted).
pub fn folded_summaries(
    board: &agon_core::Blackboard,
    jobs: &[SummaryJob],
    batch: &[agon_core::MessageId],
    answer: Option<&serde_json::Value>,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let Some(last) = batch.last() else {
        return Vec::new();
    };
    let end = board.message_index(last).map_or(0, |i| i + 1);
    let open: Vec<&SummaryJob> = jobs
        .iter()
        .filter(|job| {
            !board
                .summaries()
                .iter()
                .any(|s| s.scope == job.scope && s.round == Some(job.round))
        })
        .collect();
    let asked: Vec<(PersonaId, usize)> = jobs
        .iter()
        .map(|job| (job.persona.clone(), job.max_chars))
        .collect();
    let valid = FoldedSummaries::validate(answer.and_then(|v| v.get("summaries")), board, &asked);
    let mut events = Vec::new();
    let mut notes = valid.notes().to_vec();
    for job in open {
        let text = valid
            .value()
            .written
            .iter()
            .find(|(persona, _)| *persona == job.persona)
            .map(|(_, text)| text);
        let Some(text) = text else {
            notes.push(format!(
                "summaries: none for {}; it is asked on its own",
                board.persona_name(&job.persona)
            ));
            continue;
        };
        // The history it folds: everything before the round it is for.
        let before_chars =
            agon_context::perspective::history_chars_before(board, &job.persona, job.round);
        events.push(recorded(job, end, before_chars, text, None, time));
    }
    if !notes.is_empty() {
        events.push(DebateEvent::OutputRepaired {
            step: StepId::Analysis {
                message: batch[0].clone(),
                part: agon_core::AnalysisPart::Position,
            },
            notes,
        });
    }
    events
}

/// The judge's structured solution after `round`, validated against the
/// requirements on `board`'s ledger: its `solution_recorded` and the
/// repairs validation made (`output_repaired`), or why it is unusable.
pub fn solution_events(
    board: &agon_core::Blackboard,
    round: u32,
    judge: &PersonaId,
    output: ModelOutput,
    time: DateTime<Utc>,
) -> Result<Vec<DebateEvent>, String> {
    let tracked = board.coverage_tracked();
    let valid = extract(output, |p: SolutionPayload| {
        p.validate(board.requirements(), tracked)
    })
    .map_err(|e| e.to_string())?;
    let notes = valid.notes().to_vec();
    let mut events = vec![valid.into_event(round, judge, time)];
    if !notes.is_empty() {
        events.push(DebateEvent::OutputRepaired {
            step: StepId::Solution(round),
            notes,
        });
    }
    Ok(events)
}

/// The events of a plain-text synthesis that replaces a structured
/// solution which failed (`failures`, one reason per attempt): the
/// `solution` warning and the solution; `None` when the text is empty.
pub fn plain_solution_events(
    round: u32,
    judge: &PersonaId,
    failures: &[String],
    text: &str,
    time: DateTime<Utc>,
) -> Option<Vec<DebateEvent>> {
    let valid = PlainSolution::validate(text);
    let description = valid.value().as_ref()?.0.clone();
    let mut events = vec![
        step_failed(
            StepId::Solution(round),
            format!(
                "the structured solution failed twice ({}); a plain-text synthesis replaces it",
                failures.join("; ")
            ),
            time,
        ),
        DebateEvent::SolutionRecorded {
            solution: Solution {
                round,
                description,
                tradeoffs: Vec::new(),
                recommendations: Vec::new(),
                confidence: None,
                unfinished_requirements: Vec::new(),
                unfulfilled_major_requirements: Vec::new(),
                open_questions: Vec::new(),
                unverified_requirements: Vec::new(),
                synthesized_by: judge.clone(),
                time,
            },
        },
    ];
    if !valid.notes().is_empty() {
        events.push(DebateEvent::OutputRepaired {
            step: StepId::Solution(round),
            notes: valid.notes().to_vec(),
        });
    }
    Some(events)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_context::Phase;
    use agon_core::SummaryScope;

    use super::*;

    fn job() -> SummaryJob {
        SummaryJob {
            persona: "arch".into(),
            scope: SummaryScope::Persona {
                persona: "arch".into(),
            },
            round: 2,
            phase: Phase::PerspectiveSummary,
            max_chars: 10,
            method: "length-based".into(),
            prompt: None,
        }
    }

    #[test]
    fn a_summary_is_cut_to_its_budget_and_a_blank_one_is_a_warning() {
        let answer = |text: &str| TextAnswer {
            text: text.into(),
            temperature: 0.3,
            latency_ms: 5,
            tokens: 40,
            model: "m".into(),
        };
        let board = agon_core::Blackboard::new();
        let events = summary_event(
            &board,
            &job(),
            7,
            900,
            Ok(answer("  A very long perspective indeed.  ")),
            DateTime::UNIX_EPOCH,
        );
        let [DebateEvent::SummaryRecorded { summary }] = events.as_slice() else {
            panic!("recorded: {events:?}")
        };
        assert!(summary.text.chars().count() <= 10, "{}", summary.text);
        assert_eq!((summary.span.end, summary.before_chars), (7, 900));
        assert_eq!(summary.temperature_centi, Some(30));
        for answer in [
            Ok(answer("   ")),
            Ok(answer("{}}")),
            Err("timed out".to_owned()),
        ] {
            let events = summary_event(&board, &job(), 7, 900, answer, DateTime::UNIX_EPOCH);
            let names: Vec<&str> = events.iter().map(DebateEvent::name).collect();
            assert_eq!(names, ["step_failed"]);
        }
    }

    #[test]
    fn the_plain_text_synthesis_records_why_and_an_empty_one_nothing() {
        let judge = PersonaId::new("judge");
        let failures = vec!["no JSON".to_owned(), "no JSON again".to_owned()];
        let events = plain_solution_events(
            3,
            &judge,
            &failures,
            " Use a token bucket. ",
            DateTime::UNIX_EPOCH,
        )
        .unwrap();
        let names: Vec<&str> = events.iter().map(DebateEvent::name).collect();
        assert_eq!(names, ["step_failed", "solution_recorded"]);
        assert!(plain_solution_events(3, &judge, &failures, "  ", DateTime::UNIX_EPOCH).is_none());
        assert!(
            solution_events(
                &agon_core::Blackboard::new(),
                3,
                &judge,
                Ok(serde_json::json!({})),
                DateTime::UNIX_EPOCH
            )
            .is_err()
        );
    }
}
