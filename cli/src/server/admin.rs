//! `--admin-listen ADDR`: the health endpoints an orchestrator probes, on a
//! listener of their own, so that no path of the upstream can shadow them and
//! no limit on clients delays them. `GET /livez` answers 200 while the process
//! runs; `GET /readyz` 200 while it accepts connections and 503 from the
//! moment a drain starts, so that a load balancer sends a draining replica
//! nothing new.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::telemetry::event;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Whether the process accepts connections, as `/readyz` says it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// A drain starts: `/readyz` answers 503 from now on.
    pub(crate) fn draining(&self) {
        self.0.store(true, Ordering::Release);
    }

    fn is_draining(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Serves the health endpoints on `address`, when given, in a task of the
/// current runtime; `None` (logged) when it cannot listen there.
pub(crate) async fn start(address: Option<SocketAddr>) -> Option<Readiness> {
    let readiness = Readiness::default();
    let Some(address) = address else {
        return Some(readiness);
    };
    let listener = match TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(error) => {
            event!(error, %address, %error, "cannot listen on {address} (--admin-listen): {error}");
            return None;
        }
    };
    if let Ok(address) = listener.local_addr() {
        event!(info, %address, "health endpoints on {address}: /livez, /readyz");
    }
    tokio::spawn(serve(listener, readiness.clone()));
    Some(readiness)
}

async fn serve(listener: TcpListener, readiness: Readiness) {
    loop {
        // A failed accept (out of descriptors) is tried again: a probe that
        // fails says more than a log line.
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            continue;
        };
        let readiness = readiness.clone();
        let service = service_fn(move |request| {
            std::future::ready(Ok::<_, Infallible>(answer(&request, &readiness)))
        });
        tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
    }
}

/// The answer to one probe.
fn answer(request: &Request<Incoming>, readiness: &Readiness) -> Response<Full<&'static [u8]>> {
    let (status, body): (_, &'static [u8]) = match (request.method(), request.uri().path()) {
        (&Method::GET | &Method::HEAD, "/livez") => (StatusCode::OK, b"live\n"),
        (&Method::GET | &Method::HEAD, "/readyz") if readiness.is_draining() => {
            (StatusCode::SERVICE_UNAVAILABLE, b"draining\n")
        }
        (&Method::GET | &Method::HEAD, "/readyz") => (StatusCode::OK, b"ready\n"),
        (_, "/livez" | "/readyz") => (StatusCode::METHOD_NOT_ALLOWED, b""),
        _ => (StatusCode::NOT_FOUND, b""),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
}
