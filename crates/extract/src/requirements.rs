//! The problem's requirements (dialectic 0.7's requirements tracking, kept
//! on the ledger): the analysis model's reading of the problem and the
//! clarification answers, dialectic's keyword inference as the fallback,
//! and each contribution's coverage verdicts as the round analysis gives
//! them.

use agon_core::{
    Coverage, CoverageStatus, DebateEvent, MAX_REQUIREMENTS, MessageId, Requirement,
    RequirementLedger, RequirementMethod, RequirementSource,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{Limits, clean};
use super::{Payload, Validated};

/// The words that make a problem line a major requirement in dialectic's
/// keyword inference.
pub const MAJOR_KEYWORDS: [&str; 6] = [
    "must",
    "shall",
    "required",
    "needs to",
    "critical",
    "essential",
];

/// Shortest line dialectic's inference keeps, in characters (it keeps
/// lines longer than this).
const MIN_REQUIREMENT_CHARS: usize = 10;

/// Longest quote kept as the proof of a coverage verdict.
pub const COVERAGE_QUOTE_CHARS: usize = 200;

/// dialectic's keyword inference: each line of `problem` that contains one
/// of [`MAJOR_KEYWORDS`] (case-insensitive, anywhere in the line) and is
/// longer than 10 characters once trimmed and stripped of a leading `-`,
/// `*` or `•`, with its 1-based line number.
pub fn infer_major_requirements(problem: &str) -> Vec<(u32, String)> {
    problem
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let trimmed = line.trim();
            let lower = trimmed.to_lowercase();
            if !MAJOR_KEYWORDS.iter().any(|k| lower.contains(k)) {
                return None;
            }
            let cleaned = trimmed
                .strip_prefix(['-', '*', '•'])
                .unwrap_or(trimmed)
                .trim();
            (cleaned.chars().count() > MIN_REQUIREMENT_CHARS)
                .then(|| (u32::try_from(i + 1).unwrap_or(u32::MAX), cleaned.to_owned()))
        })
        .collect()
}

/// The `requirements_recorded` event of the keyword inference over
/// `problem`: every inferred line a major requirement (at most
/// [`MAX_REQUIREMENTS`]).
pub fn keyword_requirements(problem: &str) -> DebateEvent {
    let requirements = infer_major_requirements(problem)
        .into_iter()
        .take(MAX_REQUIREMENTS)
        .enumerate()
        .map(|(i, (line, text))| Requirement {
            id: format!("R{}", i + 1),
            text: super::truncate_chars(&text, Limits::SENTENCE),
            source: RequirementSource::Problem { line: Some(line) },
            major: true,
        })
        .collect();
    DebateEvent::RequirementsRecorded {
        requirements,
        method: RequirementMethod::Keywords,
    }
}

/// One requirement as the analysis model states it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequirementPayload {
    /// What is required, one sentence.
    #[schemars(length(max = 300))]
    pub text: String,
    /// Whether a solution that misses it fails the problem.
    pub major: bool,
    /// Where it is stated: "problem" or "clarification".
    #[serde(default)]
    pub source: Option<String>,
}

/// The requirements of a problem and its clarification answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequirementsPayload {
    /// Every requirement a solution must or should meet, most important
    /// first; implied ones too (a problem has at least one).
    #[schemars(length(min = 1, max = 24))]
    pub requirements: Vec<RequirementPayload>,
}

impl Payload for RequirementsPayload {
    const NAME: &'static str = "requirements";
}

/// What requirement validation reads: the problem's lines and the
/// clarification answers (message id and text).
#[derive(Debug, Clone, Copy)]
pub struct RequirementSources<'a> {
    /// The problem statement.
    pub problem: &'a str,
    /// The clarification answers given.
    pub answers: &'a [(MessageId, String)],
}

/// Lowercased words of `text` (letters and digits), for matching a
/// requirement to the line that states it.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The share of `text`'s words that `line` contains.
fn overlap(text: &[String], line: &str) -> f64 {
    if text.is_empty() {
        return 0.0;
    }
    let line = words(line);
    let found = text.iter().filter(|w| line.contains(w)).count();
    found as f64 / text.len() as f64
}

