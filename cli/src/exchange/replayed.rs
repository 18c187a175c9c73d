//! Answers a server sends outside the exchange of their request: replayed on a
//! resumed stream (a `GET` with `Last-Event-ID`, after the client lost the
//! `POST`'s stream) or sent on the session's `GET` stream.
//!
//! The proxy remembers the `tools/call`s it relayed in each session
//! ([`SeenCalls`](crate::exchange::seen_calls::SeenCalls)). An
//! event on a `GET` stream at the MCP endpoint whose data answers one of them
//! is rewritten as the layer rewrites it in an exchange (through the layer, the
//! upstream's bytes kept but for the text it changes); the server's task ids
//! of tasks this process knows become the client's
//! ([`KnownTasks`](crate::exchange::task_ids::KnownTasks)); every other event, and
//! an answer to a call this process did not relay, passes as it is. Events are
//! relayed as they arrive; an event longer than
//! [`crate::http::body::MAX_MESSAGE_BYTES`] ends the reading,
//! and the rest of the stream passes through unread. A stream in `gzip` or
//! `deflate` is read decoded, and the client gets it decoded
//! ([`decoded`](crate::upstream::decoded)); one in another encoding passes as it is.

use http_body_util::BodyExt;
use hyper::Response;
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::exchange::layer_state::LayerState;
use crate::exchange::seen_calls::session;
use crate::exchange::task_ids::ToClient;
use crate::http::body::{ChannelBody, MAX_MESSAGE_BYTES, ProxyBody};
use crate::http::headers;
use crate::http::headers::{MediaType, media_type, passed_through};
use crate::jsonrpc::layer_over_answer::layer_over_answer;
use crate::jsonrpc::message::{Answer, response_ids};
use crate::upstream::client::UpstreamBody;
use crate::upstream::decoded::{Encoding, ReadBody, decoded, encoding};
use crate::upstream::sse;

/// The upstream's response to a `GET` at the MCP endpoint in the session of
/// `request_headers`: an event stream with its answers to remembered calls
/// rewritten, anything else as it is.
pub(crate) fn response(
    layer_state: LayerState,
    request_headers: &HeaderMap,
    response: Response<UpstreamBody>,
) -> Response<ProxyBody> {
    let session = session(request_headers).map(str::to_owned);
    let is_stream =
        response.status().is_success() && media_type(response.headers()) == MediaType::EventStream;
    let Some(session) = session.filter(|_| is_stream) else {
        return passed_through(response);
    };
    let response = match encoding(response.headers()) {
        Encoding::Identity => response.map(ReadBody::from),
        Encoding::Decoded(format) => decoded(response, format).map(ReadBody::from),
        Encoding::Other => return passed_through(response),
    };
    let (mut parts, body) = response.into_parts();
    headers::remove_hop_by_hop(&mut parts.headers);
    let (events, client_body) = ChannelBody::new();
    tokio::spawn(relay(layer_state, session, body, events));
    Response::from_parts(parts, client_body.boxed())
}

/// Relays the stream event by event, rewriting answers to remembered calls.
async fn relay(
    layer_state: LayerState,
    session: String,
    mut body: ReadBody,
    events: mpsc::Sender<Bytes>,
) {
    let mut splitter = sse::EventSplitter::default();
    let to_client = ToClient::outside_exchanges(layer_state.known_tasks());
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return;
        };
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        splitter.push(&chunk);
        while let Some(event) = splitter.next_event() {
            let event = to_client.event(rewritten(&layer_state, &session, event));
            if events.send(Bytes::from(event)).await.is_err() {
                return;
            }
        }
        if splitter.held() > MAX_MESSAGE_BYTES {
            crate::telemetry::log(&format!(
                "an event of more than {} MiB on a GET stream: the rest passes unread",
                MAX_MESSAGE_BYTES / (1024 * 1024)
            ));
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
async fn pass_rest(mut body: ReadBody, events: mpsc::Sender<Bytes>) {
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
fn rewritten(layer_state: &LayerState, session: &str, event: Vec<u8>) -> Vec<u8> {
    let Some(data) = sse::data(&event) else {
        return event;
    };
    let Ok(answer) = crate::jsonrpc::nested::from_slice(&data) else {
        return event;
    };
    let Some(tool) =
        answered_call(&answer).and_then(|id| layer_state.seen_calls().tool(session, id))
    else {
        return event;
    };
    // The exchange the layer would have seen: the call, and this answer.
    let call = json!({"jsonrpc": "2.0", "id": answer["id"], "method": "tools/call",
                      "params": {"name": tool}});
    let Some(layered) = layer_over_answer(
        layer_state.layer(),
        layer_state.invalid_params(),
        call,
        Answer::from_child(data.clone(), answer),
    ) else {
        return event;
    };
    match crate::jsonrpc::splice::rewritten(&data, &layered.value) {
        Some(data) => sse::with_data(&event, &data),
        None => event,
    }
}

/// The id of the request `message` answers, when it is one response (not a
/// batch): JSON-RPC's rule, the one every mode reads a message by
/// (`crate::jsonrpc::member`).
fn answered_call(message: &Value) -> Option<&Value> {
    if !message.is_object() {
        return None;
    }
    response_ids(message).into_iter().next()
}
