//! The small debate used by these tests: `agon_testkit::synthetic::small`.

pub use agon_testkit::synthetic::small::{message, started, t};

/// The small debate after two takes on `safety`.
pub fn board() -> agon_core::Blackboard {
    agon_core::Blackboard::replay(&agon_testkit::synthetic::small::log()).unwrap()
}
