//! The one view model of a debate.

use agon_core::{ApplyError, Blackboard, DebateEvent, ProtocolKind};

use crate::metrics::{DebateMetrics, replay_with_metrics};
use crate::{MemoryStats, ReportOptions, report};

/// A debate as a person reads it: its blackboard, its debate-quality
/// metrics and, for a deliberation, its memory statistics, computed from
/// the event log in one pass. Every rendering (Markdown, JSON, the
/// metrics table) is a method, so each shows the same sections.
#[derive(Debug, Clone)]
pub struct DebateView {
    board: Blackboard,
    metrics: DebateMetrics,
    options: ReportOptions,
}

impl DebateView {
    /// The view of the debate whose log is `events`; an event the log
    /// cannot apply is an error naming it.
    pub fn from_log(events: &[DebateEvent], options: ReportOptions) -> Result<Self, ApplyError> {
        let (board, metrics) = replay_with_metrics(events)?;
        Ok(Self {
            board,
            metrics,
            options,
        })
    }

    /// The blackboard at the end of the log.
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
        format!(
            "{}{}",
            report::markdown_with(&self.board, self.options),
            report::metrics_markdown(&self.metrics)
        )
    }

    /// The JSON report: the sections of [`DebateView::markdown`], each
    /// empty section's reason, and the metrics under `metrics`.
    pub fn json(&self) -> serde_json::Value {
        let mut json = report::json(&self.board, self.options);
        json["metrics"] = serde_json::to_value(&self.metrics).unwrap_or_default();
        json
    }

    /// The metrics as a Markdown table (`agon show --metrics`).
    pub fn metrics_markdown(&self) -> String {
        report::metrics_markdown(&self.metrics)
    }
}
