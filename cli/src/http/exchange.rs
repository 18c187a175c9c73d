//! One JSON-RPC request at the MCP endpoint: sent upstream through the layer,
//! and answered to the client in the shape the upstream chose.
//!
//! The layer is the library's [`mcp_tool_errors::ToolErrorLayer`]
//! over a `tower::Service<Value>` ([`ToUpstream`]) whose future resolves with the
//! upstream's message that answers the request: a JSON body, or the data of the
//! event that carries the answer in an event stream. Everything else about the
//! response (its head, the bytes as they came, the events before and after the
//! answer) goes around the layer:
//!
//! - an event stream's head is sent to the client as soon as it arrives, and its
//!   events as they arrive, while the layer's future waits for the answer;
//! - the answer the layer returns replaces the upstream's only when it differs,
//!   so that an answer the layer left alone keeps the upstream's bytes;
//! - a response that is not an answer (a 4xx, a redirect) passes through as it is;
//! - when the upstream gives no answer, the future resolves with the answer of
//!   [`Failure`]; when the layer answers itself (the tool timeout), the upstream
//!   request has been dropped, and the server is sent `notifications/cancelled`;
//! - a call the client cancelled itself gets neither (see
//!   [`cancel`](crate::http::cancel)): a stream ends without an answer, a JSON
//!   exchange is answered `202 Accepted` with no body;
//! - with `--invalid-params-as-tool-errors`, a `-32602` answer to a call of a
//!   listed tool becomes an `isError` result under the layer, as on stdio
//!   (`crate::jsonrpc::invalid_params`): the tools listed are those of the `tools/list`
//!   answers this process relayed;
//! - the server's task ids in the answer and in the events become the client's
//!   ([`task_ids`](crate::http::task_ids)), after the layer, which works with
//!   the server's;
//! - at the end of a drain ([`drain`](crate::http::drain)), a call still waiting
//!   is answered with [`Failure::Drained`] and cancelled at the server; so is a
//!   request whose response head did not come in time
//!   ([`head_timeout`](crate::http::head_timeout)), with
//!   [`Failure::NoAnswerWithin`], and one whose stream sent an event longer than
//!   [`MAX_MESSAGE_BYTES`] before the answer, with [`Failure::TooLarge`] (a JSON
//!   answer that long gets it too, with nothing to cancel). An event that long
//!   after the answer passes through unread, with the rest of the stream.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use std::time::Duration;

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Body, Bytes};
use hyper::header;
use hyper::http::response;
use hyper::{Request, Response};
use mcp_tool_errors::ToolErrorLayer;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tower_layer::Layer;
use tower_service::Service;

use crate::http::body::{ChannelBody, MAX_MESSAGE_BYTES, ProxyBody, whole};
use crate::http::cancel::{Cancel, no_answer_response};
use crate::http::client::UpstreamBody;
use crate::http::decoded::{Encoding, ReadBody, answer_type, decoded, encoding};
use crate::http::drain::Phase;
use crate::http::failure::{Failure, describe, made_response};
use crate::http::gather::gather;
use crate::http::headers::{MediaType, passed_through};
use crate::http::proxy::Proxy;
use crate::http::task_ids::ToClient;
use crate::http::{headers, sse, unread};
use crate::jsonrpc::envelope::{self, Envelope};
use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
use crate::jsonrpc::layer_request::Method;
use crate::jsonrpc::message::{Answer, answers, requests, response_ids};

