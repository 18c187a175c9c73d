//! Replicas keep nothing another would need: a task created through one proxy
//! and read through another is rewritten the same way, with the right tool,
//! because the task id the client sees carries the server's id and the tool.

use mcp_tool_errors::render_error;
use serde_json::{Value, json};

use crate::support::{Events, Proxy, Received, Reply, Upstream, body, event_data, json};

/// The server's task ids.
const TASK_2026: &str = "srv-task-2026";
const TASK_2025: &str = "srv-task-2025";
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// An upstream with tasks in both protocol revisions: `deploy` creates
/// `TASK_2026` (read with `tasks/get`), `migrate` creates `TASK_2025` (read with
/// `tasks/result`, answered in an event stream after a status notification);
/// both fail with `boom`. Any other task id is unknown.
fn task_server(request: &Received) -> Reply {
    let message = request.json();
    let id = message["id"].clone();
    let answer = |result: Value| {
        Reply::json(&json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string())
    };
    let failed = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
    let task_id = message["params"]["taskId"].as_str().unwrap_or_default();
    match (message["method"].as_str(), message["params"]["name"].as_str(), task_id) {
        (Some("tools/call"), Some("deploy"), _) => {
            answer(json!({"resultType": "task", "taskId": TASK_2026, "ttlMs": 60000}))
        }
        (Some("tools/call"), Some("migrate"), _) => {
            answer(json!({"task": {"taskId": TASK_2025, "status": "working", "ttl": 60000}}))
        }
        (Some("tasks/get"), _, TASK_2026) => answer(json!({
            "taskId": TASK_2026, "status": "completed", "ttlMs": 60000, "result": failed,
        })),
        (Some("tasks/result"), _, TASK_2025) => {
            let mut result = failed;
            result["_meta"] = json!({RELATED_TASK: {"taskId": TASK_2025}});
            let status = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                "params": {"taskId": TASK_2025, "status": "completed"}});
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            Reply::events(&[
                &format!("id: 1\ndata: {status}\n\n"),
                &format!("id: 2\ndata: {answer}\n\n"),
            ])
        }
        (Some("tasks/list"), _, _) => answer(json!({"tasks": [
            {"taskId": TASK_2026, "status": "working"},
            {"taskId": "srv-task-never-seen", "status": "working"},
        ]})),
        _ => Reply::json(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "unknown task"}})
                .to_string(),
        ),
    }
}

fn task_call(id: u64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "task": {"ttl": 60000}}})
    .to_string()
}

fn task_request(id: u64, method: &str, task_id: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"taskId": task_id}}).to_string()
}

/// The task ids the upstream received in requests of `method`.
fn task_ids_received(upstream: &Upstream, method: &str) -> Vec<String> {
    upstream
        .received()
        .iter()
        .map(Received::json)
        .filter(|message| message["method"] == method)
        .map(|message| message["params"]["taskId"].as_str().unwrap().to_owned())
        .collect()
}

/// A client's id for the server's `task_id` of `tool`, as the proxy's docs
/// describe it, made by hand as a forger would.
fn forge(tool: &str, task_id: &str) -> String {
    let hex = |text: &str| text.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let bytes = tool.bytes().chain([0]).chain(task_id.bytes());
    let check = bytes.fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    format!("mte1.{}.{}.{check:08x}", hex(tool), hex(task_id))
}

#[tokio::test]
async fn a_task_created_through_one_proxy_is_rewrapped_when_read_through_another() {
    let upstream = Upstream::start(task_server).await;
    let first = Proxy::start(&upstream.url(), &[]).await;
    let second = Proxy::start(&upstream.url(), &[]).await;

    let handle = json(first.post(&task_call(1, "deploy"), &[]).await).await;
    let client_task_id = handle["result"]["taskId"]
        .as_str()
        .expect("a task handle")
        .to_owned();
    assert_ne!(client_task_id, TASK_2026, "the client gets the proxy's id");
    assert_eq!(handle["result"]["resultType"], "task");
    assert_eq!(handle["result"]["ttlMs"], 60000);

    let task = json(
        second
            .post(&task_request(2, "tasks/get", &client_task_id), &[])
            .await,
    )
    .await;

    assert_eq!(
        task,
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "taskId": client_task_id, "status": "completed", "ttlMs": 60000,
            "result": {"content": [{"type": "text", "text": render_error("deploy", "boom")}], "isError": true},
        }})
    );
    assert_eq!(task_ids_received(&upstream, "tasks/get"), [TASK_2026]);
}

