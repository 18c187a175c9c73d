//! What every request of a worker shares: the upstream and its client, the
//! layer and the memories every worker shares, the clients' connections, the
//! drain. Each request takes its way from there ([`route`](crate::http::route)).

use std::sync::Arc;

use hyper::Uri;
use mcp_tool_errors::ToolErrorLayer;

use crate::http::client::UpstreamClient;
use crate::http::client_limits::ClientLimits;
use crate::http::connections::Connections;
use crate::http::drain::Drain;
use crate::http::head_timeout::HeadTimeout;
use crate::http::headers::ForwardedHeaders;
use crate::http::seen_calls::SeenCalls;
use crate::http::task_ids::KnownTasks;
use crate::http::upstream::UpstreamUrl;
use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
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
    /// [`DirectCall`](crate::http::direct_call::DirectCall).
    timed_tools: TimedTools,
    seen_calls: Arc<SeenCalls>,
    known_tasks: Arc<KnownTasks>,
    /// The clients' connections of every worker, under the limits on
    /// clients.
    connections: Arc<Connections>,
    forwarded_headers: ForwardedHeaders,
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
            connections: Connections::new(ClientLimits::new(
                options,
                crate::http::workers::count(),
            )),
            forwarded_headers: options.forwarded.unwrap_or_default(),
            drain,
        }
    }

    /// The proxy of another worker: `client` is its own; the layer's memory of
    /// tasks, the calls seen, the tools listed, the clients' connections and
    /// the drain are shared.
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
            connections: self.connections.clone(),
            forwarded_headers: self.forwarded_headers,
            drain: self.drain.clone(),
        }
    }

    /// Where the process is in its life: serving, draining, or past the drain
    /// timeout.
    pub(crate) fn drain(&self) -> &Drain {
        &self.drain
    }

    /// The clients' connections of every worker.
    pub(crate) fn connections(&self) -> &Arc<Connections> {
        &self.connections
    }

    /// What becomes of the client's `Forwarded` and `X-Forwarded-For`.
    pub(crate) fn forwarded_headers(&self) -> ForwardedHeaders {
        self.forwarded_headers
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

    /// Where requests go.
    pub(crate) fn upstream(&self) -> &UpstreamUrl {
        &self.upstream
    }

    /// The tools whose calls the layer holds a timer for.
    pub(crate) fn timed_tools(&self) -> &TimedTools {
        &self.timed_tools
    }

    /// The upstream's MCP endpoint.
    pub(crate) fn endpoint(&self) -> Uri {
        self.upstream.endpoint_uri()
    }
}