/// Sends `request` (whose body is `message`) upstream through the layer, and
/// returns the client's response.
pub(crate) async fn exchange(
    proxy: &Arc<Proxy>,
    request: Request<ProxyBody>,
    message: Value,
    opened: &[(String, String)],
) -> Response<ProxyBody> {
    for (tool, task_id) in opened {
        remember_task(&proxy.layer(), tool, task_id).await;
    }
    let to_client = Arc::new(ToClient::new(&message, opened, proxy.known_tasks()));
    let ids = requests(&message).into_iter().map(|(id, _)| id).collect();
    let cancel = Cancel::new(proxy, request.headers(), ids);
    let (head_sender, mut head) = oneshot::channel();
    let (events, body) = ChannelBody::new();
    let delivered = Arc::new(Mutex::new(Delivery::Nothing));
    let call = UpstreamCall {
        proxy: proxy.clone(),
        request,
        head: head_sender,
        events: events.clone(),
        delivered: delivered.clone(),
        to_client: to_client.clone(),
        head_timeout: proxy.head_timeout().for_message(&message),
        untouched: SkeletonRule {
            tools_call: opened.is_empty() && is_one_tools_call(&message),
            invalid_params: proxy.invalid_params().is_on(),
        },
    };
    let under_layer = proxy.invalid_params().over(OneCall(Some(call)));
    let mut service = proxy.layer().layer(ToUpstream(under_layer));
    let Ok(()) = std::future::poll_fn(|cx| service.poll_ready(cx)).await;
    let mut answer = Box::pin(service.call(message));
    // The upstream call may run to its end in one poll (a short event stream
    // read whole): its head is looked for after its answer too.
    let (head, answered) = tokio::select! {
        biased;
        head = &mut head => (head.ok(), None),
        Ok(answered) = &mut answer => (head.try_recv().ok(), Some(answered)),
    };
    let translation = to_client.clone();
    let answer = async move {
        let mut answer = match answered {
            Some(answer) => answer,
            None => {
                let Ok(answer) = answer.await;
                answer
            }
        };
        translation.translate(&mut answer);
        answer
    };
    match head {
        Some(Head::PassThrough(response)) => passed_through(response),
        Some(Head::Stream(mut parts)) => {
            headers::remove_hop_by_hop(&mut parts.headers);
            parts.headers.remove(header::CONTENT_LENGTH);
            let finishing = Box::pin(async move {
                finish_stream(answer.await, &delivered, &events, &cancel, &to_client).await;
            });
            if let Some(unfinished) = gather(finishing).await {
                tokio::spawn(unfinished);
            }
            Response::from_parts(parts, body.boxed())
        }
        // No head for the client: the answer goes in a JSON body.
        None => json_response(answer.await, &delivered, &cancel),
    }
}

/// What the upstream call sends the client's side when the response is not one
/// the layer's answer completes.
#[derive(Debug)]
enum Head {
    /// Not an answer to rewrite: sent to the client as it is.
    PassThrough(Response<UpstreamBody>),
    /// An event stream: its head goes to the client now, its events follow.
    Stream(response::Parts),
}

/// What the upstream call left beside the value it resolved with.
#[derive(Debug)]
enum Delivery {
    /// The call did not finish: the layer answered itself (a timeout).
    Nothing,
    /// The call made the answer itself (a [`Failure`]).
    Made,
    /// The call was given up (the end of a drain, no response head in time,
    /// an event too large): the server is told.
    GivenUp,
    /// The client went away while its events were relayed.
    ClientGone,
    /// The server ended the event stream before the answer, after an event id
    /// the client resumes the stream from: the stream ends without an answer.
    Resumable,
    /// A JSON body holding the answer, which the layer reads: the response's
    /// head and its bytes.
    Json {
        parts: response::Parts,
        bytes: Bytes,
    },
    /// A JSON body that is no JSON-RPC answer: sent as it is.
    Raw {
        parts: response::Parts,
        bytes: Bytes,
    },
    /// The event that carries the answer, whether the layer read it whole
    /// (not when it read a skeleton of it: [`SkeletonRule`]), and the stream
    /// after that event.
    Event {
        event: Vec<u8>,
        read_whole: bool,
        rest: StreamRest,
    },
    /// Every request was answered by events the proxy could not read, which
    /// went to the client as they were ([`unread`]): the stream after them.
    PassedUnread { rest: StreamRest },
}

/// An event stream after the event with the answer.
#[derive(Debug)]
struct StreamRest {
    splitter: sse::EventSplitter,
    body: ReadBody,
}

