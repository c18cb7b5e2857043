//! Agon's cross-crate integration suite: one test binary, one module per area.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod context_budget;
mod context_phases;
mod fixture;
mod generated;
mod long_state;
mod prompts;
mod replay;
mod tidy;
mod tidy_map;
