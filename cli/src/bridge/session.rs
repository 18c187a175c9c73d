//! One client's session: its child, relayed as the stdio mode relays it
//! ([`Relay`]) to a pair of pipes whose other ends are the bridge's, and
//! where each line the child writes goes: an answer to the stream of the
//! `POST` that sent its request (which ends with its last answer), a
//! progress notification to the stream of the call it reports on, anything
//! else (the server's requests, log messages) to the session's `GET` stream,
//! or to a call's stream when none is open.

use std::collections::HashMap;
use std::fs::File;
use std::io::pipe;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hyper::body::Bytes;
use mcp_tool_errors::JsonRpcId;
use mcp_tool_errors::{NoAnswer, ToolErrorLayer};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe as async_pipe;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::jsonrpc::envelope::{self, Envelope};
use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
use crate::jsonrpc::layer_over_answer::layer_over_answer;
use crate::jsonrpc::member::{Member, Request, members};
use crate::jsonrpc::message::Answer;
use crate::jsonrpc::nested;
use crate::jsonrpc::own_answer;
use crate::options::Options;
use crate::signals::Forwarded;
use crate::stdio::client_io::ClientOutput;
use crate::stdio::relay::{ClientPipes, Relay, StartError};

/// A session and its child.
#[derive(Debug)]
pub(crate) struct Session {
    id: String,
    /// The child's side of the relay: lines written here are the client's.
    /// `None` once the session ends.
    input: tokio::sync::Mutex<Option<async_pipe::Sender>>,
    routes: Mutex<Routes>,
    /// Signals for the child (SIGTERM when the session ends).
    signals: mpsc::UnboundedSender<i32>,
    /// Whether the child serves sessionless clients ([`Pool`]): its calls
    /// carry ids of the bridge's, and the server's own messages reach no
    /// client.
    ///
    /// [`Pool`]: crate::bridge::pool::Pool
    pooled: bool,
    /// The child's process id, for the log.
    pid: u32,
    /// The last id the bridge gave a call of a pooled child.
    last_id: std::sync::atomic::AtomicU64,
}

/// Where the child's lines go.
#[derive(Debug)]
struct Routes {
    /// The requests the child has not answered, by their ids as the child
    /// sees them: each to the stream of the `POST` that sent it.
    calls: HashMap<JsonRpcId, Call>,
    /// The session's `GET` stream, while one is open.
    listening: Option<mpsc::Sender<Bytes>>,
    /// When a request last came or a stream last closed.
    last_used: Instant,
    /// Set when the session ends: its requests are refused from then on.
    ended: bool,
}

#[derive(Debug)]
struct Call {
    events: mpsc::Sender<Bytes>,
    /// The request as the layer reads it, should the bridge answer it
    /// itself ([`call_request`]).
    request: Value,
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

/// The client's values a line of the child gets back before its client reads
/// it.
#[derive(Debug)]
enum ClientSpelling {
    /// The child's line is the client's already.
    Same,
    /// The ids of answers: the child's, then the client's.
    Ids(Vec<(JsonRpcId, Value)>),
    /// The progress token of a notification: the client's.
    ProgressToken(Value),
}

impl Session {
    /// Starts `options.command` for the session `id`; the relay is returned
    /// to be finished (`Relay::finish`) with the signals returned.
    /// `pooled`: the child serves sessionless clients.
    pub(crate) fn start(
        id: String,
        options: &Options,
        traced: bool,
        pooled: bool,
    ) -> Result<(Arc<Self>, Relay, Forwarded), StartError> {
        let (relay_input, input) = pipe().map_err(StartError::Relay)?;
        let (output, relay_output) = pipe().map_err(StartError::Relay)?;
        let client = ClientPipes {
            input: File::from(OwnedFd::from(relay_input)),
            output: ClientOutput::to(File::from(OwnedFd::from(relay_output))),
        };
        let relay = Relay::start(options, &options.command, client, traced)?;
        let pid = relay.pid().unwrap_or_default();
        let input = async_pipe::Sender::from_owned_fd(OwnedFd::from(input));
        let output = async_pipe::Receiver::from_owned_fd(OwnedFd::from(output));
        let (input, output) = input
            .and_then(|input| Ok((input, output?)))
            .map_err(StartError::Relay)?;
        let (signals, forwarded) = Forwarded::sent();
        let session = Arc::new(Self {
            id,
            input: tokio::sync::Mutex::new(Some(input)),
            routes: Mutex::new(Routes {
                calls: HashMap::new(),
                listening: None,
                last_used: Instant::now(),
                ended: false,
            }),
            signals,
            pooled,
            pid,
            last_id: std::sync::atomic::AtomicU64::new(0),
        });
        tokio::spawn(session.clone().route_output(output));
        Ok((session, relay, forwarded))
    }

