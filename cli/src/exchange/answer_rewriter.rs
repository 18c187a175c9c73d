//! What the client gets of the upstream's answer to a request at the MCP
//! endpoint: the one place the HTTP mode decides it, whichever way the request
//! went (a [`DirectCall`](crate::exchange::direct_call::DirectCall) or an
//! [`exchange`](crate::exchange::layered_exchange)) and whatever carries the answer (a
//! JSON body or an event's data, [`answer_reader`](crate::exchange::answer_reader)).
//!
//! An answer is found by its id among the requests no answer reached yet
//! ([`AwaitedRequests`]) and goes through the layer
//! ([`LayerWork`]):
//!
//! - the layer's future, made when the request was sent ([`LayerCall`]),
//!   which holds the tool timeout's timer or the exported span, reads the
//!   first answer; it may answer first, with its own answer (the timeout), and
//!   the server is then told the requests are abandoned;
//! - otherwise the layer runs over each answer when it comes: a direct call
//!   whose span is not exported (only when the answer's envelope says the
//!   layer may change it), and each answer to a batch after the first, which
//!   a server may send as an event of its own (the TypeScript SDK writes each
//!   answer of a batch as one).
//!
//! To one `tools/call` naming no task of the proxy's, a result that is no tool
//! error and no task handle (nor a `-32602` error under
//! `--invalid-params-as-tool-errors`) is read by its envelope only and passes
//! as the upstream's bytes; the layer's future reads a skeleton of it with its
//! id, so that its span records a success. Every other answer is read whole,
//! and the client gets the upstream's bytes with what the layer changed
//! spliced in (`crate::jsonrpc::splice`), the server's task ids then made the
//! client's ([`ToClient`]).
//!
//! When no answer comes ([`Failure`]), the proxy's own answer goes through the
//! layer as the server's would, to every request nothing answered; a call the
//! client cancelled itself gets none ([`Cancel`]). An answer the proxy could
//! not read but a lenient client reads ([`unread`]) counts as an answer: the
//! request it answers gets no answer of the proxy's as well.

use std::task::{Context, Poll, ready};

use hyper::Response;
use hyper::header::HeaderMap;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::exchange::awaited_requests::AwaitedRequests;
use crate::exchange::cancel::{Cancel, no_answer_response};
use crate::exchange::failure::Failure;
use crate::exchange::layer_state::LayerState;
use crate::exchange::outbound::Outbound;
use crate::exchange::task_ids::ToClient;
use crate::exchange::unread;
use crate::http::body::ProxyBody;
use crate::http::own_response::made_response;
use crate::jsonrpc::envelope::{self, Envelope, Fields};
use crate::jsonrpc::layer_call::LayerCall;
use crate::jsonrpc::layer_over_answer::layer_over_answer;
use crate::jsonrpc::layer_request::LayerRequest;
use crate::jsonrpc::message::{Answer, response_ids};
use crate::jsonrpc::method::Method;
use crate::jsonrpc::tool_error_texts::ToolErrorTexts;

/// The requests of one message sent upstream, and what their answer becomes
/// for the client.
#[derive(Debug)]
pub(crate) struct AnswerRewriter {
    /// The layer, and what it remembers.
    layer_state: LayerState,
    /// The requests sent, and which of them an answer reached: one the
    /// layer read, or one the proxy could not read and passed as the server
    /// wrote it.
    requests: AwaitedRequests,
    /// Whether they went as a batch, which is answered with one.
    batch: bool,
    /// Whether nothing more is awaited, answered or not: no answer is to
    /// come, or none is to be written.
    ended: bool,
    /// What the layer has still to do with the answers.
    layer_work: LayerWork,
    /// Whether a plain result passes read by its envelope only: the message
    /// is one `tools/call` naming no task of the proxy's.
    plain_results_unread: bool,
    to_client: ToClient,
    cancel: Cancel,
}

/// How the layer reads the answers.
#[derive(Debug)]
pub(crate) enum LayerWork {
    /// The layer's future, made when the request was sent, and where the
    /// first answer is sent to it.
    Future(oneshot::Sender<Answer>, LayerCall),
    /// The layer over each answer when it comes.
    OnAnswer,
}

