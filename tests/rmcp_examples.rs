//! The `rmcp_stdio` example as an MCP client meets it: started as a child
//! process and spoken to with rmcp's client over the child's real stdin and
//! stdout.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use mcp_tool_errors::{is_rendered, render_error};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// A hang guard, far above the milliseconds each test takes.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// The (fake) secret the example's panicking tools put in their panic messages.
const SECRET_MARK: &str = "sk-test-";

/// The example's executable, built by cargo with the features of this test run,
/// so that it is never stale and the build is the one `cargo test` just made.
fn example_executable() -> &'static Path {
    static EXECUTABLE: OnceLock<PathBuf> = OnceLock::new();
    EXECUTABLE.get_or_init(|| {
        let mut features = vec!["rmcp"];
        if cfg!(feature = "tower-mcp") {
            features.push("tower-mcp");
        }
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo
            .args([
                "build",
                "--quiet",
                "--example",
                "rmcp_stdio",
                "--message-format=json",
            ])
            .arg("--manifest-path")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .arg("--features")
            .arg(features.join(","))
            .stderr(Stdio::inherit());
        if !cfg!(debug_assertions) {
            cargo.arg("--release");
        }
        let output = cargo.output().expect("cargo runs");
        assert!(output.status.success(), "cargo build of rmcp_stdio failed");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|message| message["target"]["name"] == "rmcp_stdio")
            .find_map(|message| message["executable"].as_str().map(PathBuf::from))
            .expect("cargo reports the rmcp_stdio executable")
    })
}

/// The example, running, and an rmcp client connected to its stdio.
struct Session {
    client: RunningService<RoleClient, ()>,
    child: Child,
}

impl Session {
    async fn start() -> Self {
        Self::start_with_env(&[]).await
    }

    /// The example with these environment variables set.
    async fn start_with_env(env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(example_executable())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // The deliberate panics are reported there by the default hook.
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the example starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = child.stdin.take().expect("stdin is piped");
        let client = ().serve((stdout, stdin)).await.expect("the example initializes");
        Self { client, child }
    }

    async fn call(&self, tool: &'static str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object")
        };
        let request = CallToolRequestParams::new(tool).with_arguments(arguments);
        self.client
            .call_tool(request)
            .await
            .expect("tools/call is answered")
    }

    /// Closes stdin, as a client does, and checks that the server then exits.
    async fn finish(mut self) {
        self.client.cancel().await.expect("the client closes");
        let status = self.child.wait().await.expect("the example is waited for");
        assert!(status.success(), "the example exited with {status}");
    }
}

/// Runs `test` against a fresh session, within the hang guard.
async fn with_session<F: Future<Output = Session>>(test: impl FnOnce(Session) -> F) {
    let run = async { test(Session::start().await).await.finish().await };
    tokio::time::timeout(ANSWER_WITHIN, run)
        .await
        .expect("the example answered in time");
}

fn only_text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "one content item: {result:?}");
    &result.content[0].as_text().expect("a text item").text
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

#[tokio::test]
async fn lists_the_five_demonstration_tools() {
    with_session(|session| async {
        let tools = session.client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        for tool in ["echo", "fail", "panic", "panic_async", "add"] {
            assert!(names.contains(&tool), "{tool} missing from {names:?}");
        }
        session
    })
    .await;
}

#[tokio::test]
async fn a_successful_call_is_untouched() {
    with_session(|session| async {
        let result = session.call("echo", json!({"text": "<b>bold</b>"})).await;
        assert!(!is_error(&result));
        assert_eq!(only_text(&result), "<b>bold</b>");
        session
    })
    .await;
}

#[tokio::test]
async fn a_tool_error_comes_back_as_llmxml() {
    with_session(|session| async {
        let result = session.call("fail", json!({"message": "disk full"})).await;
        assert!(is_error(&result));
        assert_eq!(only_text(&result), render_error("fail", "disk full"));
        session
    })
    .await;
}

#[tokio::test]
async fn a_panic_is_an_error_result_without_the_secret_and_the_server_goes_on() {
    with_session(|session| async {
        for tool in ["panic", "panic_async"] {
            let result = session.call(tool, json!({})).await;
            assert!(is_error(&result), "{tool}: {result:?}");
            let text = only_text(&result);
            assert!(is_rendered(text), "{tool}: {text}");
            assert!(
                text.starts_with(&format!("<error tool=\"{tool}\">\n")),
                "{text}"
            );
            assert!(
                !text.contains(SECRET_MARK),
                "{tool} leaked its panic message: {text}"
            );
        }
        let after = session.call("echo", json!({"text": "still here"})).await;
        assert_eq!(only_text(&after), "still here");
        session
    })
    .await;
}

#[tokio::test]
async fn wrong_arguments_get_rmcps_own_error_as_llmxml() {
    with_session(|session| async {
        let result = session.call("add", json!({"a": "one", "b": 2})).await;
        assert!(is_error(&result));
        let text = only_text(&result);
        assert!(is_rendered(text), "{text}");
        assert!(text.starts_with("<error tool=\"add\">\n"), "{text}");
        assert!(text.contains("failed to deserialize parameters"), "{text}");

        let sum = session.call("add", json!({"a": 2, "b": 3})).await;
        assert!(!is_error(&sum));
        assert_eq!(only_text(&sum), "5");
        session
    })
    .await;
}

/// Time cannot be paused across processes: the timeout here is real, and only
/// the answer is checked, within a bound far above it and far below the sleep.
#[tokio::test]
async fn with_mcp_tool_timeout_ms_a_sleeping_tool_is_answered_with_the_element() {
    let run = async {
        let session = Session::start_with_env(&[("MCP_TOOL_TIMEOUT_MS", "200")]).await;
        let slow = session.call("sleep", json!({"ms": 60_000}));
        let result = tokio::time::timeout(Duration::from_secs(30), slow)
            .await
            .expect("answered long before the tool would have finished");
        assert!(is_error(&result), "{result:?}");
        assert_eq!(
            only_text(&result),
            render_error(
                "sleep",
                "The tool did not finish within 0.2 s and was cancelled."
            )
        );
        let fast = session.call("sleep", json!({"ms": 1})).await;
        assert!(!is_error(&fast));
        assert_eq!(only_text(&fast), "slept 1 ms");
        session.finish().await;
    };
    tokio::time::timeout(ANSWER_WITHIN, run)
        .await
        .expect("the example answered in time");
}
