//! What the command's HTTP mode costs, side by side in one run, all on
//! 127.0.0.1, with nginx as the yardstick of what a plain reverse proxy costs on
//! the same machine.
//!
//! - Upstream U1: the `rmcp_http` example with `MCP_TOOL_ERRORS=off` (rmcp's
//!   Streamable HTTP server: a session per connection, each answer an event
//!   stream), reached directly, through nginx as a plain reverse proxy (keep-alive
//!   to the upstream, no buffering), and through the command. Three calls in four
//!   are `echo` (a small text answer), one in four `fail` (a tool error, which the
//!   command rewraps and the others pass on).
//! - Upstream U2: the official Python SDK server of the HTTP tests
//!   (`tests/http/servers/python_http_server.py`, stateless, JSON answers), when
//!   `scripts/install-test-servers.sh` has installed it: directly and through the
//!   command, `echo` calls only.
//!
//! The load generator is this bench: a hyper client, one keep-alive connection
//! (and, for U1, one MCP session) per call in flight.
//!
//! - latency: one call at a time, in blocks of 100 rotating between the routes;
//!   a route's added latency is its p50 (p99) minus the direct route's;
//! - throughput: a fixed number of calls with 32 (and 64) in flight, each route
//!   in turn, three rounds; the median of the rounds.
//!
//! Targets (issue "Streamable HTTP", Cost): the command's added p50 at most 1.5
//! times nginx's, its throughput at least 0.9 times nginx's (U1); its throughput
//! at least 0.95 times direct at 32 in flight (U2).
//!
//! Run with `cargo bench -p mcp-tool-errors-cli --bench http_proxy` (a few
//! minutes; not part of the test run; `-- u1` or `-- u2` for one upstream).
//! `HTTP_PROXY_BENCH_BASELINE=PATH` adds a column for another build of the
//! command, in front of U1, to compare two builds under the same load. The
//! command's own column runs the binary cargo builds for the bench, with the
//! dev-dependencies' features unified in (tokio's `test-util` among them),
//! which is slower than a `cargo build --release` binary by a few µs: to
//! compare release builds, copy one over `target/release/mcp-tool-errors`
//! once the bench is built, name the other, then swap them. Without nginx (`/usr/sbin/nginx`, or
//! `nginx` on `PATH`) its column is skipped. Figures go in docs/performance.md.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/support/example.rs"]
mod example;

// Shared with the other benches; this one uses the HTTP client.
#[allow(dead_code)]
mod support;

use support::{
    Call, Connection, PATIENCE, Process, Route, free_port, median, micros, percentile, rates_cell,
    uptime, verdict,
};

/// Latency samples per route (U1: a quarter of them tool errors).
const LATENCY_CALLS: usize = 4_000;
const BLOCK: usize = 100;
/// Calls per route in one throughput round.
const THROUGHPUT_CALLS: usize = 20_000;
const ROUNDS: usize = 3;
const IN_FLIGHT: [usize; 2] = [32, 64];
/// A Python server answers a call in about a millisecond: fewer calls suffice.
const PYTHON_LATENCY_CALLS: usize = 1_000;
const PYTHON_THROUGHPUT_CALLS: usize = 4_000;
const PYTHON_IN_FLIGHT: usize = 32;
/// One call in this many is a tool error (U1).
const ERROR_EVERY: usize = 4;

fn main() {
    support::block_on(run());
}

async fn run() {
    // `cargo bench ... -- u1` (or `u2`) runs one upstream's part only.
    let wanted = support::wanted();
    println!("{}", uptime());
    if wanted("u1") {
        rmcp_upstream().await;
    }
    if wanted("u2") {
        python_upstream().await;
    }
}

