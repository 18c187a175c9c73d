//! What the command's benches share: a client of a stdio server on its pipes
//! (`cli_relay`, `bridge`), a client of a Streamable HTTP endpoint on one
//! keep-alive connection (`http_proxy`, `bridge`), the servers they start and
//! the figures they print. Each bench uses a part of it.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::header::HeaderValue;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;

/// The bound on every wait: a stuck route fails the bench instead of hanging it.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);
/// The protocol revision the HTTP benches speak: sessions, as rmcp serves them.
pub(crate) const PROTOCOL: &str = "2025-06-18";

// --- A stdio server on its pipes -------------------------------------------

/// A `tools/call` of `echo`, as a line.
pub(crate) fn request(id: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"echo\"}}}}}}\n"
    )
}

/// A stdio server (or a relay in front of one), its pipes held by the bench.
pub(crate) struct Session {
    process: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    pub(crate) fn start(command: &mut Command) -> Self {
        let mut process = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let stdin = process.stdin.take();
        let stdout = BufReader::new(process.stdout.take().expect("stdout is piped"));
        Self {
            process,
            stdin,
            stdout,
        }
    }

    /// The MCP handshake, for a real server.
    pub(crate) fn initialize(&mut self) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}},
        });
        writeln!(stdin, "{initialize}").expect("the server reads");
        stdin.flush().expect("the server reads");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the initialize answer");
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .expect("the server reads");
    }

    /// One call, from writing it to reading its answer.
    pub(crate) fn call(&mut self, id: usize) -> Duration {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = String::new();
        let started = Instant::now();
        stdin
            .write_all(request(id).as_bytes())
            .expect("the child reads");
        stdin.flush().expect("the child reads");
        self.stdout.read_line(&mut line).expect("an answer");
        let elapsed = started.elapsed();
        assert!(line.contains("\"echo\""), "unexpected answer: {line}");
        elapsed
    }

    /// `calls` calls written from a thread, at most `in_flight` unanswered at
    /// a time; returns once every answer is read.
    pub(crate) fn pipelined(&mut self, calls: usize, in_flight: usize) {
        let stdin = self.stdin.take().expect("stdin is open");
        let (answered, answers) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            let mut stdin = stdin;
            for id in 1..=calls {
                if id > in_flight {
                    answers.recv().expect("the reader is there");
                }
                stdin
                    .write_all(request(id).as_bytes())
                    .expect("the child reads");
            }
            // Kept open until every answer is read: a server may drop the
            // calls in flight at the end of its stdin.
            stdin
        });
        let mut line = String::new();
        for _ in 0..calls {
            line.clear();
            self.stdout.read_line(&mut line).expect("an answer");
            assert!(line.contains("\"echo\""), "unexpected answer: {line}");
            let _ = answered.send(());
        }
        self.stdin = Some(writer.join().expect("the writer finishes"));
    }

    /// Closes the server's stdin and waits for it to exit, successfully.
    pub(crate) fn stop(mut self) {
        self.stdin = None;
        let status = self.process.wait().expect("the server exits");
        assert!(status.success(), "the server exited with {status}");
    }
}

// --- A Streamable HTTP endpoint --------------------------------------------

/// Where a client sends its calls, and whether the command's layer is on the way.
pub(crate) struct Route {
    pub(crate) name: &'static str,
    pub(crate) address: SocketAddr,
    pub(crate) rewraps: bool,
}

impl Route {
    pub(crate) fn new(name: &'static str, address: SocketAddr, rewraps: bool) -> Self {
        Self {
            name,
            address,
            rewraps,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    /// A small text answer.
    Echo,
    /// A tool error.
    Fail,
}

impl Call {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Echo => "echo (text answer)",
            Self::Fail => "fail (tool error)",
        }
    }

