//! [`RequestId`]: a JSON-RPC request id as the layer keeps it, whichever message
//! type it came from, without allocating for numbers and short strings; and
//! [`IdKey`], the same id as a key, to match answers to requests.

use std::hash::{DefaultHasher, Hash, Hasher};

use compact_str::CompactString;
use serde_json::{Number, Value};

use super::answer::AnswerId;

/// The id of a request, as the layer remembers it to match the response, answer
/// the request itself and name it in the log.
#[derive(Clone, PartialEq)]
pub enum RequestId {
    /// A number.
    Number(Number),
    /// A string, inline up to 24 bytes.
    String(CompactString),
    /// `null`.
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

    /// Whether an answer with `id` answers the request with this id: the ids
    /// are the same JSON-RPC id (numbers by their value, strings as strings).
    /// Compared directly in the common cases (a number or string id against a
    /// JSON response's), as a key otherwise.
    pub(crate) fn is_answered_by(&self, id: &AnswerId<'_>) -> bool {
        match (self, id) {
            (Self::Number(own), AnswerId::Json(Value::Number(other))) => {
                IdKey::number(own) == IdKey::number(other)
            }
            (Self::String(own), AnswerId::Json(Value::String(other))) => own == other,
            (own, other) => IdKey::of_answer(other).is_some_and(|key| own.key() == key),
        }
    }

    /// This id as a key.
    pub(crate) fn key(&self) -> IdKey<'_> {
        match self {
            Self::Number(n) => IdKey::number(n),
            Self::String(s) => IdKey::String(s),
            Self::Null => IdKey::Null,
            Self::Other(value) => IdKey::Other(value),
        }
    }

    /// This id as JSON.
    pub fn to_value(&self) -> Value {
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

/// A request id as a key: two keys are equal exactly when the ids are the same
/// JSON-RPC id, whichever message type showed them: numbers by their value
/// (`9` is `9.0`, which a peer that re-encodes numbers as floats sends), a
/// string as a string (`1` is not `"1"`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum IdKey<'a> {
    /// A number with no fractional part, however it was written.
    Integer(i128),
    /// Any other number, by the bits of its `f64`.
    Fraction(u64),
    String(&'a str),
    Null,
    /// Not a valid JSON-RPC id (an object, an array, a boolean).
    Other(&'a Value),
}

impl<'a> IdKey<'a> {
    fn number(n: &Number) -> Self {
        if let Some(integer) = n.as_i64() {
            return Self::Integer(integer.into());
        }
        if let Some(integer) = n.as_u64() {
            return Self::Integer(integer.into());
        }
        // Without serde_json's `arbitrary_precision`, every other number is a
        // finite f64; an integral one below 2^127 converts exactly.
        let float = n.as_f64().unwrap_or(0.5);
        if float.fract() == 0.0 && float.abs() < 2f64.powi(127) {
            Self::Integer(float as i128)
        } else {
            Self::Fraction(float.to_bits())
        }
    }

    /// The key of the id `value`, borrowed.
    pub(crate) fn json(value: &'a Value) -> Self {
        match value {
            Value::Number(n) => Self::number(n),
            Value::String(s) => Self::String(s),
            Value::Null => Self::Null,
            other => Self::Other(other),
        }
    }

    /// The key of an answer's id; `None` for an answer without one.
    pub(crate) fn of_answer(id: &'a AnswerId<'a>) -> Option<Self> {
        Some(match id {
            AnswerId::Implicit | AnswerId::Missing => return None,
            AnswerId::Json(value) => Self::json(value),
            AnswerId::Integer(n) => Self::Integer((*n).into()),
            AnswerId::String(s) => Self::String(s),
            AnswerId::Owned(value) => Self::json(value),
        })
    }
}

impl PartialEq for IdKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Integer(a), Self::Integer(b)) => a == b,
            (Self::Fraction(a), Self::Fraction(b)) => a == b,
            (Self::String(a), Self::String(b)) => a == b,
            (Self::Null, Self::Null) => true,
            (Self::Other(a), Self::Other(b)) => a == b,
            _ => false,
        }
    }
}

// JSON numbers are finite, so value equality is an equivalence.
impl Eq for IdKey<'_> {}

impl Hash for IdKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Self::Integer(n) => (0u8, n).hash(state),
            Self::Fraction(bits) => (1u8, bits).hash(state),
            Self::String(s) => (2u8, s).hash(state),
            Self::Null => 3u8.hash(state),
            Self::Other(value) => {
                4u8.hash(state);
                hash_value(value, state);
            }
        }
    }
}

/// Hashes `value` consistently with its equality: an object's members in any
/// order hash alike, as objects with the same members are equal.
fn hash_value<H: Hasher>(value: &Value, state: &mut H) {
    match value {
        Value::Null => 0u8.hash(state),
        Value::Bool(b) => (1u8, b).hash(state),
        Value::Number(n) => (2u8, n).hash(state),
        Value::String(s) => (3u8, s).hash(state),
        Value::Array(items) => {
            (4u8, items.len()).hash(state);
            for item in items {
                hash_value(item, state);
            }
        }
        Value::Object(members) => {
            let unordered = members.iter().fold(0u64, |sum, (key, value)| {
                let mut member = DefaultHasher::new();
                key.hash(&mut member);
                hash_value(value, &mut member);
                sum.wrapping_add(member.finish())
            });
            (5u8, members.len(), unordered).hash(state);
        }
    }
}
