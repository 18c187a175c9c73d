//! What the `mcp-tool-errors` command costs, against the physical limit: `echo`
//! calls against the same child three ways, side by side in one run:
//!
//! - bare: the child alone;
//! - minimal relay: this bench binary re-run as a relay that only copies bytes
//!   between the pipes (a thread per direction, `read` then `write` with a
//!   64 KiB buffer, no parsing): what any process between host and server costs;
//! - command: the child through `mcp-tool-errors`.
//!
//! Measures:
//!
//! - latency: one call at a time, in blocks of 100 taking turns among the three;
//!   the added latency of a relay is the difference of its p50 (p99) and the
//!   bare child's. Target: the command's added p50 at most 1.5x the minimal
//!   relay's;
//! - throughput: `calls` calls with up to 64 in flight (as a busy host might
//!   have), bare, minimal relay then command, in each of five rounds; the ratio
//!   of calls per second of one way over another, median of the rounds. Targets:
//!   the command at least 0.9x the minimal relay against the 7 µs child, at least
//!   0.95x bare against the Python SDK server.
//!
//! Run with `cargo bench -p mcp-tool-errors-cli --bench cli_relay`; figures go in
//! docs/performance.md. `CLI_RELAY_OPTIONS="--tool-timeout 60s"` gives the
//! command options.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/support/example.rs"]
mod example;

// Shared with the other benches; this one uses the stdio client.
#[allow(dead_code)]
mod support;

use support::{Session, micros, percentile};

const CALLS: usize = 10_000;
const BLOCK: usize = 100;
const ROUNDS: usize = 5;
const IN_FLIGHT: usize = 64;
/// A Python server answers a call in about a millisecond: fewer calls suffice.
const PYTHON_CALLS: usize = 1_000;

/// The first argument of this binary re-run as the minimal relay; the child's
/// command line follows it.
const MINIMAL_RELAY: &str = "--minimal-relay";

/// The environment variable holding options for the command, split at
/// whitespace (`--tool-timeout 60s`: the path of a request with a timer).
const COMMAND_OPTIONS: &str = "CLI_RELAY_OPTIONS";

/// What stands between the bench and the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    Bare,
    MinimalRelay,
    Command,
}

const WAYS: [Way; 3] = [Way::Bare, Way::MinimalRelay, Way::Command];

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    if arguments.get(1).map(String::as_str) == Some(MINIMAL_RELAY) {
        minimal_relay(&arguments[2..]);
        return;
    }

    let server = scripted_server();
    let script = json!({"on": {"tools/call echo": [{"send":
        r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"echo"}]}}"#}]}});
    compare("the scripted child (Rust, std only)", CALLS, |way| {
        let mut command = command(way, &server, &[]);
        Session::start(command.env("SCRIPTED_SERVER", script.to_string()))
    });

    // The same against a real server, when scripts/install-test-servers.sh ran.
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = cli.join("../.tools/python/bin/python");
    let python_server = cli.join("tests/servers/python_server.py");
    if python.exists() {
        compare("the Python SDK server", PYTHON_CALLS, |way| {
            let mut session = Session::start(&mut command(way, &python, &[&python_server]));
            session.initialize();
            session
        });
    } else {
        println!("\n(the Python SDK is not installed: run scripts/install-test-servers.sh)");
    }
}

/// Runs `command` as a child and copies bytes between this process's stdio and
/// the child's, one thread per direction, until the child's stdout ends; exits
/// with the child's status. No parsing, no line handling: the least any relay
/// between two pipes can do.
fn minimal_relay(command: &[String]) {
    let (program, arguments) = command.split_first().expect("a command to relay to");
    let mut child = Command::new(program)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the child starts");
    let mut child_stdin = child.stdin.take().expect("stdin is piped");
    let mut child_stdout = child.stdout.take().expect("stdout is piped");
    // The bare file descriptors: no buffering of the standard library's own.
    let own = |fd: BorrowedFd<'_>| File::from(fd.try_clone_to_owned().expect("a descriptor"));
    let (mut stdin, mut stdout) = (
        own(std::io::stdin().as_fd()),
        own(std::io::stdout().as_fd()),
    );
    // Not joined: it ends with stdin, or stays blocked in a read when the
    // child exits first.
    std::thread::spawn(move || copy(&mut stdin, &mut child_stdin));
    copy(&mut child_stdout, &mut stdout);
    let status = child.wait().expect("the child exits");
    std::process::exit(status.code().unwrap_or(1));
}

