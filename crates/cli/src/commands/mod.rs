//! The commands, a file per group: each takes what clap parsed, calls a
//! use case of the application (or reads the store) and renders the
//! result. `main.rs` only dispatches.

pub(crate) mod debate;
pub(crate) mod fork;
pub(crate) mod list;
pub(crate) mod read;
pub(crate) mod steer;
pub(crate) mod upkeep;
