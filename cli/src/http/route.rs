//! Which way a request goes: every request is forwarded to the upstream's
//! origin with its path and query; at the MCP endpoint, a `GET` is the
//! session's stream ([`replayed`]), a `POST` holding a
//! `tools/call` no timeout applies to is a [`DirectCall`], any other holding
//! JSON-RPC requests an [`exchange`](crate::http::exchange); anything else
//! streams through both ways as it is.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header;
use hyper::{Method, Request, Response, StatusCode, Version};

use crate::http::body::{MAX_MESSAGE_BYTES, ProxyBody, streamed, whole};
use crate::http::direct_call::{self, DirectCall};
use crate::http::exchange::exchange;
use crate::http::failure::describe;
use crate::http::headers::passed_through;
use crate::http::proxy::Proxy;
use crate::http::{headers, replayed, task_ids};
use crate::message::requests;

/// Answers one request of `client`.
pub(crate) async fn handle(
    proxy: Arc<Proxy>,
    request: Request<Incoming>,
    client: Arc<headers::Client>,
) -> Result<Response<ProxyBody>, Infallible> {
    let (mut parts, body) = request.into_parts();
    let at_endpoint = proxy.upstream().is_endpoint(parts.uri.path());
    let is_mcp = parts.method == Method::POST && at_endpoint;
    parts.uri = proxy.upstream().uri_for(parts.uri.path_and_query());
    parts.version = Version::HTTP_11;
    headers::for_upstream(&mut parts.headers, &client, proxy.upstream().host());
    if parts.method == Method::GET && at_endpoint {
        // The session's stream, or a resumed one: answers to calls this
        // process relayed are rewritten there too.
        let headers = parts.headers.clone();
        let request = Request::from_parts(parts, streamed(body));
        return Ok(match proxy.client().request(request).await {
            Ok(response) => replayed::response(proxy.clone(), &headers, response),
            Err(error) => bad_gateway(&proxy, &error),
        });
    }
    if !is_mcp {
        return Ok(forward(&proxy, Request::from_parts(parts, streamed(body))).await);
    }
    let bytes = match Limited::new(body, MAX_MESSAGE_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => {
            crate::log(&format!(
                "refused a request of more than {MAX_MESSAGE_BYTES} bytes"
            ));
            return Ok(status_only(StatusCode::PAYLOAD_TOO_LARGE));
        }
        // The client is gone, or sent a broken body: nobody to answer.
        Err(_) => return Ok(status_only(StatusCode::BAD_REQUEST)),
    };
    if let Some(call) = DirectCall::read(&bytes, &parts.headers, proxy.timed_tools()) {
        proxy
            .seen_calls()
            .remember_call(&parts.headers, call.id(), call.tool());
        // The answer is read: it must come as the server wrote it.
        parts.headers.remove(header::ACCEPT_ENCODING);
        let request = Request::from_parts(parts, whole(bytes));
        return Ok(direct_call::exchange(&proxy, request, call).await);
    }
    let Ok(mut message) = crate::nested::from_slice(&bytes) else {
        // A body that is no JSON: the server answers it.
        return Ok(forward(&proxy, Request::from_parts(parts, whole(bytes))).await);
    };
    // The task ids the client holds are the proxy's: the server gets its own.
    let opened = task_ids::to_upstream(&mut message);
    task_ids::header_to_upstream(&mut parts.headers);
    let bytes = if opened.is_empty() {
        bytes
    } else {
        // Hyper counts the new body.
        parts.headers.remove(header::CONTENT_LENGTH);
        Bytes::from(crate::nested::to_vec(&message))
    };
    if requests(&message).is_empty() {
        // Notifications and responses to the server's requests pass as
        // they are.
        return Ok(forward(&proxy, Request::from_parts(parts, whole(bytes))).await);
    }
    proxy.seen_calls().remember(&parts.headers, &message);
    // The answer is read: it must come as the server wrote it.
    parts.headers.remove(header::ACCEPT_ENCODING);
    Ok(exchange(
        &proxy,
        Request::from_parts(parts, whole(bytes)),
        message,
        &opened,
    )
    .await)
}

/// Forwards a request, and its response back, as they stream; a response
/// that never came is a 502, as a reverse proxy answers.
async fn forward(proxy: &Proxy, request: Request<ProxyBody>) -> Response<ProxyBody> {
    match proxy.client().request(request).await {
        Ok(response) => passed_through(response),
        Err(error) => bad_gateway(proxy, &error),
    }
}

/// A `502`, as a reverse proxy answers a request it could not forward.
fn bad_gateway(proxy: &Proxy, error: &(dyn std::error::Error + 'static)) -> Response<ProxyBody> {
    crate::log(&format!(
        "cannot forward to {}: {}",
        proxy.upstream().endpoint_uri(),
        describe(error)
    ));
    status_only(StatusCode::BAD_GATEWAY)
}

fn status_only(status: StatusCode) -> Response<ProxyBody> {
    let mut response = Response::new(whole(Vec::new()));
    *response.status_mut() = status;
    response
}