impl RequirementsPayload {
    /// Cleans each requirement (junk, questions and duplicates dropped
    /// with a note) and keeps at most [`MAX_REQUIREMENTS`]; a `source`
    /// other than problem or clarification is dropped with a note. Then
    /// every line of `problem` that dialectic's keyword inference finds and
    /// the model's requirements do not cover (most of its words in none of
    /// them) is added as a major requirement, with a note: the ledger never
    /// tracks less than dialectic does.
    pub fn validate(&self, problem: &str) -> Validated<Self> {
        let mut notes = Vec::new();
        let mut kept: Vec<RequirementPayload> = Vec::new();
        for (i, r) in self.requirements.iter().enumerate() {
            let field = format!("requirements[{i}].text");
            let Some(text) = clean(&r.text, Limits::SENTENCE, &field, &mut notes) else {
                continue;
            };
            if text.ends_with('?') {
                notes.push(format!("{field}: dropped a question (not a requirement)"));
                continue;
            }
            if kept.iter().any(|k| k.text.eq_ignore_ascii_case(&text)) {
                notes.push(format!("{field}: dropped a repeated requirement"));
                continue;
            }
            if kept.len() == MAX_REQUIREMENTS {
                notes.push(format!(
                    "requirements: kept the first {MAX_REQUIREMENTS}, dropped the rest"
                ));
                break;
            }
            let source = match r.source.as_deref().map(str::trim) {
                None | Some("problem" | "clarification") => r.source.clone(),
                Some(other) => {
                    notes.push(format!(
                        "requirements[{i}].source: {:?} is neither problem nor clarification; \
                         found from the text",
                        super::truncate_chars(other, 40)
                    ));
                    None
                }
            };
            kept.push(RequirementPayload {
                text,
                major: r.major,
                source,
            });
        }
        let said: Vec<String> = kept.iter().flat_map(|k| words(&k.text)).collect();
        let mut added = 0;
        for (_, line) in infer_major_requirements(problem) {
            let content: Vec<String> = words(&line)
                .into_iter()
                .filter(|w| w.chars().count() >= 4 || w.chars().any(|c| c.is_ascii_digit()))
                .collect();
            let found = content.iter().filter(|w| said.contains(w)).count();
            if content.is_empty()
                || found * 10 >= content.len() * 7
                || kept.len() == MAX_REQUIREMENTS
            {
                continue;
            }
            kept.push(RequirementPayload {
                text: super::truncate_chars(&line, Limits::SENTENCE),
                major: true,
                source: Some("problem".into()),
            });
            added += 1;
        }
        if added > 0 {
            notes.push(format!(
                "requirements: added {added} line(s) of the problem that dialectic's keyword \
                 inference finds and the model's list did not cover"
            ));
        }
        Validated::new(Self { requirements: kept }, notes, 0)
    }
}

impl Validated<RequirementsPayload> {
    /// The `requirements_recorded` event (`R1`, `R2`, … in order), each
    /// requirement placed on its problem line or clarification answer.
    pub fn into_event(self, sources: RequirementSources<'_>) -> DebateEvent {
        let lines: Vec<&str> = sources.problem.lines().collect();
        let requirements = self
            .value
            .requirements
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let text_words = words(&r.text);
                let best_line = lines
                    .iter()
                    .enumerate()
                    .map(|(n, l)| (n, overlap(&text_words, l)))
                    .max_by(|a, b| a.1.total_cmp(&b.1));
                let best_answer = sources
                    .answers
                    .iter()
                    .map(|(id, a)| (id, overlap(&text_words, a)))
                    .max_by(|a, b| a.1.total_cmp(&b.1));
                let line_score = best_line.map_or(0.0, |b| b.1);
                let answer_score = best_answer.map_or(0.0, |b| b.1);
                let from_answer = match r.source.as_deref() {
                    Some("clarification") => answer_score > 0.0 && answer_score >= line_score,
                    _ => answer_score > line_score,
                };
                let source = if from_answer {
                    RequirementSource::Clarification {
                        message: best_answer.map(|(id, _)| id.clone()),
                    }
                } else {
                    RequirementSource::Problem {
                        line: best_line
                            .filter(|b| b.1 >= 0.5)
                            .and_then(|(n, _)| u32::try_from(n + 1).ok()),
                    }
                };
                Requirement {
                    id: format!("R{}", i + 1),
                    text: r.text,
                    source,
                    major: r.major,
                }
            })
            .collect();
        DebateEvent::RequirementsRecorded {
            requirements,
            method: RequirementMethod::Model,
        }
    }
}

