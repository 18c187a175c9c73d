//! The `tower_mcp_stdio` example as a client sees it: the binary spawned as a
//! child process and spoken to over its real stdin and stdout.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcp_tool_errors::render_error;
use serde_json::{Value, json};

/// Hang guard for building the example when `cargo test` has not already.
const BUILD_WITHIN: Duration = Duration::from_secs(600);
/// Hang guard for the server's answers, and for its exit once stdin closes.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

const EXAMPLE: &str = "tower_mcp_stdio";
const HIDDEN_PANIC: &str =
    "The tool failed with an internal error. The details are in the server log.";

/// The example binary, built with this test's profile and features.
///
/// `cargo test` builds examples next to the tests, but `cargo test --test
/// tower_mcp` does not, and a binary left from an earlier build may be stale:
/// asking cargo is a no-op when it is fresh, and always right.
fn example_binary() -> PathBuf {
    let mut features = vec!["tower-mcp"];
    if cfg!(feature = "rmcp") {
        features.push("rmcp");
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--quiet",
            "--message-format=json",
            "--example",
            EXAMPLE,
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--features")
        .arg(features.join(","))
        .args(profile_args());
    let output = run_bounded(command, BUILD_WITHIN);
    output
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == EXAMPLE)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no {EXAMPLE} executable:\n{output}"))
}

/// The cargo profile this test binary was built with, read from its directory
/// (`<target>/<profile dir>/deps/<test>`).
fn profile_args() -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .unwrap_or("debug");
    match profile_dir {
        "debug" => vec![],
        "release" => vec!["--release".to_owned()],
        custom => vec!["--profile".to_owned(), custom.to_owned()],
    }
}

/// Runs `command` to completion within `limit`, returning its stdout.
fn run_bounded(mut command: Command, limit: Duration) -> String {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cargo runs");
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = wait_bounded(&mut child, limit);
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    match status {
        Some(status) if status.success() => stdout,
        Some(status) => panic!("building the example failed ({status}):\n{stderr}"),
        None => panic!("building the example took more than {limit:?}:\n{stderr}"),
    }
}

/// Waits for `child` to exit, or kills it after `limit`; `None` if it was killed.
fn wait_bounded(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn drain(mut from: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}

/// The example server, running as a child process.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    /// Every line read from stdout so far.
    seen: Vec<String>,
}

impl Server {
    fn spawn(binary: &Path) -> Self {
        let mut child = Command::new(binary)
            // Keep the panic hook's report short: it goes to stderr, read below.
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let (lines, stdout) = mpsc::channel();
        let reader = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            stderr: Some(drain(child.stderr.take().unwrap())),
            child,
            stdout,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn call_tool(&mut self, id: i64, tool: &str, arguments: Value) {
        let params = json!({"name": tool, "arguments": arguments});
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    }

    /// Reads stdout until every id in `ids` is answered; answers may come in any
    /// order, since the transport handles requests concurrently.
    fn responses(&mut self, ids: &[i64]) -> HashMap<i64, String> {
        let deadline = Instant::now() + ANSWER_WITHIN;
        let mut answers = HashMap::new();
        while answers.len() < ids.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.stdout.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "answers to {ids:?} within {ANSWER_WITHIN:?}: got only {:?}",
                    answers.keys().collect::<Vec<_>>()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server closed stdout; stderr:\n{}", self.finish().1)
                }
            };
            self.seen.push(line.clone());
            let id = serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|message| message["id"].as_i64());
            if let Some(id) = id.filter(|id| ids.contains(id)) {
                answers.insert(id, line);
            }
        }
        answers
    }

    /// Closes stdin, waits for the server to exit, and returns every stdout line
    /// and the whole of stderr.
    fn finish(&mut self) -> (Vec<String>, String) {
        drop(self.stdin.take());
        let status = wait_bounded(&mut self.child, ANSWER_WITHIN);
        assert!(
            status.is_some(),
            "the server did not exit within {ANSWER_WITHIN:?} of EOF"
        );
        self.seen.extend(self.stdout.try_iter());
        let stderr = self
            .stderr
            .take()
            .map(|t| t.join().unwrap())
            .unwrap_or_default();
        (std::mem::take(&mut self.seen), stderr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn message(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn error_text(line: &str) -> String {
    let message = message(line);
    assert_eq!(
        message["result"]["isError"], true,
        "not an error result: {line}"
    );
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text item: {line}"))
        .to_owned()
}

#[test]
fn the_stdio_example_answers_over_its_real_transport() {
    let mut server = Server::spawn(&example_binary());
    server.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }));
    let initialized = server.responses(&[1]);
    assert!(message(&initialized[&1])["result"]["serverInfo"].is_object());
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    server.call_tool(2, "echo", json!({"text": "hello, tower"}));
    server.call_tool(3, "fail", json!({"message": "the disk is full"}));
    server.call_tool(4, "panic", json!({}));
    server.call_tool(5, "panic_async", json!({}));
    server.call_tool(6, "add", json!({"a": "two", "b": 3}));
    server.call_tool(7, "add", json!({"a": 2, "b": 3}));
    server.call_tool(8, "deploy", json!({}));
    let answers = server.responses(&[2, 3, 4, 5, 6, 7, 8]);
    // Asked after both panics: the server is still serving.
    server.send(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    let pong = server.responses(&[9]);

    let echo = message(&answers[&2]);
    assert_eq!(echo["result"]["content"][0]["text"], "hello, tower");
    assert_eq!(echo["result"].get("isError"), None);

    assert_eq!(
        error_text(&answers[&3]),
        render_error("fail", "the disk is full")
    );

    for (id, tool) in [(4, "panic"), (5, "panic_async")] {
        let line = &answers[&id];
        assert_eq!(error_text(line), render_error(tool, HIDDEN_PANIC));
        assert!(
            !line.contains("sk-test") && !line.contains("api_key"),
            "secret sent: {line}"
        );
    }

    let validation = error_text(&answers[&6]);
    assert!(
        validation.starts_with("<error tool=\"add\">\nInvalid input: ")
            && validation.ends_with("\n</error>"),
        "tower-mcp's validation error, rewrapped: {validation}"
    );
    assert_eq!(message(&answers[&7])["result"]["content"][0]["text"], "5");

    let unknown = message(&answers[&8]);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(unknown["error"]["message"], "Unknown tool: deploy");
    assert_eq!(unknown.get("result"), None);

    assert_eq!(message(&pong[&9])["result"], json!({}));

    let (stdout, stderr) = server.finish();
    for line in &stdout {
        assert_eq!(
            message(line)["jsonrpc"],
            "2.0",
            "stdout carries JSON-RPC only: {line}"
        );
    }
    assert!(
        stderr.contains("sk-test"),
        "the panic payload is in the server log:\n{stderr}"
    );
}
