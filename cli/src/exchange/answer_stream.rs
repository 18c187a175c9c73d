//! An upstream event stream at the MCP endpoint, as the client gets it: a
//! body that hyper polls itself, each event passing when the upstream's bytes
//! bring it, the answer's rewritten by the
//! [`AnswerRewriter`], the other events' task ids made the client's.
//!
//! While the answer is awaited, the stream also ends with an answer of the
//! proxy's or the layer's ([`answer_reader`](crate::exchange::answer_reader)):
//! when it ends or is cut before the answer, when an event is larger than
//! [`MAX_MESSAGE_BYTES`], at the end of a drain, at the layer's own answer
//! (the tool timeout). A stream the server ends on purpose after an event id
//! ends without one: the client resumes it with `GET`, where the answer
//! comes. After the answer, the rest passes as it comes; an event too large
//! to read then passes unread, with the rest of the stream.
//!
//! What the upstream sent together goes to the client in one write: hyper's
//! client hands a response body on one frame per turn of the runtime (its
//! connection's task runs between them), so an event stream's head, its
//! events and its end, read from the upstream in one read, come to the proxy
//! over several turns; sent as they come, each would be a write of its own,
//! and a wake-up of the client waiting for the rest. The head waits
//! [`GATHER_TURNS`] for the events that came with it, and the answer as many
//! for the end of the stream.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http_body_util::BodyExt;
use hyper::Response;
use hyper::body::{Body, Bytes, Frame};
use hyper::header;

use crate::exchange::answer_rewriter::{AnswerRewriter, UpstreamMessage};
use crate::exchange::failure::Failure;
use crate::http::body::{BoxError, MAX_MESSAGE_BYTES, ProxyBody};
use crate::http::headers;
use crate::server::drain::{Drain, Phase};
use crate::telemetry::describe;
use crate::upstream::sse;

/// How many turns of the runtime the proxy waits for what the upstream sent
/// together: before an event stream's head is sent, for the events that came
/// with it; after its answer, for its end (a server ends the stream after the
/// answer). A stream that sends nothing meanwhile is not waited for longer.
pub(crate) const GATHER_TURNS: usize = 4;

/// The client's response for the event stream `response`: its head sent with
/// the events that came with it, the rest as they come.
pub(crate) async fn stream_response<B>(
    response: Response<B>,
    rewriter: AnswerRewriter,
    drain: Drain,
) -> Response<ProxyBody>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error + 'static,
{
    let (mut parts, body) = response.into_parts();
    headers::remove_hop_by_hop(&mut parts.headers);
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut stream = AnswerStream {
        body: Some(body),
        splitter: sse::EventSplitter::default(),
        rewriter,
        drain_end: Box::pin(async move {
            drain.reached(Phase::Expired).await;
        }),
        resumable: false,
        unread: false,
        gathered: Vec::new(),
        end_turns: 0,
    };
    let mut turns = GATHER_TURNS;
    loop {
        let frame = std::future::poll_fn(|cx| Poll::Ready(stream.next(cx))).await;
        match frame {
            Poll::Ready(Some(bytes)) => stream.gathered.push(bytes),
            Poll::Ready(None) => break,
            Poll::Pending if turns > 0 => {
                turns -= 1;
                tokio::task::yield_now().await;
            }
            Poll::Pending => break,
        }
    }
    let stream = StreamToClient(Some(stream));
    Response::from_parts(parts, stream.boxed_unsync())
}

/// The [`AnswerStream`] hyper sends the client; when the client goes away
/// while a layer's future awaits the answer, the stream is read on in a task
/// of its own until the answer, the end of the stream, the layer's own answer
/// or the end of a drain: a stream the client closed is no cancellation,
/// and the server is still told at the tool timeout that the call is
/// abandoned.
struct StreamToClient<B>(Option<AnswerStream<B>>)
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error + 'static;

impl<B> Drop for StreamToClient<B>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error + 'static,
{
    fn drop(&mut self) {
        let Some(mut stream) = self.0.take() else {
            return;
        };
        if stream.rewriter.is_answered()
            || !stream.rewriter.holds_layer_future()
            || stream.body.is_none()
        {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            while !stream.rewriter.is_answered() {
                let next = std::future::poll_fn(|cx| stream.next(cx)).await;
                if next.is_none() {
                    break;
                }
            }
        });
    }
}

