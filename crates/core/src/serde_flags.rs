//! serde's defaults and skip tests for fields added to stored events after
//! logs with them existed: one place every event and record type uses.

/// Whether a count is zero (left out of the serialized event).
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// serde's default for flags that were always on before they existed.
pub(crate) fn yes() -> bool {
    true
}

/// Whether a flag is on (serde skips the default).
pub(crate) fn is_true(flag: &bool) -> bool {
    *flag
}
