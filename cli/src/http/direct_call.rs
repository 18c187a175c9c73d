//! One `tools/call` that the layer need not hold while it runs: sent upstream
//! as the client's bytes, its answer read by its envelope and put through the
//! layer only when the layer may change it, as the stdio mode sends the
//! requests no timeout applies to (`crate::jsonrpc::layer_over_answer`).
//!
//! Such a call is one request (not a batch), of a tool no `--tool-timeout`
//! applies to, naming no task id of the proxy's (nothing to translate before
//! it goes upstream). Everything else is an [`exchange`](crate::http::exchange),
//! whose layer future holds the timer. What the layer would do to this call it
//! does to its answer at hand ([`crate::jsonrpc::layer_over_answer::layer_over_answer`]): a tool error is
//! rewrapped, a task handle remembered (its id then becomes the client's, as
//! in every exchange), a `-32602` converted under
//! `--invalid-params-as-tool-errors`; a plain result passes as the upstream's
//! bytes, unparsed.
//!
//! When spans are exported, the layer's future is made as the call is sent
//! ([`LayerCall`]), with the trace context of the call's `params._meta` or of its
//! `traceparent` header, and resolved with whatever answer comes: the span
//! covers the call, and records how it ended. A plain success (neither a tool
//! error nor a task handle, by its envelope) is read as what the envelope
//! says and passes as the upstream's bytes; any other answer is read whole.
//! A response that holds no answer (a 4xx, an encoding the proxy does not
//! decode) passes as it is and ends the span unrecorded, as in an exchange.
//!
//! An event stream is rewritten as a body that hyper polls itself: each event
//! passes when the upstream's bytes bring it, nothing between them but this
//! module's reading of the answer's envelope. The failures are those of an
//! exchange, with the same answers: no connection, a stream or body that ends
//! before the answer, a 5xx without one, a message larger than
//! [`MAX_MESSAGE_BYTES`], the end of a drain (the server is then sent
//! `notifications/cancelled`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Body, Bytes, Frame};
use hyper::header::{self, HeaderMap};
use hyper::{Request, Response};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::http::body::{BoxError, MAX_MESSAGE_BYTES, ProxyBody, whole};
use crate::http::cancel::{Cancel, no_answer_response};
use crate::http::client::UpstreamBody;
use crate::http::decoded::{Encoding, answer_type, decoded, encoding};
use crate::http::drain::Phase;
use crate::http::failure::{Failure, describe, made_response};
use crate::http::gather::GATHER_TURNS;
use crate::http::headers::{MediaType, passed_through};
use crate::http::proxy::Proxy;
use crate::http::task_ids::{self, ToClient};
use crate::http::{headers, sse, unread};
use crate::jsonrpc::envelope::{self, Envelope, Fields};
use crate::jsonrpc::layer_call::LayerCall;
use crate::jsonrpc::layer_over_answer::layer_over_answer;
use crate::jsonrpc::layer_request::{LayerRequest, Method};
use crate::jsonrpc::message::{Answer, answers};
use crate::options::TimedTools;

/// A `tools/call` the layer need not hold: its id and tool.
#[derive(Debug)]
pub(crate) struct DirectCall {
    id: Value,
    tool: Box<str>,
    /// With spans exported, what the layer reads of the call, its trace
    /// context included: the layer's future is then made when the call is
    /// sent, and resolved with its answer ([`LayerCall`]).
    traced: Option<Value>,
}

impl DirectCall {
    /// The call that `bytes` (a request sent with `headers`) hold, when it is
    /// one `tools/call` of a tool that `timed` leaves out, naming no task id
    /// of the proxy's; `None` for anything else.
    pub(crate) fn read(bytes: &[u8], headers: &HeaderMap, timed: &TimedTools) -> Option<Self> {
        // A request with task ids to translate is read whole; so is one
        // whose bytes do not spell `"tools/call"` (written with an escape, it
        // is still answered right, by an exchange), without reading its
        // envelope first.
        if task_ids::may_name_a_task(bytes, headers)
            || memchr::memmem::find(bytes, b"\"tools/call\"").is_none()
        {
            return None;
        }
        let Ok(Envelope::Single(fields)) = envelope::read(bytes) else {
            return None;
        };
        let is_call = fields.is_request() && fields.method.as_deref() == Some("tools/call");
        let tool = fields.params.name?;
        if !is_call || timed.includes(&tool) {
            return None;
        }
        let id = fields.id?;
        let traced = crate::telemetry::spans_exported().then(|| {
            let mut request = read_by_layer(&id, &tool).traced(bytes).into_value();
            crate::telemetry::header_trace_context(headers, &mut request);
            request
        });
        Some(Self {
            id,
            tool: tool.into(),
            traced,
        })
    }

