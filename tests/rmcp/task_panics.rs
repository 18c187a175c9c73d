//! A task whose operation panics, in process: an rmcp server running its tool
//! as a task on rmcp's `TaskManager`, the operation wrapped in
//! `catch_task_panics`, layered, and a 2025-11-25 client that declared the tasks
//! extension, reading the raw wire over a duplex. The element delivered by
//! `tasks/get` is the one a panicking direct call gets: with the payload under
//! `expose_panic_messages(true)`, without a byte of it otherwise, and alike
//! on every delivery. The payload is logged once, redacted as the layer is.

use std::time::Duration;

use mcp_tool_errors::rmcp::{ServerHandlerExt, catch_task_panics};
use mcp_tool_errors::{ToolErrorLayer, render_error};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolResponse, CreateTaskResult};
use rmcp::task_manager::TaskOptions;
use rmcp::{tool, tool_router};
use serde_json::Value;

use crate::support::HIDDEN_TOOL_MESSAGE;
use crate::support::line_client::{LineClient, tasks_client_2025_11_25};
use crate::support::log::CapturedLog;
use crate::support::quiet_panics::silence_expected_panics;
use crate::support::rmcp_tasks::TaskServer;
use crate::support::secret_payload::{SECRET, assert_nothing_of_the_payload_in, panic_with_secret};

/// How often the client polls `tasks/get` (the clock is paused: no real wait).
const POLL: Duration = Duration::from_millis(100);

#[tool_router(router = crash_tools)]
impl TaskServer {
    /// Always runs as a task, and panics in it.
    #[tool(description = "Runs as a task that panics with a credential in the message")]
    async fn crash(&self) -> CallToolResponse {
        let task = self.tasks.spawn(
            TaskOptions::default(),
            catch_task_panics(|_| {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    panic_with_secret()
                })
            }),
        );
        CallToolResponse::Task(CreateTaskResult::new(task))
    }
}

/// What a client saw of a task whose operation panicked.
struct Crashed {
    /// The `tasks/get` answer that first said the task had ended.
    done: Value,
    /// The answer to one more `tasks/get` of the task, after `done`.
    again: Value,
    /// Every line the client received.
    received: String,
}

/// The crash server behind `layer`, served over a duplex, and a client of it
/// that declared the tasks extension.
async fn serve_crash_tools(layer: ToolErrorLayer) -> (LineClient, tokio::task::JoinHandle<()>) {
    serve_session(TaskServer::new(TaskServer::crash_tools()), layer).await
}

/// One session of `server` (whose clones share its tasks) behind `layer`, as
/// a server that makes a handler per session serves it: over a duplex, with a
/// client that declared the tasks extension.
async fn serve_session(
    server: TaskServer,
    layer: ToolErrorLayer,
) -> (LineClient, tokio::task::JoinHandle<()>) {
    silence_expected_panics();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(async move {
        let running = server.layer(layer).serve(server_io).await;
        let _ = running.expect("the server starts").waiting().await;
    });
    let (reader, writer) = tokio::io::split(client_io);
    let client = LineClient::initialized_with(reader, writer, tasks_client_2025_11_25()).await;
    (client, serving)
}

/// Calls `crash` as a task (request id `id`): the task's id.
async fn start_crash(client: &mut LineClient, id: u64) -> String {
    let handle = client.call_tool(id, "crash").await;
    assert_eq!(handle["result"]["status"], "working", "{handle}");
    handle["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task handle: {handle}"))
        .to_owned()
}

/// Calls `crash` as a task through `layer`, polls until the task has ended,
/// then asks for it once more. The task
/// must have ended within a second of the call, on the paused clock (which
/// moves only as the server's and the client's timers ask), not at its TTL.
async fn crash_as_task(layer: ToolErrorLayer) -> Crashed {
    let (mut client, serving) = serve_crash_tools(layer).await;
    let called = tokio::time::Instant::now();
    let task_id = start_crash(&mut client, 1).await;
    let done = client.poll_task(2, &task_id, POLL).await;
    let took = called.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the panicked task ended after {took:?}"
    );
    let again = client
        .request(
            serde_json::json!(1000),
            "tasks/get",
            serde_json::json!({"taskId": task_id}),
        )
        .await;
    serving.abort();
    Crashed {
        done,
        again,
        received: client.received,
    }
}

fn delivered_text(answer: &Value) -> &str {
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    assert_eq!(answer["result"]["result"]["isError"], true, "{answer}");
    answer["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text item: {answer}"))
}

#[tokio::test(start_paused = true)]
async fn a_panicked_task_delivers_the_hidden_sentence_and_no_byte_of_the_payload() {
    let crashed = crash_as_task(ToolErrorLayer::new()).await;
    assert_eq!(
        delivered_text(&crashed.done),
        render_error("crash", HIDDEN_TOOL_MESSAGE)
    );
    assert_nothing_of_the_payload_in(&crashed.received);
}

#[tokio::test(start_paused = true)]
async fn with_expose_panic_messages_a_panicked_task_delivers_the_payload_in_the_element() {
    let crashed = crash_as_task(ToolErrorLayer::new().expose_panic_messages(true)).await;
    let payload = format!("[expected] connecting with token={SECRET} failed");
    assert_eq!(
        delivered_text(&crashed.done),
        render_error(
            "crash",
            &format!("The tool failed with an internal error: {payload}")
        )
    );
    assert!(crashed.received.contains(SECRET), "{}", crashed.received);
}

