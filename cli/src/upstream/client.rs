//! The client that reaches the upstream: a worker's kept-alive HTTP/1.1
//! connections to its one origin, each serving one request at a time.
//!
//! A connection is taken for a request and given back once its response body
//! has been read to the end ([`UpstreamBody`]): then, and not before, the
//! connection can carry another request. A response dropped before its end
//! (a client gone, a tool timeout, a drain) closes its connection, as
//! HTTP/1.1 has no other way to abandon a request; so does one whose request
//! future is dropped before its head came. Nothing is looked up by key and no
//! task is spawned per response: all requests go to the one upstream, and the
//! body that ends is what gives its connection back.
//!
//! The connections that wait for a request are [`Idle`]'s: at most
//! [`MAX_IDLE`](crate::upstream::idle::MAX_IDLE), each closed once idle for
//! [`IDLE_TIMEOUT`]. A request that a
//! kept-alive connection closed before it was written goes on a new one.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{self, HeaderValue};
use hyper::http::uri::PathAndQuery;
use hyper::{Request, Response, Uri};
use tower_service::Service;

use crate::http::body::{BoxError, ProxyBody};
use crate::upstream::idle::{IDLE_TIMEOUT, Idle};
use crate::upstream::url::{Connector, UpstreamUrl};

/// A worker's connections to the upstream; a clone is a handle to the same
/// (what an exchange keeps to send a cancellation).
#[derive(Debug, Clone)]
pub(crate) struct UpstreamClient {
    target: Arc<Target>,
    idle: Arc<Idle>,
}

/// Where a client's connections go, and how.
#[derive(Debug)]
struct Target {
    connector: Connector,
    /// Where every connection goes: the upstream's scheme and authority.
    origin: Uri,
    /// The `Host` of a request that has none (one the proxy makes).
    host: HeaderValue,
    /// The upstream's MCP endpoint, where the proxy's own requests go.
    endpoint: Uri,
}

impl UpstreamClient {
    /// A client opening its connections to `upstream` with `connector`.
    pub(crate) fn new(connector: &Connector, upstream: &UpstreamUrl) -> Self {
        Self::with_idle_timeout(connector, upstream, IDLE_TIMEOUT)
    }

    /// The same, its connections closed once idle for `idle_timeout`.
    pub(crate) fn with_idle_timeout(
        connector: &Connector,
        upstream: &UpstreamUrl,
        idle_timeout: Duration,
    ) -> Self {
        let mut origin = upstream.endpoint_uri().into_parts();
        origin.path_and_query = Some(PathAndQuery::from_static("/"));
        Self {
            target: Arc::new(Target {
                connector: connector.clone(),
                origin: Uri::from_parts(origin).expect("an origin and a path make a URI"),
                host: upstream.host().clone(),
                endpoint: upstream.endpoint_uri(),
            }),
            idle: Idle::new(idle_timeout),
        }
    }

    /// The upstream's MCP endpoint.
    pub(crate) fn endpoint(&self) -> &Uri {
        &self.target.endpoint
    }

    /// How many of its connections wait for a request.
    #[cfg(test)]
    pub(crate) fn idle_connections(&self) -> usize {
        self.idle.len()
    }

    /// Sends `request` (its URI may be absolute: the path and query are
    /// sent; without a `Host`, it gets the upstream's) on an idle connection,
    /// or on a new one; resolves with the response head, whose body gives the
    /// connection back at its end.
    pub(crate) async fn request(
        &self,
        mut request: Request<ProxyBody>,
    ) -> Result<Response<UpstreamBody>, UpstreamError> {
        origin_form(request.uri_mut());
        if !request.headers().contains_key(header::HOST) {
            request
                .headers_mut()
                .insert(header::HOST, self.target.host.clone());
        }
        loop {
            let (mut sender, reused) = match self.idle.take().await {
                Some(sender) => (sender, true),
                None => (self.connect().await?, false),
            };
            match sender.try_send_request(request).await {
                Ok(response) => {
                    let idle = self.idle.clone();
                    return Ok(response.map(|body| UpstreamBody {
                        body,
                        connection: Some((sender, idle)),
                    }));
                }
                Err(mut error) => match error.take_message() {
                    // The server closed the connection as it was reused:
                    // nothing of the request went, so it goes again.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(UpstreamError::Request(error.into_error())),
                },
            }
        }
    }

