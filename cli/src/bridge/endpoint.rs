//! The bridge's HTTP side, the Streamable HTTP transport's server: at the
//! endpoint (`--path`, `/mcp` by default), a `POST` of `initialize` without a
//! session opens one (its id in `Mcp-Session-Id`), any other `POST` goes to
//! its session's child and is answered with an event stream that ends with
//! its last answer (`202` for notifications and responses), a `GET` opens the
//! session's stream for the server's own messages, and a `DELETE` ends the
//! session. A session that is not (or no longer) there is `404`, so that the
//! client starts a new one.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use mcp_tool_errors::JsonRpcId;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::bridge::child_input::Queued;
use crate::bridge::guard::Guard;
use crate::bridge::pool::{self, Pool};
use crate::bridge::routes::{self, Registration, Sent, call_request, event};
use crate::bridge::session::Session;
use crate::bridge::sessions::{Refusal, Sessions};
use crate::http::body::{ChannelBody, ProxyBody};
use crate::http::own_response::{json_error, made_response, parse_error, status_only};
use crate::http::peer::Peer;
use crate::http::whole_request::read_whole;
use crate::jsonrpc::id_in_use;
use crate::jsonrpc::member::{Member, members};
use crate::jsonrpc::message::{Answer, cancelled_ids_among, requests_among};
use crate::jsonrpc::nested;
use crate::jsonrpc::own_answer::{self, INTERNAL_ERROR, INVALID_REQUEST};
use crate::server::activity::{Activity, RequestBody, ResponseBody};
use crate::server::connections::Connections;
use crate::server::drain::Drain;
use crate::server::site::Site;

/// The session header of the transport.
static SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// How long a client refused for want of a session is asked to wait.
const RETRY_AFTER_SECONDS: &str = "5";

/// What the bridge's listener serves.
#[derive(Debug)]
pub(crate) struct Bridge {
    sessions: Arc<Sessions>,
    /// The children serving sessionless clients.
    pool: Arc<Pool>,
    guard: Guard,
    path: String,
    connections: Arc<Connections>,
    drain: Drain,
    /// Set when the drain starts: no session is opened, and no pooled child
    /// serves, from then on.
    draining: AtomicBool,
}

impl Bridge {
    pub(crate) fn new(
        sessions: Arc<Sessions>,
        guard: Guard,
        path: String,
        connections: Arc<Connections>,
        drain: Drain,
    ) -> Self {
        Self {
            sessions,
            pool: Arc::default(),
            guard,
            path,
            connections,
            drain,
            draining: AtomicBool::new(false),
        }
    }