    pub(crate) fn id(&self) -> &Value {
        &self.id
    }

    pub(crate) fn tool(&self) -> &str {
        &self.tool
    }

    /// The call as the layer reads it (id, method, tool).
    fn request(&self) -> Value {
        read_by_layer(&self.id, &self.tool).into_value()
    }
}

/// What the layer reads of the call of `tool` with `id`.
fn read_by_layer(id: &Value, tool: &str) -> LayerRequest {
    LayerRequest::Single {
        id: id.clone(),
        method: Method::ToolsCall,
        name: Some(tool.into()),
    }
}

/// What an answer to a direct call is put through: the proxy's layer and
/// conversion, the call, and how its task ids reach the client.
#[derive(Debug)]
struct AnswerRewriter {
    proxy: Arc<Proxy>,
    call: DirectCall,
    to_client: ToClient,
    cancel: Cancel,
    /// The layer's future, made when the call was sent, when its span is
    /// exported; taken by the answer.
    held: Option<(oneshot::Sender<Answer>, LayerCall)>,
}

impl AnswerRewriter {
    /// Whether the answer whose envelope is `fields` is this call's.
    fn is_the_answer(&self, fields: &Fields<'_>) -> bool {
        fields.is_response()
            && fields
                .id
                .as_ref()
                .is_some_and(|id| answers(id, &self.call.id))
    }

    /// The bytes of the answer `data` (the upstream's, whose envelope is
    /// `fields`), as the client gets them: `None` when they pass as they are.
    fn rewrite(&mut self, data: &[u8], fields: &Fields<'_>) -> Option<Vec<u8>> {
        let invalid_params = self.proxy.invalid_params();
        let may_change = Method::ToolsCall.may_change_answer(fields, invalid_params.is_on());
        let mut answer = if let Some((sender, held)) = self.held.take() {
            // The span records how the call ended: the layer reads a plain
            // success as what the envelope says it is, anything else whole.
            let value = if may_change || fields.has_error {
                let Ok(value) = crate::jsonrpc::nested::from_slice(data) else {
                    held.withdraw(sender);
                    return None;
                };
                value
            } else {
                plain_success(&self.call.id)
            };
            if !may_change {
                // Passed as the upstream's bytes: the layer leaves it alone.
                let _recorded = held.resolve(sender, Answer::made(value));
                return None;
            }
            held.resolve(sender, Answer::from_child(data.to_vec(), value))?
        } else {
            if !may_change {
                return None;
            }
            let answer = Answer::from_child(
                data.to_vec(),
                crate::jsonrpc::nested::from_slice(data).ok()?,
            );
            layer_over_answer(
                &self.proxy.layer(),
                invalid_params,
                self.call.request(),
                answer,
            )?
        };
        // The answer to a `tools/call` names a task in a handle only.
        if fields.result.may_be_task {
            self.to_client.translate(&mut answer.value);
        }
        crate::jsonrpc::splice::rewritten(data, &answer.value)
    }

    /// The answer the proxy makes for `failure`, through the layer; the server
    /// is told the call is abandoned when `cancelled`. `None` when the client
    /// cancelled the call itself: neither happens then.
    fn failed(&mut self, failure: Failure, cancelled: bool) -> Option<Vec<u8>> {
        let request = self.call.request();
        let held = self.held.take();
        let Some(made) = self.cancel.give_up(failure.answer(&request), cancelled) else {
            if let Some((sender, held)) = held {
                held.withdraw(sender);
            }
            return None;
        };
        let answer = match held {
            Some((sender, held)) => held.resolve(sender, Answer::made(made.clone())),
            None => layer_over_answer(
                &self.proxy.layer(),
                self.proxy.invalid_params(),
                request,
                Answer::made(made.clone()),
            ),
        }
        .unwrap_or_else(|| Answer::made(made));
        let mut bytes = answer.into_line().0;
        // A made answer is a line: the body or the event ends it.
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
        }
        Some(bytes)
    }

    /// The client's response when the proxy gives the call up for `failure`
    /// ([`AnswerRewriter::failed`]).
    fn failed_response(&mut self, failure: Failure, cancelled: bool) -> Response<ProxyBody> {
        match self.failed(failure, cancelled) {
            Some(answer) => made_response(answer),
            None => no_answer_response(),
        }
    }
}