    /// A new connection, driven by a task of its own on this worker.
    async fn connect(&self) -> Result<SendRequest<ProxyBody>, UpstreamError> {
        let mut connector = self.target.connector.clone();
        let io = connector
            .call(self.target.origin.clone())
            .await
            .map_err(UpstreamError::Connect)?;
        let (sender, connection) = http1::handshake(io)
            .await
            .map_err(|error| UpstreamError::Connect(error.into()))?;
        // Ends when the connection closes: an error there reaches the
        // request or body it happened to.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }
}

/// Writes `uri` in origin form (its path and query), as HTTP/1.1 sends it to
/// a server.
fn origin_form(uri: &mut Uri) {
    if uri.scheme().is_some() {
        let path = uri
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/"));
        *uri = Uri::from(path);
    }
}

/// A response body from the upstream; its connection goes back to the pool
/// when the body ends, read to its end or dropped there.
#[derive(Debug)]
pub(crate) struct UpstreamBody {
    body: Incoming,
    /// `None` once given back, or after an error.
    connection: Option<(SendRequest<ProxyBody>, Arc<Idle>)>,
}

impl UpstreamBody {
    fn give_back(&mut self) {
        if let Some((sender, idle)) = self.connection.take() {
            idle.give_back(sender);
        }
    }
}

impl Body for UpstreamBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let frame = ready!(Pin::new(&mut self.body).poll_frame(cx));
        match &frame {
            Some(Err(_)) => self.connection = None,
            None => self.give_back(),
            Some(Ok(_)) if self.body.is_end_stream() => self.give_back(),
            Some(Ok(_)) => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for UpstreamBody {
    /// A body without content (or read to its end) gives its connection
    /// back even when no one polled it; any other drop closes it.
    fn drop(&mut self) {
        if self.body.is_end_stream() {
            self.give_back();
        }
    }
}

/// Why the upstream gave no response.
#[derive(Debug)]
pub(crate) enum UpstreamError {
    /// No connection could be opened (TCP, or the TLS handshake).
    Connect(BoxError),
    /// The connection failed before the response head came.
    Request(hyper::Error),
}

impl UpstreamError {
    pub(crate) fn is_connect(&self) -> bool {
        matches!(self, Self::Connect(_))
    }
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            Self::Connect(_) => "cannot connect",
            Self::Request(_) => "the request failed",
        })
    }
}

