//! Where a session's messages go: the requests its child has not answered,
//! each with the stream of the `POST` that sent it, and the session's `GET`
//! stream. An answer goes to the stream of its request (which ends with its
//! last answer), a progress notification to the stream of the call it
//! reports on, anything else (the server's requests, log messages) to the
//! `GET` stream, or to a call's stream when none is open.

use std::collections::HashMap;

use hyper::body::Bytes;
use mcp_tool_errors::JsonRpcId;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::jsonrpc::envelope::{self, Envelope};
use crate::jsonrpc::id_in_use;
use crate::jsonrpc::member::{Member, Request, members};
use crate::jsonrpc::nested;
use crate::jsonrpc::splice::{Spliced, splice};

/// Where the child's lines go.
#[derive(Debug)]
pub(crate) struct Routes {
    /// The requests the child has not answered, by their ids as the child
    /// sees them: each to the stream of the `POST` that sent it.
    pub(crate) calls: HashMap<JsonRpcId, Call>,
    /// The session's `GET` stream, while one is open.
    pub(crate) listening: Option<mpsc::Sender<Bytes>>,
    /// When a request last came or a stream last closed.
    pub(crate) last_used: Instant,
    /// Set when the session ends: its requests are refused from then on.
    pub(crate) ended: bool,
    /// The last id the bridge gave a call of a pooled child.
    last_id: u64,
}

/// Why requests were not registered.
#[derive(Debug)]
pub(crate) enum Registration {
    /// The session has ended.
    Ended,
    /// Some of their ids are in flight already, or held twice: `true` at
    /// their places ([`id_in_use::in_use`]).
    InUse(Vec<bool>),
}

/// A request the child has not answered.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) events: mpsc::Sender<Bytes>,
    /// The request as the layer reads it, should the bridge answer it
    /// itself ([`call_request`]).
    pub(crate) request: Value,
    /// Its `_meta.progressToken`.
    progress_token: Option<JsonRpcId>,
    /// What the client wrote where the child sees the bridge's own values.
    client: Option<ClientValues>,
}

/// A request as the session registers it: its id and its progress token, as
/// the child sees them.
#[derive(Debug)]
pub(crate) struct Sent {
    pub(crate) id: JsonRpcId,
    pub(crate) progress_token: Option<JsonRpcId>,
    /// The request as the layer reads it, with the client's id.
    pub(crate) request: Value,
    /// The client's, when the child sees the bridge's.
    pub(crate) client: Option<ClientValues>,
}

/// The id and progress token a client wrote, in place of which a pooled
/// child sees the bridge's.
#[derive(Debug, Clone)]
pub(crate) struct ClientValues {
    pub(crate) id: Value,
    pub(crate) progress_token: Option<Value>,
}

impl Sent {
    /// `request`, as a client sent it to its own session's child.
    pub(crate) fn of(request: &Request<'_>) -> Self {
        Self {
            id: JsonRpcId::new(request.id),
            progress_token: request.progress_token.map(JsonRpcId::new),
            request: call_request(request.id, request.method, request.tool),
            client: None,
        }
    }
}

/// A request as the layer reads it when the bridge answers it itself: its
/// client's `id`, its `method` and the tool it calls, which the layer's
/// element names.
pub(crate) fn call_request(id: &Value, method: &str, tool: Option<&str>) -> Value {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(tool) = tool {
        request["params"] = json!({"name": tool});
    }
    request
}

impl Routes {
    pub(crate) fn new() -> Self {
        Self {
            calls: HashMap::new(),
            listening: None,
            last_used: Instant::now(),
            ended: false,
            last_id: 0,
        }
    }

    /// A new id for a call of a pooled child, unique in it: `"mte-N"`.
    pub(crate) fn next_call_id(&mut self) -> Value {
        self.last_id += 1;
        Value::String(format!("mte-{}", self.last_id))
    }