/// The events of this crate in `log` (rmcp's own debug events show the
/// responses it sends, which hold the payload when it is exposed).
fn own_events(log: &CapturedLog) -> Vec<String> {
    log.lines()
        .into_iter()
        .filter(|line| line.contains(" mcp_tool_errors::"))
        .collect()
}

/// The events of this crate in `log` that hold any part of the panic payload.
fn payload_lines(log: &CapturedLog) -> Vec<String> {
    own_events(log)
        .into_iter()
        .filter(|line| line.contains("connecting with"))
        .collect()
}

/// A second `tasks/get` of the panicked task delivers the very same answer,
/// payload included, and the panic is still logged once: one error event
/// holding the payload, from the first delivery.
#[tokio::test(start_paused = true)]
async fn a_panicked_task_is_delivered_alike_every_time_and_logged_once() {
    let log = CapturedLog::start();
    let crashed = crash_as_task(ToolErrorLayer::new().expose_panic_messages(true)).await;
    assert_eq!(crashed.again["result"], crashed.done["result"]);
    let logged = payload_lines(&log);
    assert_eq!(logged.len(), 1, "{logged:#?}");
    assert!(logged[0].contains("ERROR"), "{}", logged[0]);
    assert!(logged[0].contains(SECRET), "{}", logged[0]);
    let panicked = own_events(&log)
        .into_iter()
        .filter(|line| line.contains("panicked"))
        .count();
    assert_eq!(panicked, 1, "{:#?}", own_events(&log));
}

/// With `redact_secrets(true)`, the one event that logs the panic holds the
/// payload redacted, and no event holds the credential.
#[cfg(feature = "redact")]
#[tokio::test(start_paused = true)]
async fn with_redact_secrets_no_log_event_holds_the_task_panic_payload_unredacted() {
    let log = CapturedLog::start();
    let crashed = crash_as_task(ToolErrorLayer::new().redact_secrets(true)).await;
    assert_eq!(
        delivered_text(&crashed.done),
        render_error("crash", HIDDEN_TOOL_MESSAGE)
    );
    let lines = log.lines();
    let leaked: Vec<&String> = lines.iter().filter(|line| line.contains(SECRET)).collect();
    assert!(leaked.is_empty(), "{leaked:#?}");
    let logged = payload_lines(&log);
    assert_eq!(logged.len(), 1, "{logged:#?}");
    assert!(logged[0].contains("token=[REDACTED]"), "{}", logged[0]);
}

/// A panicked task pushed out of the layer's memory before its result was
/// delivered: the layer logs its payload then, once and redacted, since no
/// delivery will.
#[cfg(feature = "redact")]
#[tokio::test(start_paused = true)]
async fn a_panicked_task_forgotten_undelivered_is_logged_once_redacted() {
    let log = CapturedLog::start();
    let layer = ToolErrorLayer::new()
        .redact_secrets(true)
        .max_remembered_tasks(1);
    let (mut client, serving) = serve_crash_tools(layer).await;
    let first = start_crash(&mut client, 1).await;
    // Past the operation's 250 ms: its panic has been caught.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(payload_lines(&log).is_empty(), "{:#?}", payload_lines(&log));
    let second = start_crash(&mut client, 2).await;
    serving.abort();

    let logged = payload_lines(&log);
    assert_eq!(logged.len(), 1, "{logged:#?}");
    assert!(logged[0].contains("ERROR"), "{}", logged[0]);
    assert!(logged[0].contains(&first), "{}", logged[0]);
    assert!(!logged[0].contains(&second), "{}", logged[0]);
    assert!(logged[0].contains("never delivered"), "{}", logged[0]);
    assert!(logged[0].contains("token=[REDACTED]"), "{}", logged[0]);
    let leaked: Vec<String> = log
        .lines()
        .into_iter()
        .filter(|line| line.contains(SECRET))
        .collect();
    assert!(leaked.is_empty(), "{leaked:#?}");
}

/// One layer applied to every session (as a `StreamableHttpService` factory
/// does with clones of a layer built once) follows a task across sessions: a
/// task that panicked in one session is answered with the layer's own answer
/// when another session polls it. The panic belongs to that layer: a session
/// served by another layer value polling the same task gets no part of it,
/// only the task's stored sentence rewrapped.
#[tokio::test(start_paused = true)]
async fn a_panicked_task_is_answered_by_its_layer_in_every_session_and_by_no_other_layer() {
    let server = TaskServer::new(TaskServer::crash_tools());
    let layer = ToolErrorLayer::new().expose_panic_messages(true);
    let (mut first, first_serving) = serve_session(server.clone(), layer.clone()).await;
    let (mut second, second_serving) = serve_session(server.clone(), layer).await;
    let other_layer = ToolErrorLayer::new().expose_panic_messages(true);
    let (mut other, other_serving) = serve_session(server, other_layer).await;

    let task_id = start_crash(&mut first, 1).await;
    // Past the operation's 250 ms: its panic has been caught.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let by_other_layer = other.poll_task(2, &task_id, POLL).await;
    assert_eq!(delivered_text(&by_other_layer), HIDDEN_TOOL_MESSAGE);
    let payload = format!("[expected] connecting with token={SECRET} failed");
    let element = render_error(
        "crash",
        &format!("The tool failed with an internal error: {payload}"),
    );
    for _ in 0..2 {
        let delivered = second.poll_task(2, &task_id, POLL).await;
        assert_eq!(delivered_text(&delivered), element);
    }
    let delivered = first.poll_task(3, &task_id, POLL).await;
    assert_eq!(delivered_text(&delivered), element);
    for serving in [first_serving, second_serving, other_serving] {
        serving.abort();
    }
}