fn take(delivered: &Mutex<Delivery>) -> Delivery {
    let mut delivered = delivered
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    std::mem::replace(&mut *delivered, Delivery::Nothing)
}

fn put(delivered: &Mutex<Delivery>, value: Delivery) {
    *delivered
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = value;
}

/// The client's response when no event stream was started: the upstream's JSON
/// body (its own bytes when the layer left the answer alone), or the answer
/// the proxy or the layer made, as a JSON body.
fn json_response(
    answer: Value,
    delivered: &Mutex<Delivery>,
    cancel: &Cancel,
) -> Response<ProxyBody> {
    match take(delivered) {
        Delivery::Json { mut parts, bytes } => {
            headers::remove_hop_by_hop(&mut parts.headers);
            // Hyper counts the body sent.
            parts.headers.remove(header::CONTENT_LENGTH);
            let bytes =
                crate::jsonrpc::splice::rewritten(&bytes, &answer).map_or(bytes, Bytes::from);
            Response::from_parts(parts, whole(bytes))
        }
        Delivery::Raw { mut parts, bytes } => {
            headers::remove_hop_by_hop(&mut parts.headers);
            Response::from_parts(parts, whole(bytes))
        }
        other => {
            let given_up = matches!(other, Delivery::Nothing | Delivery::GivenUp);
            match cancel.give_up(answer, given_up) {
                Some(answer) => made_response(crate::jsonrpc::nested::to_vec(&answer)),
                None => no_answer_response(),
            }
        }
    }
}

/// Ends a started event stream: the event with the answer (the upstream's, with
/// its data rewritten when the layer changed it, or one the proxy makes), then
/// whatever the upstream sends after it, as it is.
async fn finish_stream(
    answer: Value,
    delivered: &Mutex<Delivery>,
    events: &mpsc::Sender<Bytes>,
    cancel: &Cancel,
    to_client: &ToClient,
) {
    let (event, rest) = match take(delivered) {
        Delivery::ClientGone | Delivery::Resumable => return,
        Delivery::Event {
            event,
            read_whole,
            rest,
        } => {
            let data = sse::data(&event).filter(|_| read_whole);
            let event =
                match data.and_then(|data| crate::jsonrpc::splice::rewritten(&data, &answer)) {
                    Some(data) => sse::with_data(&event, &data),
                    None => event,
                };
            (Some(event), Some(rest))
        }
        Delivery::PassedUnread { rest } => (None, Some(rest)),
        other => {
            let given_up = matches!(other, Delivery::Nothing | Delivery::GivenUp);
            let Some(answer) = cancel.give_up(answer, given_up) else {
                // The client cancelled the call: the stream ends unanswered.
                return;
            };
            let data = crate::jsonrpc::nested::to_vec(&answer);
            (Some(sse::event(&data)), None)
        }
    };
    if let Some(event) = event
        && events.send(Bytes::from(event)).await.is_err()
    {
        return;
    }
    let Some(StreamRest { splitter, body }) = rest else {
        return;
    };
    match body {
        ReadBody::AsItCame(body) => relay_rest(splitter, body, events, to_client).await,
        // Boxed: the future of this rare case does not make every stream's
        // larger.
        ReadBody::Decoded(body) => {
            Box::pin(relay_rest(splitter, body, events, to_client)).await;
        }
    }
}

/// Relays the stream after the answer: `splitter` holds what came with the
/// answer, `body` is the rest, as it came or decoded.
async fn relay_rest<B>(
    mut splitter: sse::EventSplitter,
    mut body: B,
    events: &mpsc::Sender<Bytes>,
    to_client: &ToClient,
) where
    B: Body<Data = Bytes> + Unpin,
{
    if to_client.is_needed() {
        // Later events may name the task (its status, its result): cut them.
        loop {
            while let Some(event) = splitter.next_event() {
                let event = to_client.event(event);
                if events.send(Bytes::from(event)).await.is_err() {
                    return;
                }
            }
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        splitter.push(&data);
                    }
                }
                _ => break,
            }
            if splitter.held() > MAX_MESSAGE_BYTES {
                // The answer is delivered: an event too large to read goes
                // through as it is, and the rest of the stream with it.
                crate::log(&format!(
                    "the server sent an event longer than {MAX_MESSAGE_BYTES} bytes after the answer: passed on unread"
                ));
                break;
            }
        }
    }
    let left = splitter.into_rest();
    if !left.is_empty() && events.send(Bytes::from(left)).await.is_err() {
        return;
    }
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data()
            && events.send(data).await.is_err()
        {
            return;
        }
    }
}

