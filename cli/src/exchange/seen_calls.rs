//! The `tools/call`s the proxy relayed in each session (the `Mcp-Session-Id` a
//! stateful server gives; a stateless request cannot be resumed), at most
//! [`MAX_SEEN_CALLS`] of them, the oldest forgotten first: so that an answer
//! replayed on a resumed stream or sent on a `GET` stream
//! ([`replayed`](crate::exchange::replayed)) is rewritten with its tool, and so
//! that a call the client cancelled (its `notifications/cancelled`, sent on
//! any connection of the session) is neither answered nor cancelled by the
//! proxy ([`Cancel`](crate::exchange::cancel::Cancel)), as the stdio mode
//! withdraws it.
//!
//! A cancellation is a mark on a call remembered, the client's or the proxy's,
//! whichever came first: the other's is not sent to the server. One of a call
//! the proxy never relayed in the session (or forgot) is the server's to judge
//! and is not kept, so that no stream of cancellations makes the memory grow,
//! and none pushes a call out of it. A call that is never cancelled pays
//! nothing for it; the proxy looks a call up only when it would answer it
//! itself.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;

use hyper::header::{HeaderMap, HeaderName};
use mcp_tool_errors::JsonRpcId;
use serde_json::Value;

use crate::jsonrpc::member::{Member, members};
use crate::jsonrpc::message::cancelled_ids;

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
    calls: HashMap<u64, Call>,
    /// Oldest first.
    order: VecDeque<u64>,
}

/// A call remembered.
#[derive(Debug)]
struct Call {
    tool: Box<str>,
    cancelled: Cancelled,
}

/// Who cancelled a call: whoever did first, and the server was told by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cancelled {
    No,
    /// The client sent `notifications/cancelled`: the proxy neither answers
    /// the call nor cancels it.
    ByTheClient,
    /// The proxy gave the call up and sent its own: the client's, if it
    /// comes, is not sent too.
    ByTheProxy,
}

impl SeenCalls {
    /// Remembers every `tools/call` of `message` (a client's message or
    /// batch), sent in the session of `headers` (nothing without one), and
    /// every call of the session it cancels. Returns whether `message` is one
    /// cancellation of a call the proxy cancelled already, which the server
    /// is not to get a second time (a batch goes whole).
    pub(crate) fn remember(&self, headers: &HeaderMap, message: &Value) -> bool {
        let calls = tool_calls(message);
        // One call, the common message, cancels nothing: not read again.
        let one_call = message.is_object() && !calls.is_empty();
        for (id, tool) in calls {
            self.remember_call(headers, id, tool);
        }
        if one_call {
            return false;
        }
        let cancelled = cancelled_ids(message);
        if cancelled.is_empty() {
            return false;
        }
        let Some(session) = session(headers) else {
            return false;
        };
        let mut seen = self.seen();
        let mut told_already = message.is_object();
        for id in cancelled {
            let Some(call) = seen.calls.get_mut(&call_key(session, id)) else {
                told_already = false;
                continue;
            };
            match call.cancelled {
                Cancelled::ByTheProxy => {}
                Cancelled::No | Cancelled::ByTheClient => {
                    call.cancelled = Cancelled::ByTheClient;
                    told_already = false;
                }
            }
        }
        told_already
    }

    /// Remembers the `tools/call` `id` of `tool`, sent in the session of
    /// `headers` (nothing without one).
    pub(crate) fn remember_call(&self, headers: &HeaderMap, id: &Value, tool: &str) {
        let Some(session) = session(headers) else {
            return;
        };
        let key = call_key(session, id);
        let call = Call {
            tool: tool.into(),
            cancelled: Cancelled::No,
        };
        let mut seen = self.seen();
        // An id used again is a new call, not cancelled yet.
        if seen.calls.insert(key, call).is_none() {
            seen.order.push_back(key);
        }
        while seen.order.len() > MAX_SEEN_CALLS {
            let oldest = seen.order.pop_front().expect("longer than the bound");
            seen.calls.remove(&oldest);
        }
    }

    /// The tool of the call with `id` in `session`, if this process relayed it.
    pub(crate) fn tool(&self, session: &str, id: &Value) -> Option<String> {
        let seen = self.seen();
        seen.calls
            .get(&call_key(session, id))
            .map(|call| call.tool.to_string())
    }

