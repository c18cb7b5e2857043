//! # agon-eval
//!
//! `agon eval`: evaluator agents score a finished debate's solution
//! (dialectic's eval flow). The configuration is dialectic's
//! `eval-config.json`; the input is a debate in the store or a saved
//! debate-state JSON (Agon's `--output` file or dialectic's own). Every
//! evaluator runs in parallel at temperature 0.1; scores are 1-10 per
//! category (clamped, non-numbers ignored, each with a warning), averaged
//! over the evaluators that gave them; an evaluator that fails is reported
//! and skipped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agon_core::{Blackboard, MessageKind};
use agon_llm::{ChatModel, ChatRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// An evaluation that cannot run, naming the file and field.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file cannot be read.
    #[error("cannot read `{file}`: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file's content is unusable.
    #[error("{file}: {field}: {reason}")]
    Invalid {
        /// The file (or debate id).
        file: String,
        /// The field at fault.
        field: String,
        /// What is wrong.
        reason: String,
    },
}

fn invalid(file: &str, field: &str, reason: impl Into<String>) -> EvalError {
    EvalError::Invalid {
        file: file.to_owned(),
        field: field.to_owned(),
        reason: reason.into(),
    }
}

/// One evaluator of dialectic's `eval-config.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluatorConfig {
    /// Unique id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Model id (with `provider`), or an Agon model spec (without).
    pub model: String,
    /// `openai` or `openrouter`; absent: `model` is an Agon spec.
    #[serde(default)]
    pub provider: Option<String>,
    /// System prompt file (relative to the config); built-in when absent or unusable.
    #[serde(default)]
    pub system_prompt_path: Option<String>,
    /// User prompt template file (`{problem}`, `{clarifications}`, `{final_solution}`).
    #[serde(default)]
    pub user_prompt_path: Option<String>,
    /// Milliseconds an evaluator may take (default 30,000).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Whether it runs (default true).
    #[serde(default)]
    pub enabled: Option<bool>,
}

impl EvaluatorConfig {
    /// The Agon model spec of the evaluator.
    pub fn model_spec(&self, file: &str, field: &str) -> Result<String, EvalError> {
        match self.provider.as_deref().map(str::trim) {
            None | Some("") => Ok(self.model.trim().to_owned()),
            Some("openai") => Ok(format!("openai:{}", self.model.trim())),
            Some("openrouter") => Ok(format!("openrouter:{}", self.model.trim())),
            Some(other) => Err(invalid(
                file,
                &format!("{field}.provider"),
                format!("`{other}` is not openai or openrouter"),
            )),
        }
    }
}

/// dialectic's evaluator configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalConfig {
    /// The evaluators.
    pub agents: Vec<EvaluatorConfig>,
    /// The directory prompt paths are relative to.
    #[serde(skip)]
    pub dir: PathBuf,
}

impl EvalConfig {
    /// Reads the file; fails when it has no enabled evaluator.
    pub fn load(path: &Path) -> Result<Self, EvalError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Read {
            file: file.clone(),
            source,
        })?;
        let mut config: Self =
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(&text))
                .map_err(|e| {
                    let field = e.path().to_string();
                    let e = e.into_inner();
                    invalid(
                        &file,
                        &format!("{field} (line {})", e.line()),
                        e.to_string(),
                    )
                })?;
        if !config.agents.iter().any(|a| a.enabled != Some(false)) {
            return Err(invalid(&file, "agents", "has no enabled evaluator"));
        }
        config.dir = path.parent().map(Path::to_owned).unwrap_or_default();
        Ok(config)
    }

    /// The enabled evaluators.
    pub fn enabled(&self) -> impl Iterator<Item = &EvaluatorConfig> {
        self.agents.iter().filter(|a| a.enabled != Some(false))
    }

    /// A prompt file's text, or `None` (with a warning) when it is absent,
    /// unreadable or empty.
    pub fn prompt(&self, path: Option<&str>, warnings: &mut Vec<String>) -> Option<String> {
        let path = self.dir.join(path?);
        match std::fs::read_to_string(&path) {
            Ok(t) if !t.trim().is_empty() => Some(t),
            _ => {
                warnings.push(format!(
                    "prompt file {} is missing or empty; using the built-in prompt",
                    path.display()
                ));
                None
            }
        }
    }
}

/// The built-in system prompt of an evaluator.
pub const SYSTEM_PROMPT: &str = "You review software designs for a living. You score a proposed \
solution against the problem it was written for, strictly and consistently: a 10 is a design you \
would approve as it stands, a 5 has serious gaps, a 1 does not address the requirement. You judge \
only what the solution says, never what it might have meant.";

