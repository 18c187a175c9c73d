//! Task-augmented tool calls on the JSON path: a `tools/call` answered with a
//! task handle is remembered with its tool, and the task's result is rewrapped
//! where it comes back (`tasks/get` in 2026-07-28, `tasks/result` in 2025-11-25);
//! every delivery of a remembered task's result is rewrapped alike, in any order
//! after any poll (`failed` then `tasks/result`, as the official SDKs run a
//! failed tool), until the task is forgotten (its TTL passed, or it was pushed
//! out by newer tasks, least recently used first); no status and no error
//! answering a poll forgets it; the handle itself and everything else about
//! tasks pass through untouched; the memory is bounded by `max_remembered_tasks`.

use std::convert::Infallible;
use std::future::{Ready, ready};

use mcp_tool_errors::{ToolErrorLayer, ToolErrors, render_error};
use serde_json::{Value, json};
use tower::{Layer, Service, ServiceExt, service_fn};

/// A task server as seen on the wire: every `tools/call` makes a task whose id is
/// the call's `arguments.task`; every task has failed with an `isError` result
/// saying "disk full" by the time it is asked about. `arguments.ttl` is the
/// task's `ttlMs`; `arguments.protocol` "2025-11-25" answers in that revision's shapes.
fn task_server()
-> impl Service<Value, Response = Value, Error = Infallible, Future = Ready<Result<Value, Infallible>>>
+ Clone {
    service_fn(|request: Value| {
        let id = request["id"].clone();
        let failed = json!({"content": [{"type": "text", "text": "disk full"}], "isError": true});
        let result = match request["method"].as_str() {
            Some("tools/call") => {
                let arguments = &request["params"]["arguments"];
                let task_id = arguments["task"].clone();
                if arguments["protocol"] == "2025-11-25" {
                    json!({"task": {"taskId": task_id, "status": "working", "ttl": arguments["ttl"]}})
                } else {
                    json!({"resultType": "task", "taskId": task_id, "status": "working", "ttlMs": arguments["ttl"]})
                }
            }
            Some("tasks/get") => match request["params"]["taskId"].as_str() {
                Some(task_id) if task_id.starts_with("cancelled") => {
                    json!({"resultType": "complete", "taskId": task_id, "status": "cancelled"})
                }
                // 2025-11-25 as the official SDKs send a failed tool: the
                // status only; the result comes with `tasks/result`.
                Some(task_id) if task_id.starts_with("failed") => {
                    json!({"taskId": task_id, "status": "failed", "ttl": 60000})
                }
                // A poll the server fails to answer.
                Some(task_id) if task_id.starts_with("flaky") => {
                    return ready(Ok(json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32603, "message": "task store unavailable"
                    }})));
                }
                Some(task_id) => {
                    json!({"resultType": "complete", "taskId": task_id, "status": "completed", "result": failed})
                }
                None => json!({}),
            },
            Some("tasks/result") => failed,
            _ => json!({}),
        };
        ready(Ok(json!({"jsonrpc": "2.0", "id": id, "result": result})))
    })
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call_as_task(id: u64, tool: &str, task: &str) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {"task": task, "ttl": 60000}}),
    )
}

fn get_task(id: u64, task: &str) -> Value {
    request(id, "tasks/get", json!({"taskId": task}))
}

async fn send<S>(service: &mut S, message: Value) -> Value
where
    S: Service<Value, Response = Value, Error = Infallible>,
{
    service.ready().await.unwrap().call(message).await.unwrap()
}

#[tokio::test]
async fn the_task_handle_is_untouched_and_the_result_in_tasks_get_is_rewrapped() {
    let mut bare = task_server();
    let mut service = ToolErrors::new(task_server());

    let handle = send(&mut service, call_as_task(1, "export", "t-1")).await;
    assert_eq!(
        handle,
        send(&mut bare, call_as_task(1, "export", "t-1")).await
    );
    assert_eq!(service.remembered_tasks(), 1);

    let got = send(&mut service, get_task(2, "t-1")).await;
    assert_eq!(
        got["result"]["result"]["content"][0]["text"],
        render_error("export", "disk full")
    );
    assert_eq!(got["result"]["status"], "completed");

    // A task the layer never saw passes through as it is.
    let unknown = send(&mut service, get_task(3, "never-created")).await;
    assert_eq!(unknown, send(&mut bare, get_task(3, "never-created")).await);
}

