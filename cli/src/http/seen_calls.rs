//! The `tools/call`s the proxy relayed in each session (the `Mcp-Session-Id` a
//! stateful server gives; a stateless request cannot be resumed), at most
//! [`MAX_SEEN_CALLS`] of them, the oldest forgotten first: so that an answer
//! replayed on a resumed stream or sent on a `GET` stream
//! ([`replayed`](crate::http::replayed)) is rewritten with its tool.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;

use hyper::header::{HeaderMap, HeaderName};
use serde_json::Value;

/// How many calls the proxy remembers across all sessions.
pub(crate) const MAX_SEEN_CALLS: usize = 4096;

/// The header that names a session.
const SESSION: HeaderName = HeaderName::from_static("mcp-session-id");

/// The `tools/call`s relayed in each session, by id, with their tools.
///
/// A call is known by a 64-bit hash of its session and id: two calls among the
/// 4,096 remembered share one with a chance of about 1 in 2^41, and nothing is
/// allocated for the key.
#[derive(Debug, Default)]
pub(crate) struct SeenCalls {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    tools: HashMap<u64, Box<str>>,
    /// Oldest first.
    order: VecDeque<u64>,
}

impl SeenCalls {
    /// Remembers every `tools/call` of `message`, sent in the session of
    /// `headers` (nothing without one).
    pub(crate) fn remember(&self, headers: &HeaderMap, message: &Value) {
        let calls: Vec<(&Value, &str)> = match message {
            Value::Array(batch) => batch.iter().filter_map(tool_call).collect(),
            single => tool_call(single).into_iter().collect(),
        };
        for (id, tool) in calls {
            self.remember_call(headers, id, tool);
        }
    }

    /// Remembers the `tools/call` `id` of `tool`, sent in the session of
    /// `headers` (nothing without one).
    pub(crate) fn remember_call(&self, headers: &HeaderMap, id: &Value, tool: &str) {
        let Some(session) = session(headers) else {
            return;
        };
        let key = call_key(session, id);
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if seen.tools.insert(key, tool.into()).is_none() {
            seen.order.push_back(key);
        }
        while seen.order.len() > MAX_SEEN_CALLS {
            let oldest = seen.order.pop_front().expect("longer than the bound");
            seen.tools.remove(&oldest);
        }
    }

    /// The tool of the call with `id` in `session`, if this process relayed it.
    pub(crate) fn tool(&self, session: &str, id: &Value) -> Option<String> {
        let seen = self
            .seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.tools
            .get(&call_key(session, id))
            .map(|tool| tool.to_string())
    }

    /// How many calls are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.seen.lock().unwrap().tools.len()
    }
}

/// The session `headers` name.
pub(crate) fn session(headers: &HeaderMap) -> Option<&str> {
    headers.get(&SESSION)?.to_str().ok()
}

/// The key of the call `id` in `session`: an integer id as it is, a string as
/// its text, anything else as its JSON text, each marked apart, so `1`, `1.0`
/// and `"1"` are three calls.
fn call_key(session: &str, id: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    session.hash(&mut hasher);
    match id {
        Value::Number(number) if number.is_i64() => (0u8, number.as_i64()).hash(&mut hasher),
        Value::String(text) => (1u8, text).hash(&mut hasher),
        other => (2u8, other.to_string()).hash(&mut hasher),
    }
    hasher.finish()
}

/// The id and tool of `message` when it is a `tools/call` request.
fn tool_call(message: &Value) -> Option<(&Value, &str)> {
    let object = message.as_object()?;
    if object.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    Some((
        object.get("id")?,
        object.get("params")?.get("name")?.as_str()?,
    ))
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use serde_json::json;

    use super::*;

    fn in_session(session: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(SESSION, HeaderValue::from_str(session).unwrap());
        headers
    }

    fn call(id: u64, tool: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool}})
    }

    #[test]
    fn calls_are_remembered_by_session_and_id() {
        let seen = SeenCalls::default();
        seen.remember(&in_session("a"), &call(1, "build"));
        seen.remember(&in_session("b"), &json!([call(1, "test"), call(2, "lint")]));
        assert_eq!(seen.tool("a", &json!(1)).as_deref(), Some("build"));
        assert_eq!(seen.tool("b", &json!(1)).as_deref(), Some("test"));
        assert_eq!(seen.tool("b", &json!(2)).as_deref(), Some("lint"));
        assert_eq!(seen.tool("a", &json!(2)), None);
        assert_eq!(seen.tool("a", &json!("1")), None);
        assert_eq!(seen.tool("a", &json!(1.0)), None);
        seen.remember_call(&in_session("a"), &json!("x"), "deploy");
        assert_eq!(seen.tool("a", &json!("x")).as_deref(), Some("deploy"));
        assert_eq!(seen.tool("b", &json!("x")), None);
    }

    #[test]
    fn without_a_session_nothing_is_remembered() {
        let seen = SeenCalls::default();
        seen.remember(&HeaderMap::new(), &call(1, "build"));
        assert_eq!(seen.len(), 0);
    }

    #[test]
    fn the_memory_keeps_the_newest_calls_up_to_its_bound() {
        let seen = SeenCalls::default();
        for id in 0..(MAX_SEEN_CALLS as u64 * 3) {
            seen.remember(&in_session(&format!("s-{}", id % 7)), &call(id, "build"));
        }
        assert_eq!(seen.len(), MAX_SEEN_CALLS);
        let newest = MAX_SEEN_CALLS as u64 * 3 - 1;
        let session = format!("s-{}", newest % 7);
        assert_eq!(
            seen.tool(&session, &json!(newest)).as_deref(),
            Some("build")
        );
        let oldest_kept = newest + 1 - MAX_SEEN_CALLS as u64;
        assert!(
            seen.tool(&format!("s-{}", oldest_kept % 7), &json!(oldest_kept))
                .is_some()
        );
        assert!(
            seen.tool(
                &format!("s-{}", (oldest_kept - 1) % 7),
                &json!(oldest_kept - 1)
            )
            .is_none()
        );
    }
}
