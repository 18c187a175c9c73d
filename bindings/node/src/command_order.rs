//! The order of keys in a result the layer rewrapped, as the
//! `mcp-tool-errors` command writes it, for a client of the addon to read the
//! same bytes as a client of the command.
//!
//! The command writes an answer the layer changed as the server's bytes with
//! only the changed values written anew (its `jsonrpc/splice.rs`): an object
//! with the same keys, or an array of the same length, is walked into, in the
//! server's order; any other value that changed (a rewritten text, a content
//! list the layer added an item to) is serialized by serde_json's map as the
//! command is built, without `preserve_order`: keys sorted, the server's
//! items in that list too. The addon builds with `preserve_order`, so that
//! the server's order is kept where the command keeps it; here, what the
//! command writes anew gets its keys sorted. (The objects the layer creates
//! itself have their keys sorted already, under either map.)

use serde_json::{Map, Value};

/// `new`, what the layer made of the server's `old`, with its keys in the
/// order the command writes them.
pub(crate) fn over_server_value(old: &Value, new: Value) -> Value {
    match (old, new) {
        (Value::Object(old), Value::Object(mut new))
            if old.len() == new.len() && old.keys().all(|key| new.contains_key(key)) =>
        {
            let kept: Map<String, Value> = old
                .iter()
                .map(|(key, old)| {
                    let new = new.remove(key).unwrap_or(Value::Null);
                    (key.clone(), over_server_value(old, new))
                })
                .collect();
            Value::Object(kept)
        }
        (Value::Array(old), Value::Array(new)) if old.len() == new.len() => Value::Array(
            old.iter()
                .zip(new)
                .map(|(old, new)| over_server_value(old, new))
                .collect(),
        ),
        (_, new) => written_anew(new),
    }
}

/// `value`, written anew by the command: every object's keys sorted.
fn written_anew(mut value: Value) -> Value {
    value.sort_all_objects();
    value
}
