//! The HTTP mode, `--upstream URL --listen ADDR`: a reverse proxy in front of an
//! MCP server served over Streamable HTTP, with the layer on the answers at the
//! MCP endpoint.
//!
//! Every request is forwarded to the upstream's origin with its path and query,
//! so that OAuth metadata and anything else the server serves keep working;
//! `POST` requests to the endpoint (the path of URL) holding JSON-RPC requests
//! are read as MCP. The proxy serves plain HTTP/1.1: TLS ends at the load
//! balancer in front of it. It reaches `https://` upstreams with rustls and the
//! platform's root certificates.
//!
//! The files: `upstream` (the URL, and what connects to it), `client` (the
//! connections to the upstream, each given back at its response's end), `idle`
//! (those that wait for a request, closed once idle too long), `proxy`
//! (what the requests of a worker share), `route` (which way a request goes:
//! forwarded as it streams, a `GET` stream, a direct call, an exchange),
//! `headers` (what the upstream and the client get of each other's headers),
//! `direct_call` (a `tools/call` no timeout applies to, its answer through the
//! layer only when the layer may change it), `exchange` (any other JSON-RPC
//! request, the layer's future made as it is sent), `answer_reader` (the one
//! place either's response is read: sent, its head awaited, a JSON body read
//! whole), `answer_stream` (an event stream rewritten as it passes),
//! `answer_rewriter` (what the client gets of the answer, and of a failure,
//! through the layer), `replayed` and
//! `seen_calls` (answers on `GET` streams; the calls they answer, and which
//! of them the client or the proxy cancelled), `sse`
//! (events cut and rewritten), `failure` (the answers when the upstream gives
//! none), `cancel` (what the proxy gives up: no answer to a call the client
//! cancelled, `notifications/cancelled` for any other),
//! `unread` (answers the proxy could not read, which count as answers),
//! `decoded` (gzip and deflate answers decoded before the layer reads them),
//! `head_timeout` (how long the upstream may take to answer), `task_ids` (the
//! task ids the client sees, which carry what any replica needs), `body`,
//! `drain` (SIGTERM) and `stopping` (the signals that start and end it),
//! `accept` (connections accepted and served),
//! `client_limits` (how long a client's head, body and idle connection may
//! take, and how many connections are served), `site` (what a listener
//! serves: this proxy, or the bridge), `activity` (what each
//! connection is doing, as those limits read it), `connections` (every
//! connection, closed past its limit or to make room), `memory` (what a
//! burst freed, given back to the system), and `workers` (a
//! thread and a runtime per CPU, accepting from one listener).

pub(crate) mod accept;
pub(crate) mod activity;
pub(crate) mod admin;
mod answer_reader;
mod answer_rewriter;
mod answer_stream;
mod awaited_requests;
pub(crate) mod body;
mod cancel;
mod client;
pub(crate) mod client_limits;
pub(crate) mod connections;
mod decoded;
mod direct_call;
pub(crate) mod drain;
mod exchange;
pub(crate) mod failure;
mod head_timeout;
pub(crate) mod headers;
mod idle;
mod memory;
mod proxy;
mod replayed;
mod route;
mod seen_calls;
pub(crate) mod site;
mod sse;
pub(crate) mod stopping;
mod task_ids;
mod unread;
pub(crate) mod upstream;
pub(crate) mod workers;

pub(crate) use failure::describe;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::http::accept::{accept, accept_queued, bind};
use crate::http::client::UpstreamClient;
use crate::http::stopping::Stopping;
use crate::http::upstream::UpstreamUrl;
use crate::http::workers::Workers;
use crate::options::Options;

/// Serves `listen` until the process is stopped; returns the exit status when
/// it cannot start.
pub(crate) async fn run(options: &Options, upstream: UpstreamUrl, listen: SocketAddr) -> i32 {
    let connector = match upstream::connector(&upstream) {
        Ok(connector) => connector,
        Err(error) => {
            crate::log(&format!(
                "cannot load the platform's root certificates for an https:// upstream: {error}"
            ));
            return 1;
        }
    };
    let listener = match bind(listen) {
        Ok(listener) => listener,
        Err(error) => {
            crate::log(&format!("cannot listen on {listen}: {error}"));
            return 1;
        }
    };
    // Before the connection cap is read from it.
    client_limits::raise_descriptor_limit();
    let (mut stopping, drain) = Stopping::install(options);
    let client = UpstreamClient::new(&connector, &upstream);
    let proxy = Arc::new(proxy::Proxy::new(upstream, client, options, drain));
    // The other workers accept from copies of the listener.
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            crate::log(&format!("cannot share the listener: {error}"));
            return 1;
        }
    };
    let Some(readiness) = admin::start(options.observability.admin_listen).await else {
        return 1;
    };
    let workers = Workers::start(&listener, &proxy, &connector);
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(error) => {
            crate::log(&format!("cannot listen on {listen}: {error}"));
            return 1;
        }
    };
    match listener.local_addr() {
        // What a script (or a test) that asked for port 0 reads to find the
        // port: every worker accepts by then.
        Ok(address) => event!(info, %address, "listening on {address}"),
        Err(error) => {
            crate::log(&format!("cannot read the address listened on: {error}"));
            return 1;
        }
    }
    accept(&listener, &proxy, stopping.next_stop()).await;
    readiness.draining();
    // The queued connections are served once no worker accepts any more.
    workers.stop().await;
    accept_queued(listener, &proxy);
    drop(proxy);
    stopping.drain().await;
    event!(info, "drained");
    0
}
