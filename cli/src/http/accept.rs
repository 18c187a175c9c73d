//! Connections accepted and served: each in a task of its own, on the runtime
//! of the worker that accepted it; at the start of a drain, those the system
//! had queued.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

use crate::http::drain::{self, Phase};
use crate::http::proxy::Proxy;
use crate::http::{headers, route};

/// Accepts connections on `listener` and serves each, until `until` resolves.
pub(crate) async fn accept(listener: &TcpListener, proxy: &Arc<Proxy>, until: impl Future) {
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
fn serve(proxy: Arc<Proxy>, stream: TcpStream, client_address: SocketAddr) {
    // An answer goes out in pieces (an event stream's head, each event):
    // without TCP_NODELAY the last piece would wait for the client's delayed
    // ACK (40 ms on Linux) on a kept-alive connection.
    let _ = stream.set_nodelay(true);
    tokio::spawn(async move {
        let drain = proxy.drain().clone();
        let request_read = Arc::new(Notify::new());
        let read = request_read.clone();
        let client = Arc::new(headers::Client::new(client_address));
        let service = service_fn(move |request| {
            read.notify_one();
            route::handle(proxy.clone(), request, client.clone())
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
pub(crate) fn accept_queued(listener: TcpListener, proxy: &Arc<Proxy>) {
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
