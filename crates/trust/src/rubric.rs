//! The living rubric (seed 003 §2: "high-trust human overrides can trigger
//! rubric updates"): the criteria a protocol's output is judged by, kept
//! with their version history and the changes proposed to them.
//!
//! A human override of a debate whose agent holds at least [`HIGH_TRUST`]
//! may propose a [`RubricChange`]; a person accepts or rejects it, and an
//! accepted change is the next version of the [`Rubric`] the next debates
//! read. Pure: times come from the caller.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use agon_core::rubric::{
    Criterion, CriterionError, DIALECTIC, MAX_CRITERIA, Rubric, STRUCTURED, rubric_of,
};

/// Trust an overridden agent must hold for its debate's override to
/// propose a rubric change.
pub const HIGH_TRUST: f64 = 0.7;

/// Why a rubric operation is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RubricError {
    /// Agon has no rubric of that name.
    #[error("no rubric named `{0}` (rubrics: dialectic, structured)")]
    Unknown(String),
    /// A criterion or change that does not fit.
    #[error("{0}")]
    Invalid(String),
    /// The agent's trust is too low to propose.
    #[error(
        "`{agent}` holds trust {trust:.2}, below {HIGH_TRUST:.2}: its debate's override proposes no rubric change"
    )]
    LowTrust {
        /// The agent.
        agent: String,
        /// Its trust.
        trust: f64,
    },
    /// No such proposal.
    #[error("rubric `{rubric}` has no proposal {id}")]
    NoProposal {
        /// The rubric.
        rubric: String,
        /// The id asked for.
        id: u32,
    },
    /// The proposal was already decided.
    #[error("proposal {id} of rubric `{rubric}` is already {state}")]
    Decided {
        /// The rubric.
        rubric: String,
        /// The proposal.
        id: u32,
        /// `accepted` or `rejected`.
        state: &'static str,
    },
}

impl From<CriterionError> for RubricError {
    fn from(e: CriterionError) -> Self {
        Self::Invalid(e.0)
    }
}

/// A change to a rubric's criteria.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RubricChange {
    /// A new criterion.
    Add {
        /// It.
        criterion: Criterion,
    },
    /// A new description of an existing criterion (named as it is).
    Reword {
        /// The criterion with its new description.
        criterion: Criterion,
    },
    /// A criterion dropped.
    Remove {
        /// Its name.
        name: String,
    },
}

impl RubricChange {
    /// The change that puts `criterion` into `current`: a reword when the
    /// rubric has a criterion of that name (case-insensitive), else an
    /// addition; refused when it cannot apply to `current`.
    pub fn for_criterion(current: &Rubric, criterion: Criterion) -> Result<Self, RubricError> {
        let change = if current.find(&criterion.name).is_some() {
            Self::Reword { criterion }
        } else {
            Self::Add { criterion }
        };
        change.apply(current)?;
        Ok(change)
    }

    /// The change that removes criterion `name` from `current`; refused
    /// when it cannot apply (no such criterion, the last one).
    pub fn removal(current: &Rubric, name: &str) -> Result<Self, RubricError> {
        let change = Self::Remove {
            name: name.trim().to_owned(),
        };
        change.apply(current)?;
        Ok(change)
    }

    /// The criteria after the change, or why it does not apply to them.
    pub fn apply(&self, rubric: &Rubric) -> Result<Vec<Criterion>, RubricError> {
        let mut criteria = rubric.criteria.clone();
        match self {
            Self::Add { criterion } => {
                criterion.validate()?;
                if rubric.find(&criterion.name).is_some() {
                    return Err(RubricError::Invalid(format!(
                        "rubric `{}` already has a criterion `{}`",
                        rubric.name, criterion.name
                    )));
                }
                if criteria.len() >= MAX_CRITERIA {
                    return Err(RubricError::Invalid(format!(
                        "rubric `{}` already has {MAX_CRITERIA} criteria",
                        rubric.name
                    )));
                }
                criteria.push(criterion.clone());
            }
            Self::Reword { criterion } => {
                criterion.validate()?;
                let at = position(rubric, &criterion.name)?;
                if criteria[at].description == criterion.description {
                    return Err(RubricError::Invalid(format!(
                        "`{}` already reads so",
                        criterion.name
                    )));
                }
                criteria[at].description.clone_from(&criterion.description);
            }
            Self::Remove { name } => {
                let at = position(rubric, name)?;
                if criteria.len() == 1 {
                    return Err(RubricError::Invalid(format!(
                        "`{name}` is the last criterion of rubric `{}`",
                        rubric.name
                    )));
                }
                criteria.remove(at);
            }
        }
        Ok(criteria)
    }