impl<B> Body for StreamToClient<B>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: std::error::Error + 'static,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut().0.as_mut() {
            Some(stream) => stream.poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.0.as_ref().is_none_or(AnswerStream::is_end_stream)
    }
}

/// The client's event stream: the upstream's events, the answer rewritten
/// when the layer changes it, or the proxy's or the layer's answer when none
/// comes.
struct AnswerStream<B> {
    /// The upstream's stream; `None` once it is done with.
    body: Option<B>,
    splitter: sse::EventSplitter,
    rewriter: AnswerRewriter,
    /// The end of a drain, awaited with the answer.
    drain_end: Pin<Box<dyn Future<Output = ()> + Send>>,
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

impl<B> std::fmt::Debug for AnswerStream<B> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AnswerStream")
            .field("rewriter", &self.rewriter)
            .field("resumable", &self.resumable)
            .field("unread", &self.unread)
            .finish_non_exhaustive()
    }
}

impl<B> AnswerStream<B>
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
            if self.body.is_none() {
                return Poll::Ready(None);
            }
            if !self.rewriter.is_answered() {
                if self.drain_end.as_mut().poll(cx).is_ready() {
                    return self.end_with(Failure::drained(), true);
                }
                if let Poll::Ready(answer) = self.rewriter.poll_layer_answer(cx) {
                    return self.end_with_answer(answer);
                }
            }
            let Some(body) = self.body.as_mut() else {
                return Poll::Ready(None);
            };
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
                        if !self.rewriter.is_answered() {
                            crate::telemetry::log(&format!(
                                "the server sent an event longer than {MAX_MESSAGE_BYTES} bytes: \
                                 the stream is abandoned and the request cancelled"
                            ));
                            return self.end_with(Failure::TooLarge, true);
                        }
                        crate::telemetry::log(&format!(
                            "the server sent an event longer than {MAX_MESSAGE_BYTES} bytes after the answer: passed on unread"
                        ));
                        return Poll::Ready(Some(self.pass_the_rest()));
                    }
                }
                Some(Err(error)) => {
                    crate::telemetry::log(&format!(
                        "the server's event stream was cut: {}",
                        describe(&error)
                    ));
                    return self.end_unanswered();
                }
                None if self.rewriter.is_answered() => {
                    self.body = None;
                    let rest = std::mem::take(&mut self.splitter).into_rest();
                    return Poll::Ready((!rest.is_empty()).then(|| Bytes::from(rest)));
                }
                // The server ended the stream on purpose, for the client to
                // resume it with `GET` (allowed from 2025-11-25): the call
                // still runs, and its answer comes on the resumed stream.
                None if self.resumable => {
                    self.body = None;
                    self.rewriter.withdraw();
                    return Poll::Ready(None);
                }
                None => return self.end_unanswered(),
            }
        }
    }

    /// A whole event of the upstream's, as the client gets it.
    fn event(&mut self, event: Vec<u8>) -> Vec<u8> {
        if self.rewriter.is_answered() {
            return self.rewriter.to_client().event(event);
        }
        if let Some(id) = sse::id(&event) {
            self.resumable = !id.is_empty();
        }
        let Some(data) = sse::data(&event) else {
            return event;
        };
        // An answer is an object (or an array holding one): an event without
        // one (a stream's first, empty one) is not read.
        if !matches!(data.trim_ascii_start().first(), Some(b'{' | b'[')) {
            return self.rewriter.to_client().event(event);
        }
        match self.rewriter.read(&data) {
            UpstreamMessage::Answer(Some(answer)) => sse::with_data(&event, &answer),
            UpstreamMessage::Answer(None) => event,
            UpstreamMessage::Other => self.rewriter.to_client().event(event),
        }
    }

    /// Everything held and the rest of the stream, unread.
    fn pass_the_rest(&mut self) -> Bytes {
        self.unread = true;
        Bytes::from(std::mem::take(&mut self.splitter).into_rest())
    }

    /// The stream ended or was cut before the answer.
    fn end_unanswered(&mut self) -> Poll<Option<Bytes>> {
        if self.rewriter.is_answered() {
            self.body = None;
            return Poll::Ready(None);
        }
        self.end_with(Failure::ClosedBeforeAnswer, false)
    }

    /// Ends the stream with the proxy's answer for `failure`; without one when
    /// the client cancelled every call.
    fn end_with(&mut self, failure: Failure, cancelled: bool) -> Poll<Option<Bytes>> {
        let answer = self.rewriter.failed(failure, cancelled);
        self.end_with_answer(answer)
    }

    /// Ends the stream with `answer`, the proxy's or the layer's, when there
    /// is one; the upstream's stream is dropped.
    fn end_with_answer(&mut self, answer: Option<Vec<u8>>) -> Poll<Option<Bytes>> {
        self.body = None;
        self.splitter = sse::EventSplitter::default();
        Poll::Ready(answer.map(|answer| Bytes::from(sse::event(&answer))))
    }
}

