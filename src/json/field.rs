//! Looking up a field of a JSON-RPC object, which has a handful of keys.

use serde_json::{Map, Value};

/// Objects up to this many keys are searched in order: comparing a few short keys
/// costs less than hashing the one looked for (serde_json's ordered map hashes
/// with SipHash). Larger objects use the map's own lookup.
const SCAN_UP_TO: usize = 8;

/// `object[key]`, if present.
pub(super) fn field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if object.len() <= SCAN_UP_TO {
        object.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        object.get(key)
    }
}

/// `object[key]`, mutably, if present.
pub(super) fn field_mut<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Value> {
    if object.len() <= SCAN_UP_TO {
        object.iter_mut().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        object.get_mut(key)
    }
}

/// The string `object[key]`, if present and a string.
pub(super) fn str_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    field(object, key).and_then(Value::as_str)
}
