//! Task-augmented tool calls in front of a real `McpRouter`, through tower-mcp's
//! in-process `ChannelTransport` and its own client (protocol 2025-11-25: the
//! task handle answers the `tools/call`, `tasks/get` delivers the result), under
//! tokio's paused clock; and the 2026-07-28 shapes of the same exchanges,
//! through the layer alone.

use std::time::Duration;

use mcp_tool_errors::{ToolErrorLayer, render_error};
use serde_json::{Map, Value, json};
use tower::{Layer, Service, ServiceExt, service_fn};
use tower_mcp::client::{ChannelTransport, McpClient};
use tower_mcp::tasks::{CreateTaskResult, DetailedTask, GetTaskResult, Task, TaskMetadata};
use tower_mcp::{
    CallToolResult, GetTaskInfoParams, McpRequest, McpResponse, McpRouter, NoParams, PanicPolicy,
    RequestId, RouterRequest, RouterResponse, TaskStatus, TaskSupportMode, Tool, ToolBuilder,
};

use crate::support::quiet_panics::silence_expected_panics;

const SECRET: &str = "token=sk-live-0000SECRET";

/// Runs as a task when asked to, and reports an error.
fn refusing_task() -> Tool {
    ToolBuilder::new("deploy")
        .description("Refuses, as a task.")
        .task_support(TaskSupportMode::Optional)
        .handler(|_: NoParams| async { Ok(CallToolResult::error("no environment named prod")) })
        .build()
}

/// Runs as a task when asked to, and reports an error already rendered.
fn rendering_task() -> Tool {
    ToolBuilder::new("render")
        .description("Refuses with a rendered error, as a task.")
        .task_support(TaskSupportMode::Optional)
        .handler(|_: NoParams| async {
            Ok(CallToolResult::error(render_error(
                "render",
                "already said",
            )))
        })
        .build()
}

/// Runs as a task when asked to, and succeeds.
fn succeeding_task() -> Tool {
    ToolBuilder::new("count")
        .description("Counts, as a task.")
        .task_support(TaskSupportMode::Optional)
        .handler(|_: NoParams| async { Ok(CallToolResult::text("3")) })
        .build()
}

/// Runs as a task when asked to, and panics with a secret.
fn panicking_task() -> Tool {
    ToolBuilder::new("leak")
        .description("Panics with a secret, as a task.")
        .task_support(TaskSupportMode::Optional)
        .handler(|_: NoParams| async { panic_with_secret() })
        .build()
}

fn panic_with_secret() -> tower_mcp::Result<CallToolResult> {
    panic!("[expected] task failed with {SECRET}")
}

fn router() -> McpRouter {
    McpRouter::new()
        .server_info("tests", "1.0.0")
        .tool(refusing_task())
        .tool(rendering_task())
        .tool(succeeding_task())
        .tool(panicking_task())
}

async fn client(router: McpRouter, layered: bool) -> McpClient {
    let client = if layered {
        McpClient::connect(ChannelTransport::layer(router, ToolErrorLayer::new())).await
    } else {
        McpClient::connect(ChannelTransport::new(router)).await
    }
    .unwrap();
    client.initialize("tests", "1.0.0").await.unwrap();
    client
}

/// Calls `tool` as a task and waits for the task to end: the task's id, its
/// handle's status, and the task as `tasks/get` finally delivers it.
async fn run_as_task(client: &McpClient, tool: &str) -> (String, TaskStatus, Value) {
    let created = client
        .call_tool_as_task(tool, json!({}), None)
        .await
        .unwrap();
    let done = client.task_wait(&created.task.task_id).await.unwrap();
    let delivered = serde_json::to_value(&done).unwrap();
    (created.task.task_id, created.task.status, delivered)
}

