//! The HTTP mode's test rig: a scripted upstream on 127.0.0.1, the real binary
//! in front of it, and a plain HTTP/1.1 client.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::HeaderMap;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// The bound on every wait: a broken proxy fails a test instead of hanging it.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// Bounds `future` by [`PATIENCE`].
pub(crate) async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: no result within {PATIENCE:?}"))
}

/// A request as the upstream received it.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) method: String,
    pub(crate) uri: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Received {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// What the scripted upstream answers with.
pub(crate) enum Reply {
    /// A status, headers, and a body sent whole.
    Whole(StatusCode, Vec<(&'static str, String)>, Vec<u8>),
    /// `200 text/event-stream`, with its chunks written as they come from the
    /// channel; the stream ends when the channel does, or is cut (the
    /// connection closed without the end of the chunked body) on `Err`.
    Events(mpsc::UnboundedReceiver<Result<Vec<u8>, ()>>),
    /// Never answers.
    Hang,
    /// `200` with this content type, a body that starts with `head` and then
    /// repeats `repeated` forever.
    Endless {
        content_type: &'static str,
        head: &'static str,
        repeated: Vec<u8>,
    },
}

impl Reply {
    /// `200 application/json` with `body` as it is.
    pub(crate) fn json(body: &str) -> Self {
        Self::Whole(
            StatusCode::OK,
            vec![("content-type", "application/json".to_owned())],
            body.as_bytes().to_vec(),
        )
    }

    /// An event stream that sends `chunks`, then ends.
    pub(crate) fn events(chunks: &[&str]) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        for chunk in chunks {
            let _ = sender.send(Ok(chunk.as_bytes().to_vec()));
        }
        Self::Events(receiver)
    }
}

type Script = dyn Fn(&Received) -> Reply + Send + Sync;

/// A scripted upstream on 127.0.0.1, recording every request it gets.
pub(crate) struct Upstream {
    pub(crate) address: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Upstream {
    /// A plain HTTP upstream answering as `script` says.
    pub(crate) async fn start(script: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Self {
        Self::serve(script, None).await
    }

    /// The same over TLS, with the certificate of 127.0.0.1 in tests/http/tls
    /// (signed by `ca.pem` there, valid until 2126).
    pub(crate) async fn start_tls(
        script: impl Fn(&Received) -> Reply + Send + Sync + 'static,
    ) -> Self {
        use tokio_rustls::rustls::pki_types::pem::PemObject;
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let chain = CertificateDer::pem_slice_iter(include_bytes!("tls/leaf.pem"))
            .collect::<Result<Vec<_>, _>>()
            .expect("the test certificate");
        let key = PrivateKeyDer::from_pem_slice(include_bytes!("tls/leaf.key")).expect("its key");
        let config = tokio_rustls::rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("a TLS configuration");
        Self::serve(
            script,
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(config))),
        )
        .await
    }

    async fn serve(
        script: impl Fn(&Received) -> Reply + Send + Sync + 'static,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let address = listener.local_addr().expect("a bound address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let recorded = received.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let script = script.clone();
                let recorded = recorded.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        answer(request, script.clone(), recorded.clone())
                    });
                    let connection = http1::Builder::new();
                    let _ = match tls {
                        None => {
                            connection
                                .serve_connection(TokioIo::new(stream), service)
                                .await
                        }
                        Some(tls) => {
                            let Ok(stream) = tls.accept(stream).await else {
                                return;
                            };
                            connection
                                .serve_connection(TokioIo::new(stream), service)
                                .await
                        }
                    };
                });
            }
        });
        Self {
            address,
            received,
            task,
        }
    }

    /// The URL of its MCP endpoint.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until a request that `matches` has arrived; returns it.
    pub(crate) async fn wait_for(&self, matches: impl Fn(&Received) -> bool) -> Received {
        bounded("the upstream waits for a request", async {
            loop {
                if let Some(found) = self.received().into_iter().find(|r| matches(r)) {
                    return found;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type UpstreamBody = http_body_util::combinators::UnsyncBoxBody<Bytes, std::io::Error>;

async fn answer(
    request: Request<Incoming>,
    script: Arc<Script>,
    recorded: Arc<Mutex<Vec<Received>>>,
) -> Result<Response<UpstreamBody>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let received = Received {
        method: parts.method.to_string(),
        uri: parts.uri.to_string(),
        headers: parts.headers,
        body,
    };
    let reply = script(&received);
    recorded.lock().unwrap().push(received);
    let response = match reply {
        Reply::Whole(status, headers, body) => {
            let mut response = Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response
                .body(
                    Full::new(Bytes::from(body))
                        .map_err(|never| match never {})
                        .boxed_unsync(),
                )
                .unwrap()
        }
        Reply::Events(chunks) => {
            let frames = futures_stream(chunks);
            Response::builder()
                .header("content-type", "text/event-stream")
                .header("cache-control", "no-cache")
                .body(frames)
                .unwrap()
        }
        Reply::Hang => std::future::pending().await,
        Reply::Endless {
            content_type,
            head,
            repeated,
        } => Response::builder()
            .header("content-type", content_type)
            .body(endless(head, repeated))
            .unwrap(),
    };
    Ok(response)
}

/// A streamed body written from `chunks`.
fn futures_stream(chunks: mpsc::UnboundedReceiver<Result<Vec<u8>, ()>>) -> UpstreamBody {
    struct Chunks(mpsc::UnboundedReceiver<Result<Vec<u8>, ()>>);
    impl hyper::body::Body for Chunks {
        type Data = Bytes;
        type Error = std::io::Error;
        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            self.0.poll_recv(cx).map(|chunk| {
                chunk.map(|chunk| match chunk {
                    Ok(bytes) => Ok(Frame::data(Bytes::from(bytes))),
                    Err(()) => Err(std::io::Error::other("cut by the script")),
                })
            })
        }
    }
    Chunks(chunks).boxed_unsync()
}

/// A body that starts with `head`, then repeats `repeated` for as long as it
/// is read.
fn endless(head: &'static str, repeated: Vec<u8>) -> UpstreamBody {
    struct Endless(Option<&'static str>, Bytes);
    impl hyper::body::Body for Endless {
        type Data = Bytes;
        type Error = std::io::Error;
        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            let chunk = match self.0.take() {
                Some(head) => Bytes::from_static(head.as_bytes()),
                None => self.1.clone(),
            };
            std::task::Poll::Ready(Some(Ok(Frame::data(chunk))))
        }
    }
    Endless(Some(head), Bytes::from(repeated)).boxed_unsync()
}

/// An upstream that reads a request, sends `bytes`, and closes the connection.
pub(crate) async fn closing_upstream(
    bytes: &'static [u8],
) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let address = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = Vec::new();
            let mut buffer = [0; 4096];
            // Until the end of the headers and a body of the length they say.
            while let Ok(read) = stream.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
                if let Some(end) = find(&request, b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|line| line.strip_prefix("content-length:"))
                        .and_then(|length| length.trim().parse().ok())
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let _ = stream.write_all(bytes).await;
            let _ = stream.shutdown().await;
        }
    });
    (address, task)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// A port on 127.0.0.1 that refuses connections: bound, then closed.
