//! Task-augmented tool calls through rmcp's client and a layered server whose
//! tools run as tasks on rmcp's `TaskManager`: the span of the `tasks/get` that
//! delivers a task's result says how the task's tool ended.

use std::time::Duration;

use mcp_tool_errors::rmcp::{ServerHandlerExt, catch_task_panics};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, CreateTaskResult, Implementation,
};
use rmcp::service::RunningService;
use rmcp::task_manager::TaskOptions;
use rmcp::{RoleClient, ServiceExt, tool, tool_router};

use crate::exporter::{
    assert_failed, assert_logged, assert_no_attribute_holds, assert_span, assert_tool_error,
    attribute, exporter, layer_spans, span_named,
};
use crate::rmcp_tasks::{TaskServer, call_as_task};

/// In the panic message of the panicking task; no span may hold it.
const PAYLOAD: &str = "token=hunter2";

/// How often the client polls `tasks/get`, on the paused clock.
const POLL: Duration = Duration::from_millis(10);

#[tool_router(router = span_tools)]
impl TaskServer {
    #[tool(description = "Runs as a task whose operation panics")]
    async fn rmcp_task_panic(&self) -> CallToolResponse {
        let task = self.tasks.spawn(
            TaskOptions::default(),
            catch_task_panics(|_| {
                Box::pin(async { panic!("[expected] the batch job crashed, {PAYLOAD}") })
            }),
        );
        CallToolResponse::Task(CreateTaskResult::new(task))
    }

    #[tool(description = "Runs as a task that succeeds")]
    async fn rmcp_task_ok(&self) -> CallToolResponse {
        let task = self.tasks.spawn(TaskOptions::default(), |_| {
            Box::pin(async { Ok(CallToolResult::success(vec![ContentBlock::text("done")])) })
        });
        CallToolResponse::Task(CreateTaskResult::new(task))
    }
}

/// rmcp's client, declaring the tasks extension, connected to the layered server.
async fn connect() -> RunningService<RoleClient, ClientConfig> {
    exporter();
    let server = TaskServer::new(TaskServer::span_tools()).with_tool_errors();
    let capabilities = ClientCapabilities::builder().enable_tasks().build();
    let client = ClientConfig::new(capabilities, Implementation::new("span-tests", "0"));
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(server.serve(server_io), client.serve(client_io));
    tokio::spawn(server.expect("the server starts").waiting());
    client.expect("the client connects")
}

/// The one `tasks/get` span that delivered the result of a task of `tool`.
fn delivery_of(tool: &str) -> opentelemetry_sdk::trace::SpanData {
    let mut spans = layer_spans(|span| {
        span.name == "tasks/get" && attribute(span, "gen_ai.tool.name").as_deref() == Some(tool)
    });
    assert_eq!(spans.len(), 1, "one delivery of {tool}: {spans:#?}");
    spans.remove(0)
}

#[tokio::test(start_paused = true)]
async fn a_panicking_task_fails_the_span_that_delivers_it_with_the_cause_panic() {
    crate::quiet_panics::silence_expected_panics();
    let client = connect().await;
    let result = call_as_task(&client, CallToolRequestParams::new("rmcp_task_panic"), POLL).await;
    assert_eq!(result.is_error, Some(true));

    let created = span_named("tools/call rmcp_task_panic");
    assert_span(&created, &[("error.type", None)]);
    assert_failed(&created, false);
    let span = delivery_of("rmcp_task_panic");
    assert_tool_error(&span, "panic");
    assert_span(&span, &[("mcp.method.name", Some("tasks/get"))]);
    assert_no_attribute_holds(&span, &[PAYLOAD]);
    assert_logged(&span, "handler panicked");
    client.cancel().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_task_that_succeeded_leaves_the_span_that_delivers_it_unset() {
    let client = connect().await;
    let result = call_as_task(&client, CallToolRequestParams::new("rmcp_task_ok"), POLL).await;
    assert_ne!(result.is_error, Some(true));

    let span = delivery_of("rmcp_task_ok");
    assert_span(
        &span,
        &[("error.type", None), ("mcp_tool_errors.cause", None)],
    );
    assert_failed(&span, false);
    client.cancel().await.unwrap();
}
