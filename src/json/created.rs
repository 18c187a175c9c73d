//! The objects the layer creates itself (its own answers, the text item it
//! adds to an error without text), and the one rule for their keys: each
//! object is made with its keys in the order a sorted map writes them
//! (`content` before `isError`; `error` or `id` before `jsonrpc` before
//! `result`; `code` before `message`; `text` before `type`).
//!
//! serde_json's `Map` sorts its keys, unless its `preserve_order` feature is
//! on anywhere in the build: then it keeps them in the order they were
//! inserted. A program built with it (to keep a server's key order, as a
//! language binding does) and one built without it (the `mcp-tool-errors`
//! command) would otherwise write the layer's own answers in two orders.
//! Inserted sorted, they are the same bytes under either map. What the
//! server wrote keeps its own order, whichever map the build has.

use serde_json::{Map, Value};

/// An object the layer creates, from `entries` in the order a sorted map
/// writes them (checked in debug builds, and by the tests under
/// `preserve_order`).
pub(super) fn created_object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    debug_assert!(
        entries.is_sorted_by(|(a, _), (b, _)| a < b),
        "the keys of an object the layer creates are inserted sorted"
    );
    let mut object = Map::with_capacity(N);
    for (key, value) in entries {
        object.insert(key.to_owned(), value);
    }
    Value::Object(object)
}
