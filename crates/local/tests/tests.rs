//! agon-local's integration tests on the real model files (fetched by
//! `cargo xtask models`, which `cargo xtask test` runs first): one test
//! binary, one module per backend.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod llama_cpp;
mod local;
mod local_chat;
mod support;