    /// The child's process id (0 if it was gone before it was read).
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// A new id for a call of a pooled child: `"mte-N"`.
    pub(crate) fn next_call_id(&self) -> Value {
        let n = self
            .last_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        Value::String(format!("mte-{n}"))
    }

    /// How many requests wait for the child.
    pub(crate) fn calls_in_flight(&self) -> usize {
        self.routes().calls.len()
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `requests`, whose answers go to `events`; `false` (and
    /// nothing registered) when the session has ended. An id in flight
    /// already is the caller's to refuse first ([`Session::in_flight`]).
    pub(crate) fn register(&self, requests: Vec<Sent>, events: &mpsc::Sender<Bytes>) -> bool {
        let mut routes = self.routes();
        if routes.ended {
            return false;
        }
        routes.last_used = Instant::now();
        for request in requests {
            routes.calls.insert(
                request.id,
                Call {
                    events: events.clone(),
                    request: request.request,
                    progress_token: request.progress_token,
                    client: request.client,
                },
            );
        }
        true
    }

    /// Which of `ids` are in flight already.
    pub(crate) fn in_flight(&self, ids: &[JsonRpcId]) -> Vec<bool> {
        let routes = self.routes();
        ids.iter().map(|id| routes.calls.contains_key(id)).collect()
    }

    /// Withdraws the requests with `ids`: they were not sent, or the client
    /// cancelled them (the relay never answers those); a stream left with no
    /// call ends.
    pub(crate) fn withdraw(&self, ids: &[JsonRpcId]) {
        let mut routes = self.routes();
        for id in ids {
            routes.calls.remove(id);
        }
    }

    /// Writes `line` (one message, without its newline) to the child; `false`
    /// when the session has ended.
    pub(crate) async fn send(&self, line: &[u8]) -> bool {
        self.touch();
        let mut input = self.input.lock().await;
        let Some(pipe) = input.as_mut() else {
            return false;
        };
        // One write: the relay's thread wakes once, for a whole line.
        let mut whole = Vec::with_capacity(line.len() + 1);
        whole.extend_from_slice(line);
        whole.push(b'\n');
        pipe.write_all(&whole).await.is_ok()
    }

    /// Opens the session's `GET` stream, replacing (ending) one open before;
    /// `false` when the session has ended.
    pub(crate) fn listen(&self, events: mpsc::Sender<Bytes>) -> bool {
        let mut routes = self.routes();
        if routes.ended {
            return false;
        }
        routes.last_used = Instant::now();
        routes.listening = Some(events);
        true
    }

    /// Ends the `GET` stream, if one is open (the bridge drains).
    pub(crate) fn stop_listening(&self) {
        self.routes().listening = None;
    }

    fn touch(&self) {
        self.routes().last_used = Instant::now();
    }

    /// Since when the session has had no open stream (a `POST`'s or the
    /// `GET`'s) and no new request; `None` while it has. A call in flight
    /// whose client went away keeps no stream open: it holds the session no
    /// longer, and ends with it.
    pub(crate) fn idle_since(&self) -> Option<Instant> {
        let mut routes = self.routes();
        let open = |events: &mpsc::Sender<Bytes>| !events.is_closed();
        let streaming = routes.listening.as_ref().is_some_and(open)
            || routes.calls.values().any(|call| open(&call.events));
        if streaming {
            routes.last_used = Instant::now();
            return None;
        }
        Some(routes.last_used)
    }

    /// Answers every call in flight itself, saying that the bridge is
    /// stopping (its drain ended first), through the layer; the child is
    /// told with `notifications/cancelled`, and its late answers reach no
    /// one.
    pub(crate) fn answer_stopping(
        self: &Arc<Self>,
        layer: &ToolErrorLayer,
        invalid_params: &InvalidParamsAsToolErrors<()>,
    ) {
        let calls: Vec<(JsonRpcId, Call)> = self.routes().calls.drain().collect();
        let mut cancellations = Vec::new();
        for (id, call) in calls {
            let client_id = call.request["id"].clone();
            let is_tool_call = Member::of(&call.request)
                .request()
                .is_some_and(|request| request.is_tool_call());
            let answer =
                own_answer::unanswered(&client_id, is_tool_call, STOPPING, NoAnswer::Drained);
            if let Some(answer) =
                layer_over_answer(layer, invalid_params, call.request, Answer::made(answer))
            {
                let (line, _) = answer.into_line();
                let events = call.events;
                tokio::spawn(async move {
                    let _ = events.send(event(line.trim_ascii_end())).await;
                });
            }
            let cancellation = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id.to_value(), "reason": "The bridge is stopping."},
            });
            cancellations.push(cancellation.to_string());
        }
        if cancellations.is_empty() {
            return;
        }
        let session = self.clone();
        tokio::spawn(async move {
            for cancellation in cancellations {
                session.send(cancellation.as_bytes()).await;
            }
        });
    }