impl std::error::Error for UpstreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Connect(error) => Some(&**error),
            Self::Request(error) => Some(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use http_body_util::{BodyExt, Full};
    use hyper::server::conn::http1 as server;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use tokio::net::TcpListener;

    use super::*;
    use crate::http::body::whole;
    use crate::upstream::idle::MAX_IDLE;
    use crate::upstream::url::{connector, parse_upstream};

    /// An upstream on 127.0.0.1 that counts the connections it accepted:
    /// `/` answers `ok`, `/stream` a body that never ends; with `keep_alive`
    /// off, it closes each connection after its response.
    struct Upstream {
        client: UpstreamClient,
        connections: Arc<AtomicUsize>,
        closed: Arc<AtomicUsize>,
    }

    impl Upstream {
        async fn start(keep_alive: bool) -> Self {
            Self::with_idle_timeout(keep_alive, IDLE_TIMEOUT).await
        }

        /// The upstream, with a client that keeps idle connections for
        /// `idle_timeout`.
        async fn with_idle_timeout(keep_alive: bool, idle_timeout: Duration) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
            let address = listener.local_addr().expect("an address");
            let connections = Arc::new(AtomicUsize::new(0));
            let closed = Arc::new(AtomicUsize::new(0));
            let (accepted, ended) = (connections.clone(), closed.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    accepted.fetch_add(1, Ordering::SeqCst);
                    let service = service_fn(|request: Request<Incoming>| async move {
                        let body = if request.uri().path() == "/stream" {
                            BodyExt::boxed(Endless)
                        } else {
                            BodyExt::boxed(Full::new(Bytes::from("ok")))
                        };
                        Ok::<_, Infallible>(Response::new(body))
                    });
                    let connection = server::Builder::new()
                        .keep_alive(keep_alive)
                        .serve_connection(TokioIo::new(stream), service);
                    let ended = ended.clone();
                    tokio::spawn(async move {
                        let _ = connection.await;
                        ended.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
            let url = parse_upstream(&format!("http://{address}/mcp")).expect("a URL");
            let connector = connector(&url).expect("a connector");
            let client = UpstreamClient::with_idle_timeout(&connector, &url, idle_timeout);
            Self {
                client,
                connections,
                closed,
            }
        }

        /// `GET path` to the end of its body, which is returned.
        async fn read(&self, path: &str) -> Bytes {
            let response = self.get(path).await;
            let body = response.into_body().collect().await.expect("a body");
            body.to_bytes()
        }

        async fn get(&self, path: &str) -> Response<UpstreamBody> {
            get(&self.client, path).await
        }

        fn connections(&self) -> usize {
            self.connections.load(Ordering::SeqCst)
        }

        /// How many of its connections the server saw closed, once that
        /// count reaches `expected`, or after 5 s.
        async fn closed(&self, expected: usize) -> usize {
            for _ in 0..500 {
                if self.closed.load(Ordering::SeqCst) >= expected {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            self.closed.load(Ordering::SeqCst)
        }
    }

    /// `GET path` through `client`: the response head.
    async fn get(client: &UpstreamClient, path: &str) -> Response<UpstreamBody> {
        let request = Request::get(format!("http://upstream{path}"))
            .body(whole(Bytes::new()))
            .expect("a request");
        client.request(request).await.expect("a response")
    }

    /// A body that never sends anything, nor ends.
    struct Endless;

    impl Body for Endless {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn a_connection_serves_again_once_its_response_is_read_to_the_end() {
        let upstream = Upstream::start(true).await;
        for _ in 0..5 {
            assert_eq!(upstream.read("/").await, "ok");
        }
        assert_eq!(upstream.connections(), 1);
    }

    #[tokio::test]
    async fn a_response_dropped_before_its_end_closes_its_connection() {
        let upstream = Upstream::start(true).await;
        let streaming = upstream.get("/stream").await;
        // While it streams, a second request needs a connection of its own.
        assert_eq!(upstream.read("/").await, "ok");
        assert_eq!(upstream.connections(), 2);
        drop(streaming);
        assert_eq!(upstream.read("/").await, "ok");
        assert_eq!(upstream.read("/").await, "ok");
        assert_eq!(
            upstream.connections(),
            2,
            "the streaming one was not reused"
        );
    }

    #[tokio::test]
    async fn no_more_than_max_idle_connections_wait_after_a_burst() {
        let upstream = Upstream::start(true).await;
        // A burst: every request in flight at once, each on a connection of
        // its own, all given back at their ends.
        let burst = MAX_IDLE + 16;
        let mut requests = tokio::task::JoinSet::new();
        for _ in 0..burst {
            let client = upstream.client.clone();
            requests.spawn(async move { get(&client, "/").await });
        }
        let responses = requests.join_all().await;
        assert_eq!(upstream.connections(), burst);
        for response in responses {
            let body = response.into_body().collect().await.expect("a body");
            assert_eq!(body.to_bytes(), "ok");
        }
        assert_eq!(upstream.client.idle_connections(), MAX_IDLE);
        // They serve the next calls: no new connection.
        for _ in 0..MAX_IDLE {
            assert_eq!(upstream.read("/").await, "ok");
        }
        assert_eq!(upstream.connections(), burst);
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_replaced() {
        let upstream = Upstream::start(false).await;
        for _ in 0..3 {
            assert_eq!(upstream.read("/").await, "ok");
        }
        assert_eq!(upstream.connections(), 3);
    }

    #[tokio::test]
    async fn a_connection_idle_longer_than_the_idle_timeout_is_not_reused() {
        let upstream = Upstream::start(true).await;
        assert_eq!(upstream.read("/").await, "ok");
        tokio::time::pause();
        tokio::time::advance(IDLE_TIMEOUT - Duration::from_secs(1)).await;
        tokio::time::resume();
        assert_eq!(upstream.read("/").await, "ok");
        assert_eq!(upstream.connections(), 1);
        tokio::time::pause();
        tokio::time::advance(IDLE_TIMEOUT + Duration::from_secs(1)).await;
        tokio::time::resume();
        assert_eq!(upstream.read("/").await, "ok");
        assert_eq!(upstream.connections(), 2);
    }

    /// The sweep runs on a thread of its own, on the real clock: a short
    /// idle timeout keeps the test short.
    #[tokio::test]
    async fn connections_idle_past_the_idle_timeout_are_closed_with_no_request_to_find_them() {
        let idle_timeout = Duration::from_millis(300);
        let upstream = Upstream::with_idle_timeout(true, idle_timeout).await;
        // Three at once: three connections, all idle after.
        let (first, second, third) =
            tokio::join!(upstream.get("/"), upstream.get("/"), upstream.get("/"));
        for response in [first, second, third] {
            response.into_body().collect().await.expect("a body");
        }
        assert_eq!(upstream.client.idle_connections(), 3);
        let started = std::time::Instant::now();
        assert_eq!(upstream.closed(3).await, 3);
        assert!(
            started.elapsed() >= idle_timeout / 2,
            "closed before the timeout"
        );
        assert_eq!(upstream.client.idle_connections(), 0);
        // The client still serves, on a new connection.
        assert_eq!(upstream.read("/").await, "ok");
        assert_eq!(upstream.connections(), 4);
    }

    #[tokio::test]
    async fn a_request_the_proxy_makes_gets_the_upstreams_host_and_a_path() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("an address");
        let url = parse_upstream(&format!("http://{address}/mcp")).expect("a URL");
        let client = UpstreamClient::new(&connector(&url).expect("a connector"), &url);
        let request = Request::post(url.endpoint_uri())
            .body(whole(Bytes::new()))
            .expect("a request");
        tokio::spawn(async move { client.request(request).await.map(|_| ()) });
        let (mut stream, _) = listener.accept().await.expect("a connection");
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0];
            tokio::io::AsyncReadExt::read_exact(&mut stream, &mut byte)
                .await
                .expect("the request head");
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).expect("text");
        assert!(head.starts_with("POST /mcp HTTP/1.1\r\n"), "{head}");
        assert!(head.contains(&format!("host: {address}\r\n")), "{head}");
    }
}
