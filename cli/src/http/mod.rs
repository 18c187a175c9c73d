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
//! The files: `upstream` (the URL and the client), `proxy` (the service:
//! forwarding, and what is read as MCP), `headers` (what the upstream and the
//! client get of each other's headers), `exchange` (one JSON-RPC request through
//! the layer, in JSON or as an event stream), `sse` (events cut and rewritten),
//! `failure` (the answers when the upstream gives none), `head_timeout` (how
//! long the upstream may take to answer), `task_ids` (the task
//! ids the client sees, which carry what any replica needs), `body`, and
//! `workers` (a thread and a runtime per CPU, accepting from one listener).

mod body;
mod drain;
mod exchange;
mod failure;
mod head_timeout;
mod headers;
mod proxy;
mod replayed;
mod sse;
mod task_ids;
mod upstream;
mod workers;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

pub(crate) use upstream::{UpstreamUrl, parse_upstream};

use crate::http::drain::{Drain, Phase};
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
    let listener = match TcpListener::bind(listen).await {
        Ok(listener) => listener,
        Err(error) => {
            crate::log(&format!("cannot listen on {listen}: {error}"));
            return 1;
        }
    };
    let stop = stop_signal();
    let (phase, drain) = Drain::new();
    let proxy = Arc::new(proxy::Proxy::new(
        upstream,
        upstream::client(&connector),
        options,
        drain,
    ));
    // The other workers accept from copies of the listener.
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            crate::log(&format!("cannot share the listener: {error}"));
            return 1;
        }
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
        Ok(address) => crate::log(&format!("listening on {address}")),
        Err(error) => {
            crate::log(&format!("cannot read the address listened on: {error}"));
            return 1;
        }
    }
    accept(&listener, &proxy, stop).await;
    // The queued connections are served once no worker accepts any more.
    workers.stop().await;
    accept_queued(listener, &proxy);
    let drain_timeout = options.drain_timeout.unwrap_or(drain::DEFAULT_TIMEOUT);
    crate::log(&format!(
        "draining: no new connections; the calls in flight have {}",
        humantime::format_duration(drain_timeout)
    ));
    phase.send_replace(Phase::Draining);
    drop(proxy);
    if tokio::time::timeout(drain_timeout, phase.closed())
        .await
        .is_err()
    {
        phase.send_replace(Phase::Expired);
        let _ = tokio::time::timeout(drain::GRACE, phase.closed()).await;
    }
    crate::log("drained");
    0
}

/// Accepts connections on `listener` and serves each, until `until` resolves.
async fn accept(listener: &TcpListener, proxy: &Arc<proxy::Proxy>, until: impl Future) {
    tokio::pin!(until);
    loop {
        let (stream, client_address) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, most likely: wait for some to close.
                    crate::log(&format!("cannot accept a connection: {error}"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut until => return,
        };
        serve(proxy.clone(), stream, client_address);
    }
}

/// Serves one connection in a task of its own. At the start of a drain, the
/// request being served is finished and no other is read; a connection that
/// has sent no request yet gets [`drain::FIRST_REQUEST_GRACE`] to send one.
fn serve(proxy: Arc<proxy::Proxy>, stream: TcpStream, client_address: SocketAddr) {
    // An answer goes out in pieces (an event stream's head, each event):
    // without TCP_NODELAY the last piece would wait for the client's delayed
    // ACK (40 ms on Linux) on a kept-alive connection.
    let _ = stream.set_nodelay(true);
    tokio::spawn(async move {
        let drain = proxy.drain().clone();
        let request_read = Arc::new(Notify::new());
        let read = request_read.clone();
        let service = service_fn(move |request| {
            read.notify_one();
            proxy.clone().handle(request, client_address)
        });
        let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        // A connection that ends in an error (a client gone mid-request)
        // concerns that client only.
        tokio::select! {
            _ = connection.as_mut() => return,
            () = drain.reached(Phase::Draining) => {}
        }
        // Hyper's graceful shutdown closes a connection from which it has read
        // nothing yet, unanswered; but a load balancer writes its request
        // right after connecting, so it may be on its way: a request sent
        // and never answered, which no balancer retries.
        tokio::select! {
            _ = connection.as_mut() => return,
            () = request_read.notified() => {}
            () = tokio::time::sleep(drain::FIRST_REQUEST_GRACE) => {}
            () = drain.reached(Phase::Expired) => {}
        }
        connection.as_mut().graceful_shutdown();
        let _ = connection.await;
    });
}

/// Closes the listener after serving the connections waiting in its queue:
/// the system completed their handshakes, so a client (a load balancer) has
/// sent its request on them already, and closing the listener would reset
/// them, a request lost that no balancer retries (it was sent). Refused
/// connections, from then on, a balancer sends elsewhere.
fn accept_queued(listener: TcpListener, proxy: &Arc<proxy::Proxy>) {
    // Asked of the system itself: tokio's readiness may not have seen the
    // latest connections yet.
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            crate::log(&format!("cannot read the listener's queue: {error}"));
            return;
        }
    };
    loop {
        match listener.accept() {
            Ok((stream, client_address)) => {
                let stream = stream
                    .set_nonblocking(true)
                    .and_then(|()| TcpStream::from_std(stream));
                match stream {
                    Ok(stream) => serve(proxy.clone(), stream, client_address),
                    Err(error) => crate::log(&format!("cannot serve a queued connection: {error}")),
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            // WouldBlock: the queue is empty.
            Err(_) => return,
        }
    }
}

/// Resolves at the first SIGTERM or SIGINT. Installed before the listener
/// accepts, so that a signal sent once `listening on` is printed is seen.
fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let terminate = signal(SignalKind::terminate());
    let interrupt = signal(SignalKind::interrupt());
    async move {
        match (terminate, interrupt) {
            (Ok(mut terminate), Ok(mut interrupt)) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = interrupt.recv() => {}
                }
            }
            _ => {
                crate::log("cannot handle SIGTERM and SIGINT: no draining");
                std::future::pending::<()>().await;
            }
        }
    }
}
