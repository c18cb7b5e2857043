//! The small debate used by these tests: `agon_core::synthetic::small`.

pub use agon_core::synthetic::small::{message, started, t};