/// A success answering the call `id`, as the layer reads a result whose
/// envelope says it is neither a tool error nor a task handle: the layer
/// leaves such an answer as it is and records a success, whatever its
/// content; the content's bytes pass to the client unread.
fn plain_success(id: &Value) -> Value {
    let mut answer = serde_json::Map::new();
    answer.insert("jsonrpc".to_owned(), Value::from("2.0"));
    answer.insert("id".to_owned(), id.clone());
    answer.insert("result".to_owned(), Value::Object(serde_json::Map::new()));
    Value::Object(answer)
}

/// Sends `request` (holding `call`) upstream and answers the client.
pub(crate) async fn exchange(
    proxy: &Arc<Proxy>,
    request: Request<ProxyBody>,
    mut call: DirectCall,
) -> Response<ProxyBody> {
    let cancel = Cancel::new(proxy, request.headers(), vec![call.id.clone()]);
    let to_client = ToClient::for_call(&call.id, &call.tool, proxy.known_tasks());
    // The span starts as the call is sent.
    let held = call
        .traced
        .take()
        .map(|request| LayerCall::call(&proxy.layer(), proxy.invalid_params(), request));
    let mut answering = AnswerRewriter {
        proxy: proxy.clone(),
        call,
        to_client,
        cancel,
        held,
    };
    let drain = proxy.drain().clone();
    let response = tokio::select! {
        biased;
        response = proxy.client().request(request) => response,
        () = drain.reached(Phase::Expired) => {
            return answering.failed_response(Failure::drained(), true);
        }
    };
    let response = match response {
        Ok(response) => response,
        Err(error) => {
            let failure = Failure::no_response(&proxy.endpoint(), &error);
            return answering.failed_response(failure, false);
        }
    };
    let Some(media_type) = answer_type(&response) else {
        // A 4xx is the transport's or OAuth's, not the tool's.
        return passed_through(response);
    };
    match (encoding(response.headers()), media_type) {
        (Encoding::Identity, MediaType::EventStream) => events(response, answering).await,
        (Encoding::Identity, _) => json_answer(response, answering).await,
        // Boxed: the future of this rare case does not make every call's larger.
        (Encoding::Decoded(format), _) => {
            Box::pin(answer(decoded(response, format), media_type, answering)).await
        }
        (Encoding::Other, _) => passed_through(response),
    }
}

/// The client's response for the answer `response` holds, decoded.
async fn answer<B>(
    response: Response<B>,
    media_type: MediaType,
    answering: AnswerRewriter,
) -> Response<ProxyBody>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    match media_type {
        MediaType::EventStream => events(response, answering).await,
        _ => json_answer(response, answering).await,
    }
}

/// A JSON body read whole: the answer, rewritten when the layer changes it; a
/// 5xx without one becomes a [`Failure`]; any other body passes as it is.
async fn json_answer<B>(response: Response<B>, mut answering: AnswerRewriter) -> Response<ProxyBody>
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let (mut parts, body) = response.into_parts();
    let drain = answering.proxy.drain().clone();
    let collected = tokio::select! {
        biased;
        collected = Limited::new(body, MAX_MESSAGE_BYTES).collect() => collected,
        () = drain.reached(Phase::Expired) => {
            return answering.failed_response(Failure::drained(), true);
        }
    };
    let bytes = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => {
            crate::log(&format!(
                "the server's answer is longer than {MAX_MESSAGE_BYTES} bytes: not read"
            ));
            return answering.failed_response(Failure::TooLarge, false);
        }
        Err(error) => {
            crate::log(&format!(
                "the server's answer was cut: {}",
                describe(&*error)
            ));
            return answering.failed_response(Failure::ClosedBeforeAnswer, false);
        }
    };
    headers::remove_hop_by_hop(&mut parts.headers);
    let bytes = match envelope::read(&bytes) {
        Ok(Envelope::Single(fields)) if answering.is_the_answer(&fields) => {
            match answering.rewrite(&bytes, &fields) {
                Some(rewritten) => {
                    // Hyper counts the body sent.
                    parts.headers.remove(header::CONTENT_LENGTH);
                    Bytes::from(rewritten)
                }
                None => bytes,
            }
        }
        _ if parts.status.is_server_error() => {
            Failure::log_status(parts.status);
            return answering.failed_response(Failure::Status(parts.status), false);
        }
        _ => bytes,
    };
    Response::from_parts(parts, whole(bytes))
}