/// Has the layer remember that the server's task `task_id` belongs to `tool`,
/// as if it had seen the `tools/call` that created it: the task's id, which
/// the client sent, says so, and this replica may never have seen that call.
async fn remember_task(layer: &ToolErrorLayer, tool: &str, task_id: &str) {
    let call = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": tool}});
    let handle = json!({"jsonrpc": "2.0", "id": 0, "result": {"task": {"taskId": task_id}}});
    let mut service = layer.layer(Answers(handle));
    let Ok(()) = std::future::poll_fn(|cx| service.poll_ready(cx)).await;
    let _ = service.call(call).await;
}

/// A service that answers every request with the same message: the inner
/// service of the layer for an answer the proxy already holds.
#[derive(Debug)]
pub(crate) struct Answers(pub(crate) Value);

impl Service<Value> for Answers {
    type Response = Value;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Value, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _message: Value) -> Self::Future {
        std::future::ready(Ok(self.0.clone()))
    }
}

/// The inner service of the layer: `--invalid-params-as-tool-errors` (the
/// stdio mode's, on the stdio relay's message types) over the one call to the
/// upstream.
#[derive(Debug)]
struct ToUpstream(InvalidParamsAsToolErrors<OneCall>);

impl Service<Value> for ToUpstream {
    type Response = Value;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Value, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, message: Value) -> Self::Future {
        let answer = self.0.call(message);
        Box::pin(async move { Ok(answer.await?.value) })
    }
}

/// The one call to the upstream of an exchange.
#[derive(Debug)]
struct OneCall(Option<UpstreamCall>);

impl Service<Value> for OneCall {
    type Response = Answer;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, message: Value) -> Self::Future {
        let call = self.0.take().expect("one call per exchange");
        Box::pin(async move {
            let value = call.run(message).await;
            // The exchange keeps the upstream's bytes itself: only the value
            // is read here.
            Ok(Answer {
                value,
                line: None,
                read: true,
                queued: None,
            })
        })
    }
}

/// The request to the upstream and where its response goes.
#[derive(Debug)]
struct UpstreamCall {
    proxy: Arc<Proxy>,
    request: Request<ProxyBody>,
    head: oneshot::Sender<Head>,
    events: mpsc::Sender<Bytes>,
    delivered: Arc<Mutex<Delivery>>,
    to_client: Arc<ToClient>,
    /// How long the response head may take; `None` when the layer's tool
    /// timeout bounds the call.
    head_timeout: Option<Duration>,
    /// Which answers pass unread by the layer.
    untouched: SkeletonRule,
}

impl UpstreamCall {
    /// The upstream's message that answers `message`, or the proxy's own
    /// answer; at the end of a drain, the answer of [`Failure::Drained`].
    async fn run(self, message: Value) -> Value {
        let proxy = self.proxy.clone();
        let delivered = self.delivered.clone();
        // The requests that events the proxy could not read answered.
        let answered = Mutex::new(Vec::new());
        tokio::select! {
            answer = self.run_upstream(&message, &answered) => answer,
            () = proxy.drain().reached(Phase::Expired) => {
                put(&delivered, Delivery::GivenUp);
                let answered = answered.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                Failure::drained().answer_unanswered(&message, &answered)
            }
        }
    }