    /// Registers `requests`, whose answers go to `events`, unless one of
    /// their ids is in flight already or held twice (checked and registered
    /// at once): then nothing is registered, and which are is returned.
    pub(crate) fn register(
        &mut self,
        requests: Vec<Sent>,
        events: &mpsc::Sender<Bytes>,
    ) -> Result<(), Registration> {
        if self.ended {
            return Err(Registration::Ended);
        }
        let ids: Vec<JsonRpcId> = requests.iter().map(|request| request.id.clone()).collect();
        if let Some(in_use) = id_in_use::in_use(&ids, |id| self.calls.contains_key(id)) {
            return Err(Registration::InUse(in_use));
        }
        self.last_used = Instant::now();
        for request in requests {
            self.calls.insert(
                request.id,
                Call {
                    events: events.clone(),
                    request: request.request,
                    progress_token: request.progress_token,
                    client: request.client,
                },
            );
        }
        Ok(())
    }

    /// Opens the session's `GET` stream, replacing (ending) one open before;
    /// `false` when the session has ended.
    pub(crate) fn listen(&mut self, events: mpsc::Sender<Bytes>) -> bool {
        if self.ended {
            return false;
        }
        self.last_used = Instant::now();
        self.listening = Some(events);
        true
    }

    /// Since when the session has had no open stream and no new request;
    /// `None` while it has.
    pub(crate) fn idle_since(&mut self) -> Option<Instant> {
        let open = |events: &mpsc::Sender<Bytes>| !events.is_closed();
        let streaming = self.listening.as_ref().is_some_and(open)
            || self.calls.values().any(|call| open(&call.events));
        if streaming {
            self.last_used = Instant::now();
            return None;
        }
        Some(self.last_used)
    }

    /// Ends the session's routes: no request is taken from now on; the calls
    /// still registered are returned, for their answers.
    pub(crate) fn end(&mut self) -> Vec<(JsonRpcId, Call)> {
        self.ended = true;
        self.listening = None;
        self.calls.drain().collect()
    }

    /// The stream `message` goes to, if any is open, and what it needs
    /// before its client reads it.
    pub(crate) fn destination(
        &mut self,
        message: &[u8],
        pooled: bool,
    ) -> Option<(mpsc::Sender<Bytes>, ClientSpelling)> {
        match ChildMessage::of(message) {
            ChildMessage::Answer(ids) => {
                let mut events = None;
                let mut restored = Vec::new();
                for id in ids {
                    if let Some(call) = self.calls.remove(&id) {
                        events = events.or(Some(call.events));
                        if let Some(client) = call.client {
                            restored.push((id, client.id));
                        }
                    }
                }
                let spelling = if restored.is_empty() {
                    ClientSpelling::Same
                } else {
                    ClientSpelling::Ids(restored)
                };
                events.map(|events| (events, spelling))
            }
            ChildMessage::Progress(token) => {
                let call = self
                    .calls
                    .values()
                    .find(|call| call.progress_token.as_ref() == Some(&token));
                match call {
                    Some(call) => {
                        let spelling = match call.client.as_ref() {
                            Some(client) => ClientSpelling::ProgressToken(
                                client.progress_token.clone().unwrap_or(Value::Null),
                            ),
                            None => ClientSpelling::Same,
                        };
                        Some((call.events.clone(), spelling))
                    }
                    None if pooled => None,
                    None => self
                        .any_stream()
                        .map(|events| (events, ClientSpelling::Same)),
                }
            }
            // A pooled child's own messages belong to no client it serves.
            ChildMessage::ServerMessage if pooled => None,
            ChildMessage::ServerMessage => self
                .any_stream()
                .map(|events| (events, ClientSpelling::Same)),
        }
    }

    /// The `GET` stream, else the stream of a call in flight.
    fn any_stream(&self) -> Option<mpsc::Sender<Bytes>> {
        self.listening
            .as_ref()
            .filter(|events| !events.is_closed())
            .or_else(|| self.calls.values().map(|call| &call.events).next())
            .cloned()
    }
}

/// What the child's line is, for its routing.
enum ChildMessage {
    /// Answers, to the requests with these ids.
    Answer(Vec<JsonRpcId>),
    /// `notifications/progress` with this token.
    Progress(JsonRpcId),
    /// A request or notification of the server's own.
    ServerMessage,
}