/// An event stream: its head sent to the client with the events that came
/// with it, the rest as they come.
async fn events<B>(response: Response<B>, answering: AnswerRewriter) -> Response<ProxyBody>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error + 'static,
{
    let (mut parts, body) = response.into_parts();
    headers::remove_hop_by_hop(&mut parts.headers);
    parts.headers.remove(header::CONTENT_LENGTH);
    let drain = answering.proxy.drain().clone();
    let mut events = Events {
        body: Some(body),
        splitter: sse::EventSplitter::default(),
        answering,
        expired: Some(Box::pin(async move {
            drain.reached(Phase::Expired).await;
        })),
        resumable: false,
        unread: false,
        gathered: Vec::new(),
        end_turns: 0,
    };
    let mut turns = GATHER_TURNS;
    loop {
        let frame = std::future::poll_fn(|cx| Poll::Ready(events.next(cx))).await;
        match frame {
            Poll::Ready(Some(bytes)) => events.gathered.push(bytes),
            Poll::Ready(None) => break,
            Poll::Pending if turns > 0 => {
                turns -= 1;
                tokio::task::yield_now().await;
            }
            Poll::Pending => break,
        }
    }
    Response::from_parts(parts, events.boxed_unsync())
}

/// The client's event stream: the upstream's events, the answer rewritten
/// when the layer changes it, or the proxy's answer when none comes.
struct Events<B = UpstreamBody> {
    /// The upstream's stream; `None` once it is done with.
    body: Option<B>,
    splitter: sse::EventSplitter,
    answering: AnswerRewriter,
    /// The end of a drain, while the answer is awaited; `None` once it came.
    expired: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Whether the client holds an event id to resume the stream from.
    resumable: bool,
    /// Whether the rest of the stream passes unread (an event too large to
    /// read came after the answer).
    unread: bool,
    /// What was read and not yet sent, first out: before the head, and after
    /// the answer while the end is awaited.
    gathered: Vec<Bytes>,
    /// The turns left to await the end after an answer that came once the
    /// head was sent (before, the head waits for it).
    end_turns: usize,
}

impl<B> std::fmt::Debug for Events<B> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Events")
            .field("answered", &self.expired.is_none())
            .field("resumable", &self.resumable)
            .field("unread", &self.unread)
            .finish_non_exhaustive()
    }
}

