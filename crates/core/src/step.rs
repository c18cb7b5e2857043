//! Typed identities of turns and steps.
//!
//! Resume depends on recognising what the log already shows as done: a
//! message for a turn, or a recorded failure of a step. Both are named by
//! the types of this module, never by strings built in several places.
//!
//! - [`TurnKey`] names one turn of a protocol (`opening/mara`,
//!   `take/aspect-1/0/mara`, `crux/room-1/3`, `closing/mara`, `synthesis`).
//!   Its text form is stable: it is stored in `step_failed` events.
//! - [`StepId`] names a step that can fail without stopping the debate: an
//!   utterance, an analysis part of a message, a round record, a
//!   reflection, a convergence check, a crux card, the vector memory. A
//!   `step_failed` event carries one; in JSON it is the fields `step`,
//!   `message` and `scope`, as they were before they were typed.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{AspectId, CruxRoomId, MessageId, PersonaId};

/// One turn of a protocol.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TurnKey {
    /// A debater's opening statement.
    Opening {
        /// Who speaks.
        persona: PersonaId,
    },
    /// A debater's take on an aspect in a miniround.
    Take {
        /// The aspect.
        aspect: AspectId,
        /// The miniround (0-based).
        miniround: u32,
        /// Who speaks.
        persona: PersonaId,
    },
    /// Turn `turn` (0-based; position statements are 0 and 1) of a crux room.
    Crux {
        /// The room.
        room: CruxRoomId,
        /// The turn number in the room.
        turn: u32,
    },
    /// A debater's closing statement.
    Closing {
        /// Who speaks.
        persona: PersonaId,
    },
    /// The judge's synthesis.
    Synthesis,
    /// An agent's proposal in a dialectic round.
    Proposal {
        /// The round (1-based).
        round: u32,
        /// Who proposes.
        persona: PersonaId,
    },
    /// An agent's critique of another agent's proposal in a dialectic round.
    Critique {
        /// The round (1-based).
        round: u32,
        /// Whose proposal is critiqued (an id without `/`).
        target: PersonaId,
        /// Who critiques.
        persona: PersonaId,
    },
    /// An agent's refinement of its own proposal in a dialectic round.
    Refinement {
        /// The round (1-based).
        round: u32,
        /// Who refines.
        persona: PersonaId,
    },
    /// Turn `turn` (1-based) of a deliberation session (`turn/12`); who
    /// speaks is the protocol's pick, recorded with the message.
    Turn {
        /// The turn.
        turn: u32,
    },
}

impl fmt::Display for TurnKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Opening { persona } => write!(f, "opening/{persona}"),
            Self::Take {
                aspect,
                miniround,
                persona,
            } => write!(f, "take/{aspect}/{miniround}/{persona}"),
            Self::Crux { room, turn } => write!(f, "crux/{room}/{turn}"),
            Self::Closing { persona } => write!(f, "closing/{persona}"),
            Self::Synthesis => f.write_str("synthesis"),
            Self::Proposal { round, persona } => write!(f, "proposal/{round}/{persona}"),
            Self::Critique {
                round,
                target,
                persona,
            } => write!(f, "critique/{round}/{target}/{persona}"),
            Self::Refinement { round, persona } => write!(f, "refinement/{round}/{persona}"),
            Self::Turn { turn } => write!(f, "turn/{turn}"),
        }
    }
}