/// A contribution's verdict on one requirement, as the round analysis
/// gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequirementVerdict {
    /// The requirement's id (`R2`).
    #[schemars(length(max = 12))]
    pub id: String,
    /// "covers" (says how it is met), "weakens" (breaks it, or shows a
    /// proposal does not meet it) or "ignores".
    pub status: String,
    /// The contribution's words that show it.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub quote: Option<String>,
}

/// The requirement id `raw` names (`R2`, `r2`, `[R2]`, `R2: text`), if it
/// is one of `ledger`'s.
pub fn requirement_id<'a>(raw: &str, ledger: &'a RequirementLedger) -> Option<&'a str> {
    let t = raw.trim().trim_matches(['[', ']', '(', ')']).trim();
    let head: String = t
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    ledger
        .requirements
        .iter()
        .find(|r| r.id.eq_ignore_ascii_case(&head))
        .map(|r| r.id.as_str())
}

fn status_of(raw: &str) -> Option<CoverageStatus> {
    match raw.trim().to_lowercase().as_str() {
        "covers" | "covered" | "cover" | "meets" | "met" | "addresses" => {
            Some(CoverageStatus::Covers)
        }
        "weakens" | "weakened" | "weaken" | "violates" | "breaks" | "contradicts" => {
            Some(CoverageStatus::Weakens)
        }
        "ignores" | "ignored" | "ignore" | "none" | "n/a" | "" => Some(CoverageStatus::Ignores),
        _ => None,
    }
}