    fn body(self, id: usize) -> Bytes {
        let (tool, arguments) = match self {
            Self::Echo => ("echo", json!({"text": "bench-echo"})),
            Self::Fail => ("fail", json!({"message": "bench-failure"})),
        };
        let call = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        });
        Bytes::from(call.to_string())
    }

    /// Panics unless `answer` is this call's, rewrapped when `rewrapped`.
    fn check(self, answer: &[u8], rewrapped: bool) {
        let text = String::from_utf8_lossy(answer);
        let (expected, element) = match self {
            Self::Echo => ("bench-echo", false),
            Self::Fail => ("bench-failure", rewrapped),
        };
        assert!(
            text.contains(expected) && text.contains("<error tool=") == element,
            "unexpected answer to {}: {text}",
            self.name()
        );
    }
}

/// One keep-alive connection to a route, with its MCP session once
/// initialized (or joined).
pub(crate) struct Connection {
    sender: SendRequest<Full<Bytes>>,
    host: HeaderValue,
    session: Option<HeaderValue>,
    rewraps: bool,
    route: &'static str,
}

impl Connection {
    /// A connection to `route`, in no session yet.
    pub(crate) async fn open(route: &Route) -> Self {
        let stream = bounded("connect", tokio::net::TcpStream::connect(route.address))
            .await
            .expect("the route accepts");
        let _ = stream.set_nodelay(true);
        let (sender, connection) = bounded(
            "handshake",
            hyper::client::conn::http1::handshake(TokioIo::new(stream)),
        )
        .await
        .expect("an HTTP/1.1 connection");
        let name = route.name;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                panic!("the connection to {name} broke: {error}");
            }
        });
        Self {
            sender,
            host: HeaderValue::from_str(&route.address.to_string()).expect("an address"),
            session: None,
            rewraps: route.rewraps,
            route: route.name,
        }
    }

    /// A connection to `route` whose requests name `session`, opened on
    /// another connection.
    pub(crate) async fn joining(route: &Route, session: HeaderValue) -> Self {
        let mut connection = Self::open(route).await;
        connection.session = Some(session);
        connection
    }

    /// The session this connection's requests name, once there is one.
    pub(crate) fn session(&self) -> Option<&HeaderValue> {
        self.session.as_ref()
    }

    /// The MCP handshake: a session, and `notifications/initialized` in it.
    pub(crate) async fn initialize(&mut self) {
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}},
        });
        let (status, session, _) = self
            .send(Request::post("/mcp"), Bytes::from(initialize.to_string()))
            .await;
        assert_eq!(status, StatusCode::OK, "initialize");
        self.session = Some(session.expect("the route opens a session"));
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, _, _) = self
            .send(
                Request::post("/mcp"),
                Bytes::from_static(initialized.as_bytes()),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "notifications/initialized");
    }

    /// Ends the session with a `DELETE` (its child with it, on a bridge).
    pub(crate) async fn end_session(&mut self) {
        let (status, _, body) = self.send(Request::delete("/mcp"), Bytes::new()).await;
        assert!(
            status.is_success(),
            "DELETE: {status} {}",
            String::from_utf8_lossy(&body)
        );
        self.session = None;
    }

    /// Sends `request` to `/mcp` with `body`: the status, the session
    /// header, the whole body.
    async fn send(
        &mut self,
        request: hyper::http::request::Builder,
        body: Bytes,
    ) -> (StatusCode, Option<HeaderValue>, Bytes) {
        let mut request = request
            .header("host", self.host.clone())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session.clone());
        }
        let request = request.body(Full::new(body)).expect("a request");
        bounded("an answer", async {
            bounded("ready", self.sender.ready())
                .await
                .unwrap_or_else(|error| {
                    panic!("the connection to {} is open: {error}", self.route)
                });
            let response = self.sender.send_request(request).await.expect("a response");
            let status = response.status();
            let session = response.headers().get("mcp-session-id").cloned();
            let body = response
                .into_body()
                .collect()
                .await
                .expect("the whole body")
                .to_bytes();
            (status, session, body)
        })
        .await
    }

    /// One call, from sending it to reading the last byte of its answer.
    pub(crate) async fn call(&mut self, id: usize, call: Call) -> Duration {
        let started = Instant::now();
        let (status, _, answer) = self.send(Request::post("/mcp"), call.body(id)).await;
        let elapsed = started.elapsed();
        assert_eq!(
            status,
            StatusCode::OK,
            "{}",
            String::from_utf8_lossy(&answer)
        );
        call.check(&answer, self.rewraps);
        elapsed
    }
}

