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
//! Its parts, a folder each: the server that takes clients' connections
//! ([`crate::server`], shared with the bridge), the client of the upstream
//! ([`crate::upstream`]) and the MCP exchange ([`crate::exchange`]). This
//! folder puts them together: `reverse_proxy` (what a worker serves) and
//! `route` (which way each request goes, and which part takes it); nothing
//! uses it but `main`.

mod reverse_proxy;
mod route;

use std::net::SocketAddr;

use tokio::net::TcpListener;

use crate::options::Options;
use crate::proxy::reverse_proxy::ReverseProxy;
use crate::server::connections::Connections;
use crate::server::listener::{accept, accept_queued, bind};
use crate::server::stopping::Stopping;
use crate::server::workers::{self, Workers};
use crate::server::{admin, client_limits};
use crate::telemetry::event;
use crate::upstream::client::UpstreamClient;
use crate::upstream::url::{self, UpstreamUrl};

/// Serves `listen` until the process is stopped; returns the exit status when
/// it cannot start.
pub(crate) async fn run(options: &Options, upstream: UpstreamUrl, listen: SocketAddr) -> i32 {
    let connector = match url::connector(&upstream) {
        Ok(connector) => connector,
        Err(error) => {
            crate::telemetry::log(&format!(
                "cannot load the platform's root certificates for an https:// upstream: {error}"
            ));
            return 1;
        }
    };
    let listener = match bind(listen) {
        Ok(listener) => listener,
        Err(error) => {
            crate::telemetry::log(&format!("cannot listen on {listen}: {error}"));
            return 1;
        }
    };
    // Before the connection cap is read from it.
    client_limits::raise_descriptor_limit();
    let (mut stopping, drain) = Stopping::install(options.drain_timeout);
    let connections = Connections::new(options.client_limits(workers::count()));
    let client = UpstreamClient::new(&connector, &upstream);
    let proxy = ReverseProxy::new(upstream, client, options, (connections, drain));
    // The other workers accept from copies of the listener.
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            crate::telemetry::log(&format!("cannot share the listener: {error}"));
            return 1;
        }
    };
    let Some(readiness) = admin::start(options.observability.admin_listen).await else {
        return 1;
    };
    let workers = Workers::start(&listener, || {
        proxy.for_worker(UpstreamClient::new(&connector, &proxy.upstream))
    });
    let proxy = std::sync::Arc::new(proxy);
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(error) => {
            crate::telemetry::log(&format!("cannot listen on {listen}: {error}"));
            return 1;
        }
    };
    match listener.local_addr() {
        // What a script (or a test) that asked for port 0 reads to find the
        // port: every worker accepts by then.
        Ok(address) => event!(info, %address, "listening on {address}"),
        Err(error) => {
            crate::telemetry::log(&format!("cannot read the address listened on: {error}"));
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