/// U1: direct, through nginx, through the command.
async fn rmcp_upstream() {
    let rmcp = Process::listening(
        Command::new(rmcp_http_example())
            .env("PORT", "0")
            .env("MCP_TOOL_ERRORS", "off"),
        "listening on http://",
    );
    let mut routes = vec![Route::new("direct", rmcp.address, false)];
    let nginx = Nginx::start(rmcp.address);
    match &nginx {
        Some(nginx) => routes.push(Route::new("nginx", nginx.address, false)),
        None => println!("(nginx is not installed: its column is skipped)"),
    }
    let proxy = Process::command_in_front_of(rmcp.address);
    routes.push(Route::new("mcp-tool-errors", proxy.address, true));
    // Another build of the command, to compare two builds under the same load.
    let baseline = std::env::var_os("HTTP_PROXY_BENCH_BASELINE")
        .map(|command| Process::proxy_in_front_of(Path::new(&command), rmcp.address));
    if let Some(baseline) = &baseline {
        routes.push(Route::new("baseline build", baseline.address, true));
    }

    println!("\nU1, the rmcp_http example (MCP_TOOL_ERRORS=off), event-stream answers");
    let latencies = latency(&routes, Workload::Rmcp, LATENCY_CALLS).await;
    print_latency(&routes, &latencies, &[Call::Echo, Call::Fail]);
    let mut rates = Vec::new();
    for in_flight in IN_FLIGHT {
        rates.push((
            in_flight,
            throughput(&routes, Workload::Rmcp, in_flight, THROUGHPUT_CALLS).await,
        ));
    }
    print_throughput(&routes, &rates);
    print_targets(&routes, &latencies, &rates);
}

/// U2: direct and through the command.
async fn python_upstream() {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = cli.join("../.tools/python/bin/python");
    if !python.exists() {
        println!("\n(the Python SDK is not installed: run scripts/install-test-servers.sh)");
        return;
    }
    let server = Process::listening(
        Command::new(python).arg(cli.join("tests/http/servers/python_http_server.py")),
        "listening on ",
    );
    let proxy = Process::command_in_front_of(server.address);
    let routes = [
        Route::new("direct", server.address, false),
        Route::new("mcp-tool-errors", proxy.address, true),
    ];
    println!("\nU2, the Python SDK server (stateless, JSON answers)");
    let latencies = latency(&routes, Workload::Python, PYTHON_LATENCY_CALLS).await;
    print_latency(&routes, &latencies, &[Call::Echo]);
    let rates = vec![(
        PYTHON_IN_FLIGHT,
        throughput(
            &routes,
            Workload::Python,
            PYTHON_IN_FLIGHT,
            PYTHON_THROUGHPUT_CALLS,
        )
        .await,
    )];
    print_throughput(&routes, &rates);
    let ratio = median(&rates[0].1[1]) / median(&rates[0].1[0]);
    println!(
        "target: throughput at {PYTHON_IN_FLIGHT} in flight through the command at least 0.95x direct: {ratio:.3} ({})",
        verdict(ratio >= 0.95)
    );
}

/// The upstream's way of being called.
#[derive(Clone, Copy)]
enum Workload {
    /// rmcp: a session per connection, event-stream answers, one call in
    /// [`ERROR_EVERY`] a tool error.
    Rmcp,
    /// The Python SDK server: stateless, JSON answers, `echo` only.
    Python,
}

impl Workload {
    fn call_for(self, id: usize) -> Call {
        match self {
            Self::Rmcp if id.is_multiple_of(ERROR_EVERY) => Call::Fail,
            _ => Call::Echo,
        }
    }
}

/// A connection to `route`, in a session when the upstream keeps them (U1).
async fn open(route: &Route, workload: Workload) -> Connection {
    let mut connection = Connection::open(route).await;
    if let Workload::Rmcp = workload {
        connection.initialize().await;
    }
    connection
}

/// Latency samples, sorted, by route and by kind of call.
type Latencies = Vec<Vec<(Call, Vec<Duration>)>>;

/// `calls` calls per route, one at a time, in blocks rotating
/// between the routes, so that all see the same load.
async fn latency(routes: &[Route], workload: Workload, calls: usize) -> Latencies {
    let mut connections = Vec::new();
    for route in routes {
        connections.push(open(route, workload).await);
    }
    let mut kinds: Vec<Call> = (1..=ERROR_EVERY).map(|id| workload.call_for(id)).collect();
    kinds.sort_by_key(|kind| *kind as u8);
    kinds.dedup();
    let mut samples: Latencies = routes
        .iter()
        .map(|_| kinds.iter().map(|&kind| (kind, Vec::new())).collect())
        .collect();
    let mut id = 0;
    while id < calls {
        for (connection, samples) in connections.iter_mut().zip(&mut samples) {
            for offset in 1..=BLOCK {
                let call = workload.call_for(id + offset);
                let elapsed = connection.call(id + offset, call).await;
                let kind = samples.iter_mut().find(|(kind, _)| *kind == call);
                kind.expect("a kind of call").1.push(elapsed);
            }
        }
        id += BLOCK;
    }
    for route in &mut samples {
        for (_, samples) in route.iter_mut() {
            samples.sort();
        }
    }
    samples
}