/// The built-in user prompt template of an evaluator.
pub const USER_PROMPT: &str = "Problem:\n{problem}\n\nClarifications (questions the designers \
asked and the answers they got; NA = not answered):\n{clarifications}\n\nProposed solution:\n\
{final_solution}\n\nRequirements information (the major requirements of the problem, the ones the \
judge says are unmet, and each agent's latest requirements coverage):\n{requirements_info}\n\nScore \
the solution from 1 to 10 in each category, with one or two sentences of reasoning each; \
requirements_fulfillment is how well it identifies, meets and traces the major requirements \
(check the judge's list, and find requirements it missed). Leave out a category you cannot \
judge. Answer with only this JSON object:\n\
{\"evaluation\": {\"functional_completeness\": {\"score\": 0, \"reasoning\": \"\"}, \
\"non_functional\": {\"performance_scalability\": {\"score\": 0, \"reasoning\": \"\"}, \
\"security\": {\"score\": 0, \"reasoning\": \"\"}, \"maintainability_evolvability\": {\"score\": 0, \
\"reasoning\": \"\"}, \"regulatory_compliance\": {\"score\": 0, \"reasoning\": \"\"}, \
\"testability\": {\"score\": 0, \"reasoning\": \"\"}, \"requirements_fulfillment\": \
{\"score\": 0, \"reasoning\": \"\"}}}, \"overall_summary\": {\"strengths\": \"\", \
\"weaknesses\": \"\", \"overall_score\": 0}}";

/// What the evaluators see of a debate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalInput {
    /// The problem.
    pub problem: String,
    /// The clarifications as Markdown (fenced questions and answers).
    pub clarifications: String,
    /// The final solution's text.
    pub final_solution: String,
    /// dialectic 0.7's requirements information, as pretty JSON:
    /// `majorRequirements`, `judgeUnfulfilledRequirements`,
    /// `agentRequirementsCoverage`.
    pub requirements_info: String,
}

/// The title of the section a proposal ends with (dialectic 0.7).
const COVERAGE_TITLE: &str = "requirements coverage";

/// The "Requirements Coverage" section of a contribution, if it has one:
/// the text after a Markdown heading of that title, up to the next `##`
/// heading or `---` rule (dialectic 0.7's reading).
pub fn coverage_section(content: &str) -> Option<String> {
    let mut lines = content.lines();
    lines.find(|l| {
        let t = l.trim_start();
        t.starts_with('#')
            && t.trim_start_matches('#')
                .trim()
                .trim_end_matches(':')
                .eq_ignore_ascii_case(COVERAGE_TITLE)
    })?;
    let body: Vec<&str> = lines
        .take_while(|l| !l.trim_start().starts_with("##") && l.trim() != "---")
        .collect();
    let body = body.join("\n").trim().to_owned();
    (!body.is_empty()).then_some(body)
}

/// One contribution, as the requirements information reads it.
struct Contribution<'a> {
    agent: String,
    role: String,
    round: u64,
    refinement: bool,
    content: &'a str,
}

