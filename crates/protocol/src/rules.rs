//! The rules a protocol runs by: the parts of a debate's configuration that
//! decide which steps come next.

use agon_core::ReflectionTrigger;

use crate::claim_detector::ClaimDetector;
use serde::{Deserialize, Serialize};

use crate::turn::Start;

/// How each message's disagreements are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DetectionMode {
    /// One call per message extracts the position and judges the window
    /// (default: half the calls).
    #[default]
    Combined,
    /// A separate detector call judges the window.
    Separate,
    /// No disagreement judgement; claims come only from promotion.
    Off,
}

/// When the messages of a structured debate are analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisCadence {
    /// One call per group of turns once the group is complete: the
    /// openings, each miniround's takes, each crux room, the closings
    /// (default: the system prompt and schema are sent once per group, not
    /// once per message). The group's disagreements are judged once, as one
    /// window.
    #[default]
    Miniround,
    /// One call per message, as soon as it is appended.
    Message,
}

/// Crux rooms: whether they run, how long, how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CruxRules {
    /// Whether contested claims go to crux rooms (default true).
    pub enabled: bool,
    /// Exchange turns after the two position statements (default 8).
    pub max_turns: u32,
    /// Check convergence after every this many exchange turns (default 4;
    /// 0 = never check, run all turns).
    pub check_every: u32,
    /// Rooms per debate at most (default 3).
    pub max_rooms: u32,
    /// Rooms per debate at least: when fewer claims opened, the strongest
    /// judged disagreements are promoted (default 0).
    pub min_rooms: u32,
}

impl Default for CruxRules {
    fn default() -> Self {
        Self {
            enabled: true,
            max_turns: 8,
            check_every: 4,
            max_rooms: 3,
            min_rooms: 0,
        }
    }
}

/// Disagreement detection: how messages are analysed and when claims open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetectionRules {
    /// Combined, separate or off.
    pub mode: DetectionMode,
    /// Messages in each judged window.
    pub window: usize,
    /// The claim-opening rule.
    pub detector: ClaimDetector,
}

impl Default for DetectionRules {
    fn default() -> Self {
        Self {
            mode: DetectionMode::Combined,
            window: 10,
            detector: ClaimDetector::default(),
        }
    }
}

/// The rules of a structured debate (seed 000).
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredRules {
    /// Topic, personas and aspects of the start event.
    pub start: Start,
    /// Minirounds per aspect.
    pub minirounds: u32,
    /// Crux rooms.
    pub crux: CruxRules,
    /// Whether the judge writes a synthesis at the end.
    pub synthesis: bool,
    /// Disagreement detection.
    pub detection: DetectionRules,
    /// When messages are analysed.
    pub analysis: AnalysisCadence,
    /// When reflections are written.
    pub reflection: ReflectionTrigger,
    /// One challenger per aspect, drawn from the agents' trust memory
    /// before the aspect's replies (miniround 1 on): its replies argue
    /// against the aspect's strongest position (seed 003).
    pub challenger: bool,
}

/// Where decisions, proposals and reactions are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DetectionSource {
    /// The patterns, as each message is appended (default).
    #[default]
    Patterns,
    /// The analysis model, in batches in the background.
    Model,
    /// Both: the patterns at once, the model later for what they missed.
    Both,
}

impl DetectionSource {
    /// Whether the patterns run.
    pub fn patterns(self) -> bool {
        matches!(self, Self::Patterns | Self::Both)
    }

    /// Whether the analysis model runs.
    pub fn model(self) -> bool {
        matches!(self, Self::Model | Self::Both)
    }
}
