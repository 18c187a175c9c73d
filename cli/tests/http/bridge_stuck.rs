//! The bridge in front of a server that stops reading its stdin, of one
//! whose process group holds a helper that ignores SIGTERM, and of one whose
//! helper left its group holding its stdout: none holds back another
//! session, the idle timeout, `DELETE` or the bridge's own exit, and no
//! process of theirs outlives the bridge.

use std::time::Duration;

use hyper::StatusCode;
use mcp_tool_errors::render_error;
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::bridge::{Bridge, SLOW_CHILD, Session, answers};
use crate::process_support::{Server, process_group, running_in_group};
use crate::support::{bounded, post_to, tool_call};

/// A server that answers `initialize` and any other request at once, and
/// stops reading its stdin for ever at a `tools/call` of `stop` (a
/// synchronous tool blocking its loop); it ignores SIGTERM.
const STOPS_READING: &str = r#"
import json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    line = sys.stdin.readline()
    if not line:
        break
    message = json.loads(line)
    if "id" not in message:
        continue
    if message.get("params", {}).get("name") == "stop":
        print("stopped reading", file=sys.stderr, flush=True)
        while True:
            time.sleep(1000)
    result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "stops", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// A `tools/call` of `big` with an argument of `bytes` bytes.
fn large_call(id: u64, bytes: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"big","arguments":{{"text":"{}"}}}}}}"#,
        "x".repeat(bytes)
    )
}

/// A notification of `bytes` bytes.
fn large_notification(bytes: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"{}"}}}}"#,
        "x".repeat(bytes)
    )
}

/// The same session, for another task.
fn again(session: &Session) -> Session {
    Session {
        address: session.address,
        id: session.id.clone(),
        initialized: Value::Null,
    }
}

/// The session's `stop` call sent, and the server seen to stop reading.
async fn stop_reading(bridge: &Bridge, session: &Session) {
    let session = again(session);
    tokio::spawn(async move {
        post_for(&session, tool_call(1, "stop"), Duration::from_secs(2)).await;
    });
    bridge.process.log_shows("stopped reading").await;
}