impl<B> Events<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::error::Error + 'static,
{
    /// The next bytes for the client; `Ready(None)` at the end.
    fn next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            if let Some(event) = self.splitter.next_event() {
                return Poll::Ready(Some(Bytes::from(self.event(event))));
            }
            let Some(body) = self.body.as_mut() else {
                return Poll::Ready(None);
            };
            if let Some(expired) = self.expired.as_mut()
                && expired.as_mut().poll(cx).is_ready()
            {
                return self.end_with(Failure::drained(), true);
            }
            match ready!(Pin::new(body).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    if self.unread {
                        return Poll::Ready(Some(data));
                    }
                    self.splitter.push(&data);
                    if self.splitter.held() > MAX_MESSAGE_BYTES {
                        if self.expired.is_some() {
                            crate::log(&format!(
                                "the server sent an event longer than {MAX_MESSAGE_BYTES} bytes: \
                                 the stream is abandoned and the request cancelled"
                            ));
                            return self.end_with(Failure::TooLarge, true);
                        }
                        crate::log(&format!(
                            "the server sent an event longer than {MAX_MESSAGE_BYTES} bytes after the answer: passed on unread"
                        ));
                        return Poll::Ready(Some(self.pass_the_rest()));
                    }
                }
                Some(Err(error)) => {
                    crate::log(&format!(
                        "the server's event stream was cut: {}",
                        describe(&error)
                    ));
                    return self.end_unanswered();
                }
                None if self.expired.is_none() => {
                    self.body = None;
                    let rest = std::mem::take(&mut self.splitter).into_rest();
                    return Poll::Ready((!rest.is_empty()).then(|| Bytes::from(rest)));
                }
                // The server ended the stream on purpose, for the client to
                // resume it with `GET`: the answer comes there.
                None if self.resumable => {
                    self.body = None;
                    return Poll::Ready(None);
                }
                None => return self.end_unanswered(),
            }
        }
    }

    /// A whole event of the upstream's, as the client gets it.
    fn event(&mut self, event: Vec<u8>) -> Vec<u8> {
        if self.expired.is_none() {
            return self.answering.to_client.event(event);
        }
        if let Some(id) = sse::id(&event) {
            self.resumable = !id.is_empty();
        }
        let Some(data) = sse::data(&event) else {
            return event;
        };
        // An answer is an object (or, to a client, an array holding one): an
        // event without one (a stream's first, empty one) is not read.
        if !matches!(data.trim_ascii_start().first(), Some(b'{' | b'[')) {
            return self.answering.to_client.event(event);
        }
        let id = std::slice::from_ref(&self.answering.call.id);
        let answer = match envelope::read(&data) {
            Ok(Envelope::Single(fields)) if self.answering.is_the_answer(&fields) => {
                self.answering.rewrite(&data, &fields)
            }
            read => {
                // An answer to the call all the same, to a lenient client.
                let answers_the_call = match read {
                    Ok(Envelope::Single(fields)) => {
                        fields.is_response()
                            && fields.id.as_ref().is_some_and(|answer| {
                                !unread::awaited_among(&[answer], id).is_empty()
                            })
                    }
                    _ => !unread::answered_ids(&data, id).is_empty(),
                };
                if answers_the_call {
                    self.passed_unread();
                }
                return self.answering.to_client.event(event);
            }
        };
        self.expired = None;
        match answer {
            Some(answer) => sse::with_data(&event, &answer),
            None => event,
        }
    }

    /// The call is answered by an event the proxy could not read, which
    /// passes as it is: no answer of the proxy's is to follow.
    fn passed_unread(&mut self) {
        unread::log_answer_passed_unread();
        self.expired = None;
    }

    /// Everything held and the rest of the stream, unread.
    fn pass_the_rest(&mut self) -> Bytes {
        self.unread = true;
        Bytes::from(std::mem::take(&mut self.splitter).into_rest())
    }

    /// The stream ended or was cut before the answer.
    fn end_unanswered(&mut self) -> Poll<Option<Bytes>> {
        if self.expired.is_none() {
            self.body = None;
            return Poll::Ready(None);
        }
        self.end_with(Failure::ClosedBeforeAnswer, false)
    }

    /// Ends the stream with the proxy's answer for `failure`; without one when
    /// the client cancelled the call.
    fn end_with(&mut self, failure: Failure, cancelled: bool) -> Poll<Option<Bytes>> {
        self.body = None;
        self.expired = None;
        self.splitter = sse::EventSplitter::default();
        let answer = self.answering.failed(failure, cancelled);
        Poll::Ready(answer.map(|answer| Bytes::from(sse::event(&answer))))
    }
}

