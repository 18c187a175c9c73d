//! Which way a request goes: every request is forwarded to the upstream's
//! origin with its path and query; at the MCP endpoint, a `GET` is the
//! session's stream ([`replayed`]), a `POST` holding a
//! `tools/call` no timeout applies to is a [`DirectCall`], a body that is no
//! JSON is answered `400` (`-32700`) and a batch holding an id twice `-32600`
//! (`crate::jsonrpc::id_in_use`), neither sent on, any other holding
//! JSON-RPC requests an [`exchange`](crate::exchange::layered_exchange); anything else
//! streams through both ways as it is. `CONNECT` is answered `405`: the proxy
//! opens no tunnels.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::{Bytes, Incoming};
use hyper::header;
use hyper::{Method, Request, Response, StatusCode, Version};
use serde_json::Value;

use crate::exchange::cancel::no_answer_response;
use crate::exchange::direct_call::{self, DirectCall};
use crate::exchange::layered_exchange::exchange;
use crate::exchange::{replayed, task_ids};
use crate::http::body::{ProxyBody, streamed, whole};
use crate::http::headers::passed_through;
use crate::http::own_response::{made_response, parse_error, status_only};
use crate::http::peer::Peer;
use crate::http::whole_request::read_whole;
use crate::jsonrpc::id_in_use;
use crate::jsonrpc::layer_over_answer::layer_over_answer;
use crate::jsonrpc::message::{Answer, requests};
use crate::proxy::reverse_proxy::ReverseProxy;
use crate::server::activity::{Activity, RequestBody, ResponseBody};
use crate::server::connections::Connections;
use crate::server::drain::Drain;
use crate::server::site::Site;
use crate::telemetry::describe;
use crate::upstream::forwarded;

impl Site for ReverseProxy {
    fn connections(&self) -> &Arc<Connections> {
        &self.connections
    }

    fn drain(&self) -> &Drain {
        &self.outbound.drain
    }

    fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        peer: Arc<Peer>,
        activity: Arc<Activity>,
    ) -> impl Future<Output = Result<Response<ResponseBody>, Infallible>> + Send + 'static {
        handle(self, request, peer, activity)
    }
}