/// A turn key's text that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a turn key ({reason})")]
pub struct TurnKeyError {
    /// The text.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl FromStr for TurnKey {
    type Err = TurnKeyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = |reason| TurnKeyError {
            text: text.to_owned(),
            reason,
        };
        let nonempty = |s: &str, reason| {
            if s.is_empty() {
                Err(err(reason))
            } else {
                Ok(s.to_owned())
            }
        };
        if text == "synthesis" {
            return Ok(Self::Synthesis);
        }
        let (kind, rest) = text.split_once('/').ok_or_else(|| err("no `/`"))?;
        match kind {
            "opening" => Ok(Self::Opening {
                persona: PersonaId::new(nonempty(rest, "empty persona")?),
            }),
            "closing" => Ok(Self::Closing {
                persona: PersonaId::new(nonempty(rest, "empty persona")?),
            }),
            "take" => {
                let mut parts = rest.splitn(3, '/');
                let aspect = nonempty(parts.next().unwrap_or_default(), "empty aspect")?;
                let miniround = parts
                    .next()
                    .and_then(|m| m.parse().ok())
                    .ok_or_else(|| err("miniround is not a number"))?;
                let persona = nonempty(parts.next().unwrap_or_default(), "empty persona")?;
                Ok(Self::Take {
                    aspect: AspectId::new(aspect),
                    miniround,
                    persona: PersonaId::new(persona),
                })
            }
            "proposal" | "refinement" => {
                let (round, persona) = rest.split_once('/').ok_or_else(|| err("no persona"))?;
                let round = round.parse().map_err(|_| err("round is not a number"))?;
                let persona = PersonaId::new(nonempty(persona, "empty persona")?);
                Ok(if kind == "proposal" {
                    Self::Proposal { round, persona }
                } else {
                    Self::Refinement { round, persona }
                })
            }
            "critique" => {
                let mut parts = rest.splitn(3, '/');
                let round = parts
                    .next()
                    .and_then(|r| r.parse().ok())
                    .ok_or_else(|| err("round is not a number"))?;
                let target = nonempty(parts.next().unwrap_or_default(), "empty target")?;
                let persona = nonempty(parts.next().unwrap_or_default(), "empty persona")?;
                Ok(Self::Critique {
                    round,
                    target: PersonaId::new(target),
                    persona: PersonaId::new(persona),
                })
            }
            "turn" => Ok(Self::Turn {
                turn: rest.parse().map_err(|_| err("turn is not a number"))?,
            }),
            "crux" => {
                let (room, turn) = rest.rsplit_once('/').ok_or_else(|| err("no turn number"))?;
                Ok(Self::Crux {
                    room: CruxRoomId::new(nonempty(room, "empty room")?),
                    turn: turn.parse().map_err(|_| err("turn is not a number"))?,
                })
            }
            _ => Err(err("unknown turn kind")),
        }
    }
}

impl Serialize for TurnKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TurnKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Which part of a message's analysis failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnalysisPart {
    /// Position extraction and disagreement judgement in one call.
    Combined,
    /// Position extraction alone.
    Position,
    /// Disagreement detection by a separate detector.
    Disagreement,
}

/// A step that can fail without stopping the debate, as named in
/// `step_failed` events and [`crate::StepWarning`]s.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StepId {
    /// A turn's utterance (skipped after two empty answers).
    Utterance(TurnKey),
    /// A part of the analysis of a message.
    Analysis {
        /// The message analysed.
        message: MessageId,
        /// Which part failed.
        part: AnalysisPart,
    },
    /// The round record of an aspect.
    RoundRecord(AspectId),
    /// The reflection after an aspect.
    Reflection(AspectId),
    /// A convergence check in a crux room.
    ConvergenceCheck(CruxRoomId),
    /// The crux card of a room.
    CruxCard(CruxRoomId),
    /// Setting up the vector memory for a run.
    MemorySetup,
    /// Harvesting or storing memories.
    MemoryStore,
    /// Recalling memories for a turn's context.
    MemoryRecall(TurnKey),
    /// A perspective summary (of a persona, or the judge's) for a round.
    Summary {
        /// Whose summary: a persona's id, or `None` for the judge's.
        persona: Option<PersonaId>,
        /// The round it was for.
        round: u32,
    },
    /// A persona's clarifying questions before the first round.
    Clarification(PersonaId),
    /// The judge's structured solution after a round (a plain-text
    /// synthesis replaced it).
    Solution(u32),
    /// Casting the debaters for the topic (topic-neutral personas
    /// replaced the cast).
    PersonaCast,
    /// Planning the debate's aspects with the judge's model.
    AspectPlan,
    /// Reading the problem's requirements with the analysis model (the
    /// keyword inference replaced it).
    Requirements,
    /// Recording the debate in its agents' trust memory.
    TrustMemory,
    /// A deliberation's rolling summary, attempted when the transcript had
    /// `at` messages.
    RollingSummary {
        /// Messages in the transcript when it was attempted.
        at: usize,
    },
    /// The analysis model's reading of a batch of deliberation messages
    /// for decisions, proposals and reactions (named by its first message).
    Detection(MessageId),
    /// One listening agent's evaluation before deliberation turn `turn`.
    Listen {
        /// The turn.
        turn: u32,
        /// Who was asked.
        persona: PersonaId,
    },
}

