//! Answers a server sends outside the exchange of their request: replayed on a
//! resumed stream (a `GET` with `Last-Event-ID`, after the client lost the
//! `POST`'s stream) or sent on the session's `GET` stream.
//!
//! The proxy remembers the `tools/call`s it relayed in each session (the
//! `Mcp-Session-Id` a stateful server gives; a stateless request cannot be
//! resumed), at most [`MAX_SEEN_CALLS`] of them, the oldest forgotten first. An
//! event on a `GET` stream at the MCP endpoint whose data answers one of them
//! is rewritten as the layer rewrites it in an exchange (through the layer, the
//! upstream's bytes kept but for the text it changes); the server's task ids
//! of tasks this process knows become the client's
//! ([`KnownTasks`](crate::http::task_ids::KnownTasks)); every other event, and
//! an answer to a call this process did not relay, passes as it is. Events are
//! relayed as they arrive; an event longer than
//! [`MAX_MESSAGE_BYTES`](crate::http::body::MAX_MESSAGE_BYTES) ends the reading,
//! and the rest of the stream passes through unread.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use http_body_util::BodyExt;
use hyper::Response;
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderMap;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower_layer::Layer;
use tower_service::Service;

use crate::http::body::{ChannelBody, MAX_MESSAGE_BYTES, ProxyBody};
use crate::http::exchange::{Answers, media_type, translated};
use crate::http::proxy::{Proxy, passed_through};
use crate::http::task_ids::ToClient;
use crate::http::{headers, sse};
use crate::message::{IdKey, id_key};

/// How many calls the proxy remembers across all sessions.
pub(crate) const MAX_SEEN_CALLS: usize = 4096;

/// The header that names a session.
const SESSION: &str = "mcp-session-id";

/// The `tools/call`s relayed in each session, by id, with their tools.
#[derive(Debug, Default)]
pub(crate) struct SeenCalls {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    tools: HashMap<(String, IdKey), String>,
    /// Oldest first.
    order: VecDeque<(String, IdKey)>,
}

impl SeenCalls {
    /// Remembers every `tools/call` of `message`, sent in the session of
    /// `headers` (nothing without one).
    pub(crate) fn remember(&self, headers: &HeaderMap, message: &Value) {
        let Some(session) = session(headers) else {
            return;
        };
        let calls: Vec<(&Value, &str)> = match message {
            Value::Array(batch) => batch.iter().filter_map(tool_call).collect(),
            single => tool_call(single).into_iter().collect(),
        };
        if calls.is_empty() {
            return;
        }
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for (id, tool) in calls {
            let key = (session.to_owned(), id_key(id));
            if seen.tools.insert(key.clone(), tool.to_owned()).is_none() {
                seen.order.push_back(key);
            }
            while seen.order.len() > MAX_SEEN_CALLS {
                let oldest = seen.order.pop_front().expect("longer than the bound");
                seen.tools.remove(&oldest);
            }
        }
    }

    /// The tool of the call with `id` in `session`, if this process relayed it.
    fn tool(&self, session: &str, id: &Value) -> Option<String> {
        let seen = self
            .seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.tools.get(&(session.to_owned(), id_key(id))).cloned()
    }

    /// How many calls are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.seen.lock().unwrap().tools.len()
    }
}

/// The session `headers` name.
fn session(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION)?.to_str().ok()
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

/// The upstream's response to a `GET` at the MCP endpoint in the session of
/// `request_headers`: an event stream with its answers to remembered calls
/// rewritten, anything else as it is.
pub(crate) fn response(
    proxy: Arc<Proxy>,
    request_headers: &HeaderMap,
    response: Response<Incoming>,
) -> Response<ProxyBody> {
    let session = session(request_headers).map(str::to_owned);
    let is_stream = response.status().is_success()
        && media_type(response.headers()).as_deref() == Some("text/event-stream");
    let Some(session) = session.filter(|_| is_stream) else {
        return passed_through(response);
    };
    let (mut parts, body) = response.into_parts();
    headers::remove_hop_by_hop(&mut parts.headers);
    let (events, client_body) = ChannelBody::new();
    tokio::spawn(relay(proxy, session, body, events));
    Response::from_parts(parts, client_body.boxed())
}

/// Relays the stream event by event, rewriting answers to remembered calls.
async fn relay(
    proxy: Arc<Proxy>,
    session: String,
    mut body: Incoming,
    events: mpsc::Sender<Bytes>,
) {
    let mut splitter = sse::EventSplitter::default();
    let to_client = ToClient::outside_exchanges(proxy.known_tasks());
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return;
        };
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        splitter.push(&chunk);
        while let Some(event) = splitter.next_event() {
            let event = translated(rewritten(&proxy, &session, event).await, &to_client);
            if events.send(Bytes::from(event)).await.is_err() {
                return;
            }
        }
        if splitter.held() > MAX_MESSAGE_BYTES {
            crate::log("an event of more than 16 MiB on a GET stream: the rest passes unread");
            let rest = std::mem::take(&mut splitter).into_rest();
            if events.send(Bytes::from(rest)).await.is_err() {
                return;
            }
            return pass_rest(body, events).await;
        }
    }
    let rest = splitter.into_rest();
    if !rest.is_empty() {
        let _ = events.send(Bytes::from(rest)).await;
    }
}

/// The rest of the stream, as it comes.
async fn pass_rest(mut body: Incoming, events: mpsc::Sender<Bytes>) {
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(chunk) = frame.into_data()
            && events.send(chunk).await.is_err()
        {
            return;
        }
    }
}

/// `event`, its data rewritten when it answers a call of `session` that this
/// process relayed and the layer changes that answer.
async fn rewritten(proxy: &Proxy, session: &str, event: Vec<u8>) -> Vec<u8> {
    let Some(data) = sse::data(&event) else {
        return event;
    };
    let Ok(answer) = serde_json::from_slice::<Value>(&data) else {
        return event;
    };
    let Some(tool) = answered_call(&answer).and_then(|id| proxy.seen_calls().tool(session, id))
    else {
        return event;
    };
    // The exchange the layer would have seen: the call, and this answer.
    let call = json!({"jsonrpc": "2.0", "id": answer["id"], "method": "tools/call",
                      "params": {"name": tool}});
    let mut layered = proxy.layer().layer(Answers(answer.clone()));
    let Ok(layered) = layered.call(call).await;
    if layered == answer {
        return event;
    }
    match crate::splice::splice(&data, &answer, &layered) {
        Some(data) => sse::with_data(&event, &data),
        None => event,
    }
}

/// The id of the request `message` answers, when it is a response.
fn answered_call(message: &Value) -> Option<&Value> {
    let object = message.as_object()?;
    if object.contains_key("method")
        || !(object.contains_key("result") || object.contains_key("error"))
    {
        return None;
    }
    object.get("id")
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

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