fn result_text(task: &Value) -> &str {
    task["result"]["content"][0]["text"].as_str().unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_error_result_of_a_task_is_rewrapped_where_tasks_get_delivers_it() {
    let layered = client(router(), true).await;
    let (task_id, status, delivered) = run_as_task(&layered, "deploy").await;
    assert_eq!(status, TaskStatus::Working, "the handle passes as it is");
    assert_eq!(delivered["status"], "completed", "{delivered}");
    assert_eq!(delivered["result"]["isError"], true, "{delivered}");
    assert_eq!(
        result_text(&delivered),
        render_error("deploy", "no environment named prod")
    );

    // Without the layer, the same task delivers the tool's own text.
    let bare = client(router(), false).await;
    let (_, _, untouched) = run_as_task(&bare, "deploy").await;
    assert_eq!(result_text(&untouched), "no environment named prod");

    // The task stays remembered: a later poll delivers the same element.
    let again = serde_json::to_value(layered.task_get(&task_id).await.unwrap()).unwrap();
    assert_eq!(again["result"], delivered["result"]);
}

#[tokio::test(start_paused = true)]
async fn a_task_result_already_rendered_is_not_rendered_twice() {
    let layered = client(router(), true).await;
    let (_, _, delivered) = run_as_task(&layered, "render").await;
    assert_eq!(
        result_text(&delivered),
        render_error("render", "already said")
    );
}

#[tokio::test(start_paused = true)]
async fn a_successful_task_result_is_delivered_as_it_is() {
    let (_, _, layered) = run_as_task(&client(router(), true).await, "count").await;
    let (_, _, bare) = run_as_task(&client(router(), false).await, "count").await;
    assert_eq!(layered["result"], bare["result"]);
    assert_eq!(result_text(&layered), "3");
}

/// What tower-mcp does with a task handler that panics, when nothing catches
/// it: the handler runs on a tokio task of the router's own, where the layer
/// cannot see it; the panic ends that tokio task before it records anything,
/// so the task stays `working` and no answer (and no byte of the payload)
/// ever reaches the client.
#[tokio::test(start_paused = true)]
async fn a_panicking_task_handler_leaves_its_task_working_without_the_payload() {
    silence_expected_panics();
    let layered = client(router(), true).await;
    let created = layered
        .call_tool_as_task("leak", json!({}), None)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let task = layered.task_get(&created.task.task_id).await.unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    assert!(task.result.is_none() && task.error.is_none());
    let wire = serde_json::to_string(&task).unwrap();
    assert!(!wire.contains("sk-live"), "{wire}");
}

/// The remedy: tower-mcp's own catch, with a fixed text. The task completes
/// with an `isError` result, which the layer rewraps where `tasks/get`
/// delivers it.
#[tokio::test(start_paused = true)]
async fn a_redacted_panic_policy_gives_the_model_an_element_without_the_payload() {
    silence_expected_panics();
    let router = router().catch_panics_with(PanicPolicy::redacted("the tool crashed"));
    let (_, _, delivered) = run_as_task(&client(router, true).await, "leak").await;
    assert_eq!(delivered["status"], "completed", "{delivered}");
    assert_eq!(
        result_text(&delivered),
        render_error("leak", "the tool crashed")
    );
    assert!(!delivered.to_string().contains("sk-live"), "{delivered}");
}

// The 2026-07-28 shapes: tower-mcp's router answers with them only to a
// request of that protocol version (its `stateless` feature), so a scripted
// router service answers here, with tower-mcp's own types.

fn metadata(task_id: &str) -> TaskMetadata {
    TaskMetadata::new(
        task_id,
        "2026-07-28T10:00:00Z",
        "2026-07-28T10:00:31Z",
        Some(600_000),
    )
}

fn error_object(text: &str) -> Map<String, Value> {
    let result = json!({"content": [{"type": "text", "text": text}], "isError": true});
    result.as_object().unwrap().clone()
}

/// Answers a `tools/call` with a final task handle, and `tasks/get` with the
/// task `finished` describes.
fn final_tasks_router(
    finished: fn(TaskMetadata) -> DetailedTask,
) -> impl Service<
    RouterRequest,
    Response = RouterResponse,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone {
    service_fn(move |request: RouterRequest| async move {
        let inner = match request.inner {
            McpRequest::CallTool(_) => {
                let task = Task::new(metadata("task-7f3a"), TaskStatus::Working);
                McpResponse::FinalCreateTask(CreateTaskResult::new(task))
            }
            McpRequest::GetTaskInfo(params) => {
                McpResponse::FinalGetTask(GetTaskResult::new(finished(metadata(&params.task_id))))
            }
            other => panic!("unexpected request {other:?}"),
        };
        Ok(RouterResponse {
            id: request.id,
            inner: Ok(inner),
        })
    })
}

fn call(id: i64, tool: &str) -> RouterRequest {
    let params = serde_json::from_value(json!({"name": tool, "arguments": {}})).unwrap();
    RouterRequest::new(RequestId::Number(id), McpRequest::CallTool(params))
}

fn get_task(id: i64, task_id: &str) -> RouterRequest {
    let params = GetTaskInfoParams {
        task_id: task_id.into(),
        meta: None,
    };
    RouterRequest::new(RequestId::Number(id), McpRequest::GetTaskInfo(params))
}

async fn send<S>(service: &mut S, request: RouterRequest) -> Value
where
    S: Service<RouterRequest, Response = RouterResponse>,
    S::Error: std::fmt::Debug,
{
    let response = service.ready().await.unwrap().call(request).await.unwrap();
    serde_json::to_value(response.inner.unwrap()).unwrap()
}

#[tokio::test]
async fn a_final_task_result_is_rewrapped_where_tasks_get_delivers_it() {
    let completed = |metadata| DetailedTask::completed(metadata, error_object("quota exceeded"));
    let mut service = ToolErrorLayer::new().layer(final_tasks_router(completed));
    let handle = send(&mut service, call(1, "export")).await;
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert_eq!(service.remembered_tasks(), 1);

    let delivered = send(&mut service, get_task(2, "task-7f3a")).await;
    assert_eq!(
        result_text(&delivered),
        render_error("export", "quota exceeded")
    );
    assert_eq!(service.remembered_tasks(), 1, "remembered after delivery");

    let again = send(&mut service, get_task(3, "task-7f3a")).await;
    assert_eq!(again, delivered, "every delivery is rewrapped alike");
}

/// A final task that failed carries a JSON-RPC error, not a tool result: its
/// answer passes untouched, and the status forgets nothing.
#[tokio::test]
async fn a_final_task_that_failed_passes_untouched_and_stays_remembered() {
    let failed = |metadata| {
        DetailedTask::failed(
            metadata,
            tower_mcp::JsonRpcError::internal_error("the worker died"),
        )
    };
    let mut bare = final_tasks_router(failed);
    let mut service = ToolErrorLayer::new().layer(final_tasks_router(failed));
    send(&mut service, call(1, "export")).await;
    assert_eq!(service.remembered_tasks(), 1);
    let delivered = send(&mut service, get_task(2, "task-7f3a")).await;
    assert_eq!(delivered, send(&mut bare, get_task(2, "task-7f3a")).await);
    assert_eq!(service.remembered_tasks(), 1);
}

#[tokio::test]
async fn a_task_the_layer_never_saw_created_passes_untouched() {
    let completed = |metadata| DetailedTask::completed(metadata, error_object("quota exceeded"));
    let mut service = ToolErrorLayer::new().layer(final_tasks_router(completed));
    let delivered = send(&mut service, get_task(1, "task-elsewhere")).await;
    assert_eq!(result_text(&delivered), "quota exceeded");
}
