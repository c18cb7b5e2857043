//! agon-memory's integration tests: one test binary, one module per area.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod corpus;
mod first_use;
mod index;
mod recall;
mod validity;