pub(crate) async fn refused_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    listener.local_addr().unwrap()
}

/// A process that says on stderr where it listens, running until dropped.
pub(crate) struct ListeningProcess {
    pub(crate) address: SocketAddr,
    /// Its stderr after the line that said where it listens.
    stderr: Arc<Mutex<String>>,
    process: Child,
}

impl ListeningProcess {
    /// Starts `command` and waits for its stderr line `PREFIX ADDRESS`.
    pub(crate) async fn spawn(mut command: Command, prefix: &str) -> Self {
        let mut process = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("{command:?} starts: {error}"));
        let mut lines = BufReader::new(process.stderr.take().unwrap()).lines();
        let address = bounded(&format!("{command:?} says where it listens"), async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("the process exited before listening");
                if let Some(address) = line.strip_prefix(prefix) {
                    return address.parse::<SocketAddr>().expect("an address");
                }
            }
        })
        .await;
        // Read as it comes, so that the process never blocks on a full pipe.
        let stderr = Arc::new(Mutex::new(String::new()));
        let log = stderr.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        Self {
            address,
            stderr,
            process,
        }
    }

    /// What the process wrote on stderr after its `listening` line.
    pub(crate) fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The process's id.
    pub(crate) fn pid(&self) -> u32 {
        self.process.id().expect("the process runs")
    }

    /// Sends the process SIGTERM, as a service manager stops it.
    pub(crate) fn terminate(&self) {
        self.signal("TERM");
    }

    /// Sends the process the signal `name` (`TERM`, `STOP`, `CONT`).
    pub(crate) fn signal(&self, name: &str) {
        let pid = self.process.id().expect("the process runs");
        let sent = std::process::Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{name} {pid}: {sent}");
    }

    /// The names of the process's threads, from `/proc`.
    pub(crate) fn thread_names(&self) -> Vec<String> {
        let pid = self.process.id().expect("the process runs");
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .expect("the process's threads")
            .map(|task| {
                let comm = task.expect("a thread").path().join("comm");
                let name = std::fs::read_to_string(comm).unwrap_or_default();
                name.trim_end().to_owned()
            })
            .collect()
    }

    /// Waits for the process to exit; its exit status.
    pub(crate) async fn exited(&mut self) -> std::process::ExitStatus {
        bounded("the process exits", self.process.wait())
            .await
            .expect("the process's status")
    }

    /// Waits until the process's stderr shows `text`.
    pub(crate) async fn log_shows(&self, text: &str) {
        bounded(&format!("the log shows {text:?}"), async {
            while !self.stderr.lock().unwrap().contains(text) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
}

/// The command in HTTP mode, running until dropped.
pub(crate) struct Proxy {
    pub(crate) address: SocketAddr,
    process: ListeningProcess,
}

impl Proxy {
    /// Starts the binary with `--upstream URL --listen 127.0.0.1:0` and
    /// `options`; learns its port from the `listening on ADDR` line.
    pub(crate) async fn start(upstream: &str, options: &[&str]) -> Self {
        Self::start_with_env(upstream, options, &[]).await
    }

    /// [`Proxy::start`] with environment variables `env` set.
    pub(crate) async fn start_with_env(
        upstream: &str,
        options: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let mut command = Command::new(Path::new(env!("CARGO_BIN_EXE_mcp-tool-errors")));
        command
            .args(options)
            .args(["--upstream", upstream, "--listen", "127.0.0.1:0"])
            .envs(env.iter().copied());
        let process = ListeningProcess::spawn(command, "mcp-tool-errors: listening on ").await;
        Self {
            address: process.address,
            process,
        }
    }

    /// What the proxy wrote on stderr after its `listening` line.
    pub(crate) fn log(&self) -> String {
        self.process.log()
    }

    /// Sends the proxy SIGTERM.
    pub(crate) fn terminate(&self) {
        self.process.terminate();
    }

    /// The names of the proxy's threads.
    pub(crate) fn thread_names(&self) -> Vec<String> {
        self.process.thread_names()
    }

    /// Sends the proxy the signal `name`.
    pub(crate) fn signal(&self, name: &str) {
        self.process.signal(name);
    }

    /// Waits for the proxy to exit; its exit status.
    pub(crate) async fn exited(&mut self) -> std::process::ExitStatus {
        self.process.exited().await
    }

    /// Sends `request` on a new connection.
    pub(crate) async fn send(&self, request: Request<Full<Bytes>>) -> Response<Incoming> {
        send_to(self.address, request).await
    }

    /// POSTs `body` to the MCP endpoint as an MCP client does, with `headers`.
    pub(crate) async fn post(&self, body: &str, headers: &[(&str, &str)]) -> Response<Incoming> {
        post_to(self.address, body, headers).await
    }
}

/// Sends `request` to `address` on a new connection.
pub(crate) async fn send_to<B>(address: SocketAddr, request: Request<B>) -> Response<Incoming>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    try_send_to(address, request).await.expect("a response")
}

/// Sends `request` to `address` on a new connection: the response, or the
/// error that came first (the server closed the connection while the request
/// was still being written, say).
pub(crate) async fn try_send_to<B>(
    address: SocketAddr,
    request: Request<B>,
) -> Result<Response<Incoming>, hyper::Error>
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = bounded("connect", TcpStream::connect(address))
        .await
        .expect("the server accepts");
    let (mut sender, connection) = bounded(
        "handshake",
        hyper::client::conn::http1::handshake(TokioIo::new(stream)),
    )
    .await
    .unwrap();
    tokio::spawn(connection);
    bounded("the response head", sender.send_request(request)).await
}