    /// The drain starts: a request that would open a session, or go to a
    /// pooled child, is answered `503` with `Connection: close`, on any
    /// connection, so that its client goes to another replica.
    pub(crate) fn stop_opening(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    async fn answer(&self, request: Request<RequestBody>) -> Response<ProxyBody> {
        if let Some(refusal) = self.guard.refusal(request.headers()) {
            return refusal;
        }
        if request.uri().path() != self.path {
            return status_only(StatusCode::NOT_FOUND);
        }
        let method = request.method().clone();
        match method {
            Method::POST => self.post(request).await,
            Method::GET => self.get(request.headers()),
            Method::DELETE => self.delete(request.headers()).await,
            _ => {
                let mut response = status_only(StatusCode::METHOD_NOT_ALLOWED);
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                response
            }
        }
    }

    /// The session the request names; else why there is none.
    fn session(&self, headers: &HeaderMap) -> Result<Arc<Session>, NoSession> {
        let id = headers.get(&SESSION_ID).ok_or(NoSession::Unnamed)?;
        id.to_str()
            .ok()
            .and_then(|id| self.sessions.get(id))
            .ok_or(NoSession::NotFound)
    }

    async fn post(&self, request: Request<RequestBody>) -> Response<ProxyBody> {
        let (parts, body) = request.into_parts();
        let bytes = match read_whole(body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return refusal,
        };
        let Ok(message) = nested::from_slice(&bytes) else {
            return parse_error();
        };
        let is_initialize = opens_a_session(&message);
        if !is_initialize && !parts.headers.contains_key(&SESSION_ID) {
            return self.sessionless(message, &parts.headers).await;
        }
        let (session, opened) = if is_initialize && !parts.headers.contains_key(&SESSION_ID) {
            if self.is_draining() {
                return stopping();
            }
            match self.sessions.open() {
                Ok(session) => (session, true),
                Err(refusal) => return refused(refusal),
            }
        } else {
            match self.session(&parts.headers) {
                Ok(session) => (session, false),
                Err(none) => return none.response(),
            }
        };
        // The child reads a line per message.
        let line = if bytes.contains(&b'\n') || bytes.contains(&b'\r') {
            Bytes::from(nested::to_vec(&message))
        } else {
            bytes
        };
        let members = members(&message);
        // A call the client cancelled is never answered (the child's relay
        // withdraws it): its stream ends once the cancellation is sent,
        // without an answer, wherever in a batch the cancellation is.
        let cancelled: Vec<JsonRpcId> = cancelled_ids_among(&members)
            .into_iter()
            .map(JsonRpcId::new)
            .collect();
        let requests: Vec<_> = members
            .iter()
            .filter_map(|member| member.request())
            .collect();
        if requests.is_empty() {
            // Notifications, and answers to the server's requests.
            return match session.send(&line) {
                Queued::Yes => {
                    session.withdraw(&cancelled);
                    status_only(StatusCode::ACCEPTED)
                }
                Queued::Full => not_reading(),
                Queued::Closed => not_found(),
            };
        }
        let ids: Vec<JsonRpcId> = requests
            .iter()
            .map(|request| JsonRpcId::new(request.id))
            .collect();
        let (events, body) = ChannelBody::new();
        let sent = requests.iter().map(Sent::of).collect();
        let mut response = match session.register(sent, &events) {
            Err(Registration::Ended) => return not_found(),
            Err(Registration::InUse(in_use)) => {
                let calls = requests_among(&members);
                let refusal = id_in_use::refusal(&calls, message.is_array(), &in_use);
                own_answer(refusal, events, body, &parts.headers).await
            }
            Ok(()) => {
                match session.send(&line) {
                    Queued::Yes => session.withdraw(&cancelled),
                    Queued::Full => {
                        session.withdraw(&ids);
                        let requests = requests
                            .iter()
                            .map(|request| call_request(request.id, request.method, request.tool))
                            .collect();
                        if let Some(answer) = session.not_reading(requests, message.is_array()) {
                            let _ = events.send(answer).await;
                        }
                    }
                    Queued::Closed => {
                        session.withdraw(&ids);
                        return not_found();
                    }
                }
                // The body ends once every call is answered.
                drop(events);
                if accepts_events(&parts.headers) {
                    answer_stream(body).await
                } else {
                    json_answer(body).await
                }
            }
        };
        if opened && let Ok(id) = HeaderValue::from_str(session.id()) {
            response.headers_mut().insert(SESSION_ID.clone(), id);
        }
        response
    }

    /// A `POST` without a session (a client of protocol 2026-07-28): its
    /// requests go to a child of the [`Pool`], with the child's ids, and so
    /// do its cancellations of them; its other notifications and its answers
    /// go nowhere, since no child asked for them.
    async fn sessionless(&self, mut message: Value, headers: &HeaderMap) -> Response<ProxyBody> {
        let calls = requests_among(&members(&message));
        if calls.is_empty() {
            return status_only(StatusCode::ACCEPTED);
        }
        // A pooled child is initialized by the bridge, and serves every
        // sessionless client: an `initialize` of a client's own (in a batch;
        // alone, it opens a session) would change it for all of them.
        if let Some(refusal) = initialize_refused(&message, &calls) {
            let (events, body) = ChannelBody::new();
            return own_answer(refusal, events, body, headers).await;
        }
        // Each `POST` is answered on its own stream: only a batch can hold
        // an id in use, twice.
        if let Some(refusal) = id_in_use::refused(&calls, message.is_array(), |_| false) {
            let (events, body) = ChannelBody::new();
            return own_answer(refusal, events, body, headers).await;
        }
        if self.is_draining() {
            return stopping();
        }
        let child = match self.pool.child(&self.sessions).await {
            Ok(child) => child,
            Err(refusal) => return refused(refusal),
        };
        let translated = pool::with_the_childs_ids(&mut message, &child);
        let sent = translated.requests;
        let ids: Vec<JsonRpcId> = sent.iter().map(|sent| sent.id.clone()).collect();
        // What the layer reads of each, with the client's id.
        let requests: Vec<Value> = sent.iter().map(|sent| sent.request.clone()).collect();
        let (events, body) = ChannelBody::new();
        if child.register(sent, &events).is_err() {
            return json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                INTERNAL_ERROR,
                "The server exited",
            );
        }
        match child.send(&nested::to_vec(&message)) {
            Queued::Yes => child.withdraw(&translated.cancelled),
            Queued::Full => {
                child.withdraw(&ids);
                if let Some(answer) = child.not_reading(requests, message.is_array()) {
                    let _ = events.send(answer).await;
                }
            }
            Queued::Closed => {
                child.withdraw(&ids);
                return json_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    INTERNAL_ERROR,
                    "The server exited",
                );
            }
        }
        drop(events);
        if accepts_events(headers) {
            answer_stream(body).await
        } else {
            json_answer(body).await
        }
    }

    fn get(&self, headers: &HeaderMap) -> Response<ProxyBody> {
        let session = match self.session(headers) {
            Ok(session) => session,
            Err(none) => return none.response(),
        };
        if !accepts_events(headers) {
            return status_only(StatusCode::NOT_ACCEPTABLE);
        }
        let (events, body) = ChannelBody::new();
        if !session.listen(events) {
            return not_found();
        }
        event_stream(body)
    }

    async fn delete(&self, headers: &HeaderMap) -> Response<ProxyBody> {
        match self.session(headers) {
            Ok(session) => {
                session.end();
                status_only(StatusCode::OK)
            }
            Err(none) => none.response(),
        }
    }
}