/// Two large notifications posted to a session whose server stopped
/// reading, their clients waiting for 30 s: the first fills what the relay
/// holds, the second the pipe to it.
async fn fill_the_pipes(session: &Session) -> Vec<JoinHandle<()>> {
    let mut posts = Vec::new();
    for _ in 0..2 {
        let session = again(session);
        posts.push(tokio::spawn(async move {
            post_for(
                &session,
                large_notification(4 << 20),
                Duration::from_secs(30),
            )
            .await;
        }));
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    posts
}

/// A bridge with `options` whose one session's server stopped reading, the
/// pipes to it full: the bridge, the session, and the posts filling them.
async fn stuck_bridge(options: &[&str]) -> (Bridge, Session, Vec<JoinHandle<()>>) {
    let bridge = Bridge::start(options, &Server::new("python3", &["-c", STOPS_READING])).await;
    let stuck = bridge.open().await;
    stop_reading(&bridge, &stuck).await;
    let posts = fill_the_pipes(&stuck).await;
    (bridge, stuck, posts)
}

/// A call of `big` posted to the session, behind what fills the pipes: its
/// status and answers, awaited for 30 s at most.
async fn call_in_flight(session: &Session) -> JoinHandle<Option<(StatusCode, Vec<Value>)>> {
    let session = again(session);
    let call = tokio::spawn(async move {
        post_for(&session, tool_call(2, "big"), Duration::from_secs(30)).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    call
}

/// Posts `body` to the session, and reads its stream for at most `patience`:
/// its status and answers, `None` when either did not come in time.
async fn post_for(
    session: &Session,
    body: String,
    patience: Duration,
) -> Option<(StatusCode, Vec<Value>)> {
    tokio::time::timeout(patience, async {
        let response = post_to(session.address, &body, &[("mcp-session-id", &session.id)]).await;
        let status = response.status();
        (status, answers(response).await)
    })
    .await
    .ok()
}

#[tokio::test]
async fn a_server_that_stops_reading_holds_back_no_other_session_and_its_queue_is_bounded() {
    let (bridge, stuck, posts) = stuck_bridge(&["--session-idle-timeout", "1s"]).await;
    // Past what the session may queue: answered at once, through the layer.
    let past = post_for(&stuck, large_call(2, 14 << 20), Duration::from_secs(3)).await;
    let batch = format!(
        r#"[{},{{"jsonrpc":"2.0","id":6,"method":"ping"}}]"#,
        large_call(5, 14 << 20)
    );
    let past_batch = post_for(&stuck, batch, Duration::from_secs(3)).await;
    // The stuck session has no call with a client: it is idle, and the
    // sweep ends it. A session opened after that still ends at its own idle
    // timeout.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let other = bridge.open().await;
    let other_child = *bridge
        .children()
        .iter()
        .max()
        .expect("the other session's child");
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while bridge.children().contains(&other_child) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the other session still runs 10 s after its idle timeout of 1 s"
    );
    let response = other.post(&tool_call(4, "x")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let (status, answered) = past.expect("the call past the bound is answered at once");
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["id"], 2);
    let text = answered[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("<error tool=\"big\">\nThe server is not reading its input"),
        "{text}"
    );
    // A batch past the bound: one answer, a batch, each through the layer.
    let (_, answered) = past_batch.expect("the batch past the bound is answered at once");
    assert_eq!(answered.len(), 1, "{answered:?}");
    let batch = answered[0].as_array().expect("a batch");
    assert_eq!(batch.len(), 2, "{batch:?}");
    assert_eq!(batch[0]["id"], 5);
    assert!(batch[0]["result"]["content"][0]["text"]
        .as_str()
        .is_some_and(|text| text.starts_with("<error tool=\"big\">\nThe server is not reading")));
    assert_eq!(batch[1]["id"], 6);
    assert_eq!(batch[1]["error"]["code"], -32603);
    // The log says it, once.
    let log = bridge.process.log();
    assert_eq!(
        log.matches("the server is not reading its input").count(),
        1,
        "{log}"
    );
    // Every process of the stuck server ends, though it ignores SIGTERM.
    bounded("the stuck server is killed", async {
        while !bridge.children().is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    for post in posts {
        post.abort();
    }
}

#[tokio::test]
async fn delete_of_a_session_whose_server_stopped_reading_is_answered_at_once() {
    let (_bridge, stuck, posts) = stuck_bridge(&[]).await;
    let waiting = call_in_flight(&stuck).await;
    let deleted = tokio::time::timeout(Duration::from_secs(5), stuck.delete()).await;
    assert_eq!(
        deleted.ok(),
        Some(StatusCode::OK),
        "DELETE answered within 5 s"
    );
    // The call in flight is answered when the server is gone: killed at the
    // end of the grace, since it ignores SIGTERM and never reads the end of
    // its stdin.
    let (status, answered) = waiting
        .await
        .unwrap()
        .expect("the call is answered when its server is gone");
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answered[0]["result"]["content"][0]["text"],
        render_error(
            "big",
            "The server process exited (signal SIGKILL) before answering."
        )
    );
    for post in posts {
        post.abort();
    }
}

#[tokio::test]
async fn sigterm_with_a_1_s_drain_ends_a_bridge_whose_server_stopped_reading_within_the_grace() {
    let (bridge, stuck, posts) = stuck_bridge(&["--drain-timeout", "1s"]).await;
    let group = process_group(bridge.children()[0]);
    let waiting = call_in_flight(&stuck).await;
    let mut process = bridge.process;
    process.terminate();
    let signalled = std::time::Instant::now();
    // The drain (1 s), then the grace of the server's group (5 s).
    let exited = tokio::time::timeout(Duration::from_secs(9), process.exited()).await;
    eprintln!("the bridge exited {:?} after SIGTERM", signalled.elapsed());
    let left = running_in_group(group);
    kill_all(&left);
    assert!(
        exited.is_ok(),
        "the bridge has not exited 9 s after SIGTERM"
    );
    assert_eq!(
        left,
        Vec::<u32>::new(),
        "the server's group outlived the bridge"
    );
    let (_, answered) = waiting.await.unwrap().expect("the call is answered");
    let text = answered[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("<error tool=\"big\">\nThe bridge is stopping"),
        "{text}"
    );
    for post in posts {
        post.abort();
    }
}

#[tokio::test]
async fn a_helper_that_ignores_sigterm_in_a_servers_group_does_not_outlive_the_bridge() {
    // A server that starts a helper of its own, which ignores SIGTERM.
    let server = Server::new(
        "sh",
        &[
            "-c",
            "(trap '' TERM; exec sleep 300) >/dev/null & exec python3 -c \"$0\"",
            SLOW_CHILD,
        ],
    );
    let bridge = Bridge::start(&[], &server).await;
    let _session = bridge.open().await;
    let group = process_group(bridge.children()[0]);
    bounded("the server starts its helper", async {
        while running_in_group(group).len() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let mut process = bridge.process;
    process.terminate();
    assert!(process.exited().await.success());
    let left = running_in_group(group);
    kill_all(&left);
    assert_eq!(left, Vec::<u32>::new(), "the helper outlived the bridge");
}

/// SIGKILL to what a failed test left running.
fn kill_all(pids: &[u32]) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// A server that starts a helper in a session of its own (`setsid`: no
/// signal to the server's group reaches it), which ignores SIGTERM, keeps
/// the server's stdout, and says its pid on stderr; the server answers
/// `initialize` and exits at the end of its stdin.
const LEAVES_A_HELPER: &str = r#"
import json, os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("helper %d" % os.getpid(), file=sys.stderr, flush=True)
    time.sleep(300)
    os._exit(0)
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "helped", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

#[tokio::test]
async fn a_helper_that_left_the_servers_group_holding_its_stdout_ends_with_its_session() {
    let bridge = Bridge::start(
        &["--max-sessions", "1"],
        &Server::new("python3", &["-c", LEAVES_A_HELPER]),
    )
    .await;
    let session = bridge.open().await;
    let helper: u32 = bounded("the helper's pid", async {
        loop {
            let stderr = bridge.process.log();
            if let Some(pid) = stderr
                .split("helper ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|pid| pid.parse().ok())
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let server = bridge.children()[0];
    assert_ne!(process_group(helper), process_group(server));
    assert_eq!(session.delete().await, StatusCode::OK);
    // The session's place is free again once its helper is gone.
    let _next = bounded("a new session", async {
        loop {
            if let Ok(session) = bridge.open_with(&[]).await {
                return session;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let gone = !crate::process_support::runs(helper);
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &helper.to_string()])
            .status();
    }
    assert!(gone, "the helper outlived its session");
}
