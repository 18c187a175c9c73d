//! The `rmcp_stdio` example as an MCP client meets it: started as a child
//! process and spoken to with rmcp's client, or in raw JSON lines, over the
//! child's real stdin and stdout.

use std::process::Stdio;
use std::time::Duration;

use mcp_tool_errors::{is_rendered, render_error};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::support::example::example_binary;
use crate::support::line_client::{LineClient, tasks_client_2025_11_25};
use crate::support::rmcp_tasks::call_as_task;
use crate::support::{HIDDEN_TOOL_MESSAGE, within_hang_guard};

/// How often the task tests poll `tasks/get`.
const TASK_POLL: Duration = Duration::from_millis(10);

/// The (fake) secret the example's panicking tools put in their panic messages.
const SECRET_MARK: &str = "sk-test-";

/// The example, started with the environment variables `env`, and the ends of
/// its stdio a client talks through.
fn spawn_example(env: &[(&str, &str)]) -> (Child, ChildStdout, ChildStdin) {
    let mut child = Command::new(example_binary("rmcp_stdio"))
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
    (child, stdout, stdin)
}

/// A `tools/call` of `tool` with `arguments`, a JSON object.
fn tool_call(tool: &'static str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(tool).with_arguments(arguments)
}

/// The example, running, and an rmcp client connected to its stdio.
struct Session {
    client: RunningService<RoleClient, ClientConfig>,
    child: Child,
}

impl Session {
    async fn start() -> Self {
        Self::start_as(ClientConfig::default(), &[]).await
    }

    /// A session whose client declares the tasks extension.
    async fn start_with_tasks() -> Self {
        let capabilities = ClientCapabilities::builder().enable_tasks().build();
        let client = ClientConfig::new(capabilities, Implementation::new("tasks-test", "0"));
        Self::start_as(client, &[]).await
    }

    /// The example with these environment variables set.
    async fn start_with_env(env: &[(&str, &str)]) -> Self {
        Self::start_as(ClientConfig::default(), env).await
    }

    async fn start_as(client: ClientConfig, env: &[(&str, &str)]) -> Self {
        let (child, stdout, stdin) = spawn_example(env);
        let client = client
            .serve((stdout, stdin))
            .await
            .expect("the example initializes");
        Self { client, child }
    }

    async fn call(&self, tool: &'static str, arguments: Value) -> CallToolResult {
        self.client
            .call_tool(tool_call(tool, arguments))
            .await
            .expect("tools/call is answered")
    }

    /// Calls `tool` as a task: the answer must be a task handle; then polls
    /// `tasks/get` until the task has ended, and returns its result.
    async fn call_as_task(&self, tool: &'static str, arguments: Value) -> CallToolResult {
        call_as_task(&self.client, tool_call(tool, arguments), TASK_POLL).await
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
    within_hang_guard("the rmcp_stdio example", run).await;
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

#[tokio::test]
async fn a_task_that_fails_delivers_its_error_as_llmxml_through_tasks_get() {
    let run = async {
        let session = Session::start_with_tasks().await;
        let result = session
            .call_as_task("fail_task", json!({"message": "quota exceeded"}))
            .await;
        assert!(is_error(&result));
        assert_eq!(
            only_text(&result),
            render_error("fail_task", "quota exceeded")
        );
        session.finish().await;
    };
    within_hang_guard("the fail_task session", run).await;
}

/// Real processes on a machine that may be loaded: the bound here only tells a
/// task that ended from one left `working` until its TTL (five minutes). That
/// it ends within a second is checked on the paused clock in `task_panics.rs`.
#[tokio::test]
async fn a_task_that_panics_completes_promptly_with_the_redacted_element() {
    let session = within_hang_guard("the example's start", Session::start_with_tasks()).await;
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        session.call_as_task("panic_task", json!({})),
    )
    .await
    .expect("the panicked task completed, long before its TTL");
    assert!(is_error(&result));
    let text = only_text(&result);
    assert_eq!(text, render_error("panic_task", HIDDEN_TOOL_MESSAGE));
    assert!(!text.contains(SECRET_MARK), "{text}");
    let after = session.call("echo", json!({"text": "still here"})).await;
    assert_eq!(only_text(&after), "still here");
    within_hang_guard("the example's end", session.finish()).await;
}

#[tokio::test]
async fn the_task_tools_run_as_ordinary_calls_for_a_client_without_tasks() {
    with_session(|session| async {
        let failed = session
            .call("fail_task", json!({"message": "quota exceeded"}))
            .await;
        assert_eq!(
            only_text(&failed),
            render_error("fail_task", "quota exceeded")
        );
        let panicked = session.call("panic_task", json!({})).await;
        assert!(is_error(&panicked));
        assert!(only_text(&panicked).starts_with("<error tool=\"panic_task\">\n"));
        assert!(!only_text(&panicked).contains(SECRET_MARK));
        session
    })
    .await;
}

/// The error text of the task in the raw-JSON task test.
const TASK_MESSAGE: &str = "quota exceeded: 3 of 3 exports used today";

/// A client of protocol 2025-11-25 that declares the tasks extension
/// (`capabilities.extensions`), in raw JSON lines. rmcp 3.11 runs `fail_task`
/// as a task for it and answers with the tasks extension's own shapes (a flat
/// handle with `resultType: "task"`, the result inline in the `tasks/get` of
/// the completed task, `resultType` kept): the task's result comes back
/// rewrapped there, byte for byte. rmcp 3.11 has no `tasks/result` request (the 2025-11-25 way to fetch a
/// result; its `ClientRequest` has no such variant), so that method is answered
/// with "method not found", and `tasks/get` is how this client gets the result.
#[tokio::test]
async fn a_2025_11_25_client_declaring_the_tasks_extension_gets_the_task_result_rewrapped() {
    let run = async {
        let (mut child, stdout, stdin) = spawn_example(&[]);
        let mut client =
            LineClient::initialized_with(stdout, stdin, tasks_client_2025_11_25()).await;

        let arguments = json!({"name": "fail_task", "arguments": {"message": TASK_MESSAGE}});
        let handle = client.request(json!(1), "tools/call", arguments).await;
        assert_eq!(handle["result"]["resultType"], "task", "{handle}");
        assert_eq!(handle["result"]["status"], "working", "{handle}");
        let task_id = handle["result"]["taskId"]
            .as_str()
            .expect("a task id")
            .to_owned();

        let done = client.poll_task(2, &task_id, TASK_POLL).await;
        assert_eq!(done["result"]["status"], "completed", "{done}");
        assert_eq!(done["result"]["result"]["isError"], true, "{done}");
        // Kept for this client too: rmcp strips it from ordinary results only.
        assert_eq!(done["result"]["resultType"], "complete", "{done}");
        assert_eq!(done["result"]["result"]["resultType"], "complete", "{done}");
        let element = render_error("fail_task", TASK_MESSAGE);
        assert_eq!(
            done["result"]["result"]["content"][0]["text"],
            element.as_str()
        );
        let on_the_wire = serde_json::to_string(&element).unwrap();
        assert!(
            client.received.contains(&on_the_wire),
            "{}",
            client.received
        );

        let fetched = client
            .request(json!(1000), "tasks/result", json!({"taskId": task_id}))
            .await;
        assert_eq!(fetched["error"]["code"], -32601, "{fetched}");

        // Closing stdin ends the server.
        drop(client);
        let status = child.wait().await.expect("the example is waited for");
        assert!(status.success(), "the example exited with {status}");
    };
    within_hang_guard("the raw-JSON task session", run).await;
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
    within_hang_guard("the sleeping-tool session", run).await;
}
