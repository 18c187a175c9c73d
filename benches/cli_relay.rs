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
//! Run with `cargo bench --bench cli_relay --features cli`; figures go in
//! docs/performance.md.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CALLS: usize = 10_000;
const BLOCK: usize = 100;
const ROUNDS: usize = 3;
const IN_FLIGHT: usize = 64;

fn main() {
    let server = scripted_server();
    let script = json!({"on": {"tools/call echo": [{"send":
        r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"echo"}]}}"#}]}});
    let wrapper = Path::new(env!("CARGO_BIN_EXE_mcp-tool-errors"));
    let start = |wrapped: bool| {
        let mut command = if wrapped {
            let mut command = Command::new(wrapper);
            command.arg("--").arg(&server);
            command
        } else {
            Command::new(&server)
        };
        Session::start(command.env("SCRIPTED_SERVER", script.to_string()))
    };

    let (mut bare, mut wrapped) = (start(false), start(true));
    let (mut bare_latency, mut wrapped_latency) = (Vec::new(), Vec::new());
    let mut id = 0;
    while bare_latency.len() < CALLS {
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
        let bare_rate = calls_per_second(start(false));
        let wrapped_rate = calls_per_second(start(true));
        ratios.push(wrapped_rate / bare_rate);
        rates.push((bare_rate, wrapped_rate));
    }
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);

    println!("mcp-tool-errors relay, {CALLS} echo calls each way");
    println!("| measure | bare child | through the wrapper | added |");
    println!("|---|---|---|---|");
    for (name, quantile) in [("p50 latency", 0.50), ("p99 latency", 0.99)] {
        let (bare, wrapped) = (
            percentile(&bare_latency, quantile),
            percentile(&wrapped_latency, quantile),
        );
        println!(
            "| {name} | {:.1} µs | {:.1} µs | {:.1} µs |",
            micros(bare),
            micros(wrapped),
            micros(wrapped) - micros(bare)
        );
    }
    for (round, (bare_rate, wrapped_rate)) in rates.iter().enumerate() {
        println!(
            "| throughput, round {} | {bare_rate:.0} calls/s | {wrapped_rate:.0} calls/s | ratio {:.3} |",
            round + 1,
            wrapped_rate / bare_rate
        );
    }
    println!(
        "throughput ratio (median of {ROUNDS}): {:.3}",
        sorted[ROUNDS / 2]
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
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{}}}}}}\n"
    )
}

/// Writes the calls from a thread, at most [`IN_FLIGHT`] unanswered at a time,
/// and reads every answer.
fn calls_per_second(mut session: Session) -> f64 {
    let stdin = session.stdin.take().expect("stdin is open");
    let (answered, answers) = std::sync::mpsc::channel::<()>();
    let started = Instant::now();
    // Closing stdin at the end is the child's cue to exit once it has answered.
    let writer = std::thread::spawn(move || {
        let mut stdin = std::io::BufWriter::new(stdin);
        for id in 1..=CALLS {
            if id > IN_FLIGHT {
                answers.recv().expect("the reader is there");
            }
            stdin
                .write_all(request(id).as_bytes())
                .expect("the child reads");
            stdin.flush().expect("the child reads");
        }
    });
    let mut line = String::new();
    for _ in 0..CALLS {
        line.clear();
        session.stdout.read_line(&mut line).expect("an answer");
        assert!(line.contains("\"echo\""), "unexpected answer: {line}");
        let _ = answered.send(());
    }
    let elapsed = started.elapsed();
    writer.join().expect("the writer finishes");
    session.stop();
    CALLS as f64 / elapsed.as_secs_f64()
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

/// The scripted example server, built in release with this run's features.
fn scripted_server() -> PathBuf {
    let features: Vec<&str> = [
        ("cli", cfg!(feature = "cli")),
        ("rmcp", cfg!(feature = "rmcp")),
        ("tower-mcp", cfg!(feature = "tower-mcp")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    let output = Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "--release",
            "--example",
            "scripted_stdio_server",
        ])
        .arg("--message-format=json")
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .arg("--features")
        .arg(features.join(","))
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo build of scripted_stdio_server failed"
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["target"]["name"] == "scripted_stdio_server")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .expect("cargo reports the scripted_stdio_server executable")
}