/// What an upstream message is to the requests awaiting an answer.
#[derive(Debug)]
pub(crate) enum UpstreamMessage {
    /// Their answer: the bytes the client gets, `None` when the upstream's
    /// pass as they are.
    Answer(Option<Vec<u8>>),
    /// Anything else: an answer the proxy could not read, a progress
    /// notification, a request of the server's.
    Other,
}

impl AnswerRewriter {
    /// For `requests` (as the layer reads each; a `batch` or one), sent with
    /// `headers` through `outbound` (where a cancellation goes too), whose
    /// answers the layer (`layer_state`'s) reads by `layer_work`;
    /// `plain_results_unread` when the message is one `tools/call` naming no
    /// task of the proxy's.
    pub(crate) fn new(
        layer_state: &LayerState,
        outbound: &Outbound,
        (requests, batch): (Vec<LayerRequest>, bool),
        headers: &HeaderMap,
        to_client: ToClient,
        layer_work: LayerWork,
        plain_results_unread: bool,
    ) -> Self {
        let requests = AwaitedRequests::new(requests);
        let ids = requests.ids();
        Self {
            layer_state: layer_state.clone(),
            requests,
            batch,
            ended: false,
            layer_work,
            plain_results_unread,
            to_client,
            cancel: Cancel::new(outbound, headers, ids),
        }
    }

    /// Whether nothing is awaited any more: every request was answered (by
    /// the server, the proxy or the layer), or none is to be.
    pub(crate) fn is_answered(&self) -> bool {
        self.ended || self.requests.all_answered()
    }

    /// Whether the layer's future awaits the answer, and may answer itself
    /// (the tool timeout).
    pub(crate) fn holds_layer_future(&self) -> bool {
        !self.is_answered() && matches!(self.layer_work, LayerWork::Future(..))
    }

    /// How the server's task ids in the other messages become the client's.
    pub(crate) fn to_client(&self) -> &ToClient {
        &self.to_client
    }

    /// What `data` (a JSON body, or an event's data) is to the requests
    /// awaiting an answer; when it answers some, it went through the layer.
    pub(crate) fn read(&mut self, data: &[u8]) -> UpstreamMessage {
        if self.is_answered() {
            return UpstreamMessage::Other;
        }
        match envelope::read(data) {
            Ok(Envelope::Single(fields)) => {
                let awaited = fields.id.as_ref().filter(|_| fields.is_response());
                match awaited.and_then(|id| self.requests.answered_by(id)) {
                    Some(request) => UpstreamMessage::Answer(self.answer(data, &fields, request)),
                    None => UpstreamMessage::Other,
                }
            }
            // A batch, or a message nested past the envelope's limit: read
            // whole.
            Ok(Envelope::Batch) => self.read_whole(data),
            Err(error) if error.is_too_deep() => self.read_whole(data),
            Err(_) => {
                self.read_leniently(data);
                UpstreamMessage::Other
            }
        }
    }

    /// `data` read whole: the answer, when one of its responses is awaited.
    fn read_whole(&mut self, data: &[u8]) -> UpstreamMessage {
        let Ok(value) = crate::jsonrpc::nested::from_slice(data) else {
            self.read_leniently(data);
            return UpstreamMessage::Other;
        };
        let answered: Vec<usize> = response_ids(&value)
            .into_iter()
            .filter_map(|id| self.requests.answered_by(id))
            .collect();
        if answered.is_empty() {
            return UpstreamMessage::Other;
        }
        UpstreamMessage::Answer(self.layered(data, value, true, &answered))
    }

    /// `data`, which the proxy could not read, read as a lenient client
    /// reads it: the requests it answers count as answered ([`unread`]).
    fn read_leniently(&mut self, data: &[u8]) {
        let awaited = self.requests.unanswered_ids();
        let answered = unread::answered_ids(data, &awaited);
        if answered.is_empty() {
            return;
        }
        unread::log_answer_passed_unread();
        let answered: Vec<usize> = answered
            .into_iter()
            .filter_map(|id| self.requests.answered_by(id))
            .collect();
        self.requests.mark_answered(&answered);
        if self.is_answered() {
            self.withdraw();
        }
    }

