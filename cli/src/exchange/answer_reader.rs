//! The one place the HTTP mode reads the upstream's response to JSON-RPC
//! requests at the MCP endpoint, whichever way they went (a
//! [`DirectCall`](crate::exchange::direct_call::DirectCall) or an
//! [`exchange`](crate::exchange::layered_exchange)), with or without a timeout or a span:
//! the request is sent, its response head awaited, then its JSON body read
//! whole or its event stream rewritten as it passes
//! ([`answer_stream`](crate::exchange::answer_stream)); what the client gets of
//! the answer is the [`AnswerRewriter`]'s.
//!
//! What ends the wait before the answer, each answered through the layer as
//! the server's answer would be:
//!
//! - no connection, or a body or stream that ends before the answer; a 5xx
//!   without one; a message larger than [`MAX_MESSAGE_BYTES`]: the answer of
//!   [`Failure`];
//! - the layer's own answer (the tool timeout): the upstream request is
//!   dropped, and the server is sent `notifications/cancelled`;
//! - no response head within the bound of
//!   [`head_timeout`](crate::upstream::head_timeout), and the end of a drain
//!   ([`drain`](crate::server::drain)): the server is sent
//!   `notifications/cancelled` too.
//!
//! A response that holds no answer (a 4xx, a redirect, an encoding the proxy
//! does not decode) passes as it is, and the layer sees its request
//! withdrawn. A gzip or deflate answer is decoded before it is read
//! ([`decoded`](crate::upstream::decoded)).

use std::future::poll_fn;
use std::time::Duration;

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Body, Bytes};
use hyper::header;
use hyper::{Request, Response};

use crate::exchange::answer_rewriter::{AnswerRewriter, UpstreamMessage, made_or_none};
use crate::exchange::answer_stream::stream_response;
use crate::exchange::failure::Failure;
use crate::exchange::outbound::Outbound;
use crate::http::body::{MAX_MESSAGE_BYTES, ProxyBody, whole};
use crate::http::headers::{self, MediaType, passed_through};
use crate::server::drain::{Drain, Phase};
use crate::telemetry::describe;
use crate::upstream::client::UpstreamError;
use crate::upstream::decoded::{Encoding, answer_type, decoded, encoding};

/// What ended the wait for the response head.
enum HeadWait<R> {
    Came(Result<R, UpstreamError>),
    Drained,
    /// No head within this bound.
    TimedOut(Duration),
    /// The layer answered itself: the bytes for the client, if any.
    LayerAnswered(Option<Vec<u8>>),
}