    async fn run_upstream(self, message: &Value, answered: &Mutex<Vec<Value>>) -> Value {
        let response = self.proxy.client().request(self.request);
        let response = match self.head_timeout {
            Some(timeout) => match tokio::time::timeout(timeout, response).await {
                Ok(response) => response,
                Err(_) => {
                    crate::log(&format!(
                        "no answer from {} within {}: cancelling the request",
                        self.proxy.endpoint(),
                        humantime::format_duration(timeout)
                    ));
                    put(&self.delivered, Delivery::GivenUp);
                    return Failure::NoAnswerWithin(timeout).answer(message);
                }
            },
            None => response.await,
        };
        let response = match response {
            Ok(response) => response,
            Err(error) => {
                let failure = Failure::no_response(&self.proxy.endpoint(), &error);
                put(&self.delivered, Delivery::Made);
                return failure.answer(message);
            }
        };
        // A 4xx is the transport's or OAuth's, not the tool's; the client gets
        // it as it is, and so anything else that is no answer, or one in an
        // encoding the proxy does not decode.
        let reading =
            answer_type(&response).map(|media_type| (media_type, encoding(response.headers())));
        let relayed = Relayed {
            head: self.head,
            events: self.events,
            delivered: &self.delivered,
            to_client: &self.to_client,
            untouched: &self.untouched,
            answered,
        };
        match reading {
            Some((MediaType::EventStream, Encoding::Identity)) => {
                Self::relay_events(response, message, relayed).await
            }
            Some((_, Encoding::Identity)) => {
                Self::read_json(response, message, relayed.delivered, relayed.untouched).await
            }
            Some((media_type, Encoding::Decoded(format))) => {
                let response = decoded(response, format);
                // Boxed: the future of this rare case does not make every
                // exchange's larger.
                Box::pin(Self::read(response, media_type, message, relayed)).await
            }
            _ => {
                let _ = relayed.head.send(Head::PassThrough(response));
                std::future::pending().await
            }
        }
    }