impl ChildMessage {
    fn of(message: &[u8]) -> Self {
        match envelope::read(message) {
            Ok(Envelope::Single(fields)) if fields.is_response() => {
                Self::Answer(fields.id.iter().map(JsonRpcId::new).collect())
            }
            Ok(Envelope::Single(fields))
                if fields.method.as_deref() != Some("notifications/progress") =>
            {
                Self::ServerMessage
            }
            // A batch, a progress notification, or JSON nested past the
            // envelope's limit: read whole.
            _ => match nested::from_slice(message) {
                Ok(value) => Self::of_value(&value),
                Err(_) => Self::ServerMessage,
            },
        }
    }

    fn of_value(message: &Value) -> Self {
        let members = members(message);
        let ids: Vec<JsonRpcId> = members
            .iter()
            .filter_map(|member| member.response_id())
            .map(JsonRpcId::new)
            .collect();
        if !ids.is_empty() {
            return Self::Answer(ids);
        }
        match members.as_slice() {
            [Member::Notification(notification)] => notification
                .progress_token()
                .map_or(Self::ServerMessage, |token| {
                    Self::Progress(JsonRpcId::new(token))
                }),
            _ => Self::ServerMessage,
        }
    }
}

/// The client's values a line of the child gets back before its client reads
/// it.
#[derive(Debug)]
pub(crate) enum ClientSpelling {
    /// The child's line is the client's already.
    Same,
    /// The ids of answers: the child's, then the client's.
    Ids(Vec<(JsonRpcId, Value)>),
    /// The progress token of a notification: the client's.
    ProgressToken(Value),
}

impl ClientSpelling {
    /// `message` with the client's values written back, when it needs them.
    pub(crate) fn applied(&self, message: &[u8]) -> Option<Vec<u8>> {
        if matches!(self, Self::Same) {
            return None;
        }
        let mut value = nested::from_slice(message).ok()?;
        match self {
            Self::Same => {}
            Self::Ids(ids) => {
                let answers = match &mut value {
                    Value::Array(batch) => batch.iter_mut().collect(),
                    single => vec![single],
                };
                for answer in answers {
                    let written = answer.get("id").map(JsonRpcId::new);
                    if let Some(written) = written
                        && let Some((_, client)) = ids.iter().find(|(child, _)| *child == written)
                        && let Some(id) = answer.get_mut("id")
                    {
                        *id = client.clone();
                    }
                }
            }
            Self::ProgressToken(token) => {
                if let Some(written) = value.pointer_mut("/params/progressToken") {
                    *written = token.clone();
                }
            }
        }
        match splice(message, &value)? {
            Spliced::Same => None,
            Spliced::Changed(bytes) => Some(bytes),
        }
    }
}

/// `message` as an event of a stream.
pub(crate) fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The message an event of [`event()`] carries.
pub(crate) fn data(event: &[u8]) -> &[u8] {
    event
        .strip_prefix(b"event: message\ndata: ".as_slice())
        .and_then(|data| data.strip_suffix(b"\n\n".as_slice()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(id: Value) -> Sent {
        Sent {
            id: JsonRpcId::new(&id),
            progress_token: None,
            request: call_request(&id, "ping", None),
            client: None,
        }
    }

    #[test]
    fn an_id_in_flight_or_held_twice_is_refused_with_nothing_registered() {
        let mut routes = Routes::new();
        let (events, _body) = mpsc::channel(1);
        assert!(routes.register(vec![sent(json!(1))], &events).is_ok());
        // `1.0` is the id `1`.
        let refused = routes.register(vec![sent(json!(2)), sent(json!(1.0))], &events);
        assert!(matches!(refused, Err(Registration::InUse(in_use)) if in_use == [false, true]));
        let refused = routes.register(vec![sent(json!("a")), sent(json!("a"))], &events);
        assert!(matches!(refused, Err(Registration::InUse(in_use)) if in_use == [false, true]));
        assert_eq!(routes.calls.len(), 1);
        assert_eq!(routes.end().len(), 1);
        let refused = routes.register(vec![sent(json!(3))], &events);
        assert!(matches!(refused, Err(Registration::Ended)));
    }
}