    /// The bytes for the client of the answer `data`, whose envelope is
    /// `fields`, to the request at `request` among the requests: `None` when
    /// the upstream's pass as they are.
    fn answer(&mut self, data: &[u8], fields: &Fields<'_>, request: usize) -> Option<Vec<u8>> {
        if !self.plain_results_unread {
            let value = self.whole(data)?;
            return self.layered(data, value, true, &[request]);
        }
        let invalid_params = self.layer_state.invalid_params().is_on();
        let may_change = Method::ToolsCall.may_change_answer(fields, invalid_params);
        let holds_future = matches!(self.layer_work, LayerWork::Future(..));
        if !may_change && (!fields.has_error || !holds_future) {
            // Left as it is: its bytes pass, and the layer's future reads a
            // success; an error the layer leaves alone is read only for a
            // span to record.
            if holds_future {
                let id = fields.id.clone().unwrap_or_default();
                self.resolve(Answer::made(plain_success(id)), &[request]);
            }
            self.requests.mark_answered(&[request]);
            return None;
        }
        if let Some(rewrapped) = self.rewrapped_texts(data, fields, request) {
            return rewrapped;
        }
        let value = self.whole(data)?;
        // In the answer to a `tools/call`, only a task handle names a task.
        self.layered(data, value, fields.result.may_be_task, &[request])
    }

    /// The tool error `data`, whose envelope is `fields`, answering the call
    /// at `request`, rewrapped by its texts alone ([`ToolErrorTexts`]) when
    /// nothing records the call's span or metric: the layer's future, if it
    /// waits, reads a success, as it does a plain result, and the layer
    /// rewraps the texts as it would the result read whole. `None` when the
    /// answer is to be read whole.
    fn rewrapped_texts(
        &mut self,
        data: &[u8],
        fields: &Fields<'_>,
        request: usize,
    ) -> Option<Option<Vec<u8>>> {
        let recorded = crate::telemetry::spans_exported() || crate::telemetry::metrics_recorded();
        if recorded || !fields.result.is_error || fields.result.may_be_task || fields.has_error {
            return None;
        }
        let tool = self.requests.request(request).tool()?;
        let mut texts = ToolErrorTexts::read(data)?;
        self.layer_state
            .layer()
            .rewrap_error_texts(tool, texts.texts_mut());
        if matches!(self.layer_work, LayerWork::Future(..)) {
            let id = fields.id.clone().unwrap_or_default();
            self.resolve(Answer::made(plain_success(id)), &[request]);
        }
        self.requests.mark_answered(&[request]);
        Some(texts.written(data))
    }

    /// `data` read whole; when it cannot be (a string past what the envelope
    /// checked), the answer passes as it is and nothing is awaited.
    fn whole(&mut self, data: &[u8]) -> Option<Value> {
        let value = crate::jsonrpc::nested::from_slice(data).ok();
        if value.is_none() {
            self.withdraw();
        }
        value
    }

    /// The answer `data`, read as `value`, to the requests at `requests`
    /// through the layer; with the server's task ids made the client's when
    /// `names_tasks`.
    fn layered(
        &mut self,
        data: &[u8],
        value: Value,
        names_tasks: bool,
        requests: &[usize],
    ) -> Option<Vec<u8>> {
        let batch = value.is_array();
        let answer = Answer::from_child(data.to_vec(), value);
        let mut answer = self.resolve_as(answer, requests, batch)?;
        if names_tasks {
            self.to_client.translate(&mut answer.value);
        }
        crate::jsonrpc::splice::rewritten(data, &answer.value)
    }

    /// `answer`, to the requests at `requests`, through the layer: what it
    /// returned, `None` when there is nothing to write. Those requests are
    /// answered after.
    fn resolve(&mut self, answer: Answer, requests: &[usize]) -> Option<Answer> {
        self.resolve_as(answer, requests, self.batch)
    }