/// A client retries `tasks/get` (its answer was lost), or polls with
/// `tasks/get` and then fetches with `tasks/result`: each delivery is the first
/// one, byte for byte, and the task stays remembered.
#[tokio::test]
async fn every_delivery_of_a_remembered_result_is_rewrapped_identically() {
    let mut service = ToolErrors::new(task_server());
    send(&mut service, call_as_task(1, "export", "t-again")).await;
    let first = send(&mut service, get_task(2, "t-again")).await;
    assert_eq!(
        first["result"]["result"]["content"][0]["text"],
        render_error("export", "disk full")
    );
    for _ in 0..3 {
        assert_eq!(send(&mut service, get_task(2, "t-again")).await, first);
    }
    let fetched = send(
        &mut service,
        request(3, "tasks/result", json!({"taskId": "t-again"})),
    )
    .await;
    assert_eq!(fetched["result"], first["result"]["result"]);
    assert_eq!(service.remembered_tasks(), 1, "remembered after delivery");
}
#[tokio::test]
async fn the_whole_tasks_result_answer_is_rewrapped_in_2025_11_25() {
    let mut bare = task_server();
    let mut service = ToolErrors::new(task_server());
    let call = request(
        1,
        "tools/call",
        json!({"name": "export", "arguments": {"task": "t-2", "ttl": 60000, "protocol": "2025-11-25"}}),
    );
    let handle = send(&mut service, call.clone()).await;
    assert_eq!(handle, send(&mut bare, call).await);
    assert_eq!(service.remembered_tasks(), 1);

    let result = send(
        &mut service,
        request(2, "tasks/result", json!({"taskId": "t-2"})),
    )
    .await;
    assert_eq!(
        result["result"]["content"][0]["text"],
        render_error("export", "disk full")
    );
    let again = send(
        &mut service,
        request(2, "tasks/result", json!({"taskId": "t-2"})),
    )
    .await;
    assert_eq!(again, result, "a second tasks/result is rewrapped alike");
}

/// A `cancelled` status passes untouched and forgets nothing.
#[tokio::test]
async fn a_cancelled_status_passes_untouched_and_keeps_the_task() {
    let mut bare = task_server();
    let mut service = ToolErrors::new(task_server());
    send(&mut service, call_as_task(1, "export", "cancelled-1")).await;
    assert_eq!(service.remembered_tasks(), 1);
    let got = send(&mut service, get_task(2, "cancelled-1")).await;
    assert_eq!(got, send(&mut bare, get_task(2, "cancelled-1")).await);
    assert_eq!(service.remembered_tasks(), 1);
}

fn task_result(id: u64, task: &str) -> Value {
    request(id, "tasks/result", json!({"taskId": task}))
}

/// The official SDKs' flow for a tool that fails as a task (2025-11-25): the
/// poll says `failed`, then `tasks/result` delivers the `isError` result. The
/// poll passes untouched; every delivery, before and after any poll, is the
/// element.
#[tokio::test]
async fn a_failed_status_then_tasks_result_is_rewrapped_on_every_delivery() {
    let mut bare = task_server();
    let mut service = ToolErrors::new(task_server());
    send(&mut service, call_as_task(1, "export", "failed-1")).await;
    for (n, message) in [
        get_task(2, "failed-1"),
        task_result(3, "failed-1"),
        task_result(4, "failed-1"),
        get_task(5, "failed-1"),
        task_result(6, "failed-1"),
    ]
    .into_iter()
    .enumerate()
    {
        let got = send(&mut service, message.clone()).await;
        if message["method"] == "tasks/get" {
            assert_eq!(got, send(&mut bare, message).await, "poll {n}");
        } else {
            assert_eq!(
                got["result"]["content"][0]["text"],
                render_error("export", "disk full"),
                "delivery {n}"
            );
        }
    }
}

/// A JSON-RPC error answering a poll (a transient `-32603`) changes nothing:
/// the task's result is still rewrapped afterwards.
#[tokio::test]
async fn an_error_answering_a_poll_keeps_the_task() {
    let mut service = ToolErrors::new(task_server());
    send(&mut service, call_as_task(1, "export", "flaky-1")).await;
    let got = send(&mut service, get_task(2, "flaky-1")).await;
    assert_eq!(got["error"]["code"], -32603);
    assert_eq!(service.remembered_tasks(), 1);
    let got = send(&mut service, task_result(3, "flaky-1")).await;
    assert_eq!(
        got["result"]["content"][0]["text"],
        render_error("export", "disk full")
    );
}

