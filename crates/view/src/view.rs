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
        })
    }

    /// The same view of a fork: its reports name the parent and the event
    /// it was forked at.
    pub fn with_origin(mut self, origin: ForkOrigin) -> Self {
        self.origin = Some(origin);
        self
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
        format!("{report}{}", report::metrics_markdown(&self.metrics))
    }

    /// The JSON report: the sections of [`DebateView::markdown`], each
    /// empty section's reason, and the metrics under `metrics`.
    pub fn json(&self) -> serde_json::Value {
        let mut json = report::json_of(&self.board, &self.sections);
        json["metrics"] = serde_json::to_value(&self.metrics).unwrap_or_default();
        if let Some(origin) = &self.origin {
            json["forked_from"] = serde_json::to_value(origin).unwrap_or_default();
        }
        json
    }

    /// The metrics as a Markdown table (`agon show --metrics`).
    pub fn metrics_markdown(&self) -> String {
        report::metrics_markdown(&self.metrics)
    }
}
