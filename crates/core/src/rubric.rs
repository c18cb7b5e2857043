//! The rubric a debate is judged by (seed 003 §2): its criteria, as the
//! debate read them when it started (an event, so a resumed debate judges
//! by the version it started with). The living rubric, with its versions
//! and the changes high-trust overrides propose, is `agon-trust`'s
//! `rubric` module.

use serde::{Deserialize, Serialize};

/// Longest criterion name, in characters.
pub const MAX_NAME_CHARS: usize = 60;
/// Longest criterion description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 300;
/// Most criteria a rubric holds.
pub const MAX_CRITERIA: usize = 12;

/// The rubric of dialectic debates (and of `agon eval`).
pub const DIALECTIC: &str = "dialectic";
/// The rubric of structured debates.
pub const STRUCTURED: &str = "structured";

/// The rubric a protocol's output is judged by, if it has one (a
/// deliberation's decisions are judged by none).
pub fn rubric_of(protocol: crate::ProtocolKind) -> Option<&'static str> {
    match protocol {
        crate::ProtocolKind::Dialectic => Some(DIALECTIC),
        crate::ProtocolKind::Structured => Some(STRUCTURED),
        crate::ProtocolKind::Deliberation => None,
    }
}

/// One evaluation criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Criterion {
    /// Its name, as prompts and citations spell it.
    pub name: String,
    /// What it checks, one or two sentences.
    pub description: String,
}

impl Criterion {
    /// A criterion from its name and description, trimmed.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into().trim().to_owned(),
            description: description.into().trim().to_owned(),
        }
    }

    /// Parses `NAME: description` (the CLI's spelling).
    pub fn parse(text: &str) -> Result<Self, CriterionError> {
        let (name, description) = text
            .split_once(':')
            .ok_or_else(|| CriterionError(format!("`{text}` is not `NAME: description`")))?;
        let c = Self::new(name, description);
        c.validate()?;
        Ok(c)
    }

    /// Whether its name is one line of 1–[`MAX_NAME_CHARS`] characters and its
    /// description 1–[`MAX_DESCRIPTION_CHARS`].
    pub fn validate(&self) -> Result<(), CriterionError> {
        let chars = self.name.chars().count();
        if chars == 0 || chars > MAX_NAME_CHARS || self.name.contains(['\n', '\r']) {
            return Err(CriterionError(format!(
                "criterion name `{}` must be one line of 1-{MAX_NAME_CHARS} characters",
                self.name
            )));
        }
        if self.description.is_empty() || self.description.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(CriterionError(format!(
                "the description of `{}` must have 1-{MAX_DESCRIPTION_CHARS} characters",
                self.name
            )));
        }
        Ok(())
    }
}

/// A rubric as a debate reads it: its name, version and criteria.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rubric {
    /// Which rubric ([`DIALECTIC`], [`STRUCTURED`]).
    pub name: String,
    /// Its version (1 is the built-in one).
    pub version: u32,
    /// Its criteria, in order.
    pub criteria: Vec<Criterion>,
}

impl Rubric {
    /// The built-in version 1 of the rubric `name`, if Agon has one.
    pub fn builtin(name: &str) -> Option<Self> {
        let criteria: &[(&str, &str)] = match name {
            DIALECTIC => &[
                (
                    "Functional Completeness",
                    "The solution covers every functional requirement of the problem.",
                ),
                (
                    "Performance & Scalability",
                    "It meets the load, latency and growth the problem implies.",
                ),
                (
                    "Security",
                    "It protects data and access against realistic threats.",
                ),
                (
                    "Maintainability & Evolvability",
                    "It stays simple to change, read and extend.",
                ),
                (
                    "Regulatory Compliance",
                    "It respects the legal and policy constraints that apply.",
                ),
                (
                    "Testability",
                    "Its behaviour can be verified by tests and observation.",
                ),
                (
                    "Requirements Fulfillment",
                    "It identifies, meets and traces the major requirements.",
                ),
            ],
            STRUCTURED => &[
                (
                    "Evidence",
                    "Claims rest on data, sources or examples, not assertion.",
                ),
                (
                    "Reasoning",
                    "The argument follows from its premises, without fallacies.",
                ),
                (
                    "Feasibility",
                    "What is proposed could be done with the means at hand.",
                ),
                (
                    "Trade-offs",
                    "It weighs who bears the costs and what is given up.",
                ),
            ],
            _ => return None,
        };
        Some(Self {
            name: name.to_owned(),
            version: 1,
            criteria: criteria
                .iter()
                .map(|(n, d)| Criterion::new(*n, *d))
                .collect(),
        })
    }

    /// The criterion named `name` (case and surrounding blanks ignored).
    pub fn find(&self, name: &str) -> Option<&Criterion> {
        let name = name.trim();
        self.criteria
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The criteria's names, comma-separated (what analysis prompts offer
    /// to cite).
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.criteria.iter().map(|c| c.name.as_str()).collect();
        names.join(", ")
    }

    /// The criteria as a prompt section: one `- Name: description` line
    /// each.
    pub fn lines(&self) -> String {
        self.criteria
            .iter()
            .map(|c| format!("- {}: {}", c.name, c.description))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The names of `cited` that are criteria of this rubric, spelled as
    /// the rubric spells them, each once, in the rubric's order; the
    /// others are returned apart (a model may cite what is not there).
    pub fn resolve(&self, cited: &[String]) -> (Vec<String>, Vec<String>) {
        let known: Vec<String> = self
            .criteria
            .iter()
            .filter(|c| cited.iter().any(|n| n.trim().eq_ignore_ascii_case(&c.name)))
            .map(|c| c.name.clone())
            .collect();
        let unknown = cited
            .iter()
            .filter(|n| self.find(n).is_none())
            .cloned()
            .collect();
        (known, unknown)
    }
}

/// Why a criterion is refused: what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CriterionError(pub String);
