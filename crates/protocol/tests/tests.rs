//! agon-protocol's tests: the planners on plain blackboards, driven by a
//! pure simulator with scripted model outputs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod ask;
mod crux;
mod deliberation;
mod dialectic;
mod lookahead;
mod steer;
mod structured;
mod trust_harvest;
