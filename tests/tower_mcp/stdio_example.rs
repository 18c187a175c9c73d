//! The `tower_mcp_stdio` example as a client sees it: the binary spawned as a
//! child process and spoken to over its real stdin and stdout.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Instant;

use mcp_tool_errors::render_error;
use serde_json::{Value, json};

use crate::support::example::{drain, example_binary, wait_bounded};
use crate::support::{HANG_GUARD, HIDDEN_TOOL_MESSAGE};

const EXAMPLE: &str = "tower_mcp_stdio";

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
        let deadline = Instant::now() + HANG_GUARD;
        let mut answers = HashMap::new();
        while answers.len() < ids.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.stdout.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "answers to {ids:?} within {HANG_GUARD:?}: got only {:?}",
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
        let status = wait_bounded(&mut self.child, HANG_GUARD);
        assert!(
            status.is_some(),
            "the server did not exit within {HANG_GUARD:?} of EOF"
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
    let mut server = Server::spawn(&example_binary(EXAMPLE));
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
        assert_eq!(error_text(line), render_error(tool, HIDDEN_TOOL_MESSAGE));
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
