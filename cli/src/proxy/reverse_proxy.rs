//! What a worker of the HTTP mode serves: its own client of the upstream,
//! the exchanges' memories every worker shares, the bounds the command line
//! sets, and the server's connections and drain. Each request takes its way
//! from there ([`route`](crate::proxy::route)), which hands each part what
//! that part uses.

use std::sync::Arc;

use crate::exchange::layer_state::LayerState;
use crate::exchange::outbound::Outbound;
use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
use crate::jsonrpc::timed_tools::TimedTools;
use crate::options::Options;
use crate::server::connections::Connections;
use crate::server::drain::Drain;
use crate::upstream::client::UpstreamClient;
use crate::upstream::forwarded::ForwardedHeaders;
use crate::upstream::head_timeout::HeadTimeout;
use crate::upstream::url::UpstreamUrl;

/// What a worker of the HTTP mode serves.
#[derive(Debug)]
pub(crate) struct ReverseProxy {
    /// Where requests go.
    pub(crate) upstream: UpstreamUrl,
    /// The worker's own connections to the upstream, and the drain.
    pub(crate) outbound: Outbound,
    /// The layer and the state every worker's exchanges share with it.
    pub(crate) layer_state: LayerState,
    /// How long the upstream's response head may take.
    pub(crate) head_timeout: HeadTimeout,
    /// The tools whose calls the layer holds a timer for; any other call is
    /// a [`DirectCall`](crate::exchange::direct_call::DirectCall).
    pub(crate) timed_tools: TimedTools,
    /// What becomes of the client's `Forwarded` and `X-Forwarded-For`.
    pub(crate) forwarded_headers: ForwardedHeaders,
    /// The clients' connections of every worker, under the limits on
    /// clients.
    pub(crate) connections: Arc<Connections>,
}

impl ReverseProxy {
    /// The main thread's: `client` is its own; the rest comes from
    /// `options`, `connections` and `drain`.
    pub(crate) fn new(
        upstream: UpstreamUrl,
        client: UpstreamClient,
        options: &Options,
        (connections, drain): (Arc<Connections>, Drain),
    ) -> Self {
        Self {
            upstream,
            outbound: Outbound { client, drain },
            // Spans say what carries the session: HTTP over TCP.
            layer_state: LayerState::new(
                options.layer().network_transport("tcp"),
                InvalidParamsAsToolErrors::new(options.invalid_params_as_tool_errors),
            ),
            head_timeout: HeadTimeout::new(options.tool_timeout),
            timed_tools: options.timed_tools(),
            forwarded_headers: options.forwarded.unwrap_or_default(),
            connections,
        }
    }

    /// Another worker's: `client` is its own; the exchanges' memories, the
    /// clients' connections and the drain are shared.
    pub(crate) fn for_worker(&self, client: UpstreamClient) -> Self {
        Self {
            upstream: self.upstream.clone(),
            outbound: Outbound {
                client,
                drain: self.outbound.drain.clone(),
            },
            layer_state: self.layer_state.clone(),
            head_timeout: self.head_timeout.clone(),
            timed_tools: self.timed_tools.clone(),
            forwarded_headers: self.forwarded_headers,
            connections: self.connections.clone(),
        }
    }
}