impl StepId {
    /// The step's name as stored (`utterance`, `turn_analysis`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Utterance(_) => "utterance",
            Self::Analysis { part, .. } => match part {
                AnalysisPart::Combined => "turn_analysis",
                AnalysisPart::Position => "position_extraction",
                AnalysisPart::Disagreement => "disagreement_detection",
            },
            Self::RoundRecord(_) => "round_record",
            Self::Reflection(_) => "reflection",
            Self::ConvergenceCheck(_) => "convergence_check",
            Self::CruxCard(_) => "crux_card",
            Self::MemorySetup | Self::MemoryStore => "memory",
            Self::MemoryRecall(_) => "memory_recall",
            Self::Summary { .. } => "summary",
            Self::Clarification(_) => "clarification",
            Self::Solution(_) => "solution",
            Self::PersonaCast => "persona_cast",
            Self::AspectPlan => "aspect_plan",
            Self::Requirements => "requirements",
            Self::TrustMemory => "trust_memory",
            Self::RollingSummary { .. } => "rolling_summary",
            Self::Listen { .. } => "listen",
            Self::Detection(_) => "deliberation_detection",
        }
    }

    /// The message the step was about, if any.
    pub fn message(&self) -> Option<&MessageId> {
        match self {
            Self::Analysis { message, .. } | Self::Detection(message) => Some(message),
            _ => None,
        }
    }

    /// What else the step was about, as stored (a turn key, an aspect or
    /// room id, `setup`), if anything.
    pub fn scope(&self) -> Option<String> {
        match self {
            Self::Utterance(key) | Self::MemoryRecall(key) => Some(key.to_string()),
            Self::RoundRecord(aspect) | Self::Reflection(aspect) => Some(aspect.to_string()),
            Self::ConvergenceCheck(room) | Self::CruxCard(room) => Some(room.to_string()),
            Self::MemorySetup => Some("setup".into()),
            Self::Summary {
                persona: Some(p),
                round,
            } => Some(format!("{round}/{p}")),
            Self::Summary {
                persona: None,
                round,
            } => Some(format!("{round}/judge")),
            Self::Clarification(p) => Some(p.to_string()),
            Self::Solution(round) => Some(round.to_string()),
            Self::RollingSummary { at } => Some(at.to_string()),
            Self::Listen { turn, persona } => Some(format!("{turn}/{persona}")),
            Self::Analysis { .. }
            | Self::Detection(_)
            | Self::MemoryStore
            | Self::PersonaCast
            | Self::AspectPlan
            | Self::Requirements
            | Self::TrustMemory => None,
        }
    }
}

impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match (self.message(), self.scope()) {
            (Some(m), _) => write!(f, " ({m})"),
            (None, Some(s)) => write!(f, " ({s})"),
            (None, None) => Ok(()),
        }
    }
}

/// The stored form of a [`StepId`]: the fields `step`, `message`, `scope`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "StepId")]
struct StoredStep {
    /// Which step (`utterance`, `turn_analysis`, `position_extraction`,
    /// `disagreement_detection`, `round_record`, `reflection`,
    /// `convergence_check`, `crux_card`, `memory`, `memory_recall`, `summary`,
    /// `clarification`, `solution`, `persona_cast`, `aspect_plan`, `requirements`,
    /// `trust_memory`, `rolling_summary`, `listen`,
    /// `deliberation_detection`).
    step: String,
    /// The message the step was about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<MessageId>,
    /// What else the step was about (a turn key, an aspect or room id,
    /// `setup`), if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
}