/// Each agent's latest coverage section: later rounds win, and within a
/// round a refinement wins over a proposal (dialectic 0.7's choice).
fn coverage_by_agent(contributions: &[Contribution<'_>]) -> Vec<Value> {
    let mut chosen: Vec<(&Contribution<'_>, String)> = Vec::new();
    for c in contributions {
        let Some(section) = coverage_section(c.content) else {
            continue;
        };
        match chosen.iter_mut().find(|(p, _)| p.agent == c.agent) {
            Some(slot) => {
                let prev = slot.0;
                if c.round > prev.round
                    || (c.round == prev.round && (c.refinement || !prev.refinement))
                {
                    *slot = (c, section);
                }
            }
            None => chosen.push((c, section)),
        }
    }
    chosen
        .into_iter()
        .map(|(c, section)| {
            json!({"agentId": c.agent, "agentRole": c.role, "requirementsCoverage": section})
        })
        .collect()
}

fn role_of(bb: &Blackboard, persona: &agon_core::PersonaId) -> String {
    bb.persona(persona)
        .and_then(|p| p.specialty)
        .map(|r| r.to_string())
        .unwrap_or_default()
}

/// The requirements information of a blackboard: the ledger's major
/// requirements (dialectic's keyword inference when none were recorded),
/// the judge's unmet ones, and each agent's coverage: the ledger's latest
/// verdicts where it has them, the agent's own section otherwise.
fn requirements_info_of(bb: &Blackboard, problem: &str) -> Value {
    let ledger = bb.requirements();
    let major: Vec<String> = if ledger.is_recorded() {
        ledger
            .requirements
            .iter()
            .filter(|r| r.major)
            .map(|r| format!("{}: {}", r.id, r.text))
            .collect()
    } else {
        agon_extract::infer_major_requirements(problem)
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    };
    let judge: Vec<String> = bb
        .solution()
        .map(|s| {
            s.unfulfilled_major_requirements
                .iter()
                .map(|r| ledger.label(r))
                .collect()
        })
        .unwrap_or_default();
    let contributions: Vec<Contribution<'_>> = bb
        .messages()
        .iter()
        .filter(|m| matches!(m.kind, MessageKind::Proposal | MessageKind::Refinement))
        .map(|m| Contribution {
            agent: m.persona.to_string(),
            role: role_of(bb, &m.persona),
            round: u64::from(m.round),
            refinement: m.kind == MessageKind::Refinement,
            content: &m.content,
        })
        .collect();
    let mut coverage = coverage_by_agent(&contributions);
    for p in bb.debaters() {
        let lines: Vec<String> = ledger
            .requirements
            .iter()
            .filter_map(|r| {
                let (_, c) = ledger
                    .latest_by_proposer(&r.id)
                    .into_iter()
                    .find(|(who, _)| *who == &p.id)?;
                let quote = if c.coverage.quote.is_empty() {
                    String::new()
                } else {
                    format!(": \"{}\"", c.coverage.quote)
                };
                Some(format!(
                    "- {} {} (round {}){quote}",
                    r.id,
                    c.coverage.status.as_str(),
                    c.round
                ))
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let entry = json!({
            "agentId": p.id,
            "agentRole": role_of(bb, &p.id),
            "requirementsCoverage": lines.join("\n"),
        });
        match coverage
            .iter_mut()
            .find(|c| c["agentId"] == json!(p.id.as_str()))
        {
            Some(slot) => *slot = entry,
            None => coverage.push(entry),
        }
    }
    json!({
        "majorRequirements": major,
        "judgeUnfulfilledRequirements": judge,
        "agentRequirementsCoverage": coverage,
    })
}

/// The requirements information of a saved debate state: Agon's
/// `requirements` (major ones) when the file has them, else dialectic's
/// keyword inference over the problem; the judge's
/// `unfulfilledMajorRequirements`; each agent's latest "Requirements
/// Coverage" section.
fn requirements_info_of_state(state: &Value, problem: &str) -> Value {
    let text = |v: &Value| v.as_str().map(str::trim).unwrap_or_default().to_owned();
    let major: Vec<String> = match state["requirements"].as_array() {
        Some(recorded) => recorded
            .iter()
            .filter(|r| r["major"].as_bool() == Some(true))
            .map(|r| format!("{}: {}", text(&r["id"]), text(&r["text"])))
            .collect(),
        None => agon_extract::infer_major_requirements(problem)
            .into_iter()
            .map(|(_, t)| t)
            .collect(),
    };
    let judge: Vec<String> = state["finalSolution"]["unfulfilledMajorRequirements"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .filter(|s| !s.is_empty())
        .collect();
    let contributions: Vec<Contribution<'_>> = state["rounds"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, round)| {
            let number = round["roundNumber"].as_u64().unwrap_or(i as u64 + 1);
            round["contributions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(move |c| {
                    let kind = c["type"].as_str()?;
                    (kind == "proposal" || kind == "refinement").then(|| Contribution {
                        agent: c["agentId"].as_str().unwrap_or_default().to_owned(),
                        role: c["agentRole"].as_str().unwrap_or_default().to_owned(),
                        round: number,
                        refinement: kind == "refinement",
                        content: c["content"].as_str().unwrap_or_default(),
                    })
                })
        })
        .collect();
    json!({
        "majorRequirements": major,
        "judgeUnfulfilledRequirements": judge,
        "agentRequirementsCoverage": coverage_by_agent(&contributions),
    })
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// One agent's clarifications: its name, its role, (question, answer) pairs.
type ClarificationGroup = (String, String, Vec<(String, String)>);

fn clarifications_markdown(groups: &[ClarificationGroup]) -> String {
    let mut s = String::new();
    for (name, role, items) in groups {
        s.push_str(&format!("### {name} ({role})\n\n"));
        for (i, (q, a)) in items.iter().enumerate() {
            s.push_str(&format!(
                "Question (q{}):\n\n```text\n{q}\n```\n\nAnswer:\n\n```text\n{a}\n```\n\n",
                i + 1
            ));
        }
    }
    if s.is_empty() {
        "```text\n(none)\n```".to_owned()
    } else {
        s.trim_end().to_owned()
    }
}

impl EvalInput {
    /// The input of a debate in the store; fails when it has no solution.
    pub fn from_blackboard(bb: &Blackboard, debate: &str) -> Result<Self, EvalError> {
        let problem = bb
            .topic()
            .map(|t| t.question.trim().to_owned())
            .unwrap_or_default();
        if problem.is_empty() {
            return Err(invalid(debate, "problem", "the debate has not started"));
        }
        let final_solution = bb
            .solution()
            .map(|s| s.description.clone())
            .or_else(|| {
                bb.messages()
                    .iter()
                    .rev()
                    .find(|m| m.kind == MessageKind::Synthesis)
                    .map(|m| m.content.clone())
            })
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| {
                invalid(
                    debate,
                    "finalSolution",
                    "the debate has no final solution yet",
                )
            })?;
        let mut groups: Vec<ClarificationGroup> = Vec::new();
        for q in bb
            .messages()
            .iter()
            .filter(|m| m.kind == MessageKind::ClarificationQuestion)
        {
            let answer = bb
                .answer_to(&q.id)
                .map_or_else(|| "NA".to_owned(), |a| a.content.clone());
            let name = bb.persona_name(&q.persona).to_owned();
            let role = bb
                .persona(&q.persona)
                .and_then(|p| p.specialty)
                .map(|r| r.to_string())
                .unwrap_or_default();
            match groups.iter_mut().find(|g| g.0 == name) {
                Some(g) => g.2.push((q.content.clone(), answer)),
                None => groups.push((name, role, vec![(q.content.clone(), answer)])),
            }
        }
        Ok(Self {
            requirements_info: pretty(&requirements_info_of(bb, &problem)),
            problem,
            clarifications: clarifications_markdown(&groups),
            final_solution,
        })
    }

    /// The input of a saved debate state (dialectic's `DebateState` shape:
    /// `problem`, `finalSolution.description`, `clarifications`).
    pub fn from_state_json(state: &Value, file: &str) -> Result<Self, EvalError> {
        let text = |v: &Value| v.as_str().map(str::trim).unwrap_or_default().to_owned();
        let problem = text(&state["problem"]);
        if problem.is_empty() {
            return Err(invalid(file, "problem", "is missing or empty"));
        }
        let final_solution = text(&state["finalSolution"]["description"]);
        if final_solution.is_empty() {
            return Err(invalid(
                file,
                "finalSolution.description",
                "is missing or empty",
            ));
        }
        let groups = state["clarifications"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|g| {
                let items = g["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| {
                        let answer = text(&i["answer"]);
                        (
                            text(&i["question"]),
                            if answer.is_empty() {
                                "NA".into()
                            } else {
                                answer
                            },
                        )
                    })
                    .collect();
                (text(&g["agentName"]), text(&g["role"]), items)
            })
            .collect::<Vec<_>>();
        Ok(Self {
            requirements_info: pretty(&requirements_info_of_state(state, &problem)),
            problem,
            clarifications: clarifications_markdown(&groups),
            final_solution,
        })
    }

    /// `template` with its placeholders filled.
    pub fn render(&self, template: &str) -> String {
        template
            .replace("{problem}", &self.problem)
            .replace("{clarifications}", &self.clarifications)
            .replace("{final_solution}", &self.final_solution)
            .replace("{requirements_info}", &self.requirements_info)
    }
}

/// The scored categories, in output order: (JSON path, heading).
pub const CATEGORIES: [(&str, &str); 8] = [
    ("functional_completeness", "Functional Completeness"),
    ("performance_scalability", "Performance & Scalability"),
    ("security", "Security"),
    (
        "maintainability_evolvability",
        "Maintainability & Evolvability",
    ),
    ("regulatory_compliance", "Regulatory Compliance"),
    ("testability", "Testability"),
    ("requirements_fulfillment", "Requirements Fulfillment"),
    ("overall_score", "Overall Score"),
];

/// One scored column of an evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Column {
    /// Its key: a JSON key of dialectic's answer, or an added criterion's
    /// name.
    pub key: String,
    /// Its heading.
    pub heading: String,
    /// Whether it is a criterion the living rubric added (scored under
    /// `additional_criteria`).
    pub added: bool,
}