    /// The answer `response` holds, decoded.
    async fn read<B>(
        response: Response<B>,
        media_type: MediaType,
        message: &Value,
        relayed: Relayed<'_>,
    ) -> Value
    where
        B: Body<Data = Bytes> + Into<ReadBody> + Unpin,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        if media_type == MediaType::EventStream {
            return Self::relay_events(response, message, relayed).await;
        }
        Self::read_json(response, message, relayed.delivered, relayed.untouched).await
    }

    /// A body read whole: a JSON-RPC answer goes through the layer; a 5xx
    /// without one becomes a [`Failure`]; any other body passes as it is.
    async fn read_json<B>(
        response: Response<B>,
        message: &Value,
        delivered: &Mutex<Delivery>,
        untouched: &SkeletonRule,
    ) -> Value
    where
        B: Body<Data = Bytes>,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let (parts, body) = response.into_parts();
        let bytes = match Limited::new(body, MAX_MESSAGE_BYTES).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) if error.is::<LengthLimitError>() => {
                crate::log(&format!(
                    "the server's answer is longer than {MAX_MESSAGE_BYTES} bytes: not read"
                ));
                // The server has answered: nothing to cancel.
                put(delivered, Delivery::Made);
                return Failure::TooLarge.answer(message);
            }
            Err(error) => {
                crate::log(&format!(
                    "the server's answer was cut: {}",
                    describe(&*error)
                ));
                put(delivered, Delivery::Made);
                return Failure::ClosedBeforeAnswer.answer(message);
            }
        };
        if let Some(id) = untouched.answered(&bytes) {
            let layer_reads = SkeletonRule::skeleton(id);
            put(delivered, Delivery::Raw { parts, bytes });
            return layer_reads;
        }
        match crate::jsonrpc::nested::from_slice(&bytes) {
            Ok(answer) if !response_ids(&answer).is_empty() => {
                put(delivered, Delivery::Json { parts, bytes });
                answer
            }
            _ if parts.status.is_server_error() => {
                Failure::log_status(parts.status);
                put(delivered, Delivery::Made);
                Failure::Status(parts.status).answer(message)
            }
            _ => {
                put(delivered, Delivery::Raw { parts, bytes });
                Value::Null
            }
        }
    }

    /// Relays the events before the answer to the client as they arrive;
    /// resolves with the answer's message.
    async fn relay_events<B>(response: Response<B>, message: &Value, relayed: Relayed<'_>) -> Value
    where
        B: Body<Data = Bytes> + Into<ReadBody> + Unpin,
        B::Error: std::error::Error + 'static,
    {
        let Relayed {
            head,
            events,
            delivered,
            to_client,
            untouched,
            answered,
        } = relayed;
        let (parts, mut body) = response.into_parts();
        let _ = head.send(Head::Stream(parts));
        // The requests no event answered yet.
        let mut ids: Vec<Value> = requests(message).into_iter().map(|(id, _)| id).collect();
        let mut splitter = sse::EventSplitter::default();
        // Whether the client holds an event id to resume the stream from.
        let mut resumable = false;
        loop {
            while let Some(event) = splitter.next_event() {
                if let Some(id) = sse::id(&event) {
                    resumable = !id.is_empty();
                }
                let found = sse::data(&event).map(|data| answer_in(&data, &ids, untouched));
                match found {
                    Some(Found::Answer {
                        read_whole,
                        layer_reads,
                    }) => {
                        let rest = StreamRest {
                            splitter,
                            body: body.into(),
                        };
                        put(
                            delivered,
                            Delivery::Event {
                                event,
                                read_whole,
                                rest,
                            },
                        );
                        return layer_reads;
                    }
                    Some(Found::PassedUnread(passed)) if !passed.is_empty() => {
                        unread::log_answer_passed_unread();
                        ids.retain(|id| !passed.contains(id));
                        lock(answered).extend(passed);
                    }
                    _ => {}
                }
                let event = to_client.event(event);
                if events.send(Bytes::from(event)).await.is_err() {
                    put(delivered, Delivery::ClientGone);
                    return Value::Null;
                }
                if ids.is_empty() {
                    let rest = StreamRest {
                        splitter,
                        body: body.into(),
                    };
                    put(delivered, Delivery::PassedUnread { rest });
                    return Value::Null;
                }
            }
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        splitter.push(&data);
                    }
                }
                Some(Err(error)) => {
                    crate::log(&format!(
                        "the server's event stream was cut: {}",
                        describe(&error)
                    ));
                    break;
                }
                None if resumable => {
                    // The server ended the stream on purpose, for the client to
                    // resume it with `GET` (allowed from 2025-11-25): the call
                    // still runs, and its answer comes on the resumed stream.
                    put(delivered, Delivery::Resumable);
                    return Value::Null;
                }
                None => break,
            }
            if splitter.held() > MAX_MESSAGE_BYTES {
                crate::log(&format!(
                    "the server sent an event longer than {MAX_MESSAGE_BYTES} bytes: \
                     the stream is abandoned and the request cancelled"
                ));
                // The server may still be working on the request.
                put(delivered, Delivery::GivenUp);
                return Failure::TooLarge.answer_unanswered(message, &lock(answered));
            }
        }
        put(delivered, Delivery::Made);
        Failure::ClosedBeforeAnswer.answer_unanswered(message, &lock(answered))
    }
}

/// Where the events of a stream go, and what they tell, while the answer is
/// awaited.
struct Relayed<'a> {
    head: oneshot::Sender<Head>,
    events: mpsc::Sender<Bytes>,
    delivered: &'a Mutex<Delivery>,
    to_client: &'a ToClient,
    untouched: &'a SkeletonRule,
    /// The requests that events the proxy could not read answered.
    answered: &'a Mutex<Vec<Value>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What an event's data is to the requests awaiting an answer.
#[derive(Debug)]
enum Found {
    /// The answer to one of them: whether the layer reads it whole (not when
    /// it reads a skeleton of it: [`SkeletonRule`]), and what the layer reads.
    Answer {
        read_whole: bool,
        layer_reads: Value,
    },
    /// No answer the proxy reads; those of the requests it answers as a
    /// lenient client reads it ([`unread`]).
    PassedUnread(Vec<Value>),
}

