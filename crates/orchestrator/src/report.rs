//! Markdown reports.
