//! The problem's requirements on the blackboard (dialectic 0.7's
//! requirements tracking, kept on the ledger): what the problem and the
//! clarification answers require, and which contribution covers or weakens
//! each requirement (from [`crate::DebateEvent::RequirementsRecorded`] and
//! [`crate::DebateEvent::RequirementsCovered`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{MessageId, PersonaId};

/// Most requirements a debate tracks.
pub const MAX_REQUIREMENTS: usize = 24;

/// Where a requirement was stated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RequirementSource {
    /// A line of the problem statement (1-based), when known.
    Problem {
        /// The line, when the requirement quotes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
    },
    /// An answer to a clarifying question.
    Clarification {
        /// The answer message, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<MessageId>,
    },
}

/// How the requirements were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RequirementMethod {
    /// The analysis model read the problem and the clarifications.
    Model,
    /// dialectic's keyword inference (lines with must, shall, required,
    /// needs to, critical, essential): the fallback when no model answers.
    Keywords,
}

/// One requirement of the problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Requirement {
    /// Its id, `R1`, `R2`, … in order.
    pub id: String,
    /// What is required, one sentence.
    pub text: String,
    /// Where it was stated.
    pub source: RequirementSource,
    /// Whether a solution that misses it fails the problem.
    pub major: bool,
}

impl Requirement {
    /// `major` or `minor`.
    pub fn weight(&self) -> &'static str {
        if self.major { "major" } else { "minor" }
    }
}

/// What a contribution does to a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoverageStatus {
    /// The contribution says how the requirement is met.
    Covers,
    /// The contribution breaks it, or shows that a proposal does not meet it.
    Weakens,
    /// The contribution does not address it (what the ledger assumes when
    /// nothing is recorded).
    Ignores,
}

impl CoverageStatus {
    /// The status's name (`covers`, `weakens`, `ignores`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Covers => "covers",
            Self::Weakens => "weakens",
            Self::Ignores => "ignores",
        }
    }
}

/// A contribution's coverage of one requirement, with the words that show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Coverage {
    /// The requirement's id.
    pub requirement: String,
    /// What the contribution does to it.
    pub status: CoverageStatus,
    /// The contribution's words that show it (may be empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub quote: String,
}

/// A recorded coverage: one contribution's verdict on one requirement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageRecord {
    /// The contribution.
    pub message: MessageId,
    /// Its speaker.
    pub persona: PersonaId,
    /// Its round.
    pub round: u32,
    /// Whether it is a proposal or a refinement (a design that can meet
    /// the requirement) rather than a critique.
    pub proposes: bool,
    /// The verdict.
    pub coverage: Coverage,
}

/// The requirements of a debate and the coverage recorded for them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequirementLedger {
    /// The requirements, in id order.
    pub requirements: Vec<Requirement>,
    /// How they were found.
    pub method: Option<RequirementMethod>,
    /// Every coverage recorded, in log order.
    pub coverage: Vec<CoverageRecord>,
}

impl RequirementLedger {
    /// Whether nothing was recorded (a snapshot leaves the field out).
    pub fn is_empty_default(&self) -> bool {
        self == &Self::default()
    }

    /// Whether the requirements were recorded (possibly none).
    pub fn is_recorded(&self) -> bool {
        self.method.is_some()
    }

    /// The requirement with this id.
    pub fn get(&self, id: &str) -> Option<&Requirement> {
        self.requirements.iter().find(|r| r.id == id)
    }

    /// `item` as a reader sees it: `R2: its text` when it is one of the
    /// requirements' ids, `item` itself otherwise (a judge's own words).
    pub fn label(&self, item: &str) -> String {
        match self.get(item) {
            Some(r) => format!("{}: {}", r.id, r.text),
            None => item.to_owned(),
        }
    }

    /// The latest verdict of each proposer on `requirement`, by persona
    /// (a later proposal or refinement replaces an earlier one).
    pub fn latest_by_proposer(&self, requirement: &str) -> Vec<(&PersonaId, &CoverageRecord)> {
        let mut out: Vec<(&PersonaId, &CoverageRecord)> = Vec::new();
        for c in self
            .coverage
            .iter()
            .filter(|c| c.proposes && c.coverage.requirement == requirement)
        {
            match out.iter_mut().find(|(p, _)| *p == &c.persona) {
                Some(slot) => slot.1 = c,
                None => out.push((&c.persona, c)),
            }
        }
        out
    }

    /// The agents whose latest proposal or refinement covers
    /// `requirement`, in the order they first addressed it.
    pub fn covered_by(&self, requirement: &str) -> Vec<&PersonaId> {
        self.latest_by_proposer(requirement)
            .into_iter()
            .filter(|(_, c)| c.coverage.status == CoverageStatus::Covers)
            .map(|(p, _)| p)
            .collect()
    }

    /// Whether some agent's latest proposal or refinement covers
    /// `requirement`.
    pub fn is_covered(&self, requirement: &str) -> bool {
        !self.covered_by(requirement).is_empty()
    }

    /// The requirements no agent's latest proposal or refinement covers,
    /// in id order.
    pub fn uncovered(&self) -> impl Iterator<Item = &Requirement> {
        self.requirements.iter().filter(|r| !self.is_covered(&r.id))
    }

    /// The verdict of `persona` on `requirement` in `round` (its last
    /// contribution of the round that said something), if any.
    pub fn verdict(
        &self,
        requirement: &str,
        persona: &PersonaId,
        round: u32,
    ) -> Option<&CoverageRecord> {
        self.coverage.iter().rev().find(|c| {
            c.round == round && &c.persona == persona && c.coverage.requirement == requirement
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(persona: &str, round: u32, status: CoverageStatus) -> CoverageRecord {
        CoverageRecord {
            message: MessageId::new(format!("msg-{persona}-{round}")),
            persona: PersonaId::new(persona),
            round,
            proposes: true,
            coverage: Coverage {
                requirement: "R1".into(),
                status,
                quote: String::new(),
            },
        }
    }

    #[test]
    fn a_later_proposal_replaces_the_earlier_verdict_of_its_author() {
        let mut ledger = RequirementLedger {
            requirements: vec![Requirement {
                id: "R1".into(),
                text: "Must audit every change".into(),
                source: RequirementSource::Problem { line: Some(2) },
                major: true,
            }],
            method: Some(RequirementMethod::Model),
            coverage: vec![record("ada", 1, CoverageStatus::Covers)],
        };
        assert!(ledger.is_covered("R1"));
        ledger
            .coverage
            .push(record("ada", 2, CoverageStatus::Weakens));
        assert!(!ledger.is_covered("R1"));
        assert_eq!(ledger.uncovered().count(), 1);
        assert_eq!(
            ledger
                .verdict("R1", &"ada".into(), 1)
                .map(|c| c.coverage.status),
            Some(CoverageStatus::Covers)
        );
    }
}