impl<B> AnswerStream<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::error::Error + 'static,
{
    /// The next frame for the client, as [`Body::poll_frame`] gives it.
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        loop {
            // After the answer, what came with it waits a few turns for the
            // end of the stream, which then goes in the same write.
            let answered = self.rewriter.is_answered();
            let awaiting_end =
                !self.gathered.is_empty() && answered && self.body.is_some() && self.end_turns > 0;
            if !self.gathered.is_empty() && !awaiting_end {
                return Poll::Ready(Some(Ok(Frame::data(self.gathered.remove(0)))));
            }
            match self.next(cx) {
                Poll::Ready(Some(bytes)) => {
                    self.gathered.push(bytes);
                    if !answered && self.rewriter.is_answered() {
                        self.end_turns = GATHER_TURNS;
                    }
                }
                Poll::Ready(None) if self.gathered.is_empty() => return Poll::Ready(None),
                Poll::Ready(None) => {}
                Poll::Pending if awaiting_end => {
                    self.end_turns -= 1;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Whether nothing is left to send, as [`Body::is_end_stream`] says.
    fn is_end_stream(&self) -> bool {
        self.gathered.is_empty() && self.body.is_none()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use hyper::header::HeaderMap;

    use super::*;
    use crate::exchange::direct_call::DirectCall;
    use crate::exchange::layer_state::LayerState;
    use crate::exchange::outbound::Outbound;
    use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
    use crate::jsonrpc::timed_tools::TimedTools;
    use crate::upstream::client::UpstreamClient;
    use crate::upstream::url::{connector, parse_upstream};

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

    const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}"#;
    const PRIMING: &str = "id: 0/1\ndata: \n\n";
    const ANSWER: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n";

    /// The client's stream for the upstream's `frames` (`None`: a turn
    /// without one) answering a direct call: each frame sent, and whether
    /// hyper, asking after it, learns that the stream ends there (then the
    /// end goes in its write).
    async fn client_frames(frames: &[Option<&'static str>]) -> Vec<(String, bool)> {
        let url = parse_upstream("http://127.0.0.1:9/mcp").expect("a URL");
        let client = UpstreamClient::new(&connector(&url).expect("a connector"), &url);
        // Held to the end: without it, the drain is over.
        let (_serving, drain) = Drain::new();
        let layer_state = LayerState::new(
            mcp_tool_errors::ToolErrorLayer::new(),
            InvalidParamsAsToolErrors::new(false),
        );
        let outbound = Outbound {
            client,
            drain: drain.clone(),
        };
        let untimed = TimedTools::new(false, Vec::new());
        let call =
            DirectCall::read(CALL.as_bytes(), &HeaderMap::new(), &untimed).expect("a direct call");
        let rewriter = call.rewriter(&layer_state, &outbound, &HeaderMap::new());
        let upstream = Response::new(Upstream(frames.iter().copied().collect()));
        let mut body = stream_response(upstream, rewriter, drain).await.into_body();
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
    async fn a_tool_error_among_several_events_is_rewrapped_in_its_own() {
        const PROGRESS: &str = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";
        const FAILED: &str = "id: 0/2\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\ndata: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"no \\\"x\\\"\\n\"}],\"isError\":true}}\n\n";
        let frames = [Some(PRIMING), Some(PROGRESS), None, Some(FAILED), None];
        let sent: String = client_frames(&frames)
            .await
            .into_iter()
            .map(|(data, _)| data)
            .collect();
        let text = serde_json::to_string(&mcp_tool_errors::render_error("search", "no \"x\"\n"))
            .expect("a string");
        let rewrapped = format!(
            "id: 0/2\ndata: {{\"jsonrpc\":\"2.0\",\"id\":7,\ndata: \"result\":{{\"content\":[{{\"type\":\"text\",\"text\":{text}}}],\"isError\":true}}}}\n\n"
        );
        assert_eq!(sent, format!("{PRIMING}{PROGRESS}{rewrapped}"));
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
