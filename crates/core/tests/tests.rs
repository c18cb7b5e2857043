//! agon-core's integration tests: one test binary, one module per area.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod apply;
mod common;
