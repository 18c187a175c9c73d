//! [`JsonRpcId`]: a JSON-RPC request id as a key, compared as the layer
//! compares the id of an answer with the id of its request.
//!
//! A proxy that matches a server's answers to its clients' requests meets
//! ids written back in another spelling: the TypeScript SDK parses a
//! request's id as a number and writes `9` for a request sent as `9.0`, `100`
//! for `1e2` and `0` for `-0` (its `server-everything`, seen on 2026-12-05). JSON-RPC compares ids as values, so those are one id; a
//! map keyed by the id's JSON text, or by [`serde_json::Value`]'s equality
//! (`9` is not `9.0` there), loses the answer. `JsonRpcId` is the layer's own
//! rule made a key: hash it, put it in a `HashMap`, compare it.
//!
//! ```
//! use mcp_tool_errors::JsonRpcId;
//! use serde_json::json;
//!
//! let sent = JsonRpcId::new(&json!(9.0));
//! assert_eq!(sent, JsonRpcId::new(&json!(9)));
//! assert_eq!(JsonRpcId::new(&json!(-0.0)), JsonRpcId::new(&json!(0)));
//! assert_ne!(sent, JsonRpcId::new(&json!("9")), "a number is never a string");
//! assert_eq!(sent.to_string(), "9.0", "shown as it was written");
//! ```

use std::fmt;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use crate::model::request_id::{IdKey, RequestId};

/// A JSON-RPC request id, equal to another exactly when JSON-RPC takes them
/// for the same id: numbers by their value (`9`, `9.0` and `9e0` are one id,
/// and so are `-0` and `0`), strings as strings (`1` is not `"1"`), `null` as
/// itself. A value that is not a valid id (an object, an array, a boolean) is
/// kept and compared as JSON, so that an answer can still echo it.
///
/// The rule is the layer's: an answer the layer matches to its request is
/// matched by this key too, and no other.
#[derive(Clone)]
pub struct JsonRpcId(RequestId);

impl JsonRpcId {
    /// The id `value` as a key.
    pub fn new(value: &Value) -> Self {
        Self(RequestId::from_value(value))
    }

    /// Whether the ids `a` and `b` are one id by this rule: what comparing
    /// their keys says, without making either key (no allocation), for a
    /// proxy that compares an answer's id with a request's on every message.
    ///
    /// ```
    /// use mcp_tool_errors::JsonRpcId;
    /// use serde_json::json;
    ///
    /// assert!(JsonRpcId::same(&json!(1e2), &json!(100)));
    /// assert!(!JsonRpcId::same(&json!(1), &json!("1")));
    /// ```
    pub fn same(a: &Value, b: &Value) -> bool {
        IdKey::json(a) == IdKey::json(b)
    }

    /// The message of the JSON-RPC error (`-32600`, invalid request) that
    /// refuses a request with this id while it is in use: a request sent
    /// before it with the same id (by this rule) is not answered yet, or one
    /// earlier in the same batch holds it. The server's answers to the two
    /// would carry one id, and no one could tell which answers which. The id
    /// is named as it was written.
    ///
    /// ```
    /// use mcp_tool_errors::JsonRpcId;
    /// use serde_json::json;
    ///
    /// assert_eq!(
    ///     JsonRpcId::new(&json!(7.0)).in_use_message(),
    ///     "Invalid request: id 7.0 is already in use.",
    /// );
    /// assert_eq!(
    ///     JsonRpcId::new(&json!("a")).in_use_message(),
    ///     "Invalid request: id \"a\" is already in use.",
    /// );
    /// ```
    pub fn in_use_message(&self) -> String {
        format!("Invalid request: id {self} is already in use.")
    }

    /// The id as JSON, as it was written (`9.0` stays `9.0`).
    pub fn to_value(&self) -> Value {
        self.0.to_value()
    }
}

impl From<&Value> for JsonRpcId {
    fn from(value: &Value) -> Self {
        Self::new(value)
    }
}

impl PartialEq for JsonRpcId {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}

impl Eq for JsonRpcId {}

impl Hash for JsonRpcId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.key().hash(state);
    }
}

/// The id's JSON text, as it was written (`7`, `"abc"`).
impl fmt::Display for JsonRpcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            RequestId::Number(number) => write!(f, "{number}"),
            other => write!(f, "{}", other.to_value()),
        }
    }
}

impl fmt::Debug for JsonRpcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
