//! agon-view's integration tests: one test binary, one module per area.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
mod formats;
mod metrics;
mod view;