/// Why a request has no session.
#[derive(Debug, Clone, Copy)]
enum NoSession {
    /// It names none.
    Unnamed,
    /// The one it names is not (or no longer) there: the client starts a
    /// new one.
    NotFound,
}

impl NoSession {
    fn response(self) -> Response<ProxyBody> {
        match self {
            Self::Unnamed => json_error(
                StatusCode::BAD_REQUEST,
                -32000,
                "Bad Request: Mcp-Session-Id header is required",
            ),
            Self::NotFound => not_found(),
        }
    }
}

impl Site for Bridge {
    fn connections(&self) -> &Arc<Connections> {
        &self.connections
    }

    fn drain(&self) -> &Drain {
        &self.drain
    }

    async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        _client: Arc<Peer>,
        activity: Arc<Activity>,
    ) -> Result<Response<ResponseBody>, Infallible> {
        let request = request.map(|body| RequestBody::new(body, activity.clone()));
        let response = self.answer(request).await;
        Ok(response.map(|body| ResponseBody::new(body, activity)))
    }
}

/// The method of the request that opens a session.
const INITIALIZE: &str = "initialize";

/// Whether `message` opens a session: an `initialize` request (a
/// notification of that method opens none, nor does a batch).
fn opens_a_session(message: &Value) -> bool {
    matches!(Member::of(message), Member::Request(request) if request.method == INITIALIZE)
}

