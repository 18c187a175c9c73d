//! The proxy's service: every request forwarded to the upstream's origin with
//! its path and query; a JSON-RPC request to the MCP endpoint goes through the
//! layer ([`exchange`](crate::http::exchange)), anything else streams through
//! both ways as it is.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header;
use hyper::{Method, Request, Response, StatusCode, Uri, Version};
use mcp_tool_errors::ToolErrorLayer;
use serde_json::Value;

use crate::http::body::{MAX_MESSAGE_BYTES, ProxyBody, streamed, whole};
use crate::http::direct_call::{self, DirectCall};
use crate::http::drain::Drain;
use crate::http::exchange::exchange;
use crate::http::failure::describe;
use crate::http::head_timeout::HeadTimeout;
use crate::http::replayed::{self, SeenCalls};
use crate::http::task_ids::KnownTasks;
use crate::http::upstream::{UpstreamClient, UpstreamUrl};
use crate::http::{headers, task_ids};
use crate::invalid_params::InvalidParamsAsToolErrors;
use crate::message::requests;
use crate::options::{Options, TimedTools};

/// What every request shares: the upstream, its client, the layer, the memory
/// of `--invalid-params-as-tool-errors`, and the response-head timeouts.
///
/// Each worker has its own (see [`Proxy::for_worker`]): the client is the
/// worker's, the memory is shared by all.
#[derive(Debug)]
pub(crate) struct Proxy {
    upstream: UpstreamUrl,
    client: UpstreamClient,
    layer: ToolErrorLayer,
    invalid_params: InvalidParamsAsToolErrors<()>,
    head_timeout: HeadTimeout,
    /// The tools whose calls the layer holds a timer for; any other call is a
    /// [`DirectCall`].
    timed_tools: TimedTools,
    seen_calls: Arc<SeenCalls>,
    known_tasks: Arc<KnownTasks>,
    drain: Drain,
}

impl Proxy {
    pub(crate) fn new(
        upstream: UpstreamUrl,
        client: UpstreamClient,
        options: &Options,
        drain: Drain,
    ) -> Self {
        Self {
            upstream,
            client,
            // Spans say what carries the session: HTTP over TCP.
            layer: options.layer().network_transport("tcp"),
            invalid_params: InvalidParamsAsToolErrors::new(options.invalid_params_as_tool_errors),
            head_timeout: HeadTimeout::new(options),
            timed_tools: options.timed_tools(),
            seen_calls: Arc::default(),
            known_tasks: Arc::default(),
            drain,
        }
    }

    /// The proxy of another worker: `client` is its own; the layer's memory of
    /// tasks, the calls seen, the tools listed and the drain are shared.
    pub(crate) fn for_worker(&self, client: UpstreamClient) -> Self {
        Self {
            upstream: self.upstream.clone(),
            client,
            layer: self.layer.clone(),
            invalid_params: self.invalid_params.clone(),
            head_timeout: self.head_timeout.clone(),
            timed_tools: self.timed_tools.clone(),
            seen_calls: self.seen_calls.clone(),
            known_tasks: self.known_tasks.clone(),
            drain: self.drain.clone(),
        }
    }

    /// Where the process is in its life: serving, draining, or past the drain
    /// timeout.
    pub(crate) fn drain(&self) -> &Drain {
        &self.drain
    }

    pub(crate) fn client(&self) -> &UpstreamClient {
        &self.client
    }

    /// The layer: every exchange is layered by a clone of it, so that all share
    /// its memory of tasks.
    pub(crate) fn layer(&self) -> ToolErrorLayer {
        self.layer.clone()
    }

    /// `--invalid-params-as-tool-errors`: each exchange puts its call under it
    /// with [`InvalidParamsAsToolErrors::over`], so that all share the tools
    /// listed.
    pub(crate) fn invalid_params(&self) -> &InvalidParamsAsToolErrors<()> {
        &self.invalid_params
    }

    /// How long the upstream's response head may take.
    pub(crate) fn head_timeout(&self) -> &HeadTimeout {
        &self.head_timeout
    }

    /// The `tools/call`s relayed in each session, for their answers on `GET`
    /// streams.
    pub(crate) fn seen_calls(&self) -> &SeenCalls {
        &self.seen_calls
    }

