//! Connections accepted and served: each in a task of its own, on the runtime
//! of the worker that accepted it, watched by the limits on clients
//! ([`Connections`]); at the start of a drain, those the system had queued.
//!
//! At the connection cap, a new connection is accepted only once another can
//! make room for it (one with no request in progress, closed): while every
//! connection serves a request, new ones wait in the listen queue, whose
//! length is the system's most (`net.core.somaxconn`). An accept that fails
//! never ends the loop: out of file descriptors, idle connections are closed
//! and the cap lowered below what the process could hold. Its log lines come
//! at most one a second. While many connections that were shut down are not
//! closed yet (a burst at the cap), the loop waits for them: they hold their
//! descriptors.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::http::peer::Peer;
use crate::server::connections::Connections;
use crate::server::drain::{self, Phase};
use crate::server::site::Site;
use crate::server::watched_stream::WatchedStream;
use crate::throttled_log::ThrottledLog;

/// The listen queue when the system does not say its most, eight times the
/// 128 of std's and tokio's listeners (a Linux older than 5.4 takes at most
/// its `somaxconn`, 128 then, whatever is asked).
const DEFAULT_BACKLOG: u32 = 1024;

/// How long the accept loop waits before it looks again when every
/// connection serves a request at the cap.
const ROOM_POLL: Duration = Duration::from_millis(50);

/// How long the accept loop waits after an accept failed for want of
/// resources, for connections to close.
const RESOURCE_WAIT: Duration = Duration::from_millis(100);

/// How long the accept loop waits for connections it shut down to close
/// (their tasks drop them, on their own workers).
const CLOSING_WAIT: Duration = Duration::from_millis(1);

/// Listens on `address` with the longest listen queue the system allows, so
/// that a burst of connections (a load balancer's, at a restart) waits there
/// instead of being refused.
pub(crate) fn bind(address: SocketAddr) -> io::Result<TcpListener> {
    let socket = if address.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn").ok();
    socket.listen(backlog(somaxconn.as_deref()))
}

/// The listen queue that the system's `somaxconn` says, [`DEFAULT_BACKLOG`]
/// when it cannot be read.
fn backlog(somaxconn: Option<&str>) -> u32 {
    somaxconn
        .and_then(|text| text.trim().parse::<u32>().ok())
        .filter(|backlog| *backlog > 0)
        .unwrap_or(DEFAULT_BACKLOG)
}

/// Accepts connections on `listener` and serves each, until `until` resolves.
pub(crate) async fn accept<S: Site>(listener: &TcpListener, site: &Arc<S>, until: impl Future) {
    tokio::pin!(until);
    let connections = site.connections();
    loop {
        if connections.many_closing() {
            // Their descriptors are freed once their tasks run.
            tokio::select! {
                () = tokio::time::sleep(CLOSING_WAIT) => continue,
                _ = &mut until => return,
            }
        }
        if connections.is_full() && !connections.any_unused() {
            trouble(|| {
                format!(
                    "every one of the {} connections served (--max-connections) has a request \
                     in progress: new ones wait in the listen queue",
                    connections.cap()
                )
            });
            tokio::select! {
                () = tokio::time::sleep(ROOM_POLL) => continue,
                _ = &mut until => return,
            }
        }
        let (stream, client_address) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    let wait = accept_failed(&error, connections);
                    tokio::select! {
                        () = tokio::time::sleep(wait) => continue,
                        _ = &mut until => return,
                    }
                }
            },
            _ = &mut until => return,
        };
        if connections.is_full() {
            connections.make_room(1);
        }
        trouble_over();
        serve(site.clone(), stream, client_address, false);
    }
}

/// Logs a failed accept and makes room if it is for want of descriptors;
/// how long to wait before the next.
fn accept_failed(error: &io::Error, connections: &Connections) -> Duration {
    match error.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE) => {
            let closed = connections.out_of_descriptors();
            trouble(|| {
                format!(
                    "cannot accept a connection: {error}; closed {closed} with no request in \
                     progress, and serving at most {} from now on",
                    connections.cap()
                )
            });
            if closed > 0 {
                CLOSING_WAIT
            } else {
                RESOURCE_WAIT
            }
        }
        // A client gone before it was accepted.
        Some(libc::ECONNABORTED | libc::EINTR) => Duration::ZERO,
        _ => {
            trouble(|| format!("cannot accept a connection: {error}"));
            RESOURCE_WAIT
        }
    }
}