/// Answers one request of `peer`, on a connection whose `activity` learns
/// when the request's body waits and when its answer ends. One function, with
/// no future of its own around it: a future nested in another is moved
/// whole when made, and this one is large.
async fn handle(
    proxy: Arc<ReverseProxy>,
    request: Request<Incoming>,
    peer: Arc<Peer>,
    activity: Arc<Activity>,
) -> Result<Response<ResponseBody>, Infallible> {
    let (mut parts, body) = request.into_parts();
    let body = RequestBody::new(body, activity.clone());
    let mut client_host = None;
    let mut response = 'answer: {
        if parts.method == Method::CONNECT {
            break 'answer no_tunnel();
        }
        let at_endpoint = proxy.upstream.is_endpoint(parts.uri.path());
        let is_mcp = parts.method == Method::POST && at_endpoint;
        parts.uri = proxy.upstream.uri_for(parts.uri.path_and_query());
        parts.version = Version::HTTP_11;
        client_host = forwarded::for_upstream(
            &mut parts.headers,
            &peer,
            proxy.upstream.host(),
            proxy.forwarded_headers,
        );
        if parts.method == Method::GET && at_endpoint {
            // The session's stream, or a resumed one: answers to calls this
            // process relayed are rewritten there too.
            let headers = parts.headers.clone();
            let request = Request::from_parts(parts, streamed(body));
            break 'answer match proxy.outbound.client.request(request).await {
                Ok(response) => replayed::response(proxy.layer_state.clone(), &headers, response),
                Err(error) => bad_gateway(&proxy, &error),
            };
        }
        if !is_mcp {
            break 'answer forward(&proxy, Request::from_parts(parts, streamed(body))).await;
        }
        let bytes = match read_whole(body).await {
            Ok(bytes) => bytes,
            Err(refusal) => break 'answer refusal,
        };
        if let Some(call) = DirectCall::read(&bytes, &parts.headers, &proxy.timed_tools) {
            proxy
                .layer_state
                .seen_calls()
                .remember_call(&parts.headers, call.id(), call.tool());
            // The answer is read: it must come as the server wrote it.
            parts.headers.remove(header::ACCEPT_ENCODING);
            let request = Request::from_parts(parts, whole(bytes));
            break 'answer direct_call::exchange(
                &proxy.layer_state,
                &proxy.outbound,
                request,
                call,
            )
            .await;
        }
        let Ok(mut message) = crate::jsonrpc::nested::from_slice(&bytes) else {
            // A body the proxy cannot read goes no further, answered as the
            // bridge answers it: a server that reads more than JSON (the
            // Python SDK takes `NaN` and `Infinity`, Express's body parser
            // inflates a gzip body) would run its calls with no layer.
            break 'answer parse_error();
        };
        // Each `POST` is answered on its own response: only a batch can hold
        // an id in use, twice.
        if message.is_array()
            && let Some(refusal) = id_in_use::refused(&requests(&message), true, |_| false)
        {
            break 'answer refusal_response(&proxy, message, refusal);
        }
        // The task ids the client holds are the proxy's: the server gets its own.
        let opened = task_ids::to_upstream(&mut message);
        task_ids::header_to_upstream(&mut parts.headers);
        let bytes = if opened.is_empty() {
            bytes
        } else {
            // Hyper counts the new body.
            parts.headers.remove(header::CONTENT_LENGTH);
            Bytes::from(crate::jsonrpc::nested::to_vec(&message))
        };
        // Before it goes upstream: the calls it makes, and those it cancels
        // (the server may end a cancelled call's stream at once).
        if proxy
            .layer_state
            .seen_calls()
            .remember(&parts.headers, &message)
        {
            // The proxy cancelled that call already: the server was told.
            break 'answer no_answer_response();
        }
        if requests(&message).is_empty() {
            // Notifications and responses to the server's requests pass as
            // they are.
            break 'answer forward(&proxy, Request::from_parts(parts, whole(bytes))).await;
        }
        // The answer is read: it must come as the server wrote it.
        parts.headers.remove(header::ACCEPT_ENCODING);
        crate::telemetry::header_trace_context(&parts.headers, &mut message);
        exchange(
            &proxy.layer_state,
            &proxy.outbound,
            &proxy.head_timeout,
            Request::from_parts(parts, whole(bytes)),
            message,
            &opened,
        )
        .await
    };
    if let Some(client_host) = &client_host {
        forwarded::locations_to_client(response.headers_mut(), &proxy.upstream, client_host);
    }
    Ok(response.map(|body| ResponseBody::new(body, activity)))
}

/// Forwards a request, and its response back, as they stream; a response
/// that never came is a 502, as a reverse proxy answers.
async fn forward(proxy: &ReverseProxy, request: Request<ProxyBody>) -> Response<ProxyBody> {
    match proxy.outbound.client.request(request).await {
        Ok(response) => passed_through(response),
        Err(error) => bad_gateway(proxy, &error),
    }
}

/// The client's response to `message`, refused before it went upstream
/// with the answer `refusal`, which the layer reads as the server's, as the
/// stdio mode answers a request it refuses.
fn refusal_response(proxy: &ReverseProxy, message: Value, refusal: Answer) -> Response<ProxyBody> {
    let made = refusal.value.clone();
    let layer_state = &proxy.layer_state;
    let answer = layer_over_answer(
        layer_state.layer(),
        layer_state.invalid_params(),
        message,
        refusal,
    )
    .unwrap_or_else(|| Answer::made(made));
    let mut bytes = answer.into_line().0;
    // A made answer is a line: the body ends it.
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    made_response(bytes)
}

/// A `502`, as a reverse proxy answers a request it could not forward.
fn bad_gateway(
    proxy: &ReverseProxy,
    error: &(dyn std::error::Error + 'static),
) -> Response<ProxyBody> {
    crate::telemetry::log(&format!(
        "cannot forward to {}: {}",
        proxy.outbound.client.endpoint(),
        describe(error)
    ));
    status_only(StatusCode::BAD_GATEWAY)
}

/// The `405` to a `CONNECT`, with the methods the proxy forwards.
fn no_tunnel() -> Response<ProxyBody> {
    let mut response = status_only(StatusCode::METHOD_NOT_ALLOWED);
    response.headers_mut().insert(
        header::ALLOW,
        header::HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
    );
    response
}
