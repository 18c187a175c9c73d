//! A tower-mcp request id, kept without allocating for numbers and short strings.

use ::tower_mcp::RequestId;
use compact_str::CompactString;

/// The id of a [`RouterRequest`](::tower_mcp::RouterRequest), as the layer keeps
/// it to match the response and to answer after a panic.
#[derive(Clone, PartialEq)]
pub(super) enum RouterId {
    Number(i64),
    /// Inline up to 24 bytes.
    String(CompactString),
    /// A kind of id this version of the crate does not know (`RequestId` is
    /// `#[non_exhaustive]`); kept whole so the answer still echoes it.
    Other(RequestId),
}

impl RouterId {
    pub(super) fn new(id: &RequestId) -> Self {
        match id {
            RequestId::Number(n) => Self::Number(*n),
            RequestId::String(s) => Self::String(CompactString::from(s.as_str())),
            other => Self::Other(other.clone()),
        }
    }

    /// Whether `id`, the id of a response, is this id.
    pub(super) fn matches(&self, id: &RequestId) -> bool {
        match (self, id) {
            (Self::Number(a), RequestId::Number(b)) => a == b,
            (Self::String(a), RequestId::String(b)) => a == b,
            (Self::Other(a), b) => a == b,
            _ => false,
        }
    }

    pub(super) fn to_request_id(&self) -> RequestId {
        match self {
            Self::Number(n) => RequestId::Number(*n),
            Self::String(s) => RequestId::String(s.to_string()),
            Self::Other(id) => id.clone(),
        }
    }
}

/// Shown as JSON (`7`, `"abc"`), the way it appears on the wire and in logs.
impl std::fmt::Debug for RouterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
            Self::Other(id) => write!(f, "{id:?}"),
        }
    }
}