#[tokio::test]
async fn a_task_whose_ttl_has_passed_is_not_rewrapped() {
    let mut bare = task_server();
    let mut service = ToolErrors::new(task_server());
    let call = request(
        1,
        "tools/call",
        json!({"name": "export", "arguments": {"task": "t-3", "ttl": 0}}),
    );
    send(&mut service, call).await;
    let got = send(&mut service, get_task(2, "t-3")).await;
    assert_eq!(got, send(&mut bare, get_task(2, "t-3")).await);
    assert_eq!(service.remembered_tasks(), 0);
}

#[tokio::test]
async fn clones_share_what_they_remember() {
    let mut service = ToolErrors::new(task_server());
    let mut clone = service.clone();
    send(&mut service, call_as_task(1, "export", "t-4")).await;
    let got = send(&mut clone, get_task(2, "t-4")).await;
    assert_eq!(
        got["result"]["result"]["content"][0]["text"],
        render_error("export", "disk full")
    );
}

/// The bound a layer has unless `max_remembered_tasks` says otherwise, as
/// documented on that method.
const DEFAULT_MAX_REMEMBERED_TASKS: usize = 1024;

/// The worst client: ten times as many tasks as the bound, none ever polled.
/// The memory holds at the bound after every call, and keeps the newest.
#[tokio::test]
async fn memory_stays_bounded_when_tasks_are_never_polled() {
    for (layer, bound) in [
        (ToolErrorLayer::new(), DEFAULT_MAX_REMEMBERED_TASKS),
        (ToolErrorLayer::new().max_remembered_tasks(3), 3),
        (ToolErrorLayer::new().max_remembered_tasks(5000), 5000),
    ] {
        let mut service = layer.layer(task_server());
        let created = 10 * bound;
        for n in 0..created {
            send(
                &mut service,
                call_as_task(n as u64, "export", &format!("t-{n}")),
            )
            .await;
            assert!(service.remembered_tasks() <= bound);
        }
        assert_eq!(service.remembered_tasks(), bound);

        // The newest are the ones kept: the last task is still rewrapped, the
        // first is not, nor the last one pushed out.
        for kept in [created - bound, created - 1] {
            let got = send(&mut service, get_task(1, &format!("t-{kept}"))).await;
            assert_eq!(
                got["result"]["result"]["content"][0]["text"],
                render_error("export", "disk full")
            );
        }
        for forgotten in [0, created - bound - 1] {
            let got = send(&mut service, get_task(2, &format!("t-{forgotten}"))).await;
            assert_eq!(got["result"]["result"]["content"][0]["text"], "disk full");
        }
    }
}

/// With room for two tasks, the third pushes out the oldest: its result then
/// passes as the tool made it, on every delivery, while the other two are
/// rewrapped on every delivery.
#[tokio::test]
async fn with_max_remembered_tasks_2_the_third_task_evicts_the_oldest() {
    let mut service = ToolErrorLayer::new()
        .max_remembered_tasks(2)
        .layer(task_server());
    for (n, task) in ["t-a", "t-b", "t-c"].into_iter().enumerate() {
        send(&mut service, call_as_task(n as u64, "export", task)).await;
    }
    assert_eq!(service.remembered_tasks(), 2);
    for _ in 0..2 {
        let oldest = send(&mut service, get_task(10, "t-a")).await;
        assert_eq!(
            oldest["result"]["result"]["content"][0]["text"],
            "disk full"
        );
        for kept in ["t-b", "t-c"] {
            let got = send(&mut service, get_task(11, kept)).await;
            assert_eq!(
                got["result"]["result"]["content"][0]["text"],
                render_error("export", "disk full"),
                "{kept}"
            );
        }
    }
}