/// A stored step that names no known step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("step_failed: {0}")]
pub struct StepIdError(String);

impl TryFrom<StoredStep> for StepId {
    type Error = StepIdError;

    fn try_from(s: StoredStep) -> Result<Self, Self::Error> {
        let missing = |what: &str| StepIdError(format!("step `{}` needs a {what}", s.step));
        let scope = || s.scope.clone().ok_or_else(|| missing("scope"));
        let turn = || {
            scope()?
                .parse::<TurnKey>()
                .map_err(|e| StepIdError(e.to_string()))
        };
        let analysis = |part| {
            Ok(Self::Analysis {
                message: s.message.clone().ok_or_else(|| missing("message"))?,
                part,
            })
        };
        match s.step.as_str() {
            "utterance" => Ok(Self::Utterance(turn()?)),
            "memory_recall" => Ok(Self::MemoryRecall(turn()?)),
            "persona_cast" => Ok(Self::PersonaCast),
            "aspect_plan" => Ok(Self::AspectPlan),
            "requirements" => Ok(Self::Requirements),
            "trust_memory" => Ok(Self::TrustMemory),
            "turn_analysis" => analysis(AnalysisPart::Combined),
            "position_extraction" => analysis(AnalysisPart::Position),
            "disagreement_detection" => analysis(AnalysisPart::Disagreement),
            "round_record" => Ok(Self::RoundRecord(AspectId::new(scope()?))),
            "reflection" => Ok(Self::Reflection(AspectId::new(scope()?))),
            "convergence_check" => Ok(Self::ConvergenceCheck(CruxRoomId::new(scope()?))),
            "crux_card" => Ok(Self::CruxCard(CruxRoomId::new(scope()?))),
            "memory" => match s.scope.as_deref() {
                Some("setup") => Ok(Self::MemorySetup),
                None => Ok(Self::MemoryStore),
                Some(other) => Err(StepIdError(format!("unknown memory scope `{other}`"))),
            },
            "summary" => {
                let text = scope()?;
                let (round, who) = text
                    .split_once('/')
                    .ok_or_else(|| StepIdError(format!("summary scope `{text}` has no `/`")))?;
                let round = round
                    .parse()
                    .map_err(|_| StepIdError(format!("summary scope `{text}`: bad round")))?;
                Ok(Self::Summary {
                    persona: (who != "judge").then(|| PersonaId::new(who)),
                    round,
                })
            }
            "clarification" => Ok(Self::Clarification(PersonaId::new(scope()?))),
            "deliberation_detection" => Ok(Self::Detection(
                s.message.clone().ok_or_else(|| missing("message"))?,
            )),
            "rolling_summary" => {
                let text = scope()?;
                Ok(Self::RollingSummary {
                    at: text.parse().map_err(|_| {
                        StepIdError(format!("rolling_summary scope `{text}` is not a count"))
                    })?,
                })
            }
            "listen" => {
                let text = scope()?;
                let bad = || StepIdError(format!("listen scope `{text}` is not TURN/PERSONA"));
                let (turn, persona) = text.split_once('/').ok_or_else(bad)?;
                Ok(Self::Listen {
                    turn: turn.parse().map_err(|_| bad())?,
                    persona: PersonaId::new(persona),
                })
            }
            "solution" => {
                let text = scope()?;
                Ok(Self::Solution(text.parse().map_err(|_| {
                    StepIdError(format!("solution scope `{text}` is not a round"))
                })?))
            }
            other => Err(StepIdError(format!("unknown step `{other}`"))),
        }
    }
}

