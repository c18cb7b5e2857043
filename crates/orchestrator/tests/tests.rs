//! agon-orchestrator's integration tests: one test binary, one module per area.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod budget;
mod debate;
mod deliberation;
mod dialectic;
mod errors;
mod evidence;
#[path = "../benches/support/evidence.rs"]
mod evidence_bench;
mod faults;
mod headline;
mod hostile;
mod load;
mod local;
mod mcp;
mod memory;
#[path = "../benches/support/prefix.rs"]
mod prefix;
mod scenario;
mod steer;
mod support;
mod trust;
mod views;