/// Past the bound, the least recently used task is pushed out: a task whose
/// result was just delivered stays, an older one not read since goes.
#[tokio::test]
async fn the_least_recently_used_task_is_pushed_out_first() {
    let mut service = ToolErrorLayer::new()
        .max_remembered_tasks(2)
        .layer(task_server());
    send(&mut service, call_as_task(1, "export", "t-x")).await;
    send(&mut service, call_as_task(2, "export", "t-y")).await;
    send(&mut service, get_task(3, "t-x")).await;
    send(&mut service, call_as_task(4, "export", "t-z")).await;
    let pushed_out = send(&mut service, get_task(5, "t-y")).await;
    assert_eq!(
        pushed_out["result"]["result"]["content"][0]["text"],
        "disk full"
    );
    for kept in ["t-x", "t-z"] {
        let got = send(&mut service, get_task(6, kept)).await;
        assert_eq!(
            got["result"]["result"]["content"][0]["text"],
            render_error("export", "disk full"),
            "{kept}"
        );
    }
}

#[tokio::test]
async fn other_task_methods_pass_through_untouched() {
    let mut bare = task_server();
    let mut service = ToolErrors::new(task_server());
    send(&mut service, call_as_task(1, "export", "t-5")).await;
    for method in ["tasks/update", "tasks/cancel", "tasks/list"] {
        let message = request(2, method, json!({"taskId": "t-5", "inputResponses": {}}));
        assert_eq!(
            send(&mut service, message.clone()).await,
            send(&mut bare, message).await
        );
    }
    assert_eq!(
        service.remembered_tasks(),
        1,
        "only its TTL or newer tasks forget a task"
    );
}

/// A server that builds one service per session from one layer (rmcp's
/// `StreamableHttpService` factory calling `.layer(layer.clone())`): a task
/// created in one session is rewrapped when another session fetches it.
#[tokio::test]
async fn every_service_of_one_layer_and_its_clones_shares_the_memory_of_tasks() {
    let layer = ToolErrorLayer::new();
    let mut first_session = layer.layer(task_server());
    let mut second_session = layer.clone().layer(task_server());
    send(&mut first_session, call_as_task(1, "export", "t-shared")).await;
    assert_eq!(second_session.remembered_tasks(), 1);

    let got = send(&mut second_session, get_task(2, "t-shared")).await;
    assert_eq!(
        got["result"]["result"]["content"][0]["text"],
        render_error("export", "disk full")
    );
    let again = send(&mut first_session, get_task(3, "t-shared")).await;
    assert_eq!(
        again["result"], got["result"],
        "delivered alike through either session"
    );
}

#[tokio::test]
async fn layers_made_separately_remember_separately() {
    let mut bare = task_server();
    let mut one = ToolErrorLayer::new().layer(task_server());
    let mut other = ToolErrorLayer::new().layer(task_server());
    send(&mut one, call_as_task(1, "export", "t-own")).await;
    assert_eq!(other.remembered_tasks(), 0);
    let got = send(&mut other, get_task(2, "t-own")).await;
    assert_eq!(got, send(&mut bare, get_task(2, "t-own")).await);
    assert_eq!(one.remembered_tasks(), 1);
}

/// `task_server` answering a batch element by element, in reverse order.
fn batch_task_server()
-> impl Service<Value, Response = Value, Error = Infallible, Future = Ready<Result<Value, Infallible>>>
+ Clone {
    service_fn(|request: Value| {
        let Value::Array(batch) = request else {
            panic!("this server takes batches only");
        };
        let answers = batch.into_iter().rev().map(|element| {
            let answered = task_server().call(element);
            answered.into_inner().unwrap()
        });
        ready(Ok(Value::Array(answers.collect())))
    })
}

#[tokio::test]
async fn tasks_are_followed_in_batches_each_result_rewrapped_with_its_own_tool() {
    let mut service = ToolErrors::new(batch_task_server());
    let calls = json!([
        call_as_task(1, "export", "t-1"),
        call_as_task(2, "import", "t-2")
    ]);
    let handles = send(&mut service, calls.clone()).await;
    assert_eq!(handles, send(&mut batch_task_server(), calls).await);
    assert_eq!(service.remembered_tasks(), 2);

    let gets = json!([get_task(3, "t-1"), get_task(4, "t-2")]);
    let answers = send(&mut service, gets).await;
    let text_of = |id: u64| {
        let answer = answers
            .as_array()
            .unwrap()
            .iter()
            .find(|answer| answer["id"] == id);
        answer.unwrap()["result"]["result"]["content"][0]["text"].clone()
    };
    assert_eq!(text_of(3), render_error("export", "disk full"));
    assert_eq!(text_of(4), render_error("import", "disk full"));
}