impl<B> Body for Events<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::error::Error + 'static,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        loop {
            // After the answer, what came with it waits a few turns for the
            // end of the stream, which then goes in the same write.
            let awaiting_end = !this.gathered.is_empty()
                && this.expired.is_none()
                && this.body.is_some()
                && this.end_turns > 0;
            if !this.gathered.is_empty() && !awaiting_end {
                return Poll::Ready(Some(Ok(Frame::data(this.gathered.remove(0)))));
            }
            let answered = this.expired.is_none();
            match this.next(cx) {
                Poll::Ready(Some(bytes)) => {
                    this.gathered.push(bytes);
                    if !answered && this.expired.is_none() {
                        this.end_turns = GATHER_TURNS;
                    }
                }
                Poll::Ready(None) if this.gathered.is_empty() => return Poll::Ready(None),
                Poll::Ready(None) => {}
                Poll::Pending if awaiting_end => {
                    this.end_turns -= 1;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.gathered.is_empty() && self.body.is_none()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use hyper::header::HeaderValue;
    use serde_json::json;

    use super::*;
    use crate::http::client::UpstreamClient;
    use crate::http::drain::Drain;
    use crate::http::upstream::{self, parse_upstream};
    use crate::options::http_options;

    fn timed(options: &[&str]) -> TimedTools {
        http_options(options).timed_tools()
    }

    fn call(tool: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{tool}","arguments":{{"q":"x"}}}}}}"#
        )
    }

    fn read(body: &str, timed: &TimedTools) -> Option<Value> {
        DirectCall::read(body.as_bytes(), &HeaderMap::new(), timed).map(|call| call.request())
    }

    #[test]
    fn a_call_of_a_tool_without_a_timeout_is_direct_and_read_by_its_envelope() {
        assert_eq!(
            read(&call("search"), &timed(&[])),
            Some(
                json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search"}})
            )
        );
        let build_only = timed(&["--tool-timeout-for", "build=2m"]);
        assert!(read(&call("search"), &build_only).is_some());
        assert_eq!(read(&call("build"), &build_only), None);
        assert_eq!(
            read(&call("search"), &timed(&["--tool-timeout", "30s"])),
            None
        );
    }

    #[test]
    fn batches_other_methods_notifications_and_what_is_no_json_go_through_an_exchange() {
        let untimed = timed(&[]);
        for body in [
            format!("[{}]", call("search")),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            "not json".to_owned(),
        ] {
            assert_eq!(read(&body, &untimed), None, "{body}");
        }
    }

    #[test]
    fn a_call_that_may_name_a_task_of_the_proxys_goes_through_an_exchange() {
        let untimed = timed(&[]);
        let related = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"mte1.74.31.0badc0de"}}}}"#;
        assert_eq!(read(related, &untimed), None);
        // The escape may spell the prefix: only reading the message tells.
        let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"q":"\u006dte1."}}}"#;
        assert_eq!(read(escaped, &untimed), None);
        let mut headers = HeaderMap::new();
        headers.insert("mcp-name", HeaderValue::from_static("mte1.74.31.0badc0de"));
        assert!(DirectCall::read(call("t").as_bytes(), &headers, &untimed).is_none());
    }

    /// An upstream event stream as hyper's client hands it on: a frame, or
    /// nothing yet (the connection's task has not run) on a turn.
    struct Upstream(VecDeque<Option<&'static str>>);

    impl Body for Upstream {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            match self.0.pop_front() {
                Some(Some(bytes)) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(bytes))))),
                Some(None) => {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                None => Poll::Ready(None),
            }
        }
    }

    const PRIMING: &str = "id: 0/1\ndata: \n\n";
    const ANSWER: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n";

    /// The client's stream for the upstream's `frames` (`None`: a turn
    /// without one): each frame sent, and whether hyper, asking after it,
    /// learns that the stream ends there (then the end goes in its write).
    async fn client_frames(frames: &[Option<&'static str>]) -> Vec<(String, bool)> {
        let url = parse_upstream("http://127.0.0.1:9/mcp").expect("a URL");
        let client = UpstreamClient::new(&upstream::connector(&url).expect("a connector"), &url);
        // LayerCall to the end: without it, the drain is over.
        let (_serving, drain) = Drain::new();
        let proxy = Arc::new(Proxy::new(url, client, &http_options(&[]), drain));
        let call = DirectCall::read(call("search").as_bytes(), &HeaderMap::new(), &timed(&[]))
            .expect("a direct call");
        let answering = AnswerRewriter {
            cancel: Cancel::new(&proxy, &HeaderMap::new(), vec![call.id.clone()]),
            to_client: ToClient::for_call(&call.id, &call.tool, proxy.known_tasks()),
            proxy,
            call,
            held: None,
        };
        let upstream = Response::new(Upstream(frames.iter().copied().collect()));
        let mut body = events(upstream, answering).await.into_body();
        let mut sent = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame.expect("no error").into_data().expect("data");
            sent.push((
                String::from_utf8_lossy(&data).into_owned(),
                body.is_end_stream(),
            ));
        }
        sent
    }

    #[tokio::test]
    async fn the_end_of_a_stream_that_came_with_the_head_goes_with_the_answer() {
        let frames = [None, Some(PRIMING), None, Some(ANSWER), None];
        assert_eq!(
            client_frames(&frames).await,
            [(PRIMING.to_owned(), false), (ANSWER.to_owned(), true)]
        );
    }

    #[tokio::test]
    async fn the_end_of_a_stream_that_came_after_the_head_goes_with_the_answer() {
        let mut frames = vec![Some(PRIMING)];
        // The tool takes longer than the head waits for.
        frames.extend([None; GATHER_TURNS + 2]);
        frames.extend([Some(ANSWER), None, None]);
        assert_eq!(
            client_frames(&frames).await,
            [(PRIMING.to_owned(), false), (ANSWER.to_owned(), true)]
        );
    }

    #[tokio::test]
    async fn a_stream_kept_open_after_the_answer_sends_it_after_a_few_turns() {
        let mut frames = vec![Some(PRIMING), Some(ANSWER)];
        frames.extend([None; 2 * GATHER_TURNS + 2]);
        frames.push(Some("data: late\n\n"));
        let sent = client_frames(&frames).await;
        assert_eq!(sent[1], (ANSWER.to_owned(), false));
        assert_eq!(sent.len(), 3, "{sent:?}");
    }
}
