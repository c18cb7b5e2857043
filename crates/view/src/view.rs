//! The one view model of a debate.

use agon_core::{ApplyError, Blackboard, DebateEvent, ProtocolKind};

use crate::metrics::{DebateMetrics, replay_with_metrics};
use crate::sections::{Header, Sections};
use crate::{MemoryStats, ReportOptions, report};

/// A debate as a person reads it: its header, its transcript (the
/// blackboard's messages), its typed [`Sections`] and debate-quality
/// metrics and, for a deliberation, its memory statistics, computed from
/// the event log once. The Markdown report, the page's panels and the
/// terminal lay out these values; none computes a section of its own.
#[derive(Debug, Clone)]
pub struct DebateView {
    header: Header,
    sections: Sections,
    board: Blackboard,
    metrics: DebateMetrics,
    options: ReportOptions,
    origin: Option<ForkOrigin>,
    remembered: Vec<RememberedChange>,
}

/// A persona's position on a subject, remembered from one debate and
/// replaced by its position in a later one (the vector memory's validity:
/// the earlier memory is kept, closed when the later one was recorded).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RememberedChange {
    /// The persona's display name.
    pub persona: String,
    /// What the position is about (the topic's or aspect's words).
    pub subject: String,
    /// The earlier position, as remembered.
    pub before: String,
    /// The debate it was held in.
    pub before_debate: String,
    /// When it stopped holding.
    pub until: chrono::DateTime<chrono::Utc>,
    /// The position that replaced it.
    pub after: String,
    /// The debate that recorded it.
    pub after_debate: String,
}

/// Where a forked debate was copied from (its store record says it; the
/// log of a fork is a prefix of its parent's).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ForkOrigin {
    /// The parent debate.
    pub debate: String,
    /// The last of the parent's events the fork copied.
    pub seq: u64,
}

impl DebateView {
    /// The view of the debate whose log is `events`; an event the log
    /// cannot apply is an error naming it.
    pub fn from_log(events: &[DebateEvent], options: ReportOptions) -> Result<Self, ApplyError> {
        let (board, metrics) = replay_with_metrics(events)?;
        Ok(Self {
            header: Header::of(&board),
            sections: Sections::of(&board, options),
            board,
            metrics,
            options,
            origin: None,
            remembered: Vec::new(),
        })
    }

    /// The same view of a fork: its reports name the parent and the event
    /// it was forked at.
    pub fn with_origin(mut self, origin: ForkOrigin) -> Self {
        self.origin = Some(origin);
        self
    }

    /// The same view with the positions the vector memory holds of this
    /// debate's personas across debates: earlier positions this debate
    /// replaced, and its positions later debates replaced. Its reports
    /// show them under "Positions across debates".
    pub fn with_remembered(mut self, changes: Vec<RememberedChange>) -> Self {
        self.remembered = changes;
        self
    }

    /// The remembered changes of position ([`DebateView::with_remembered`]).
    pub fn remembered(&self) -> &[RememberedChange] {
        &self.remembered
    }

    /// Where the debate was forked from, if it is a fork.
    pub fn origin(&self) -> Option<&ForkOrigin> {
        self.origin.as_ref()
    }

    /// What the debate is and where it stands.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Every section, computed once from the log.
    pub fn sections(&self) -> &Sections {
        &self.sections
    }

    /// The blackboard at the end of the log (the transcript).
    pub fn board(&self) -> &Blackboard {
        &self.board
    }

    /// The debate-quality metrics.
    pub fn metrics(&self) -> &DebateMetrics {
        &self.metrics
    }

    /// The protocol the debate ran.
    pub fn protocol(&self) -> ProtocolKind {
        self.board.protocol()
    }

    /// Seed 002's memory statistics; `None` unless the debate is a
    /// deliberation.
    pub fn memory_stats(&self) -> Option<MemoryStats> {
        (self.protocol() == ProtocolKind::Deliberation).then(|| MemoryStats::of(&self.board))
    }

    /// The Markdown report: the protocol's body, what every debate has
    /// (ledger and claims, warnings, repairs, usage and cost), then the
    /// metrics.
    pub fn markdown(&self) -> String {
        let mut report = report::render(&self.board, &self.header, &self.sections, self.options);
        if let Some(origin) = &self.origin {
            // After the title line.
            let at = report.find('\n').map_or(report.len(), |i| i + 1);
            report.insert_str(
                at,
                &format!(
                    "\n_Forked from debate `{}` at event #{}._\n",
                    origin.debate, origin.seq
                ),
            );
        }
        format!(
            "{report}{}{}",
            remembered_markdown(&self.remembered),
            report::metrics_markdown(&self.metrics)
        )
    }

    /// The JSON report: the sections of [`DebateView::markdown`], each
    /// empty section's reason, and the metrics under `metrics`.
    pub fn json(&self) -> serde_json::Value {
        let mut json = report::json_of(&self.board, &self.sections);
        json["metrics"] = serde_json::to_value(&self.metrics).unwrap_or_default();
        if let Some(origin) = &self.origin {
            json["forked_from"] = serde_json::to_value(origin).unwrap_or_default();
        }
        if !self.remembered.is_empty() {
            json["remembered_changes"] = serde_json::to_value(&self.remembered).unwrap_or_default();
        }
        json
    }

    /// The metrics as a Markdown table (`agon show --metrics`).
    pub fn metrics_markdown(&self) -> String {
        report::metrics_markdown(&self.metrics)
    }
}

/// The "Positions across debates" section (empty without changes): each
/// position quoted, so no text of a model can open a section, and every
/// `<` escaped as the rest of the report's.
fn remembered_markdown(changes: &[RememberedChange]) -> String {
    use std::fmt::Write as _;
    if changes.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "## Positions across debates\n\nFrom the vector memory: a position a later debate \
         replaced is kept, closed when it was replaced.\n\n",
    );
    for c in changes {
        let _ = writeln!(
            s,
            "**{}** on {}: held in debate `{}` until {}:",
            c.persona,
            c.subject,
            c.before_debate,
            c.until.format("%Y-%m-%d")
        );
        report::quoted(&mut s, &c.before);
        let _ = writeln!(s, "\nthen, in debate `{}`:", c.after_debate);
        report::quoted(&mut s, &c.after);
        s.push('\n');
    }
    s.replace('<', "&lt;")
}