/// The coverage verdicts of one contribution, validated against the
/// ledger's requirements: unknown ids, unknown statuses and repeats are
/// dropped with a note (`field` names the entry); `ignores` verdicts are
/// not kept (the ledger assumes them); quotes are cleaned and cut.
pub fn coverage(
    verdicts: &[RequirementVerdict],
    ledger: &RequirementLedger,
    field: &str,
    notes: &mut Vec<String>,
) -> Vec<Coverage> {
    let mut out: Vec<Coverage> = Vec::new();
    for (i, v) in verdicts.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let Some(id) = requirement_id(&v.id, ledger) else {
            notes.push(format!(
                "{at}: dropped {:?} (not a requirement of this debate)",
                super::truncate_chars(&v.id, 40)
            ));
            continue;
        };
        let Some(status) = status_of(&v.status) else {
            notes.push(format!(
                "{at}: dropped the verdict on {id} (status {:?} is not covers, weakens or ignores)",
                super::truncate_chars(&v.status, 40)
            ));
            continue;
        };
        if out.iter().any(|c| c.requirement == id) {
            notes.push(format!("{at}: dropped a second verdict on {id}"));
            continue;
        }
        if status == CoverageStatus::Ignores {
            continue;
        }
        let quote = v
            .quote
            .as_deref()
            .and_then(|q| clean(q, COVERAGE_QUOTE_CHARS, &format!("{at}.quote"), notes))
            .unwrap_or_default();
        out.push(Coverage {
            requirement: id.to_owned(),
            status,
            quote,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn keyword_inference_is_dialectics() {
        let problem = "- Must support 10k concurrent users\n* should be fast (minor)\n\
                       Required: audit logging for all changes\nNice to have: dark mode\n\
                       must do it";
        assert_eq!(
            infer_major_requirements(problem),
            [
                (1, "Must support 10k concurrent users".to_owned()),
                (3, "Required: audit logging for all changes".to_owned()),
            ]
        );
        let DebateEvent::RequirementsRecorded {
            requirements,
            method,
        } = keyword_requirements(problem)
        else {
            panic!("requirements")
        };
        assert_eq!(method, RequirementMethod::Keywords);
        assert_eq!(requirements[1].id, "R2");
        assert_eq!(
            requirements[1].source,
            RequirementSource::Problem { line: Some(3) }
        );
    }

    #[test]
    fn model_requirements_are_cleaned_and_placed_on_their_source() {
        let payload = RequirementsPayload {
            requirements: vec![
                RequirementPayload {
                    text: "Every change must be audited".into(),
                    major: true,
                    source: Some("problem".into()),
                },
                RequirementPayload {
                    text: "every change must be audited".into(),
                    major: true,
                    source: None,
                },
                RequirementPayload {
                    text: "Data stays in the EU".into(),
                    major: true,
                    source: Some("user".into()),
                },
                RequirementPayload {
                    text: "{}".into(),
                    major: false,
                    source: None,
                },
            ],
        };
        let answers = [(
            MessageId::new("msg-4"),
            "Yes: all data stays in the EU region.".to_owned(),
        )];
        let sources = RequirementSources {
            problem: "Build a ledger.\nEvery change must be audited.",
            answers: &answers,
        };
        let v = payload.validate(sources.problem);
        assert_eq!(v.value().requirements.len(), 2);
        assert_eq!(v.notes().len(), 3, "{:?}", v.notes());
        let DebateEvent::RequirementsRecorded { requirements, .. } = v.into_event(sources) else {
            panic!("requirements")
        };
        assert_eq!(
            requirements[0].source,
            RequirementSource::Problem { line: Some(2) }
        );
        assert_eq!(
            requirements[1].source,
            RequirementSource::Clarification {
                message: Some(MessageId::new("msg-4"))
            }
        );
    }

    #[test]
    fn the_keyword_lines_the_model_missed_are_added_and_questions_dropped() {
        let problem = "Students must upload their code.\nGrades must be auditable.\nShort.";
        let payload = RequirementsPayload {
            requirements: vec![
                RequirementPayload {
                    text: "Students upload their code through the web".into(),
                    major: true,
                    source: None,
                },
                RequirementPayload {
                    text: "Which languages are graded?".into(),
                    major: false,
                    source: Some("clarification".into()),
                },
            ],
        };
        let v = payload.validate(problem);
        let texts: Vec<&str> = v
            .value()
            .requirements
            .iter()
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(
            texts,
            [
                "Students upload their code through the web",
                "Grades must be auditable."
            ]
        );
        assert!(v.value().requirements[1].major);
        assert_eq!(v.notes().len(), 2, "{:?}", v.notes());
    }

    #[test]
    fn coverage_keeps_known_ids_and_says_what_it_dropped() {
        let ledger = RequirementLedger {
            requirements: vec![Requirement {
                id: "R1".into(),
                text: "Audit every change".into(),
                source: RequirementSource::Problem { line: None },
                major: true,
            }],
            method: Some(RequirementMethod::Model),
            coverage: vec![],
        };
        let v = |id: &str, status: &str| RequirementVerdict {
            id: id.into(),
            status: status.into(),
            quote: Some("an append-only audit table".into()),
        };
        let mut notes = Vec::new();
        let kept = coverage(
            &[
                v("[r1]: audit", "Covered"),
                v("R1", "weakens"),
                v("R9", "covers"),
                v("R1", "maybe"),
            ],
            &ledger,
            "updates[0].requirements",
            &mut notes,
        );
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].status, CoverageStatus::Covers);
        assert_eq!(notes.len(), 3, "{notes:?}");
        let ignored = coverage(&[v("R1", "ignores")], &ledger, "x", &mut notes);
        assert!(ignored.is_empty());
    }
}