/// Calls per second with `in_flight` connections, each route in turn, for
/// [`ROUNDS`] rounds: the rates, by route.
async fn throughput(
    routes: &[Route],
    workload: Workload,
    in_flight: usize,
    calls: usize,
) -> Vec<Vec<f64>> {
    let mut rates = vec![Vec::new(); routes.len()];
    for _ in 0..ROUNDS {
        for (route, rates) in routes.iter().zip(&mut rates) {
            rates.push(calls_per_second(route, workload, in_flight, calls).await);
        }
    }
    rates
}

async fn calls_per_second(
    route: &Route,
    workload: Workload,
    in_flight: usize,
    calls: usize,
) -> f64 {
    let mut connections = Vec::new();
    for _ in 0..in_flight {
        connections.push(open(route, workload).await);
    }
    support::calls_per_second(connections, calls, move |id| workload.call_for(id)).await
}

fn print_latency(routes: &[Route], latencies: &Latencies, kinds: &[Call]) {
    println!("| call | measure | {} |", route_names(routes));
    println!("|---|---|{}", "---|".repeat(routes.len()));
    for &kind in kinds {
        for (measure, quantile) in [("p50", 0.50), ("p99", 0.99)] {
            let direct = micros(percentile(samples_of(&latencies[0], kind), quantile));
            let cells: Vec<String> = latencies
                .iter()
                .map(|route| {
                    let value = micros(percentile(samples_of(route, kind), quantile));
                    if value == direct {
                        format!("{value:.1} µs")
                    } else {
                        format!("{value:.1} µs (+{:.1})", value - direct)
                    }
                })
                .collect();
            println!("| {} | {measure} | {} |", kind.name(), cells.join(" | "));
        }
    }
}

fn print_throughput(routes: &[Route], rates: &[(usize, Vec<Vec<f64>>)]) {
    println!("| in flight | {} |", route_names(routes));
    println!("|---|{}", "---|".repeat(routes.len()));
    for (in_flight, by_route) in rates {
        let cells: Vec<String> = by_route
            .iter()
            .map(|rounds| rates_cell(rounds.as_slice()))
            .collect();
        println!("| {in_flight} | {} |", cells.join(" | "));
    }
}

/// The U1 targets, when nginx ran: added p50 and throughput, against nginx's.
fn print_targets(routes: &[Route], latencies: &Latencies, rates: &[(usize, Vec<Vec<f64>>)]) {
    let Some(nginx) = routes.iter().position(|route| route.name == "nginx") else {
        return;
    };
    let proxy = routes
        .iter()
        .position(|route| route.name == "mcp-tool-errors")
        .expect("the command is measured");
    for kind in [Call::Echo, Call::Fail] {
        let p50 = |route: usize| micros(percentile(samples_of(&latencies[route], kind), 0.5));
        let (proxy_added, nginx_added) = (p50(proxy) - p50(0), p50(nginx) - p50(0));
        let ratio = proxy_added / nginx_added;
        println!(
            "target: added p50, {}: command +{proxy_added:.1} µs, nginx +{nginx_added:.1} µs: {ratio:.2}x (at most 1.5x: {})",
            kind.name(),
            verdict(ratio <= 1.5)
        );
    }
    for (in_flight, by_route) in rates {
        let ratio = median(&by_route[proxy]) / median(&by_route[nginx]);
        println!(
            "target: throughput at {in_flight} in flight, command / nginx: {ratio:.3} (at least 0.9: {})",
            verdict(ratio >= 0.9)
        );
    }
}

fn samples_of(route: &[(Call, Vec<Duration>)], kind: Call) -> &[Duration] {
    &route.iter().find(|(k, _)| *k == kind).expect("measured").1
}