impl From<&StepId> for StoredStep {
    fn from(id: &StepId) -> Self {
        Self {
            step: id.name().to_owned(),
            message: id.message().cloned(),
            scope: id.scope(),
        }
    }
}

impl Serialize for StepId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StoredStep::from(self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for StepId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        StoredStep::deserialize(d)?
            .try_into()
            .map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for StepId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        StoredStep::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        StoredStep::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn turn_keys_round_trip_through_their_text() {
        let keys = [
            TurnKey::Opening {
                persona: "mara".into(),
            },
            TurnKey::Take {
                aspect: "aspect-1".into(),
                miniround: 2,
                persona: "a/b".into(),
            },
            TurnKey::Crux {
                room: "room-1".into(),
                turn: 3,
            },
            TurnKey::Closing {
                persona: "theo".into(),
            },
            TurnKey::Synthesis,
            TurnKey::Proposal {
                round: 2,
                persona: "arch".into(),
            },
            TurnKey::Critique {
                round: 1,
                target: "perf".into(),
                persona: "a/rch".into(),
            },
            TurnKey::Refinement {
                round: 3,
                persona: "kiss".into(),
            },
        ];
        let texts: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "opening/mara",
                "take/aspect-1/2/a/b",
                "crux/room-1/3",
                "closing/theo",
                "synthesis",
                "proposal/2/arch",
                "critique/1/perf/a/rch",
                "refinement/3/kiss",
            ]
        );
        for (key, text) in keys.iter().zip(&texts) {
            assert_eq!(&text.parse::<TurnKey>().unwrap(), key);
        }
        for bad in [
            "",
            "take/a/x/p",
            "crux/room-1",
            "opening/",
            "vote/x",
            "proposal/x/a",
            "critique/1/perf",
            "refinement/2/",
        ] {
            assert!(bad.parse::<TurnKey>().is_err(), "{bad}");
        }
    }

    #[test]
    fn step_ids_are_stored_as_step_message_and_scope() {
        let cases = [
            (
                StepId::Utterance(TurnKey::Synthesis),
                serde_json::json!({"step": "utterance", "scope": "synthesis"}),
            ),
            (
                StepId::Analysis {
                    message: "msg-3".into(),
                    part: AnalysisPart::Disagreement,
                },
                serde_json::json!({"step": "disagreement_detection", "message": "msg-3"}),
            ),
            (
                StepId::RoundRecord("aspect-2".into()),
                serde_json::json!({"step": "round_record", "scope": "aspect-2"}),
            ),
            (
                StepId::MemorySetup,
                serde_json::json!({"step": "memory", "scope": "setup"}),
            ),
            (StepId::MemoryStore, serde_json::json!({"step": "memory"})),
            (
                StepId::TrustMemory,
                serde_json::json!({"step": "trust_memory"}),
            ),
            (
                StepId::Summary {
                    persona: Some("arch".into()),
                    round: 2,
                },
                serde_json::json!({"step": "summary", "scope": "2/arch"}),
            ),
            (
                StepId::Summary {
                    persona: None,
                    round: 3,
                },
                serde_json::json!({"step": "summary", "scope": "3/judge"}),
            ),
            (
                StepId::Clarification("kiss".into()),
                serde_json::json!({"step": "clarification", "scope": "kiss"}),
            ),
            (
                StepId::Solution(4),
                serde_json::json!({"step": "solution", "scope": "4"}),
            ),
        ];
        for (id, json) in cases {
            assert_eq!(serde_json::to_value(&id).unwrap(), json);
            assert_eq!(serde_json::from_value::<StepId>(json).unwrap(), id);
        }
        let err =
            serde_json::from_value::<StepId>(serde_json::json!({"step": "probe"})).unwrap_err();
        assert!(err.to_string().contains("unknown step `probe`"), "{err}");
        let err = serde_json::from_value::<StepId>(serde_json::json!({"step": "turn_analysis"}))
            .unwrap_err();
        assert!(err.to_string().contains("needs a message"), "{err}");
    }
}