    /// The proxy gives up the call `id` of `session` (which it may not have
    /// relayed): returns whether the client cancelled it, when the proxy is
    /// neither to answer it nor to cancel it. Else, when `cancelling`, the
    /// proxy's own cancellation is remembered, so that the client's, should it
    /// come, is not sent too.
    pub(crate) fn give_up(&self, session: &str, id: &Value, cancelling: bool) -> bool {
        let mut seen = self.seen();
        let Some(call) = seen.calls.get_mut(&call_key(session, id)) else {
            return false;
        };
        match call.cancelled {
            Cancelled::ByTheClient => true,
            Cancelled::No if cancelling => {
                call.cancelled = Cancelled::ByTheProxy;
                false
            }
            Cancelled::No | Cancelled::ByTheProxy => false,
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        // Every change is whole before anything can panic.
        self.seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many calls are remembered, and the room the memory holds.
    #[cfg(test)]
    fn sizes(&self) -> (usize, usize, usize) {
        let seen = self.seen.lock().unwrap();
        (seen.calls.len(), seen.order.len(), seen.calls.capacity())
    }

    /// How many calls are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.sizes().0
    }
}

/// The session `headers` name.
pub(crate) fn session(headers: &HeaderMap) -> Option<&str> {
    headers.get(&SESSION)?.to_str().ok()
}

/// The key of the call `id` in `session`: the id as JSON-RPC compares ids
/// ([`JsonRpcId`], the rule every mode matches answers by), so `9` and `9.0`
/// are one call and `"9"` another. Nothing is allocated for a number or a
/// short string.
fn call_key(session: &str, id: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    session.hash(&mut hasher);
    JsonRpcId::new(id).hash(&mut hasher);
    hasher.finish()
}

/// The id and tool of each `tools/call` request of `message` (a message or
/// a batch).
fn tool_calls(message: &Value) -> Vec<(&Value, &str)> {
    members(message)
        .into_iter()
        .filter_map(Member::request)
        .filter(|request| request.is_tool_call())
        .filter_map(|request| Some((request.id, request.tool?)))
        .collect()
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
        // One id however a number is written: JSON-RPC's rule.
        assert_eq!(seen.tool("a", &json!(1.0)).as_deref(), Some("build"));
        seen.remember_call(&in_session("a"), &json!("x"), "deploy");
        assert_eq!(seen.tool("a", &json!("x")).as_deref(), Some("deploy"));
        assert_eq!(seen.tool("b", &json!("x")), None);
    }

    fn cancellation(id: &Value) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "no longer needed"}})
    }

    #[test]
    fn a_cancellation_marks_the_call_of_its_session_only() {
        let seen = SeenCalls::default();
        seen.remember(&in_session("a"), &call(1, "build"));
        seen.remember(&in_session("b"), &call(1, "build"));
        assert!(!seen.remember(&in_session("a"), &cancellation(&json!(1))));
        assert!(seen.give_up("a", &json!(1), true));
        assert!(!seen.give_up("b", &json!(1), false));
        assert!(!seen.give_up("a", &json!("1"), true));
        // A cancellation names the call by its id in any spelling.
        seen.remember(&in_session("b"), &call(9, "build"));
        assert!(!seen.remember(&in_session("b"), &cancellation(&json!(9.0))));
        assert!(seen.give_up("b", &json!(9e0), true));
        // In a batch, with a call of its own.
        seen.remember(
            &in_session("b"),
            &json!([call(2, "test"), cancellation(&json!(1))]),
        );
        assert!(seen.give_up("b", &json!(1), true));
        assert!(!seen.give_up("b", &json!(2), false));
        // Without a session, nothing tells whose call it is.
        assert!(!seen.remember(&HeaderMap::new(), &cancellation(&json!(2))));
        assert!(!seen.give_up("b", &json!(2), false));
        // The id used again is a new call.
        seen.remember(&in_session("a"), &call(1, "build"));
        assert!(!seen.give_up("a", &json!(1), false));
        assert_eq!(seen.tool("a", &json!(1)).as_deref(), Some("build"));
    }

    #[test]
    fn the_clients_cancellation_of_a_call_the_proxy_cancelled_is_not_sent_again() {
        let seen = SeenCalls::default();
        seen.remember(&in_session("a"), &call(1, "build"));
        seen.remember(&in_session("a"), &call(2, "build"));
        // An answer of the proxy's that cancels nothing leaves the client's
        // cancellation to be sent.
        assert!(!seen.give_up("a", &json!(2), false));
        assert!(!seen.give_up("a", &json!(1), true));
        assert!(seen.remember(&in_session("a"), &cancellation(&json!(1))));
        assert!(seen.remember(&in_session("a"), &cancellation(&json!(1))));
        // Not in another session, not for another call, not in a batch.
        assert!(!seen.remember(&in_session("b"), &cancellation(&json!(1))));
        assert!(!seen.remember(&in_session("a"), &cancellation(&json!(2))));
        assert!(!seen.remember(&in_session("a"), &json!([cancellation(&json!(1))])));
        // The client cancelling after all gives the proxy no second go.
        assert!(!seen.give_up("a", &json!(1), true));
    }

    #[test]
    fn endless_cancellations_of_calls_never_seen_keep_nothing() {
        let seen = SeenCalls::default();
        for id in 0..MAX_SEEN_CALLS as u64 {
            seen.remember(&in_session(&format!("s-{}", id % 7)), &call(id, "build"));
        }
        let before = seen.sizes();
        // The worst input: every id new and long, in every session, alone and
        // in batches, and the calls remembered cancelled again and again.
        let long = "x".repeat(64);
        for round in 0..50u64 {
            let batch: Vec<Value> = (0..2_000)
                .map(|n| cancellation(&json!(format!("{long}{round}-{n}"))))
                .collect();
            for session in ["s-0", "s-3", "unknown"] {
                seen.remember(&in_session(session), &Value::Array(batch.clone()));
                seen.remember(&in_session(session), &cancellation(&json!(round)));
            }
        }
        assert_eq!(seen.sizes(), before);
        assert!(seen.give_up("s-0", &json!(0), true));
        assert!(!seen.give_up("s-1", &json!(1), true));
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