    /// One line saying what the change does.
    pub fn describe(&self) -> String {
        match self {
            Self::Add { criterion } => {
                format!("add `{}`: {}", criterion.name, criterion.description)
            }
            Self::Reword { criterion } => {
                format!("reword `{}`: {}", criterion.name, criterion.description)
            }
            Self::Remove { name } => format!("remove `{name}`"),
        }
    }
}

fn position(rubric: &Rubric, name: &str) -> Result<usize, RubricError> {
    rubric
        .criteria
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            RubricError::Invalid(format!(
                "rubric `{}` has no criterion `{}` (it has: {})",
                rubric.name,
                name.trim(),
                rubric.names()
            ))
        })
}

/// One version of a rubric.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RubricVersion {
    /// 1, 2, …
    pub version: u32,
    /// Its criteria.
    pub criteria: Vec<Criterion>,
    /// When it became current.
    pub at: DateTime<Utc>,
    /// Why ("built in", or the accepted change).
    pub note: String,
    /// The proposal it came from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<u32>,
}

/// Where a proposal stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ProposalStatus {
    /// Waiting for a person.
    Pending,
    /// Accepted: it made `version`.
    Accepted {
        /// The version it made.
        version: u32,
        /// When.
        at: DateTime<Utc>,
    },
    /// Rejected.
    Rejected {
        /// When.
        at: DateTime<Utc>,
        /// Why, if given.
        #[serde(default)]
        reason: String,
    },
}

/// A change proposed by a human override.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricProposal {
    /// 1, 2, … within the rubric.
    pub id: u32,
    /// When.
    pub at: DateTime<Utc>,
    /// The debate whose output was overridden.
    pub debate: String,
    /// The high-trust agent whose debate it was.
    pub agent: String,
    /// Its trust then.
    pub trust: f64,
    /// The version it was proposed against.
    pub base_version: u32,
    /// The change.
    pub change: RubricChange,
    /// Where it stands.
    pub status: ProposalStatus,
}

/// A rubric's whole story: its versions, oldest first, and the proposals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricBook {
    /// Which rubric.
    pub name: String,
    /// Every version, oldest first (never empty).
    pub versions: Vec<RubricVersion>,
    /// Every proposal, oldest first.
    #[serde(default)]
    pub proposals: Vec<RubricProposal>,
}

impl RubricBook {
    /// The book of a rubric never changed: its built-in version 1.
    pub fn new(name: &str, now: DateTime<Utc>) -> Result<Self, RubricError> {
        let builtin = Rubric::builtin(name).ok_or_else(|| RubricError::Unknown(name.to_owned()))?;
        Ok(Self {
            name: name.to_owned(),
            versions: vec![RubricVersion {
                version: 1,
                criteria: builtin.criteria,
                at: now,
                note: "built in".to_owned(),
                proposal: None,
            }],
            proposals: Vec::new(),
        })
    }

    /// The current version.
    pub fn current(&self) -> Rubric {
        let (version, criteria) = self
            .versions
            .last()
            .map(|v| (v.version, v.criteria.clone()))
            .unwrap_or_default();
        Rubric {
            name: self.name.clone(),
            version,
            criteria,
        }
    }

    /// The version numbered `version`, if there is one.
    pub fn version(&self, version: u32) -> Option<Rubric> {
        self.versions
            .iter()
            .find(|v| v.version == version)
            .map(|v| Rubric {
                name: self.name.clone(),
                version: v.version,
                criteria: v.criteria.clone(),
            })
    }

    /// Records `change` as proposed by the override of `debate`, whose
    /// agent `agent` holds `trust`. Refused when the trust is below
    /// [`HIGH_TRUST`] or the change does not apply to the current version;
    /// the same change already pending is not proposed twice (its id is
    /// returned).
    pub fn propose(
        &mut self,
        debate: &str,
        agent: &str,
        trust: f64,
        change: RubricChange,
        now: DateTime<Utc>,
    ) -> Result<u32, RubricError> {
        if trust < HIGH_TRUST {
            return Err(RubricError::LowTrust {
                agent: agent.to_owned(),
                trust,
            });
        }
        let current = self.current();
        change.apply(&current)?;
        if let Some(p) = self
            .proposals
            .iter()
            .find(|p| p.status == ProposalStatus::Pending && p.change == change)
        {
            return Ok(p.id);
        }
        let id = self.proposals.iter().map(|p| p.id).max().unwrap_or(0) + 1;
        self.proposals.push(RubricProposal {
            id,
            at: now,
            debate: debate.to_owned(),
            agent: agent.to_owned(),
            trust,
            base_version: current.version,
            change,
            status: ProposalStatus::Pending,
        });
        Ok(id)
    }

