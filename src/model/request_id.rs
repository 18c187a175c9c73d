//! [`RequestId`]: a JSON-RPC request id as the layer keeps it, whichever message
//! type it came from, without allocating for numbers and short strings.

use compact_str::CompactString;
use serde_json::{Number, Value};

/// The id of a request, as the layer remembers it to match the response, answer
/// the request itself and name it in the log.
#[derive(Clone, PartialEq)]
pub(crate) enum RequestId {
    Number(Number),
    /// Inline up to 24 bytes.
    String(CompactString),
    Null,
    /// Not a valid JSON-RPC id; kept so that the answer still echoes it.
    Other(Box<Value>),
}

impl RequestId {
    pub(crate) fn from_value(value: &Value) -> Self {
        match value {
            Value::Number(n) => Self::Number(n.clone()),
            Value::String(s) => Self::String(CompactString::from(s.as_str())),
            Value::Null => Self::Null,
            other => Self::Other(Box::new(other.clone())),
        }
    }

    /// Whether `value`, the id of a response, is this id.
    pub(crate) fn matches(&self, value: &Value) -> bool {
        match (self, value) {
            (Self::Number(a), Value::Number(b)) => a == b,
            (Self::String(a), Value::String(b)) => a == b,
            (Self::Null, Value::Null) => true,
            (Self::Other(a), b) => **a == *b,
            _ => false,
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        match self {
            Self::Number(n) => Value::Number(n.clone()),
            Self::String(s) => Value::String(s.to_string()),
            Self::Null => Value::Null,
            Self::Other(v) => (**v).clone(),
        }
    }
}

/// Shown as JSON (`7`, `"abc"`), the way it appears on the wire and in logs.
impl std::fmt::Debug for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
            Self::Null => f.write_str("null"),
            Self::Other(v) => write!(f, "{v}"),
        }
    }
}
