//! Agon's cross-crate integration suite: one test binary, one module per area.

mod context_budget;
mod context_phases;
mod fixture;
mod generated;
mod replay;
