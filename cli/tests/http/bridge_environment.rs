//! The environment of the bridge's children: the bridge's whole
//! environment, or with `--env-clear` only what `--env NAME` names. A real
//! child answers a `tools/call` with its environment.

use serde_json::{Map, Value};

use crate::bridge::Bridge;
use crate::process_support::Server;
use crate::support::tool_call;

/// A stdio server in a few lines of Python: it answers `initialize`, and a
/// `tools/call` with its environment as JSON.
const ENVIRONMENT_CHILD: &str = r#"
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "tools/call":
        result = {"content": [{"type": "text", "text": json.dumps(dict(os.environ))}]}
    else:
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "env", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// The environment a session's child (Python, `python`) sees behind a
/// bridge with `options`, the bridge's own holding `KEPT` and
/// `MCP_TEST_SECRET`.
async fn childs_environment(python: &str, options: &[&str]) -> Map<String, Value> {
    let mut server = Server::new(python, &["-c", ENVIRONMENT_CHILD]);
    server.env.push(("KEPT".to_owned(), "kept".to_owned()));
    server
        .env
        .push(("MCP_TEST_SECRET".to_owned(), "s3cret".to_owned()));
    let bridge = Bridge::start(options, &server).await;
    let session = bridge.open().await;
    let answers = session.call(&tool_call(1, "env")).await;
    let text = answers[0]["result"]["content"][0]["text"]
        .as_str()
        .expect("the environment");
    let mut environment: Map<String, Value> = serde_json::from_str(text).unwrap();
    // Python sets it for itself in a C locale (PEP 538).
    environment.remove("LC_CTYPE");
    environment
}

#[tokio::test]
async fn a_sessions_child_gets_the_whole_environment_unless_env_clear_and_then_what_env_names() {
    // By its path: a launcher found on PATH (pyenv's) may add variables.
    let python = "/usr/bin/python3";
    let whole = childs_environment(python, &[]).await;
    assert_eq!(whole["MCP_TEST_SECRET"], "s3cret");
    assert_eq!(whole["KEPT"], "kept");
    assert!(whole.contains_key("PATH"));

    let named =
        childs_environment(python, &["--env-clear", "--env", "KEPT", "--env", "PATH"]).await;
    let names: Vec<&str> = named.keys().map(String::as_str).collect();
    assert_eq!(names, ["KEPT", "PATH"]);
    assert_eq!(named["KEPT"], "kept");

    // Without PATH, `python3` is looked up where execvp(3) looks without one.
    let none = childs_environment("python3", &["--env-clear"]).await;
    assert!(none.is_empty(), "{none:?}");
}