/// `calls` calls over `connections`, each connection taking the next call as
/// soon as it has its answer (`call_for` says which call an id is): calls per
/// second.
pub(crate) async fn calls_per_second(
    connections: Vec<Connection>,
    calls: usize,
    call_for: impl Fn(usize) -> Call + Copy + Send + 'static,
) -> f64 {
    let next = Arc::new(AtomicUsize::new(1));
    let started = Instant::now();
    let mut slots = tokio::task::JoinSet::new();
    for mut connection in connections {
        let next = next.clone();
        slots.spawn(async move {
            loop {
                let id = next.fetch_add(1, Ordering::Relaxed);
                if id > calls {
                    return;
                }
                connection.call(id, call_for(id)).await;
            }
        });
    }
    while let Some(slot) = slots.join_next().await {
        slot.expect("a slot finishes");
    }
    calls as f64 / started.elapsed().as_secs_f64()
}

pub(crate) async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {PATIENCE:?}"))
}

/// A server process listening on 127.0.0.1, killed when dropped.
pub(crate) struct Process {
    pub(crate) address: SocketAddr,
    child: Child,
}

impl Process {
    /// Starts `command` and reads the address it listens on from the stderr
    /// line holding `marker` followed by the address.
    pub(crate) fn listening(command: &mut Command, marker: &str) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("{command:?} starts: {error}"));
        let stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
        let (found, address) = std::sync::mpsc::channel();
        let marker = marker.to_owned();
        // Reads stderr to its end, so that the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if let Some((_, after)) = line.split_once(&marker) {
                    let address: String = after
                        .chars()
                        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
                        .collect();
                    let _ = found.send(address);
                }
            }
        });
        let mut process = Self {
            address: SocketAddr::from(([127, 0, 0, 1], 0)),
            child,
        };
        process.address = address
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("{command:?} says where it listens"))
            .parse()
            .expect("an address");
        process
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
pub(crate) fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("a bound address")
}

// --- The run -----------------------------------------------------------------

/// Runs a bench's `run` on a current-thread runtime.
pub(crate) fn block_on(run: impl Future<Output = ()>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the runtime starts");
    runtime.block_on(run);
}

/// Whether the part `part` of a bench is to run: `cargo bench ... -- NAME`
/// runs the parts named only, none named runs all.
pub(crate) fn wanted() -> impl Fn(&str) -> bool {
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    move |part| parts.is_empty() || parts.iter().any(|p| p == part)
}

// --- Figures ----------------------------------------------------------------

/// A table cell: the median of `rounds` (calls per second), and each round.
pub(crate) fn rates_cell(rounds: &[f64]) -> String {
    let each: Vec<String> = rounds.iter().map(|rate| format!("{rate:.0}")).collect();
    format!("{:.0} calls/s ({})", median(rounds), each.join(", "))
}

pub(crate) fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

pub(crate) fn percentile(sorted: &[Duration], quantile: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * quantile).round() as usize;
    sorted[index]
}

pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

pub(crate) fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// The machine's load, printed with the figures.
pub(crate) fn uptime() -> String {
    let output = Command::new("uptime").output();
    output.map_or_else(
        |error| format!("uptime: {error}"),
        |output| format!("uptime: {}", String::from_utf8_lossy(&output.stdout).trim()),
    )
}
