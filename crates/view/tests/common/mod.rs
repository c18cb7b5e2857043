//! The small debate used by these tests: `agon_testkit::synthetic::small`.

pub use agon_testkit::synthetic::small::{message, started, t};
