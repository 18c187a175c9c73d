//! What the `mcp-tool-errors` command costs: 10,000 `echo` calls through the
//! wrapper and against the same child without it, side by side in one run.
//!
//! - latency: one call at a time, in blocks of 100 alternating between the bare
//!   child and the wrapped one; the added latency is the difference of their
//!   p50 and p99;
//! - throughput: 10,000 calls with up to 64 in flight (as a busy host might
//!   have), bare then wrapped, three rounds; the ratio of calls per second,
//!   wrapped over bare, median of the rounds (target ≥ 0.9).
//!
//! Run with `cargo bench -p mcp-tool-errors-cli --bench cli_relay`; figures go in
//! docs/performance.md.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/support/example.rs"]
mod example;

const CALLS: usize = 10_000;
const BLOCK: usize = 100;
const ROUNDS: usize = 3;
const IN_FLIGHT: usize = 64;
/// A Python server answers a call in about a millisecond: fewer calls suffice.
const PYTHON_CALLS: usize = 1_000;

fn main() {
    let server = scripted_server();
    let script = json!({"on": {"tools/call echo": [{"send":
        r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"echo"}]}}"#}]}});
    compare("the scripted child (Rust, std only)", CALLS, |wrapped| {
        let mut command = command(wrapped, &server, &[]);
        Session::start(command.env("SCRIPTED_SERVER", script.to_string()))
    });

    // The same against a real server, when scripts/install-test-servers.sh ran.
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = cli.join("../.tools/python/bin/python");
    let python_server = cli.join("tests/servers/python_server.py");
    if python.exists() {
        compare("the Python SDK server", PYTHON_CALLS, |wrapped| {
            let mut session = Session::start(&mut command(wrapped, &python, &[&python_server]));
            session.initialize();
            session
        });
    } else {
        println!("\n(the Python SDK is not installed: run scripts/install-test-servers.sh)");
    }
}

/// The server's command, or the wrapper's with the server's after `--`.
fn command(wrapped: bool, program: &Path, args: &[&Path]) -> Command {
    let mut command = if wrapped {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"));
        command.arg("--").arg(program);
        command
    } else {
        Command::new(program)
    };
    command.args(args);
    command
}

/// Measures `calls` echo calls bare and wrapped, and prints the table.
fn compare(name: &str, calls: usize, start: impl Fn(bool) -> Session) {
    let (mut bare, mut wrapped) = (start(false), start(true));
    let (mut bare_latency, mut wrapped_latency) = (Vec::new(), Vec::new());
    let mut id = 0;
    while bare_latency.len() < calls {
        for _ in 0..BLOCK {
            id += 1;
            bare_latency.push(bare.call(id));
        }
        for _ in 0..BLOCK {
            id += 1;
            wrapped_latency.push(wrapped.call(id));
        }
    }
    bare.stop();
    wrapped.stop();
    bare_latency.sort();
    wrapped_latency.sort();

    let mut ratios = Vec::new();
    let mut rates = Vec::new();
    for _ in 0..ROUNDS {
        let bare_rate = calls_per_second(start(false), calls);
        let wrapped_rate = calls_per_second(start(true), calls);
        ratios.push(wrapped_rate / bare_rate);
        rates.push((bare_rate, wrapped_rate));
    }
    ratios.sort_by(f64::total_cmp);

    println!("\n{name}: {calls} echo calls each way");
    println!("| measure | bare | through the wrapper | added |");
    println!("|---|---|---|---|");
    for (measure, quantile) in [("p50 latency", 0.50), ("p99 latency", 0.99)] {
        let (bare, wrapped) = (
            percentile(&bare_latency, quantile),
            percentile(&wrapped_latency, quantile),
        );
        println!(
            "| {measure} | {:.1} µs | {:.1} µs | {:.1} µs |",
            micros(bare),
            micros(wrapped),
            micros(wrapped) - micros(bare)
        );
    }
    for (round, (bare_rate, wrapped_rate)) in rates.iter().enumerate() {
        println!(
            "| throughput ({IN_FLIGHT} in flight), round {} | {bare_rate:.0} calls/s | {wrapped_rate:.0} calls/s | ratio {:.3} |",
            round + 1,
            wrapped_rate / bare_rate
        );
    }
    println!(
        "throughput ratio, wrapped / bare (median of {ROUNDS}): {:.3}",
        ratios[ROUNDS / 2]
    );
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn percentile(sorted: &[Duration], quantile: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * quantile).round() as usize;
    sorted[index]
}

fn request(id: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"echo\"}}}}}}\n"
    )
}

/// Writes the calls from a thread, at most [`IN_FLIGHT`] unanswered at a time,
/// and reads every answer.
fn calls_per_second(mut session: Session, calls: usize) -> f64 {
    let stdin = session.stdin.take().expect("stdin is open");
    let (answered, answers) = std::sync::mpsc::channel::<()>();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut stdin = stdin;
        for id in 1..=calls {
            if id > IN_FLIGHT {
                answers.recv().expect("the reader is there");
            }
            stdin
                .write_all(request(id).as_bytes())
                .expect("the child reads");
        }
        // Kept open until every answer is read: a server may drop the calls
        // in flight at the end of its stdin.
        stdin
    });
    let mut line = String::new();
    for _ in 0..calls {
        line.clear();
        session.stdout.read_line(&mut line).expect("an answer");
        assert!(line.contains("\"echo\""), "unexpected answer: {line}");
        let _ = answered.send(());
    }
    let elapsed = started.elapsed();
    drop(writer.join().expect("the writer finishes"));
    session.stop();
    calls as f64 / elapsed.as_secs_f64()
}

struct Session {
    process: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    fn start(command: &mut Command) -> Self {
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
    fn initialize(&mut self) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "cli_relay", "version": "0"}},
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
    fn call(&mut self, id: usize) -> Duration {
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

    fn stop(mut self) {
        self.stdin = None;
        let status = self.process.wait().expect("the server exits");
        assert!(status.success(), "the server exited with {status}");
    }
}

/// The scripted example server, built with this bench's profile (release) and
/// features.
fn scripted_server() -> PathBuf {
    example::example_binary("scripted_stdio_server")
}