/// The columns an evaluation scores by `rubric`: dialectic's categories
/// that the rubric keeps (all of them without a rubric), the criteria it
/// added, then the overall score.
pub fn columns(rubric: Option<&agon_core::rubric::Rubric>) -> Vec<Column> {
    let builtin = |(key, heading): &(&str, &str)| Column {
        key: (*key).to_owned(),
        heading: (*heading).to_owned(),
        added: false,
    };
    let Some(rubric) = rubric else {
        return CATEGORIES.iter().map(builtin).collect();
    };
    let (overall, scored) = CATEGORIES.split_last().unwrap_or((&CATEGORIES[0], &[]));
    let mut out: Vec<Column> = scored
        .iter()
        .filter(|(_, heading)| rubric.find(heading).is_some())
        .map(builtin)
        .collect();
    out.extend(
        rubric
            .criteria
            .iter()
            .filter(|c| !scored.iter().any(|(_, h)| h.eq_ignore_ascii_case(&c.name)))
            .map(|c| Column {
                key: c.name.clone(),
                heading: c.name.clone(),
                added: true,
            }),
    );
    out.push(builtin(overall));
    out
}

/// What the evaluators are told of `rubric` beyond dialectic's own
/// categories (nothing when it is the built-in one): the criteria it
/// reworded, removed and added, and where the added ones are scored.
pub fn rubric_instructions(rubric: &agon_core::rubric::Rubric) -> String {
    let Some(builtin) = agon_core::rubric::Rubric::builtin(&rubric.name) else {
        return String::new();
    };
    let mut lines = Vec::new();
    for c in &builtin.criteria {
        match rubric.find(&c.name) {
            None => lines.push(format!("- {}: removed; do not score it.", c.name)),
            Some(now) if now.description != c.description => {
                lines.push(format!("- {}: {}", c.name, now.description));
            }
            Some(_) => {}
        }
    }
    let added: Vec<&agon_core::rubric::Criterion> = rubric
        .criteria
        .iter()
        .filter(|c| builtin.find(&c.name).is_none())
        .collect();
    for c in &added {
        lines.push(format!("- {} (added): {}", c.name, c.description));
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n\nThe evaluation rubric is `{}` version {}, which changes the categories above:\n{}",
        rubric.name,
        rubric.version,
        lines.join("\n")
    );
    if !added.is_empty() {
        let shape: Vec<String> = added
            .iter()
            .map(|c| {
                format!(
                    "{}: {{\"score\": 0, \"reasoning\": \"\"}}",
                    serde_json::to_string(&c.name).unwrap_or_default()
                )
            })
            .collect();
        out.push_str(&format!(
            "\nScore each added criterion from 1 to 10 too, in the same JSON object under \
             \"additional_criteria\": {{{}}}.",
            shape.join(", ")
        ));
    }
    out
}