    fn pending(&mut self, id: u32) -> Result<&mut RubricProposal, RubricError> {
        let rubric = self.name.clone();
        let p = self
            .proposals
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or(RubricError::NoProposal {
                rubric: rubric.clone(),
                id,
            })?;
        match p.status {
            ProposalStatus::Pending => Ok(p),
            ProposalStatus::Accepted { .. } => Err(RubricError::Decided {
                rubric,
                id,
                state: "accepted",
            }),
            ProposalStatus::Rejected { .. } => Err(RubricError::Decided {
                rubric,
                id,
                state: "rejected",
            }),
        }
    }

    /// Accepts proposal `id`: its change applied to the current version is
    /// the next version, which is returned. Refused when the change no
    /// longer applies (another accepted change got there first).
    pub fn accept(&mut self, id: u32, now: DateTime<Utc>) -> Result<Rubric, RubricError> {
        let current = self.current();
        let change = self.pending(id)?.change.clone();
        let criteria = change.apply(&current)?;
        let version = current.version + 1;
        self.pending(id)?.status = ProposalStatus::Accepted { version, at: now };
        self.versions.push(RubricVersion {
            version,
            criteria,
            at: now,
            note: change.describe(),
            proposal: Some(id),
        });
        Ok(self.current())
    }

    /// Rejects proposal `id`.
    pub fn reject(&mut self, id: u32, reason: &str, now: DateTime<Utc>) -> Result<(), RubricError> {
        self.pending(id)?.status = ProposalStatus::Rejected {
            at: now,
            reason: reason.trim().to_owned(),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn at(h: u32) -> DateTime<Utc> {
        DateTime::from_timestamp(1_780_000_000 + i64::from(h) * 3_600, 0).unwrap()
    }

    fn operability() -> RubricChange {
        RubricChange::Add {
            criterion: Criterion::parse("Operability: It can be run, observed and rolled back.")
                .unwrap(),
        }
    }

    #[test]
    fn an_accepted_proposal_is_the_next_version() {
        let mut book = RubricBook::new(DIALECTIC, at(0)).unwrap();
        assert_eq!(book.current().version, 1);
        assert_eq!(book.current().criteria.len(), 7);
        let id = book.propose("d1", "B", 0.82, operability(), at(1)).unwrap();
        // The same change pending is one proposal.
        assert_eq!(book.propose("d2", "B", 0.9, operability(), at(2)), Ok(id));
        assert_eq!(book.proposals.len(), 1);
        let v2 = book.accept(id, at(3)).unwrap();
        assert_eq!(v2.version, 2);
        assert_eq!(v2.criteria.len(), 8);
        assert!(v2.find("operability").is_some());
        assert_eq!(book.version(1).unwrap().criteria.len(), 7);
        assert_eq!(
            book.accept(id, at(4)),
            Err(RubricError::Decided {
                rubric: DIALECTIC.into(),
                id,
                state: "accepted"
            })
        );
        // Now it is there, adding it again does not apply.
        assert!(matches!(
            book.propose("d3", "B", 0.9, operability(), at(5)),
            Err(RubricError::Invalid(_))
        ));
    }

    #[test]
    fn low_trust_and_bad_changes_are_refused() {
        let mut book = RubricBook::new(STRUCTURED, at(0)).unwrap();
        assert!(matches!(
            book.propose("d1", "A", 0.35, operability(), at(1)),
            Err(RubricError::LowTrust { .. })
        ));
        let remove = RubricChange::Remove {
            name: "Charisma".into(),
        };
        let e = book.propose("d1", "B", 0.8, remove, at(1)).unwrap_err();
        assert!(e.to_string().contains("no criterion `Charisma`"), "{e}");
        assert!(Criterion::parse("no colon here").is_err());
        assert!(Criterion::parse(": empty name").is_err());
        assert!(matches!(
            RubricBook::new("poetry", at(0)),
            Err(RubricError::Unknown(_))
        ));
    }

    #[test]
    fn a_rejected_proposal_changes_nothing_and_two_changes_must_both_apply() {
        let mut book = RubricBook::new(STRUCTURED, at(0)).unwrap();
        let reword = RubricChange::Reword {
            criterion: Criterion::new("evidence", "Every number names its source."),
        };
        let remove = RubricChange::Remove {
            name: "Evidence".into(),
        };
        let a = book.propose("d1", "B", 0.8, reword, at(1)).unwrap();
        let b = book.propose("d2", "B", 0.8, remove, at(2)).unwrap();
        book.reject(a, "too strict", at(3)).unwrap();
        assert_eq!(book.current().version, 1);
        let v2 = book.accept(b, at(4)).unwrap();
        assert!(v2.find("Evidence").is_none());
        assert_eq!(
            v2.resolve(&["reasoning".into(), "Evidence".into()]),
            (vec!["Reasoning".to_owned()], vec!["Evidence".to_owned()])
        );
    }
}