/// What `data` (an event's) is to the requests `ids`.
fn answer_in(data: &[u8], ids: &[Value], untouched: &SkeletonRule) -> Found {
    if let Some(id) = untouched.answered(data) {
        if ids.iter().any(|request| answers(&id, request)) {
            return Found::Answer {
                read_whole: false,
                layer_reads: SkeletonRule::skeleton(id),
            };
        }
        return Found::PassedUnread(cloned(unread::awaited_among(&[&id], ids)));
    }
    let Ok(message) = crate::jsonrpc::nested::from_slice(data) else {
        return Found::PassedUnread(cloned(unread::answered_ids(data, ids)));
    };
    let answer_ids = response_ids(&message);
    if answer_ids
        .iter()
        .any(|id| ids.iter().any(|request| answers(id, request)))
    {
        return Found::Answer {
            read_whole: true,
            layer_reads: message,
        };
    }
    Found::PassedUnread(cloned(unread::awaited_among(&answer_ids, ids)))
}

fn cloned(ids: Vec<&Value>) -> Vec<Value> {
    ids.into_iter().cloned().collect()
}

/// Which answers the layer leaves as the upstream wrote them, read by their
/// envelope only (as the stdio mode reads its child's, `crate::jsonrpc::envelope`): in
/// an exchange of one `tools/call` that names no task, a result that is no
/// tool error and no task handle (nor a `-32602` error under
/// `--invalid-params-as-tool-errors`) is passed on as its bytes, and the
/// layer reads a skeleton of it with its id. Every other answer is read whole.
#[derive(Debug)]
struct SkeletonRule {
    /// The exchange is one `tools/call`, naming no task.
    tools_call: bool,
    /// `--invalid-params-as-tool-errors` is on.
    invalid_params: bool,
}

impl SkeletonRule {
    /// The id of the answer that `data` (a JSON body, or an event's data) is
    /// when the layer would leave it as it is; `None` when it is no answer,
    /// or one the layer is to read whole.
    fn answered(&self, data: &[u8]) -> Option<Value> {
        if !self.tools_call {
            return None;
        }
        let Ok(Envelope::Single(fields)) = envelope::read(data) else {
            return None;
        };
        let untouched = fields.is_response()
            && !fields.has_error
            && !Method::ToolsCall.may_change_answer(&fields, self.invalid_params);
        untouched.then_some(fields.id).flatten()
    }

    /// What the layer reads of an answer with `id` that it leaves as it is: a
    /// result with nothing in it to rewrite, which it reads as a success.
    fn skeleton(id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    }
}

/// Whether `message` is one `tools/call` request (not a batch).
fn is_one_tools_call(message: &Value) -> bool {
    matches!(requests(message).as_slice(), [(_, true)]) && message.is_object()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_CALL: SkeletonRule = SkeletonRule {
        tools_call: true,
        invalid_params: false,
    };

    #[test]
    fn only_plain_results_to_one_tools_call_pass_unread() {
        let answered = |untouched: &SkeletonRule, data: &str| untouched.answered(data.as_bytes());
        let plain =
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}"#;
        assert_eq!(answered(&ONE_CALL, plain), Some(json!(7)));
        assert_eq!(answered(&ONE_CALL, &format!("  {plain}\n")), Some(json!(7)));
        for read_whole in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":true}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"task":{"taskId":"t"}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}}"#,
            r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#,
            "not json",
        ] {
            assert_eq!(answered(&ONE_CALL, read_whole), None, "{read_whole}");
        }
        let other_exchange = SkeletonRule {
            tools_call: false,
            invalid_params: false,
        };
        assert_eq!(answered(&other_exchange, plain), None);
        assert_eq!(
            SkeletonRule::skeleton(json!("a")),
            json!({"jsonrpc": "2.0", "id": "a", "result": {}})
        );
    }

    #[test]
    fn one_tools_call_is_a_single_request_not_a_batch() {
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}});
        assert!(is_one_tools_call(&call));
        assert!(!is_one_tools_call(&json!([call])));
        assert!(!is_one_tools_call(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        ));
        assert!(!is_one_tools_call(
            &json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "t"}})
        ));
    }
}