/// The log of what keeps connections from being accepted, every worker's
/// together: a line a second at most.
static TROUBLE: LazyLock<Mutex<ThrottledLog>> =
    LazyLock::new(|| Mutex::new(ThrottledLog::new("cannot accept a connection")));

/// Whether lines of [`TROUBLE`] were not shown and their count not written.
static TROUBLE_UNCOUNTED: AtomicBool = AtomicBool::new(false);

fn trouble(message: impl FnOnce() -> String) {
    let mut log = TROUBLE.lock().unwrap_or_else(PoisonError::into_inner);
    match log.event_line(Instant::now(), message) {
        Some(line) => crate::telemetry::log(&line),
        None => TROUBLE_UNCOUNTED.store(true, Ordering::Relaxed),
    }
}

/// A connection was accepted: the count of the lines not shown is written
/// once due.
fn trouble_over() {
    if TROUBLE_UNCOUNTED.load(Ordering::Relaxed) {
        let mut log = TROUBLE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(line) = log.due_count_line(Instant::now()) {
            crate::telemetry::log(&line);
            TROUBLE_UNCOUNTED.store(false, Ordering::Relaxed);
        }
    }
}

/// Serves one connection in a task of its own. During a drain, it is closed
/// once it reads a request whose answer has not started, after that answer
/// ([`drain::until_closing_is_safe`]); from its start, if it was `queued` at
/// the listener when it closed.
fn serve<S: Site>(site: Arc<S>, stream: TcpStream, client_address: SocketAddr, queued: bool) {
    // An answer goes out in pieces (an event stream's head, each event):
    // without TCP_NODELAY the last piece would wait for the client's delayed
    // ACK (40 ms on Linux) on a kept-alive connection.
    let _ = stream.set_nodelay(true);
    let stream = WatchedStream::new(site.connections().register(&stream), stream);
    tokio::spawn(async move {
        let drain = site.drain().clone();
        let request_read = Arc::new(Notify::new());
        let read = request_read.clone();
        let peer = Arc::new(Peer::new(client_address));
        let activity = stream.activity().clone();
        let answered = activity.clone();
        let service = service_fn(move |request| {
            read.notify_one();
            activity.request_started();
            site.clone().handle(request, peer.clone(), activity.clone())
        });
        // No timer of hyper's (`header_read_timeout`): the limits on clients
        // are the sweep's (`connections`).
        let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        // A connection that ends in an error (a client gone mid-request)
        // concerns that client only.
        if !queued {
            tokio::select! {
                _ = connection.as_mut() => return,
                () = drain.reached(Phase::Draining) => {}
            }
        }
        // Hyper's graceful shutdown closes an idle connection at once, under
        // a balancer that may be sending on it: not before it is safe.
        let ended =
            drain::until_closing_is_safe(connection.as_mut(), &drain, &request_read, &answered)
                .await;
        if ended {
            return;
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
pub(crate) fn accept_queued<S: Site>(listener: TcpListener, site: &Arc<S>) {
    // Asked of the system itself: tokio's readiness may not have seen the
    // latest connections yet.
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            crate::telemetry::log(&format!("cannot read the listener's queue: {error}"));
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
                    Ok(stream) => serve(site.clone(), stream, client_address, true),
                    Err(error) => {
                        crate::telemetry::log(&format!("cannot serve a queued connection: {error}"))
                    }
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            // WouldBlock: the queue is empty.
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listen_queue_is_the_systems_most() {
        assert_eq!(backlog(Some("4096\n")), 4096);
        assert_eq!(backlog(Some("65535")), 65535);
        assert_eq!(backlog(Some("")), DEFAULT_BACKLOG);
        assert_eq!(backlog(Some("0")), DEFAULT_BACKLOG);
        assert_eq!(backlog(None), DEFAULT_BACKLOG);
    }
}
