//! The problem's requirements on the ledger (dialectic 0.7's requirements
//! tracking): the analysis model's answer turned into
//! `requirements_recorded` (dialectic's keyword inference when no model
//! answers), and each contribution's coverage verdicts, read in the round
//! analysis, turned into `requirements_covered`.

use agon_core::{AnalysisPart, Blackboard, DebateEvent, MessageId, MessageKind, StepId};
use agon_extract::{
    ContributionUpdate, RequirementSources, RequirementsPayload, infer_major_requirements,
    keyword_requirements,
};
use chrono::{DateTime, Utc};

use crate::extract::{Converted, ModelOutput, extract, step_failed};

/// The problem statement of `board` (its question, then its context).
pub fn problem(board: &Blackboard) -> String {
    board.topic().map_or_else(String::new, |t| {
        match t
            .context
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            Some(context) => format!("{}\n{context}", t.question.trim()),
            None => t.question.trim().to_owned(),
        }
    })
}

/// The clarification answers of `board` that say something (`NA`, the
/// answer to a skipped question, is left out).
pub fn answers(board: &Blackboard) -> Vec<(MessageId, String)> {
    board
        .messages()
        .iter()
        .filter(|m| m.kind == MessageKind::ClarificationAnswer)
        .filter(|m| !m.content.trim().eq_ignore_ascii_case("na"))
        .map(|m| (m.id.clone(), m.content.clone()))
        .collect()
}

/// The events of the requirements job: `requirements_recorded` from the
/// model's answer (with the record of its repairs), or, when the call
/// failed or found nothing while the keywords find something, dialectic's
/// keyword inference with a `requirements` warning.
pub fn events(board: &Blackboard, output: ModelOutput, time: DateTime<Utc>) -> Vec<DebateEvent> {
    let problem = problem(board);
    let answers = answers(board);
    let sources = RequirementSources {
        problem: &problem,
        answers: &answers,
    };
    let keywords = || keyword_requirements(&problem);
    // Whether the model's own list (before the keyword lines are merged
    // in) holds anything.
    let mut found_any = false;
    let extracted = extract(output, |p: RequirementsPayload| {
        found_any = !p.validate("").value().requirements.is_empty();
        Ok(p.validate(&problem))
    });
    match extracted {
        Ok(_) if !found_any && !infer_major_requirements(&problem).is_empty() => {
            vec![
                step_failed(
                    StepId::Requirements,
                    "the analysis model found no requirements; dialectic's keyword inference \
                     is used",
                    time,
                ),
                keywords(),
            ]
        }
        Ok(valid) => Converted {
            repairs: valid.notes().to_vec(),
            events: vec![valid.into_event(sources)],
        }
        .into_events(StepId::Requirements),
        Err(e) => vec![
            step_failed(
                StepId::Requirements,
                format!("{e}; dialectic's keyword inference is used"),
                time,
            ),
            keywords(),
        ],
    }
}

/// The `requirements_covered` event of one contribution's round-analysis
/// entry (nothing when the requirements are not recorded, the entry gave
/// no verdict, or only `ignores`), and the record of what validation
/// dropped.
pub fn coverage_events(
    board: &Blackboard,
    message: &MessageId,
    entry: &ContributionUpdate,
    index: usize,
) -> Vec<DebateEvent> {
    let ledger = board.requirements();
    let Some(verdicts) = entry.requirements.as_ref() else {
        return Vec::new();
    };
    if !ledger.is_recorded() {
        return Vec::new();
    }
    let mut notes = Vec::new();
    let coverage = agon_extract::coverage(
        verdicts,
        ledger,
        &format!("updates[{index}].requirements"),
        &mut notes,
    );
    let events = if coverage.is_empty() {
        Vec::new()
    } else {
        vec![DebateEvent::RequirementsCovered {
            message: message.clone(),
            coverage,
        }]
    };
    Converted {
        events,
        repairs: notes,
    }
    .into_events(StepId::Analysis {
        message: message.clone(),
        part: AnalysisPart::Position,
    })
}