    /// [`AnswerRewriter::resolve`], the layer over an answer at hand reading
    /// the requests as a `batch` or one.
    fn resolve_as(&mut self, answer: Answer, requests: &[usize], batch: bool) -> Option<Answer> {
        self.requests.mark_answered(requests);
        match std::mem::replace(&mut self.layer_work, LayerWork::OnAnswer) {
            LayerWork::Future(sender, call) if self.batch && !answer.value.is_array() => {
                // The layer's future reads the message as it was sent: the
                // answer to one request of a batch, alone in its event,
                // reaches it as a batch of one.
                let mut answer = answer;
                answer.value = Value::Array(vec![answer.value.take()]);
                let mut answered = call.resolve(sender, answer)?;
                if let Value::Array(one) = &mut answered.value
                    && one.len() == 1
                {
                    answered.value = one.remove(0);
                }
                Some(answered)
            }
            LayerWork::Future(sender, call) => call.resolve(sender, answer),
            LayerWork::OnAnswer => {
                let mut read = requests
                    .iter()
                    .map(|&request| self.requests.request(request).clone().into_value());
                let request = if batch {
                    Value::Array(read.collect())
                } else {
                    read.next().unwrap_or_default()
                };
                layer_over_answer(
                    self.layer_state.layer(),
                    self.layer_state.invalid_params(),
                    request,
                    answer,
                )
            }
        }
    }

    /// No answer is to come, or none is to be written: the layer's future,
    /// if it still waits, sees its request withdrawn (its span ends
    /// unrecorded).
    pub(crate) fn withdraw(&mut self) {
        self.ended = true;
        if let LayerWork::Future(sender, call) =
            std::mem::replace(&mut self.layer_work, LayerWork::OnAnswer)
        {
            call.withdraw(sender);
        }
    }

    /// The layer's own answer, when it answers before the server (the tool
    /// timeout): the server is told the requests are abandoned, and the
    /// bytes are those the client gets, `None` when it cancelled every call
    /// itself. Pending while the layer waits, and for ever when it holds no
    /// future.
    pub(crate) fn poll_layer_answer(&mut self, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        let LayerWork::Future(_, call) = &mut self.layer_work else {
            return Poll::Pending;
        };
        let answer = ready!(call.poll_own_answer(cx));
        self.layer_work = LayerWork::OnAnswer;
        self.ended = true;
        let answer = answer.and_then(|answer| {
            self.cancel
                .give_up(self.layer_state.seen_calls(), answer.value, true)
        });
        Poll::Ready(answer.map(|answer| crate::jsonrpc::nested::to_vec(&answer)))
    }

    /// The answer the proxy makes for `failure`, through the layer, to the
    /// requests nothing answered; the server is told they are abandoned when
    /// `cancelled`. `None` when the client cancelled every call itself:
    /// neither happens then. Nothing is awaited after.
    pub(crate) fn failed(&mut self, failure: Failure, cancelled: bool) -> Option<Vec<u8>> {
        let unanswered = self.requests.left();
        let failed: Vec<(Value, bool)> = unanswered
            .iter()
            .filter_map(|&request| {
                let request = self.requests.request(request);
                Some((request.id()?.clone(), request.is_tool_call()))
            })
            .collect();
        let made = failure.answer_to(&failed, self.batch);
        let Some(made) = self
            .cancel
            .give_up(self.layer_state.seen_calls(), made, cancelled)
        else {
            self.withdraw();
            return None;
        };
        let answer = self
            .resolve(Answer::made(made.clone()), &unanswered)
            .unwrap_or_else(|| Answer::made(made));
        self.ended = true;
        let mut bytes = answer.into_line().0;
        // A made answer is a line: the body or the event ends it.
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
        }
        Some(bytes)
    }

    /// The client's response when the proxy gives the requests up for
    /// `failure` ([`AnswerRewriter::failed`]).
    pub(crate) fn failed_response(
        &mut self,
        failure: Failure,
        cancelled: bool,
    ) -> Response<ProxyBody> {
        let answer = self.failed(failure, cancelled);
        made_or_none(answer)
    }
}

/// The client's response holding `answer`, made by the proxy or the layer;
/// `202 Accepted` with no body when there is none.
pub(crate) fn made_or_none(answer: Option<Vec<u8>>) -> Response<ProxyBody> {
    match answer {
        Some(answer) => made_response(answer),
        None => no_answer_response(),
    }
}

