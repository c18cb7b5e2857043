//! What recent recalls computed, kept so that a recall done ahead of its
//! turn (while the turn before it waits on its model) costs its turn
//! nothing: a recall looks up its result, then its query's embedding,
//! before it searches or embeds. Bounded: the oldest entry gives way first.

use std::collections::VecDeque;
use std::sync::Mutex;

/// A small map of the most recent entries, the oldest given up first.
#[derive(Debug)]
pub(crate) struct Recent<V> {
    capacity: usize,
    entries: Mutex<VecDeque<(String, V)>>,
}

impl<V: Clone> Recent<V> {
    /// A map keeping at most `capacity` entries.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::new(VecDeque::new()),
        }
    }

    /// The value kept for `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<V> {
        let entries = self.entries.lock().ok()?;
        entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// Keeps `value` for `key`, replacing what was kept for it.
    pub(crate) fn put(&self, key: &str, value: V) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        entries.retain(|(k, _)| k != key);
        if entries.len() >= self.capacity {
            entries.pop_front();
        }
        entries.push_back((key.to_owned(), value));
    }

    /// The value kept for `key`, or `make()` kept for it now (under one
    /// lock: two callers asking at once get the same value).
    pub(crate) fn get_or_insert_with(&self, key: &str, make: impl FnOnce() -> V) -> V {
        let Ok(mut entries) = self.entries.lock() else {
            return make();
        };
        if let Some((_, v)) = entries.iter().rev().find(|(k, _)| k == key) {
            return v.clone();
        }
        if entries.len() >= self.capacity {
            entries.pop_front();
        }
        let value = make();
        entries.push_back((key.to_owned(), value.clone()));
        value
    }

    /// Removes and returns the value kept for `key`, if any.
    pub(crate) fn take(&self, key: &str) -> Option<V> {
        let mut entries = self.entries.lock().ok()?;
        let at = entries.iter().position(|(k, _)| k == key)?;
        entries.remove(at).map(|(_, v)| v)
    }

    /// Every value kept, oldest first.
    pub(crate) fn values(&self) -> Vec<V> {
        self.entries
            .lock()
            .map(|entries| entries.iter().map(|(_, v)| v.clone()).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_kept_entry_is_found_replaced_and_the_oldest_gives_way() {
        let recent = Recent::new(3);
        recent.put("first", 1);
        assert_eq!(recent.get("first"), Some(1));
        assert_eq!(recent.get("other"), None);
        recent.put("first", 2);
        assert_eq!(recent.get("first"), Some(2), "replaced");
        for (i, key) in ["a", "b", "c"].iter().enumerate() {
            recent.put(key, i);
        }
        assert_eq!(recent.get("first"), None, "the oldest gave way");
        assert_eq!(recent.get("a"), Some(0));
        assert_eq!(recent.get("c"), Some(2));
        assert_eq!(recent.get_or_insert_with("c", || 9), 2, "kept");
        assert_eq!(recent.get_or_insert_with("d", || 9), 9, "made and kept");
        assert_eq!(recent.get("d"), Some(9));
        assert_eq!(recent.get("a"), None, "the oldest gave way to it");
    }

    #[test]
    fn a_taken_entry_is_gone_and_the_rest_stay_in_order() {
        let recent = Recent::new(3);
        for (i, key) in ["a", "b", "c"].iter().enumerate() {
            recent.put(key, i);
        }
        assert_eq!(recent.take("b"), Some(1));
        assert_eq!(recent.take("b"), None, "taken once");
        assert_eq!(recent.values(), vec![0, 2]);
    }
}