fn score_at<'a>(parsed: &'a Value, column: &Column) -> &'a Value {
    if column.added {
        let v = &parsed["additional_criteria"][&column.key]["score"];
        return if v.is_null() {
            &parsed["evaluation"]["additional_criteria"][&column.key]["score"]
        } else {
            v
        };
    }
    match column.key.as_str() {
        "functional_completeness" => &parsed["evaluation"]["functional_completeness"]["score"],
        "overall_score" => &parsed["overall_summary"]["overall_score"],
        other => &parsed["evaluation"]["non_functional"][other]["score"],
    }
}

/// The evaluator's answer as a JSON object: the first JSON value in
/// `text` (models wrap JSON in prose or fences), found by the same lenient
/// extraction every structured call uses (`agon_llm::json::extract_json`);
/// `None` unless it is an object.
pub fn answer_object(text: &str) -> Option<Value> {
    agon_llm::json::extract_json(text).filter(Value::is_object)
}

/// One evaluator's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvaluatorResult {
    /// Its id.
    pub id: String,
    /// Its scores per column (after clamping), `None` when not given.
    pub scores: Vec<Option<f64>>,
    /// Its parsed answer (`None` when it failed).
    pub parsed: Option<Value>,
    /// Why it was skipped, if it was.
    pub skipped: Option<String>,
    /// Wall time in milliseconds.
    pub latency_ms: u64,
}

/// The evaluation: per-evaluator results, averages, warnings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// The columns scored ([`columns`]).
    pub columns: Vec<Column>,
    /// The rubric scored by (`None`: dialectic's categories as they are).
    pub rubric: Option<agon_core::rubric::Rubric>,
    /// Each evaluator.
    pub results: Vec<EvaluatorResult>,
    /// The average per column (two decimals), `None` = N/A.
    pub averages: Vec<Option<f64>>,
    /// What was clamped, ignored or skipped.
    pub warnings: Vec<String>,
}

/// A ready evaluator: its model, prompts and time limit.
pub struct Evaluator {
    /// Its id.
    pub id: String,
    /// Its model.
    pub model: Arc<dyn ChatModel>,
    /// Its system prompt.
    pub system: String,
    /// Its user prompt template.
    pub user_template: String,
    /// How long it may take.
    pub timeout: Duration,
}

/// Scores of a parsed answer, one per column: clamped into 1..=10,
/// non-numbers ignored.
pub fn scores_of(
    id: &str,
    parsed: &Value,
    columns: &[Column],
    warnings: &mut Vec<String>,
) -> Vec<Option<f64>> {
    columns
        .iter()
        .map(|column| {
            let key = &column.key;
            let v = score_at(parsed, column);
            if v.is_null() {
                return None;
            }
            let Some(n) = v.as_f64().filter(|n| n.is_finite()) else {
                warnings.push(format!("[{id}] {key}: score {v} is not a number; ignored"));
                return None;
            };
            let clamped = n.clamp(1.0, 10.0);
            if clamped != n {
                warnings.push(format!("[{id}] {key}: score {n} clamped to {clamped}"));
            }
            Some(clamped)
        })
        .collect()
}

