//! The ids of requests given up (timed out at the wrapper, or cancelled by the
//! client), remembered so that the child's late answers to them are dropped,
//! and a client's cancellation of one is not sent twice.
//!
//! Remembered only as long as needed, with a bound: an id is forgotten when the
//! client reuses it, or when [`REMEMBERED`] newer ids were given up since (a
//! late answer does not end it: the client may still cancel the request). Each
//! id is held as a 64-bit
//! hash, so a long id costs what a short one does: memory stays bounded under
//! any traffic. The table is asked only about ids that are not in flight, so a
//! hash collision can cost no answer the client awaits; at worst a response
//! to an unknown id is dropped rather than forwarded. A late answer to an id
//! forgotten by the bound reaches the client as a response to an id it does not
//! know, which JSON-RPC clients ignore.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};

use mcp_tool_errors::JsonRpcId;

/// How many given-up ids are remembered at most.
pub(crate) const REMEMBERED: usize = 4096;

/// The given-up ids, oldest first.
#[derive(Debug, Default)]
pub(crate) struct GivenUp {
    /// Each remembered id's hash, with the number of its entry in `order`.
    remembered: HashMap<u64, u64>,
    /// Hashes in the order they were given up, with their entry numbers; an
    /// entry whose id was forgotten, or given up again since, is stale.
    order: VecDeque<(u64, u64)>,
    next_entry: u64,
    hasher: RandomState,
}

impl GivenUp {
    /// Remembers `id`, forgetting the oldest when the bound is reached.
    pub(crate) fn remember(&mut self, id: &JsonRpcId) {
        let hash = self.hasher.hash_one(id);
        let entry = self.next_entry;
        self.next_entry += 1;
        self.remembered.insert(hash, entry);
        self.order.push_back((hash, entry));
        // Stale entries count too, so the queue is bounded as well as the map.
        while self.order.len() > REMEMBERED {
            let (hash, entry) = self.order.pop_front().expect("the queue is not empty");
            if self.remembered.get(&hash) == Some(&entry) {
                self.remembered.remove(&hash);
            }
        }
    }

    /// Whether `id` is remembered.
    pub(crate) fn contains(&self, id: &JsonRpcId) -> bool {
        // Nearly always empty: no hash computed then.
        !self.remembered.is_empty() && self.remembered.contains_key(&self.hasher.hash_one(id))
    }

    /// Forgets `id`; returns whether it was remembered.
    pub(crate) fn forget(&mut self, id: &JsonRpcId) -> bool {
        !self.remembered.is_empty() && self.remembered.remove(&self.hasher.hash_one(id)).is_some()
    }

    /// How many ids are remembered, and how many entries the queue holds.
    #[cfg(test)]
    pub(crate) fn sizes(&self) -> (usize, usize) {
        (self.remembered.len(), self.order.len())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn id(value: serde_json::Value) -> JsonRpcId {
        JsonRpcId::new(&value)
    }

    #[test]
    fn an_id_is_remembered_until_forgotten_or_pushed_out_by_newer_ones() {
        let mut given_up = GivenUp::default();
        let first = id(json!(0));
        given_up.remember(&first);
        assert!(given_up.contains(&first));
        for n in 1..REMEMBERED {
            given_up.remember(&id(json!(n)));
        }
        assert!(given_up.contains(&first));
        given_up.remember(&id(json!(REMEMBERED)));
        assert!(!given_up.contains(&first));
        assert!(given_up.forget(&id(json!(1))));
        assert!(!given_up.forget(&id(json!(1))));
    }

    #[test]
    fn an_id_given_up_again_is_not_pushed_out_by_its_older_entry() {
        let mut given_up = GivenUp::default();
        let again = id(json!("again"));
        given_up.remember(&again);
        given_up.remember(&again);
        for n in 0..REMEMBERED - 1 {
            given_up.remember(&id(json!(n)));
        }
        assert!(given_up.contains(&again));
    }
}