/// POSTs `body` to `/mcp` at `address` as an MCP client does, with `headers`.
pub(crate) async fn post_to(
    address: SocketAddr,
    body: &str,
    headers: &[(&str, &str)],
) -> Response<Incoming> {
    let mut request = Request::post("/mcp")
        .header("host", address.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send_to(
        address,
        request
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap(),
    )
    .await
}

/// A response body read whole.
pub(crate) async fn body(response: Response<Incoming>) -> Bytes {
    bounded("the whole body", response.into_body().collect())
        .await
        .expect("the body")
        .to_bytes()
}

/// A response body read as JSON.
pub(crate) async fn json(response: Response<Incoming>) -> Value {
    let bytes = body(response).await;
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}", String::from_utf8_lossy(&bytes)))
}

/// An event stream read event by event, as the client gets it.
pub(crate) struct Events {
    body: Incoming,
    buffer: Vec<u8>,
}

impl Events {
    pub(crate) fn new(response: Response<Incoming>) -> Self {
        Self {
            body: response.into_body(),
            buffer: Vec::new(),
        }
    }

    /// The next event, with its blank line (`\n` or `\r\n` line endings);
    /// `None` at the end of the stream.
    pub(crate) async fn next(&mut self) -> Option<String> {
        bounded("the next event", async {
            loop {
                let ends = [(b"\n\n".as_slice(), 2), (b"\r\n\r\n".as_slice(), 4)];
                let end = ends
                    .iter()
                    .filter_map(|(blank, len)| Some(find(&self.buffer, blank)? + len))
                    .min();
                if let Some(end) = end {
                    let event: Vec<u8> = self.buffer.drain(..end).collect();
                    return Some(String::from_utf8(event).unwrap());
                }
                match self.body.frame().await {
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            self.buffer.extend_from_slice(&data);
                        }
                    }
                    Some(Err(error)) => panic!("the event stream broke: {error}"),
                    None => {
                        assert!(self.buffer.is_empty(), "a cut event: {:?}", self.buffer);
                        return None;
                    }
                }
            }
        })
        .await
    }
}

/// The data of an event (one `data:` line), as JSON.
pub(crate) fn event_data(event: &str) -> Value {
    let data = event
        .lines()
        .find_map(|line| line.trim_end_matches('\r').strip_prefix("data: "))
        .unwrap_or_else(|| panic!("no data in {event:?}"));
    serde_json::from_str(data).unwrap()
}

/// A `tools/call` request of `tool`, with `id`.
pub(crate) fn tool_call(id: u64, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
}

/// The `isError` answer to request `id` with `text`.
pub(crate) fn error_result(id: u64, text: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": true},
    })
    .to_string()
}

/// Answers `notifications/cancelled` with `202`, and everything else with `reply`.
pub(crate) fn answering(
    reply: impl Fn() -> Reply + Send + Sync + 'static,
) -> impl Fn(&Received) -> Reply + Send + Sync + 'static {
    move |request| match request.json()["method"].as_str() {
        Some("notifications/cancelled") => {
            Reply::Whole(hyper::StatusCode::ACCEPTED, vec![], vec![])
        }
        _ => reply(),
    }
}

/// The sentence of a call still waiting at the end of a drain.
pub(crate) const DRAINED: &str =
    "The proxy shut down before the server answered; the request was cancelled.";