/// Runs every evaluator in parallel and aggregates their scores, by
/// `rubric` when given (the living rubric's current version: its changes
/// to dialectic's categories are told to the evaluators and its added
/// criteria scored).
pub async fn evaluate(
    evaluators: &[Evaluator],
    input: &EvalInput,
    rubric: Option<&agon_core::rubric::Rubric>,
) -> EvalReport {
    let columns = columns(rubric);
    let told = rubric.map(rubric_instructions).unwrap_or_default();
    let runs = evaluators.iter().map(|e| {
        let told = &told;
        async move {
            let request = ChatRequest::new(input.render(&e.user_template) + told)
                .with_system(e.system.clone())
                .with_temperature(0.1)
                .with_max_tokens(1_500)
                .with_purpose("evaluation");
            let started = std::time::Instant::now();
            let outcome = tokio::time::timeout(e.timeout, e.model.complete(request)).await;
            let latency_ms = started.elapsed().as_millis() as u64;
            let text = match outcome {
                Err(_) => Err(format!("timed out after {} ms", e.timeout.as_millis())),
                Ok(Err(err)) => Err(err.to_string()),
                Ok(Ok(r)) => Ok(r.content),
            };
            (e.id.clone(), text, latency_ms)
        }
    });
    let mut warnings = Vec::new();
    let mut results = Vec::new();
    for (id, text, latency_ms) in futures::future::join_all(runs).await {
        let parsed = text
            .map_err(|e| format!("skipped due to error: {e}"))
            .and_then(|t| {
                answer_object(&t).ok_or_else(|| "invalid JSON output; skipped".to_owned())
            });
        match parsed {
            Ok(parsed) => results.push(EvaluatorResult {
                scores: scores_of(&id, &parsed, &columns, &mut warnings),
                id,
                parsed: Some(parsed),
                skipped: None,
                latency_ms,
            }),
            Err(reason) => {
                warnings.push(format!("[{id}] {reason}"));
                results.push(EvaluatorResult {
                    id,
                    scores: vec![None; columns.len()],
                    parsed: None,
                    skipped: Some(reason),
                    latency_ms,
                });
            }
        }
    }
    let averages = (0..columns.len())
        .map(|i| {
            let present: Vec<f64> = results.iter().filter_map(|r| r.scores[i]).collect();
            (!present.is_empty()).then(|| {
                let avg = present.iter().sum::<f64>() / present.len() as f64;
                (avg * 100.0).round() / 100.0
            })
        })
        .collect();
    EvalReport {
        columns,
        rubric: rubric.cloned(),
        results,
        averages,
        warnings,
    }
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "N/A".to_owned(), |v| format!("{v:.2}"))
}

impl EvalReport {
    /// The average of the column `key`, if it is scored and was given.
    pub fn average(&self, key: &str) -> Option<f64> {
        let i = self.columns.iter().position(|c| c.key == key)?;
        self.averages.get(i).copied().flatten()
    }

    /// dialectic's Markdown table of the averages.
    pub fn markdown(&self) -> String {
        let heads: Vec<&str> = self.columns.iter().map(|c| c.heading.as_str()).collect();
        let rule: Vec<String> = heads.iter().map(|h| "-".repeat(h.len())).collect();
        let row: Vec<String> = self.averages.iter().map(|v| cell(*v)).collect();
        let mut out = format!(
            "| {} |\n|{}|\n| {} |\n",
            heads.join(" | "),
            rule.join("|"),
            row.join(" | ")
        );
        if let Some(r) = &self.rubric {
            out.push_str(&format!(
                "\nScored by rubric `{}` v{}.\n",
                r.name, r.version
            ));
        }
        out
    }

    /// dialectic's aggregated JSON (averages, overall score, each agent's
    /// answer), with the rubric's added criteria under
    /// `additional_criteria`.
    pub fn json(&self) -> Value {
        let avg = |key: &str| json!({"average_score": self.average(key)});
        let agents: serde_json::Map<String, Value> = self
            .results
            .iter()
            .filter_map(|r| Some((r.id.clone(), r.parsed.clone()?)))
            .collect();
        let added: serde_json::Map<String, Value> = self
            .columns
            .iter()
            .filter(|c| c.added)
            .map(|c| (c.key.clone(), avg(&c.key)))
            .collect();
        let mut out = json!({
            "evaluation": {
                "functional_completeness": avg("functional_completeness"),
                "non_functional": {
                    "performance_scalability": avg("performance_scalability"),
                    "security": avg("security"),
                    "maintainability_evolvability": avg("maintainability_evolvability"),
                    "regulatory_compliance": avg("regulatory_compliance"),
                    "testability": avg("testability"),
                    "requirements_fulfillment": avg("requirements_fulfillment"),
                }
            },
            "overall_score": self.average("overall_score"),
            "agents": agents,
            "skipped": self.results.iter().filter_map(|r| Some(json!({"id": r.id, "reason": r.skipped.clone()?}))).collect::<Vec<_>>(),
        });
        if !added.is_empty() {
            out["evaluation"]["additional_criteria"] = Value::Object(added);
        }
        if let Some(r) = &self.rubric {
            out["rubric"] = json!({"name": r.name, "version": r.version});
        }
        out
    }