    /// The server task ids this process knows the tools of.
    pub(crate) fn known_tasks(&self) -> Arc<KnownTasks> {
        self.known_tasks.clone()
    }

    /// The upstream's MCP endpoint.
    pub(crate) fn endpoint(&self) -> Uri {
        self.upstream.endpoint_uri()
    }

    /// Answers one request of a client at `client_address`.
    pub(crate) async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        client_address: SocketAddr,
    ) -> Result<Response<ProxyBody>, Infallible> {
        let (mut parts, body) = request.into_parts();
        let at_endpoint = self.upstream.is_endpoint(parts.uri.path());
        let is_mcp = parts.method == Method::POST && at_endpoint;
        parts.uri = self.upstream.uri_for(parts.uri.path_and_query());
        parts.version = Version::HTTP_11;
        headers::for_upstream(&mut parts.headers, client_address, &self.upstream.host());
        if parts.method == Method::GET && at_endpoint {
            // The session's stream, or a resumed one: answers to calls this
            // process relayed are rewritten there too.
            let headers = parts.headers.clone();
            let request = Request::from_parts(parts, streamed(body));
            return Ok(match self.client.request(request).await {
                Ok(response) => replayed::response(self.clone(), &headers, response),
                Err(error) => self.unreachable(&error),
            });
        }
        if !is_mcp {
            return Ok(self
                .forward(Request::from_parts(parts, streamed(body)))
                .await);
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
        if let Some(call) = DirectCall::read(&bytes, &parts.headers, &self.timed_tools) {
            self.seen_calls.remember(&parts.headers, call.request());
            // The answer is read: it must come as the server wrote it.
            parts.headers.remove(header::ACCEPT_ENCODING);
            let request = Request::from_parts(parts, whole(bytes));
            return Ok(direct_call::exchange(&self, request, call).await);
        }
        let Ok(mut message) = serde_json::from_slice::<Value>(&bytes) else {
            // A body that is no JSON: the server answers it.
            return Ok(self.forward(Request::from_parts(parts, whole(bytes))).await);
        };
        // The task ids the client holds are the proxy's: the server gets its own.
        let opened = task_ids::to_upstream(&mut message);
        task_ids::header_to_upstream(&mut parts.headers);
        let bytes = if opened.is_empty() {
            bytes
        } else {
            // Hyper counts the new body.
            parts.headers.remove(header::CONTENT_LENGTH);
            Bytes::from(serde_json::to_vec(&message).expect("a JSON value serializes"))
        };
        if requests(&message).is_empty() {
            // Notifications and responses to the server's requests pass as
            // they are.
            return Ok(self.forward(Request::from_parts(parts, whole(bytes))).await);
        }
        self.seen_calls.remember(&parts.headers, &message);
        // The answer is read: it must come as the server wrote it.
        parts.headers.remove(header::ACCEPT_ENCODING);
        Ok(exchange(
            &self,
            Request::from_parts(parts, whole(bytes)),
            message,
            &opened,
        )
        .await)
    }

    /// Forwards a request, and its response back, as they stream; a response
    /// that never came is a 502, as a reverse proxy answers.
    async fn forward(&self, request: Request<ProxyBody>) -> Response<ProxyBody> {
        match self.client.request(request).await {
            Ok(response) => passed_through(response),
            Err(error) => self.unreachable(&error),
        }
    }

    /// A `502`, as a reverse proxy answers a request it could not forward.
    fn unreachable(&self, error: &(dyn std::error::Error + 'static)) -> Response<ProxyBody> {
        crate::log(&format!(
            "cannot forward to {}: {}",
            self.upstream.endpoint_uri(),
            describe(error)
        ));
        status_only(StatusCode::BAD_GATEWAY)
    }
}

/// The upstream's response as the client gets it: without hop-by-hop headers,
/// its body streamed.
pub(crate) fn passed_through(response: Response<Incoming>) -> Response<ProxyBody> {
    let (mut parts, body) = response.into_parts();
    headers::remove_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, streamed(body))
}

fn status_only(status: StatusCode) -> Response<ProxyBody> {
    let mut response = Response::new(whole(Vec::new()));
    *response.status_mut() = status;
    response
}