/// Copies whatever each read returns, at once, until the end of `from` or an
/// error on either side.
fn copy(from: &mut impl Read, to: &mut impl Write) {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if to.write_all(&buffer[..read]).is_err() {
            return;
        }
    }
}

/// The server's command, or the relay's with the server's after it.
fn command(way: Way, program: &Path, args: &[&Path]) -> Command {
    let mut command = match way {
        Way::Bare => Command::new(program),
        Way::MinimalRelay => {
            let mut command =
                Command::new(std::env::current_exe().expect("the bench knows its path"));
            command.arg(MINIMAL_RELAY).arg(program);
            command
        }
        Way::Command => {
            let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"));
            let options = std::env::var(COMMAND_OPTIONS).unwrap_or_default();
            command
                .args(options.split_whitespace())
                .arg("--")
                .arg(program);
            command
        }
    };
    command.args(args);
    command
}

/// Measures `calls` echo calls each way, and prints the tables.
fn compare(name: &str, calls: usize, start: impl Fn(Way) -> Session) {
    let latencies = latencies(calls, &start);
    let mut rates = Vec::new();
    for _ in 0..ROUNDS {
        rates.push(WAYS.map(|way| calls_per_second(start(way), calls)));
    }

    println!("\n{name}: {calls} echo calls each way");
    println!(
        "| measure | bare | minimal relay | command | command's added / minimal relay's added |"
    );
    println!("|---|---|---|---|---|");
    for (measure, quantile) in [("p50 latency", 0.50), ("p99 latency", 0.99)] {
        let [bare, minimal, command] = latencies
            .each_ref()
            .map(|sorted| micros(percentile(sorted, quantile)));
        println!(
            "| {measure} | {bare:.1} µs | {minimal:.1} µs (+{:.1}) | {command:.1} µs (+{:.1}) | {:.2} |",
            minimal - bare,
            command - bare,
            (command - bare) / (minimal - bare)
        );
    }
    for (round, [bare, minimal, command]) in rates.iter().enumerate() {
        println!(
            "| throughput ({IN_FLIGHT} in flight), round {} | {bare:.0} calls/s | {minimal:.0} calls/s | {command:.0} calls/s | |",
            round + 1,
        );
    }
    let median = |ratio: fn(&[f64; 3]) -> f64| {
        let mut ratios: Vec<f64> = rates.iter().map(ratio).collect();
        ratios.sort_by(f64::total_cmp);
        ratios[ROUNDS / 2]
    };
    println!(
        "throughput ratios (median of {ROUNDS} rounds): minimal relay / bare {:.3}, command / bare {:.3}, command / minimal relay {:.3}",
        median(|[bare, minimal, _]| minimal / bare),
        median(|[bare, _, command]| command / bare),
        median(|[_, minimal, command]| command / minimal),
    );
}

/// One call at a time, in blocks of [`BLOCK`] taking turns among the ways;
/// each way's latencies, sorted, in the order of [`WAYS`].
fn latencies(calls: usize, start: &impl Fn(Way) -> Session) -> [Vec<Duration>; 3] {
    let mut sessions = WAYS.map(start);
    let mut latencies = WAYS.map(|_| Vec::with_capacity(calls));
    let mut id = 0;
    while latencies[0].len() < calls {
        for (session, latencies) in sessions.iter_mut().zip(&mut latencies) {
            for _ in 0..BLOCK {
                id += 1;
                latencies.push(session.call(id));
            }
        }
    }
    sessions.into_iter().for_each(Session::stop);
    for latencies in &mut latencies {
        latencies.sort();
    }
    latencies
}

/// `calls` calls, at most [`IN_FLIGHT`] unanswered at a time: calls per
/// second.
fn calls_per_second(mut session: Session, calls: usize) -> f64 {
    let started = Instant::now();
    session.pipelined(calls, IN_FLIGHT);
    let elapsed = started.elapsed();
    session.stop();
    calls as f64 / elapsed.as_secs_f64()
}

/// The scripted example server, built with this bench's profile (release) and
/// features.
fn scripted_server() -> PathBuf {
    example::example_binary("scripted_stdio_server")
}