/// Sends `request` upstream through `outbound` and answers the client with what `rewriter`
/// makes of the response; the response head may take at most
/// `head_timeout`, when there is one.
pub(crate) async fn answer(
    outbound: &Outbound,
    request: Request<ProxyBody>,
    mut rewriter: AnswerRewriter,
    head_timeout: Option<Duration>,
) -> Response<ProxyBody> {
    let wait = {
        let head_timeout = async {
            match head_timeout {
                Some(timeout) => {
                    tokio::time::sleep(timeout).await;
                    timeout
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            response = outbound.client.request(request) => HeadWait::Came(response),
            () = outbound.drain.reached(Phase::Expired) => HeadWait::Drained,
            timeout = head_timeout => HeadWait::TimedOut(timeout),
            answer = poll_fn(|cx| rewriter.poll_layer_answer(cx)) => HeadWait::LayerAnswered(answer),
        }
    };
    let response = match wait {
        HeadWait::Came(Ok(response)) => response,
        HeadWait::Came(Err(error)) => {
            let failure = Failure::no_response(outbound.client.endpoint(), &error);
            return rewriter.failed_response(failure, false);
        }
        HeadWait::Drained => return rewriter.failed_response(Failure::drained(), true),
        HeadWait::TimedOut(timeout) => {
            crate::telemetry::log(&format!(
                "no answer from {} within {}: cancelling the request",
                outbound.client.endpoint(),
                humantime::format_duration(timeout)
            ));
            return rewriter.failed_response(Failure::NoAnswerWithin(timeout), true);
        }
        HeadWait::LayerAnswered(answer) => return made_or_none(answer),
    };
    let Some(media_type) = answer_type(&response) else {
        // A 4xx is the transport's or OAuth's, not the tool's.
        rewriter.withdraw();
        return passed_through(response);
    };
    match (encoding(response.headers()), media_type) {
        (Encoding::Identity, MediaType::EventStream) => {
            stream_response(response, rewriter, outbound.drain.clone()).await
        }
        (Encoding::Identity, _) => json_answer(response, rewriter, outbound.drain.clone()).await,
        // Boxed: the future of this rare case does not make every call's larger.
        (Encoding::Decoded(format), MediaType::EventStream) => {
            Box::pin(stream_response(
                decoded(response, format),
                rewriter,
                outbound.drain.clone(),
            ))
            .await
        }
        (Encoding::Decoded(format), _) => {
            Box::pin(json_answer(
                decoded(response, format),
                rewriter,
                outbound.drain.clone(),
            ))
            .await
        }
        (Encoding::Other, _) => {
            rewriter.withdraw();
            passed_through(response)
        }
    }
}

/// What ended the reading of a JSON body before it was whole.
enum BodyWait<T> {
    Whole(T),
    Drained,
    LayerAnswered(Option<Vec<u8>>),
}

/// A JSON body read whole: the answer, rewritten when the layer changes it;
/// a 5xx without one becomes a [`Failure`]; any other body passes as it is.
/// The body is awaited until the end of a drain (`drain`) or the layer's own
/// answer.
async fn json_answer<B>(
    response: Response<B>,
    mut rewriter: AnswerRewriter,
    drain: Drain,
) -> Response<ProxyBody>
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let (mut parts, body) = response.into_parts();
    let wait = tokio::select! {
        biased;
        collected = Limited::new(body, MAX_MESSAGE_BYTES).collect() => BodyWait::Whole(collected),
        () = drain.reached(Phase::Expired) => BodyWait::Drained,
        answer = poll_fn(|cx| rewriter.poll_layer_answer(cx)) => BodyWait::LayerAnswered(answer),
    };
    let bytes = match wait {
        BodyWait::Whole(Ok(collected)) => collected.to_bytes(),
        BodyWait::Whole(Err(error)) if error.is::<LengthLimitError>() => {
            crate::telemetry::log(&format!(
                "the server's answer is longer than {MAX_MESSAGE_BYTES} bytes: not read"
            ));
            // The server has answered: nothing to cancel.
            return rewriter.failed_response(Failure::TooLarge, false);
        }
        BodyWait::Whole(Err(error)) => {
            crate::telemetry::log(&format!(
                "the server's answer was cut: {}",
                describe(&*error)
            ));
            return rewriter.failed_response(Failure::ClosedBeforeAnswer, false);
        }
        BodyWait::Drained => return rewriter.failed_response(Failure::drained(), true),
        BodyWait::LayerAnswered(answer) => return made_or_none(answer),
    };
    headers::remove_hop_by_hop(&mut parts.headers);
    let bytes = match rewriter.read(&bytes) {
        UpstreamMessage::Answer(Some(rewritten)) => {
            // Hyper counts the body sent.
            parts.headers.remove(header::CONTENT_LENGTH);
            Bytes::from(rewritten)
        }
        UpstreamMessage::Answer(None) => bytes,
        UpstreamMessage::Other if parts.status.is_server_error() && !rewriter.is_answered() => {
            Failure::log_status(parts.status);
            return rewriter.failed_response(Failure::Status(parts.status), false);
        }
        UpstreamMessage::Other => {
            rewriter.withdraw();
            bytes
        }
    };
    Response::from_parts(parts, whole(bytes))
}