fn route_names(routes: &[Route]) -> String {
    routes
        .iter()
        .map(|route| route.name)
        .collect::<Vec<_>>()
        .join(" | ")
}

impl Process {
    /// The command in HTTP mode in front of the upstream at `upstream`.
    fn command_in_front_of(upstream: SocketAddr) -> Self {
        Self::proxy_in_front_of(Path::new(env!("CARGO_BIN_EXE_mcp-tool-errors")), upstream)
    }

    /// `command` (a build of the command) in HTTP mode in front of `upstream`.
    fn proxy_in_front_of(command: &Path, upstream: SocketAddr) -> Self {
        Self::listening(
            Command::new(command).args([
                "--upstream",
                &format!("http://{upstream}/mcp"),
                "--listen",
                "127.0.0.1:0",
            ]),
            "mcp-tool-errors: listening on ",
        )
    }
}

/// nginx as a plain reverse proxy in front of an upstream: the Debian
/// package's binary, with a configuration of its own in a temporary directory.
struct Nginx {
    address: SocketAddr,
    child: Child,
    directory: PathBuf,
}

impl Nginx {
    /// nginx in front of `upstream`; `None` when nginx is not installed.
    fn start(upstream: SocketAddr) -> Option<Self> {
        let binary = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "nginx"]
            .into_iter()
            .find(|binary| {
                Command::new(binary)
                    .arg("-v")
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success())
            })?;
        let directory =
            std::env::temp_dir().join(format!("http_proxy-nginx-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("a temporary directory");
        let address = free_port();
        let configuration = nginx_configuration(&directory, address, upstream);
        std::fs::write(directory.join("nginx.conf"), configuration).expect("nginx.conf");
        let child = Command::new(binary)
            .arg("-p")
            .arg(&directory)
            .arg("-c")
            .arg(directory.join("nginx.conf"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("nginx starts");
        let nginx = Self {
            address,
            child,
            directory,
        };
        let deadline = Instant::now() + PATIENCE;
        while std::net::TcpStream::connect(address).is_err() {
            assert!(Instant::now() < deadline, "nginx listens on {address}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(nginx)
    }
}

impl Drop for Nginx {
    /// SIGTERM, nginx's fast shutdown: the master stops its workers, which a
    /// SIGKILL of the master would leave running.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        if example::wait_bounded(&mut self.child, PATIENCE).is_none() {
            println!("(nginx did not stop within {PATIENCE:?}: killed)");
        }
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// A reverse proxy as nginx's documentation writes one for event streams:
/// HTTP/1.1 with a pool of keep-alive connections to the upstream, responses
/// relayed unbuffered; the Debian package's default of one worker per CPU; no
/// access log; no limit on the requests of a keep-alive connection (nginx
/// closes one after 1,000 by default, and the command never does). `Host` is the upstream's, as the command sends it (rmcp checks
/// it against its loopback names).
fn nginx_configuration(directory: &Path, listen: SocketAddr, upstream: SocketAddr) -> String {
    let directory = directory.display();
    format!(
        r#"worker_processes auto;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path {directory}/client_body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    upstream mcp {{
        server {upstream};
        keepalive 128;
        keepalive_requests 1000000;
    }}
    server {{
        listen {listen};
        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host {upstream};
            proxy_buffering off;
        }}
    }}
}}
"#
    )
}

/// The `rmcp_http` example of the library, built in release with the `rmcp`
/// feature (cargo's no-op when it is fresh), in this bench's target directory
/// (`<target>/release/deps/http_proxy-…`), however the bench was started.
fn rmcp_http_example() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let bench = std::env::current_exe().expect("the bench's path");
    let target = bench
        .ancestors()
        .nth(3)
        .expect("the bench runs from <target>/release/deps");
    let mut child = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--message-format=json"])
        .args(["--example", "rmcp_http", "--features", "rmcp"])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(target)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cargo runs");
    let output = example::drain(child.stdout.take().expect("stdout is piped"));
    let status = example::wait_bounded(&mut child, Duration::from_secs(1200));
    assert!(
        status.is_some_and(|s| s.success()),
        "cargo builds rmcp_http"
    );
    let output = output.join().expect("cargo's output");
    output
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["target"]["name"] == "rmcp_http")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no rmcp_http executable:\n{output}"))
}