/// A success answering the call `id`, as the layer reads a result whose
/// envelope says it is neither a tool error nor a task handle: the layer
/// leaves such an answer as it is and records a success, whatever its
/// content; the content's bytes pass to the client unread.
fn plain_success(id: Value) -> Value {
    let mut answer = serde_json::Map::new();
    answer.insert("jsonrpc".to_owned(), Value::from("2.0"));
    answer.insert("id".to_owned(), id);
    answer.insert("result".to_owned(), Value::Object(serde_json::Map::new()));
    Value::Object(answer)
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderMap;

    use super::*;
    use std::time::Duration;

    use mcp_tool_errors::ToolErrorLayer;

    use crate::exchange::direct_call::DirectCall;
    use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
    use crate::jsonrpc::nested;
    use crate::jsonrpc::splice::rewritten;
    use crate::jsonrpc::timed_tools::TimedTools;
    use crate::server::drain::{Drain, Phase};
    use crate::upstream::client::UpstreamClient;
    use crate::upstream::url::{connector, parse_upstream};

    /// What an exchange is given: the layer and its state, and a client of
    /// an upstream nobody serves (no test here sends anything), with the
    /// sender that keeps its drain from ending.
    struct Given {
        layer_state: LayerState,
        outbound: Outbound,
        _serving: tokio::sync::watch::Sender<Phase>,
    }

    /// What an exchange is given under a layer with a tool timeout of 60 s
    /// (every call then goes through an exchange) when `timed`.
    fn given(timed: bool) -> Given {
        let url = parse_upstream("http://127.0.0.1:9/mcp").expect("a URL");
        let client = UpstreamClient::new(&connector(&url).expect("a connector"), &url);
        let mut layer = ToolErrorLayer::new();
        if timed {
            layer = layer.tool_timeout(Duration::from_secs(60));
        }
        let layer_state = LayerState::new(layer, InvalidParamsAsToolErrors::new(false));
        let (serving, drain) = Drain::new();
        Given {
            layer_state,
            outbound: Outbound { client, drain },
            _serving: serving,
        }
    }

    /// A `tools/call` of `tool` (as written in JSON, escapes and all).
    fn call(tool: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{tool}","arguments":{{"q":"x"}}}}}}"#
        )
    }

    /// The bytes the client gets of `answer` to `call` (a direct call, or
    /// an exchange that holds the layer's future), as the rewriter writes
    /// them.
    fn read(given: &Given, call: &str, answer: &[u8], direct: bool) -> Option<Vec<u8>> {
        let mut rewriter = if direct {
            let untimed = TimedTools::new(false, Vec::new());
            DirectCall::read(call.as_bytes(), &HeaderMap::new(), &untimed)
                .expect("a direct call")
                .rewriter(&given.layer_state, &given.outbound, &HeaderMap::new())
        } else {
            let message: Value = serde_json::from_str(call).expect("JSON");
            let sent = LayerRequest::each_of(&message);
            let to_client = ToClient::new(&message, &[], given.layer_state.known_tasks());
            let (sender, layer_call) = LayerCall::call(
                given.layer_state.layer(),
                given.layer_state.invalid_params(),
                message,
            );
            let work = LayerWork::Future(sender, layer_call);
            AnswerRewriter::new(
                &given.layer_state,
                &given.outbound,
                (sent, false),
                &HeaderMap::new(),
                to_client,
                work,
                true,
            )
        };
        match rewriter.read(answer) {
            UpstreamMessage::Answer(bytes) => bytes,
            UpstreamMessage::Other => panic!("not an answer: {}", String::from_utf8_lossy(answer)),
        }
    }

    /// The bytes the client gets of `answer` to `call` when the answer is
    /// read whole, put through the layer (over it at hand for a direct call,
    /// through its future for an exchange) and spliced.
    fn read_whole(given: &Given, call: &str, answer: &[u8], direct: bool) -> Option<Vec<u8>> {
        let layer_state = &given.layer_state;
        let message: Value = serde_json::from_str(call).expect("JSON");
        let value = nested::from_slice(answer).ok()?;
        let answer_read = Answer::from_child(answer.to_vec(), value);
        let answered = if direct {
            let request = LayerRequest::each_of(&message).remove(0).into_value();
            layer_over_answer(
                layer_state.layer(),
                layer_state.invalid_params(),
                request,
                answer_read,
            )
        } else {
            let (sender, layer_call) =
                LayerCall::call(layer_state.layer(), layer_state.invalid_params(), message);
            layer_call.resolve(sender, answer_read)
        }?;
        rewritten(answer, &answered.value)
    }

    /// Tool errors whose texts alone are read, and some that are read whole.
    const ANSWERS: [(&str, bool); 13] = [
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"bench-failure"}],"isError":true}}"#,
            true,
        ),
        // Escapes in the text, spacing, a key order of the server's own.
        (
            "{ \"result\" : { \"isError\" : true, \"content\" : [ { \"text\" : \"a \\\"quoted\\\"\\nline </error> \\u00e9 \\ud83d\\ude00\", \"type\" : \"text\" } ] }, \"id\" : 7, \"jsonrpc\" : \"2.0\" }\n",
            true,
        ),
        // Structured content, other items, numbers as the server spelled
        // them, an id that answers 7.
        (
            r#"{"jsonrpc":"2.0","id":7.0,"result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"one"},{"type":"resource","resource":{"uri":"x","text":7}},{"type":"text","text":"two","annotations":{"priority":1.50}}],"structuredContent":{"code":-0,"detail":[1e2,{"a":null}]},"_meta":{"k":"v"},"isError":true}}"#,
            true,
        ),
        // Already rendered for the tool called, and for another.
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"<error tool=\"search\">\nx\n</error>"},{"type":"text","text":"<error tool=\"other\">\ny\n</error>"}],"isError":true}}"#,
            true,
        ),
        // A key with an escape, a key named twice anywhere, a mark of the
        // layer's, a member the layer may read: read whole.
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"\u0074ype":"text","text":"x"}],"isError":true}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1,"a":2},"isError":true}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"isError":false,"isError":true}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"isError":true},"mcp_tool_errors.no_answer":"server_exited"}"#,
            false,
        ),
        // What serde_json does not read into a value: passed as it is.
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1e400},"isError":true}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"},{"type":"image","text":"\ud800"}],"isError":true}}"#,
            false,
        ),
        // Malformed, or with no text: as the layer leaves it or gives it one.
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"},{"type":"text","text":7}],"isError":true}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text"}],"isError":true}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"image","data":"AA=="}],"isError":true}}"#,
            false,
        ),
    ];

    #[tokio::test]
    async fn a_tool_error_read_by_its_texts_is_written_as_when_read_whole() {
        let (direct, timed) = (given(false), given(true));
        // A call whose bytes hold `\u` goes through an exchange only.
        for tool in ["search", r#"se\"ar\\ch <x> é"#, r#"se\u0061rch"#] {
            let call = call(tool);
            for (answer, by_texts) in ANSWERS {
                let answer = answer.as_bytes();
                assert_eq!(
                    ToolErrorTexts::read(answer).is_some(),
                    by_texts,
                    "{}",
                    String::from_utf8_lossy(answer)
                );
                for (given, is_direct) in [(&direct, true), (&timed, false)] {
                    if is_direct && tool.contains("\\u") {
                        continue;
                    }
                    let got = read(given, &call, answer, is_direct);
                    let whole = read_whole(given, &call, answer, is_direct);
                    assert_eq!(
                        got.as_deref().map(String::from_utf8_lossy),
                        whole.as_deref().map(String::from_utf8_lossy),
                        "direct: {is_direct}, {tool}, {}",
                        String::from_utf8_lossy(answer)
                    );
                }
            }
        }
    }

    mod properties {
        use proptest::prelude::*;
        use serde_json::json;

        use super::*;

        fn text() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop_oneof![
                    Just('"'),
                    Just('\\'),
                    Just('\n'),
                    Just('<'),
                    Just('é'),
                    Just('\u{1F600}'),
                    Just('\u{0}'),
                    prop::char::range('a', 'e'),
                ],
                0..8,
            )
            .prop_map(|chars| chars.into_iter().collect())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            /// Whatever the texts, the items between them, the members
            /// beside them and the layout, a tool error read by its texts
            /// is written as when read whole.
            #[test]
            fn a_tool_error_is_written_as_when_read_whole(
                texts in prop::collection::vec((text(), any::<bool>()), 1..4),
                structured in prop::option::of(text()),
                pretty in any::<bool>(),
            ) {
                let content: Vec<Value> = texts
                    .iter()
                    .flat_map(|(text, image)| {
                        let mut items = vec![json!({"type": "text", "text": text})];
                        if *image {
                            items.push(json!({"type": "image", "data": text, "mimeType": "image/png"}));
                        }
                        items
                    })
                    .collect();
                let mut result = json!({"content": content, "isError": true});
                if let Some(structured) = structured {
                    result["structuredContent"] = json!({"detail": structured, "n": [1.5, -0, null]});
                }
                let answer = json!({"jsonrpc": "2.0", "id": 7, "result": result});
                let answer = if pretty {
                    serde_json::to_vec_pretty(&answer).unwrap()
                } else {
                    serde_json::to_vec(&answer).unwrap()
                };
                prop_assert!(ToolErrorTexts::read(&answer).is_some());
                let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
                let _entered = runtime.enter();
                let (direct, timed) = (given(false), given(true));
                for (given, is_direct) in [(&direct, true), (&timed, false)] {
                    let call = call("search");
                    prop_assert_eq!(
                        read(given, &call, &answer, is_direct),
                        read_whole(given, &call, &answer, is_direct)
                    );
                }
            }
        }
    }

    /// Answers spelled every way a grammar of tool errors allows (keys
    /// escaped and repeated, numbers of every spelling, strings with every
    /// escape, items of every kind, spacing anywhere, members beside
    /// `result`): every one that is read by its texts is written as when read
    /// whole, direct and through an exchange.
    #[tokio::test]
    async fn generated_tool_errors_read_by_their_texts_are_written_as_when_read_whole() {
        let (direct, timed) = (given(false), given(true));
        let mut random = Spelling(0x9e37_79b9_7f4a_7c15);
        let (mut by_texts, mut compared) = (0, 0);
        for _ in 0..20_000 {
            let answer = random.answer();
            let answer = answer.as_bytes();
            if ToolErrorTexts::read(answer).is_none() {
                continue;
            }
            by_texts += 1;
            for (given, is_direct) in [(&direct, true), (&timed, false)] {
                let call = call("search");
                let whole = read_whole(given, &call, answer, is_direct);
                let got = read(given, &call, answer, is_direct);
                compared += 1;
                assert_eq!(
                    got.as_deref().map(String::from_utf8_lossy),
                    whole.as_deref().map(String::from_utf8_lossy),
                    "direct: {is_direct}, {}",
                    String::from_utf8_lossy(answer)
                );
            }
        }
        assert!(by_texts > 300, "only {by_texts} read by their texts");
        assert!(compared > 0);
    }

    /// A tool error's spellings, drawn from a seed (xorshift).
    struct Spelling(u64);

    impl Spelling {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
            choices[(self.next() % choices.len() as u64) as usize]
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }

        fn space(&mut self) -> &'static str {
            self.pick(&["", "", "", " ", "\n", "\t", "\r\n  "])
        }

        fn key(&mut self, name: &str) -> String {
            match self.next() % 20 {
                0 => format!("\"\\u{:04x}{}\"", name.as_bytes()[0], &name[1..]),
                _ => format!("\"{name}\""),
            }
        }

        fn string(&mut self) -> String {
            let mut text = String::from("\"");
            for _ in 0..self.next() % 6 {
                text.push_str(self.pick(&[
                    "a",
                    "\\u00e9",
                    "\\ud83d\\ude00",
                    "\\/",
                    "\\n",
                    "\\\"",
                    "\\\\",
                    "</error>",
                    "<error tool=\\\"search\\\">\\n",
                    "\\u0000",
                    "\\t",
                    "é",
                    "\u{7f}",
                    "\\ud800",
                    "\\udc00",
                    "password=hunter2",
                    "\\u003c",
                    "text",
                    "\\uD83D\\uDE00",
                ]));
            }
            text.push('"');
            text
        }

        fn number(&mut self) -> String {
            self.pick(&[
                "1",
                "-0",
                "1.0",
                "1e2",
                "1E+2",
                "0.1e-2",
                "1e400",
                "-1e400",
                "123456789012345678901234567890",
                "18446744073709551616",
                "5e-324",
                "1.50",
                "-9223372036854775809",
                "0.30000000000000004",
            ])
            .to_owned()
        }

        fn scalar(&mut self) -> String {
            match self.next() % 5 {
                0 => self.string(),
                1 => self.number(),
                2 => self.pick(&["true", "false", "null"]).to_owned(),
                _ => self.string(),
            }
        }

        fn value(&mut self, depth: u32) -> String {
            if depth == 0 || self.chance(50) {
                return self.scalar();
            }
            if self.chance(50) {
                let items: Vec<String> = (0..self.next() % 3)
                    .map(|_| self.value(depth - 1))
                    .collect();
                format!("[{}]", items.join(","))
            } else {
                let names = ["a", "b", "text", "type", "_meta", "isError", "content"];
                let members: Vec<String> = (0..self.next() % 4)
                    .map(|_| {
                        let name = self.pick(&names);
                        format!("{}:{}", self.key(name), self.value(depth - 1))
                    })
                    .collect();
                format!("{{{}}}", members.join(","))
            }
        }

        fn object(&mut self, members: Vec<(String, String)>) -> String {
            let written: Vec<String> = members
                .into_iter()
                .map(|(name, value)| {
                    let (a, b, c, d) = (self.space(), self.space(), self.space(), self.space());
                    format!("{a}{}{b}:{c}{value}{d}", self.key(&name))
                })
                .collect();
            format!("{{{}}}", written.join(","))
        }

        fn item(&mut self) -> String {
            match self.next() % 10 {
                0 => self.scalar(),
                1 => self.value(2),
                2..=6 => {
                    let mut members = vec![
                        (
                            "type".to_owned(),
                            self.pick(&[
                                "\"text\"",
                                "\"text\"",
                                "\"te\\u0078t\"",
                                "\"image\"",
                                "\"Text\"",
                                "7",
                            ])
                            .to_owned(),
                        ),
                        (
                            "text".to_owned(),
                            if self.chance(90) {
                                self.string()
                            } else {
                                self.value(1)
                            },
                        ),
                    ];
                    if self.chance(20) {
                        members.push(("annotations".to_owned(), self.value(2)));
                    }
                    if self.chance(10) {
                        members.push(("text".to_owned(), self.string()));
                    }
                    if self.chance(50) {
                        members.reverse();
                    }
                    self.object(members)
                }
                _ => {
                    let members = vec![
                        ("type".to_owned(), "\"image\"".to_owned()),
                        ("data".to_owned(), self.string()),
                        ("mimeType".to_owned(), "\"image/png\"".to_owned()),
                    ];
                    self.object(members)
                }
            }
        }

        fn answer(&mut self) -> String {
            let items: Vec<String> = (0..1 + self.next() % 4).map(|_| self.item()).collect();
            let content = format!("[{}{}]", self.space(), items.join(","));
            let mut result = vec![
                ("content".to_owned(), content),
                (
                    "isError".to_owned(),
                    self.pick(&["true", "true", "true", "\"true\"", "1"])
                        .to_owned(),
                ),
            ];
            for name in ["structuredContent", "_meta", "isError", "content"] {
                if self.chance(15) {
                    let value = self.value(3);
                    result.push((name.to_owned(), value));
                }
            }
            if self.chance(50) {
                result.reverse();
            }
            let result = self.object(result);
            let id = self
                .pick(&["7", "7", "7.0", "7e0", "70e-1", "0.7e1"])
                .to_owned();
            let mut answer = vec![
                ("jsonrpc".to_owned(), "\"2.0\"".to_owned()),
                ("id".to_owned(), id),
                ("result".to_owned(), result),
            ];
            if self.chance(5) {
                answer.push((
                    self.pick(&["error", "method", "id", "x"]).to_owned(),
                    self.value(1),
                ));
            }
            if self.chance(30) {
                answer.reverse();
            }
            format!("{}{}{}", self.space(), self.object(answer), self.space())
        }
    }

    #[test]
    fn a_batch_an_error_response_or_a_task_handle_is_not_read_by_its_texts() {
        for answer in [
            // A task handle, which the layer remembers, its id made the
            // client's.
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"task":{"taskId":"t"},"isError":true}}"#,
            r#"[{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"isError":true}}]"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"isError":true}} {}"#,
        ] {
            assert!(
                ToolErrorTexts::read(answer.as_bytes()).is_none(),
                "{answer}"
            );
        }
    }
}