    /// Whether the session has ended.
    pub(crate) fn has_ended(&self) -> bool {
        self.routes().ended
    }

    /// Ends the session: no request is taken from now on; the child's stdin
    /// is closed, and it gets SIGTERM 2 s later if it is still running
    /// (then SIGKILL, 5 s after its stdin closed: see [`Relay::finish`]).
    pub(crate) async fn end(self: &Arc<Self>) {
        self.routes().ended = true;
        let closed = self.input.lock().await.take();
        if closed.is_some() {
            drop(closed);
            let session = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(TERM_AFTER).await;
                let _ = session.signals.send(libc::SIGTERM);
            });
        }
    }

    /// The child exited: the session takes no request from now on.
    pub(crate) async fn child_exited(&self) {
        self.routes().ended = true;
        self.input.lock().await.take();
    }

    /// Reads the child's lines (the relay's, once the layer has done its
    /// part) and sends each where it goes, until the relay closes its end.
    async fn route_output(self: Arc<Self>, output: async_pipe::Receiver) {
        let mut output = BufReader::with_capacity(64 * 1024, output);
        let mut line = Vec::new();
        loop {
            line.clear();
            match output.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let message = line.trim_ascii();
            if message.is_empty() {
                continue;
            }
            let Some((events, spelling)) = self.destination(message) else {
                continue;
            };
            let event = match spelling.applied(message) {
                Some(restored) => event(&restored),
                None => event(message),
            };
            // A client that does not read its stream holds its session's
            // lines only: its connection is closed past --client-send-timeout.
            let _ = events.send(event).await;
        }
        // Every stream of the session ends.
        let mut routes = self.routes();
        routes.calls.clear();
        routes.listening = None;
        routes.ended = true;
    }

    /// The stream `message` goes to, if any is open, and what it needs
    /// before its client reads it.
    fn destination(&self, message: &[u8]) -> Option<(mpsc::Sender<Bytes>, ClientSpelling)> {
        let kind = ChildMessage::of(message);
        let mut routes = self.routes();
        match kind {
            ChildMessage::Answer(ids) => {
                let mut events = None;
                let mut restored = Vec::new();
                for id in ids {
                    if let Some(call) = routes.calls.remove(&id) {
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
                let call = routes
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
                    None if self.pooled => None,
                    None => routes
                        .any_stream()
                        .map(|events| (events, ClientSpelling::Same)),
                }
            }
            // A pooled child's own messages belong to no client it serves.
            ChildMessage::ServerMessage if self.pooled => None,
            ChildMessage::ServerMessage => routes
                .any_stream()
                .map(|events| (events, ClientSpelling::Same)),
        }
    }
}

impl ClientSpelling {
    /// `message` with the client's values written back, when it needs them.
    fn applied(&self, message: &[u8]) -> Option<Vec<u8>> {
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
        match crate::jsonrpc::splice::splice(message, &value)? {
            crate::jsonrpc::splice::Spliced::Same => None,
            crate::jsonrpc::splice::Spliced::Changed(bytes) => Some(bytes),
        }
    }
}

/// What a call still in flight when the drain ends is answered.
const STOPPING: &str = "The bridge is stopping: the server did not answer within the drain (--drain-timeout); the request was cancelled.";

/// How long a session's child may take to exit on its own once its stdin is
/// closed, before it gets SIGTERM (servers on the Python SDK take more than a
/// second).
const TERM_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

impl Routes {
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

/// `message` as an event of a stream.
pub(crate) fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}