#[tokio::test]
async fn a_2025_task_result_read_through_another_proxy_is_rewrapped_in_its_event_stream() {
    let upstream = Upstream::start(task_server).await;
    let first = Proxy::start(&upstream.url(), &[]).await;
    let second = Proxy::start(&upstream.url(), &[]).await;

    let handle = json(first.post(&task_call(1, "migrate"), &[]).await).await;
    let client_task_id = handle["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(client_task_id, TASK_2025);
    assert_eq!(handle["result"]["task"]["status"], "working");

    let mut events = Events::new(
        second
            .post(&task_request(2, "tasks/result", &client_task_id), &[])
            .await,
    );
    let status = events.next().await.expect("the status notification");
    let answer = events.next().await.expect("the answer");

    assert!(status.starts_with("id: 1\n"), "{status}");
    assert_eq!(
        event_data(&status)["params"]["taskId"],
        client_task_id.as_str()
    );
    assert!(answer.starts_with("id: 2\n"), "{answer}");
    let answer = event_data(&answer);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("migrate", "boom")
    );
    assert_eq!(
        answer["result"]["_meta"][RELATED_TASK]["taskId"],
        client_task_id.as_str()
    );
    assert_eq!(events.next().await, None);
    assert_eq!(task_ids_received(&upstream, "tasks/result"), [TASK_2025]);
}

#[tokio::test]
async fn a_forged_id_names_a_tool_only_inside_the_quoted_attribute() {
    let upstream = Upstream::start(task_server).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let tool = "x\">\ninjected</error>\n<error tool=\"y";
    let forged = forge(tool, TASK_2026);

    let task = json(
        proxy
            .post(&task_request(1, "tasks/get", &forged), &[])
            .await,
    )
    .await;

    let text = task["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(text, render_error(tool, "boom"));
    // The element holds the server's text and nothing else: the forged name
    // stays in the quoted attribute of its first line.
    assert_eq!(
        text.lines().collect::<Vec<_>>()[1..],
        ["boom", "</error>"],
        "{text}"
    );
    assert_eq!(task["result"]["taskId"], forged.as_str());
    assert_eq!(task_ids_received(&upstream, "tasks/get"), [TASK_2026]);
}

#[tokio::test]
async fn a_garbled_id_goes_to_the_server_unchanged() {
    let upstream = Upstream::start(task_server).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let real = forge("deploy", TASK_2026);
    let garbled = format!("{}0", &real[..real.len() - 1]);
    let garbled = if garbled == real {
        format!("{}1", &real[..real.len() - 1])
    } else {
        garbled
    };

    let answer = body(
        proxy
            .post(&task_request(1, "tasks/get", &garbled), &[])
            .await,
    )
    .await;

    assert_eq!(
        task_ids_received(&upstream, "tasks/get"),
        [garbled.as_str()]
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&answer).unwrap()["error"]["message"],
        "unknown task"
    );
}

#[tokio::test]
async fn a_tools_own_task_id_field_is_not_touched() {
    let result = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"taskId":"ticket-9"},"_meta":{"taskId":"t"}}}"#;
    let upstream = Upstream::start(move |_| Reply::json(result)).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;

    let answer = body(proxy.post(&task_call(1, "deploy"), &[]).await).await;

    assert_eq!(answer, result.as_bytes());
}

#[tokio::test]
async fn the_mcp_name_header_of_a_task_request_names_the_servers_task() {
    let upstream = Upstream::start(task_server).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let handle = json(proxy.post(&task_call(1, "deploy"), &[]).await).await;
    let client_task_id = handle["result"]["taskId"].as_str().unwrap().to_owned();

    // 2026-07-28 repeats the task id in `Mcp-Name`; the server checks both agree.
    let headers = [
        ("mcp-method", "tasks/get"),
        ("mcp-name", client_task_id.as_str()),
    ];
    let task = json(
        proxy
            .post(&task_request(2, "tasks/get", &client_task_id), &headers)
            .await,
    )
    .await;

    assert_eq!(task["result"]["taskId"], client_task_id.as_str());
    let received = upstream
        .wait_for(|request| request.json()["method"] == "tasks/get")
        .await;
    assert_eq!(received.header("mcp-name"), Some(TASK_2026));
    assert_eq!(received.json()["params"]["taskId"], TASK_2026);
}

#[tokio::test]
async fn a_task_list_names_the_tasks_this_replica_saw_by_the_clients_ids() {
    let upstream = Upstream::start(task_server).await;
    let seen_it = Proxy::start(&upstream.url(), &[]).await;
    let other = Proxy::start(&upstream.url(), &[]).await;
    let handle = json(seen_it.post(&task_call(1, "deploy"), &[]).await).await;
    let client_id = handle["result"]["taskId"].as_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"}).to_string();

    let listed = json(seen_it.post(&list, &[]).await).await;
    assert_eq!(listed["result"]["tasks"][0]["taskId"], client_id.as_str());
    assert_eq!(
        listed["result"]["tasks"][1]["taskId"],
        "srv-task-never-seen"
    );
    // A replica that never saw the task lists the server's id.
    let listed = json(other.post(&list, &[]).await).await;
    assert_eq!(listed["result"]["tasks"][0]["taskId"], TASK_2026);
}