    /// One CSV row per evaluator and one of averages (empty cell = N/A).
    pub fn csv(&self) -> String {
        let mut s = String::from("evaluator");
        for c in &self.columns {
            s.push(',');
            s.push_str(&c.key.replace(',', " "));
        }
        s.push('\n');
        let num = |v: &Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_default();
        for r in &self.results {
            let cells: Vec<String> = r.scores.iter().map(num).collect();
            s.push_str(&format!("{},{}\n", r.id.replace(',', " "), cells.join(",")));
        }
        let cells: Vec<String> = self.averages.iter().map(num).collect();
        s.push_str(&format!("average,{}\n", cells.join(",")));
        s
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_answer_object_is_found_in_prose_and_fences() {
        let v = answer_object("Sure!\n```json\n{\"a\": {\"b\": \"}\"}}\n```\nDone {x}").unwrap();
        assert_eq!(v, json!({"a": {"b": "}"}}));
        assert!(answer_object("no json here").is_none());
        assert!(answer_object("[1, 2]").is_none(), "an array is no answer");
    }

    #[test]
    fn scores_are_clamped_non_numbers_ignored_and_missing_ones_na() {
        let parsed = json!({
            "evaluation": {
                "functional_completeness": {"score": 12},
                "non_functional": {"security": {"score": "high"}, "testability": {"score": 7},
                    "requirements_fulfillment": {"score": 4}}
            },
            "overall_summary": {"overall_score": 0}
        });
        let mut warnings = Vec::new();
        let scores = scores_of("e1", &parsed, &columns(None), &mut warnings);
        assert_eq!(
            scores,
            [
                Some(10.0),
                None,
                None,
                None,
                None,
                Some(7.0),
                Some(4.0),
                Some(1.0)
            ]
        );
        assert_eq!(warnings.len(), 3, "{warnings:?}");
    }

    #[test]
    fn averages_render_as_markdown_json_and_csv() {
        let report = EvalReport {
            columns: columns(None),
            rubric: None,
            results: vec![
                EvaluatorResult {
                    id: "e1".into(),
                    scores: vec![
                        Some(8.0),
                        Some(6.0),
                        None,
                        None,
                        None,
                        Some(7.0),
                        Some(5.0),
                        Some(7.0),
                    ],
                    parsed: Some(json!({})),
                    skipped: None,
                    latency_ms: 1,
                },
                EvaluatorResult {
                    id: "e2".into(),
                    scores: vec![
                        Some(7.0),
                        Some(6.0),
                        None,
                        None,
                        None,
                        None,
                        Some(6.0),
                        Some(7.4),
                    ],
                    parsed: Some(json!({})),
                    skipped: None,
                    latency_ms: 1,
                },
            ],
            averages: vec![
                Some(7.5),
                Some(6.0),
                None,
                None,
                None,
                Some(7.0),
                Some(5.5),
                Some(7.2),
            ],
            warnings: vec![],
        };
        let md = report.markdown();
        assert!(
            md.contains("| 7.50 | 6.00 | N/A | N/A | N/A | 7.00 | 5.50 | 7.20 |"),
            "{md}"
        );
        assert_eq!(report.json()["overall_score"], json!(7.2));
        assert_eq!(
            report.json()["evaluation"]["non_functional"]["requirements_fulfillment"]["average_score"],
            json!(5.5)
        );
        assert_eq!(
            report.json()["evaluation"]["non_functional"]["security"]["average_score"],
            Value::Null
        );
        let csv = report.csv();
        assert!(csv.starts_with("evaluator,functional_completeness,"));
        assert!(csv.contains(",testability,requirements_fulfillment,overall_score\n"));
        assert!(
            csv.ends_with("average,7.50,6.00,,,,7.00,5.50,7.20\n"),
            "{csv}"
        );
    }

    #[test]
    fn a_changed_rubric_changes_the_columns_and_what_evaluators_are_told() {
        use agon_trust::rubric::{Criterion, Rubric, RubricChange};
        let v1 = Rubric::builtin("dialectic").unwrap();
        assert_eq!(columns(Some(&v1)), columns(None), "v1 is dialectic's own");
        assert_eq!(
            rubric_instructions(&v1),
            "",
            "v1 leaves the prompt as it is"
        );
        let mut v2 = v1.clone();
        v2.version = 2;
        v2.criteria = RubricChange::Add {
            criterion: Criterion::new("Operability", "It can be run and rolled back."),
        }
        .apply(&v1)
        .unwrap();
        v2.criteria = RubricChange::Remove {
            name: "Regulatory Compliance".into(),
        }
        .apply(&v2)
        .unwrap();
        let cols = columns(Some(&v2));
        let heads: Vec<&str> = cols.iter().map(|c| c.heading.as_str()).collect();
        assert_eq!(heads.len(), 8);
        assert!(!heads.contains(&"Regulatory Compliance"));
        assert_eq!(heads[6..], ["Operability", "Overall Score"]);
        let told = rubric_instructions(&v2);
        assert!(told.contains("`dialectic` version 2"), "{told}");
        assert!(told.contains("- Regulatory Compliance: removed; do not score it."));
        assert!(told.contains(
            "\"additional_criteria\": {\"Operability\": {\"score\": 0, \"reasoning\": \"\"}}"
        ));
        let parsed = json!({
            "evaluation": {"functional_completeness": {"score": 8}},
            "additional_criteria": {"Operability": {"score": 3, "reasoning": "no rollback"}},
            "overall_summary": {"overall_score": 6}
        });
        let scores = scores_of("e1", &parsed, &cols, &mut Vec::new());
        assert_eq!(scores[0], Some(8.0));
        assert_eq!(scores[6], Some(3.0));
        assert_eq!(scores[7], Some(6.0));
        let report = EvalReport {
            columns: cols,
            rubric: Some(v2),
            results: vec![],
            averages: scores,
            warnings: vec![],
        };
        assert_eq!(
            report.json()["evaluation"]["additional_criteria"]["Operability"]["average_score"],
            json!(3.0)
        );
        assert_eq!(report.json()["rubric"]["version"], json!(2));
        assert!(
            report
                .markdown()
                .contains("| Operability | Overall Score |")
        );
        assert!(
            report
                .csv()
                .starts_with("evaluator,functional_completeness,")
        );
    }

    #[test]
    fn requirements_information_reads_dialectics_shape() {
        let state = json!({
            "problem": "Build a grading service.\n- Must grade 500 essays an hour\nNice: dark mode",
            "finalSolution": {"description": "A queue of graders.",
                "unfulfilledMajorRequirements": ["  Must grade 500 essays an hour ", ""]},
            "rounds": [
                {"roundNumber": 1, "contributions": [
                    {"agentId": "a", "agentRole": "architect", "type": "proposal",
                     "content": "Design.\n\n## Requirements Coverage\n- 500/h: workers\n\n## Risks\nnone"},
                    {"agentId": "a", "agentRole": "architect", "type": "refinement",
                     "content": "Better.\n### Requirements coverage:\n- 500/h: autoscaled workers"},
                    {"agentId": "b", "agentRole": "kiss", "type": "critique",
                     "content": "## Requirements Coverage\nnot a proposal"}
                ]}
            ]
        });
        let input = EvalInput::from_state_json(&state, "s.json").unwrap();
        let info: Value = serde_json::from_str(&input.requirements_info).unwrap();
        assert_eq!(
            info["majorRequirements"],
            json!(["Must grade 500 essays an hour"])
        );
        assert_eq!(
            info["judgeUnfulfilledRequirements"],
            json!(["Must grade 500 essays an hour"])
        );
        assert_eq!(
            info["agentRequirementsCoverage"],
            json!([{"agentId": "a", "agentRole": "architect",
                    "requirementsCoverage": "- 500/h: autoscaled workers"}])
        );
    }

    #[test]
    fn a_saved_dialectic_state_is_an_input_and_bad_ones_name_the_field() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/dialectic/kata1-architect-perf-solution_2-rounds.json"
        );
        let state: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let input = EvalInput::from_state_json(&state, path).unwrap();
        assert!(input.problem.contains("grading"));
        assert!(!input.final_solution.is_empty());
        let info: Value = serde_json::from_str(&input.requirements_info).unwrap();
        assert!(info["majorRequirements"].is_array(), "{info}");
        assert!(
            input
                .render("{requirements_info}")
                .contains("judgeUnfulfilledRequirements")
        );
        let e = EvalInput::from_state_json(&json!({"problem": "p"}), "s.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.json: finalSolution.description: is missing or empty"
        );
        let config = EvalConfig::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/dialectic/eval_config1.json"
        )))
        .unwrap();
        assert_eq!(config.enabled().count(), 1);
        assert_eq!(
            config.agents[0].model_spec("x", "agents[0]").unwrap(),
            "openrouter:google/gemini-2.5-flash-preview-09-2025"
        );
    }
}