/// The refusal of a sessionless `message` (whose requests are `calls`) that
/// holds an `initialize` request, whole, as a batch holding an id in use is
/// refused (`id_in_use`): `-32600` to each of its requests. `None` when it
/// holds none.
fn initialize_refused(message: &Value, calls: &[(Value, bool)]) -> Option<Answer> {
    let initializes: Vec<bool> = members(message)
        .into_iter()
        .filter_map(Member::request)
        .map(|request| request.method == INITIALIZE)
        .collect();
    if !initializes.contains(&true) {
        return None;
    }
    let answers = calls.iter().zip(&initializes).map(|((id, _), initialize)| {
        let sentence = if *initialize {
            "Invalid request: initialize opens a session, sent alone without Mcp-Session-Id."
        } else {
            "Invalid request: the batch holds an initialize, which opens a session when sent alone."
        };
        own_answer::error(id, INVALID_REQUEST, sentence)
    });
    let value = if message.is_array() {
        Value::Array(answers.collect())
    } else {
        answers.into_iter().next().unwrap_or(Value::Null)
    };
    Some(Answer::made(value))
}

/// The response carrying `answer`, the bridge's own to a whole message,
/// on `body` (whose sender is `events`): an event stream, or JSON for a
/// client that takes no stream.
async fn own_answer(
    answer: Answer,
    events: mpsc::Sender<Bytes>,
    body: ChannelBody,
    headers: &HeaderMap,
) -> Response<ProxyBody> {
    let (line, _) = answer.into_line();
    let _ = events.send(event(line.trim_ascii_end())).await;
    drop(events);
    if accepts_events(headers) {
        event_stream(body)
    } else {
        json_answer(body).await
    }
}

/// Whether the client takes an event stream (it must, by the transport; a
/// client that asks for JSON only gets the answer as JSON).
fn accepts_events(headers: &HeaderMap) -> bool {
    let Some(accept) = headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
    else {
        return true;
    };
    accept.split(',').any(|media| {
        let media = media.split(';').next().unwrap_or_default().trim();
        media.eq_ignore_ascii_case("text/event-stream") || media == "*/*"
    })
}

/// How long the head of a `POST`'s stream waits for its first event.
const FIRST_EVENT_WAIT: Duration = Duration::from_millis(20);

/// The stream of a `POST`'s answers: its head waits a little for the first
/// event (most often the answer, with the end), so that a quick call goes out
/// in one write and wakes the client once; a slow call's head goes out then,
/// before its answer.
async fn answer_stream(mut body: ChannelBody) -> Response<ProxyBody> {
    let _ = tokio::time::timeout(FIRST_EVENT_WAIT, body.first_chunk()).await;
    event_stream(body)
}

fn event_stream(body: ChannelBody) -> Response<ProxyBody> {
    let mut response = Response::new(body.boxed());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The answer of the stream `body` as JSON: its last event's data (the
/// answer ends the stream; what came before it is the server's own).
async fn json_answer(body: ChannelBody) -> Response<ProxyBody> {
    let mut last = Bytes::new();
    let mut body = body;
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            last = data;
        }
    }
    made_response(routes::data(&last).to_vec())
}

/// The answer when no session could be opened.
fn refused(refusal: Refusal) -> Response<ProxyBody> {
    match refusal {
        Refusal::Full => {
            crate::telemetry::log("refused a new session: --max-sessions are open");
            let mut response = json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                -32000,
                "Service Unavailable: too many sessions; retry later",
            );
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(RETRY_AFTER_SECONDS),
            );
            response
        }
        Refusal::Start(message) => {
            crate::telemetry::log(&message);
            json_error(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL_ERROR, &message)
        }
    }
}

/// The answer to a request for a new session (or a pooled child) during the
/// drain: its client goes elsewhere.
fn stopping() -> Response<ProxyBody> {
    let mut response = json_error(
        StatusCode::SERVICE_UNAVAILABLE,
        -32000,
        "Service Unavailable: the bridge is stopping",
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A message of notifications or answers for a server that does not read
/// what its session holds for it already.
fn not_reading() -> Response<ProxyBody> {
    json_error(
        StatusCode::SERVICE_UNAVAILABLE,
        -32000,
        "Service Unavailable: the server is not reading its input",
    )
}

/// A session that is not (or no longer) there.
fn not_found() -> Response<ProxyBody> {
    json_error(StatusCode::NOT_FOUND, -32001, "Session not found")
}
