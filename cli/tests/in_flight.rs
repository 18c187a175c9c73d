//! Requests in flight: an id reused while in flight, and cancellation by the
//! client.

use serde_json::{Value, json};

use crate::support::{GOT, Server, Session, send, tool_call};

#[tokio::test]
async fn a_request_reusing_an_id_in_flight_is_refused_and_the_first_keeps_its_answer() {
    let own = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"done"}]}}"#;
    let server = Server::scripted(json!({
        "on": {
            // A reused id reaching the child would take the first call's answer.
            "ping": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)],
            "test/release": [send(r#"{"jsonrpc":"2.0","id":$REQUEST_ID,"result":{"content":[{"type":"text","text":"done"}]}}"#)],
        },
    }));
    let mut session = Session::wrapped(&[], &server);
    for (id, shown) in [(json!(7), "7"), (json!("a"), r#""a""#)] {
        let mut call = tool_call(0, "slow", json!({}));
        call["id"] = id.clone();
        session.send(&call.to_string()).await;
        let reuse = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let refused: Value = serde_json::from_str(&session.line_after(&reuse).await).expect("JSON");
        assert_eq!(
            refused,
            json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32600, "message": format!("Invalid request: id {shown} is already in use.")},
            })
        );
        let release =
            json!({"jsonrpc": "2.0", "method": "test/release", "params": {"requestId": id}});
        let answer = session.line_after(&release).await;
        assert_eq!(answer, own.replace("$ID", shown));
    }
}

#[tokio::test]
async fn a_batch_reusing_an_id_in_flight_is_refused_whole() {
    let server = Server::scripted(json!({
        "on": {"batch": [send(r#"[{"jsonrpc":"2.0","id":2,"result":{}}]"#)]},
    }));
    let mut session = Session::wrapped(&[], &server);
    session
        .send(&tool_call(1, "slow", json!({})).to_string())
        .await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    ]);
    let refused: Value = serde_json::from_str(&session.line_after(&batch).await).expect("JSON");
    assert_eq!(refused[0]["id"], 2);
    assert_eq!(refused[0]["error"]["code"], -32600);
    assert_eq!(
        refused[0]["error"]["message"],
        "Invalid request: the batch holds id 1, which is already in use."
    );
    assert_eq!(refused[1]["id"], 1);
    assert_eq!(
        refused[1]["error"]["message"],
        "Invalid request: id 1 is already in use."
    );
}

/// The child's answer to the request a cancellation names, sent after it.
const LATE: &str = r#"{"jsonrpc":"2.0","id":$REQUEST_ID,"result":{"content":[{"type":"text","text":"late"}],"isError":true}}"#;

fn cancel(id: i64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"the user pressed stop"}}}}"#
    )
}

#[tokio::test]
async fn a_call_the_client_cancels_is_never_answered_and_not_cancelled_twice() {
    let server = Server::scripted(json!({
        "on": {
            "notifications/cancelled": [send(GOT), send(LATE)],
            "ping": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)],
        },
    }));
    let mut session = Session::wrapped(&["--tool-timeout", "300ms"], &server);
    session
        .send(&tool_call(1, "hang", json!({})).to_string())
        .await;
    session.send(&cancel(1)).await;
    // The client's cancellation reached the child as it was written.
    assert_eq!(session.line().await, GOT.replace("$LINE", &cancel(1)));
    // Past the timeout: no answer to 1, no late answer, and no second
    // cancellation echoed by the child; the next line is the ping's answer.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(
        session.line_after(&ping).await,
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#
    );
    // A cancellation for a call the command gave up already is not sent again.
    session
        .send(&tool_call(3, "hang", json!({})).to_string())
        .await;
    let timed_out = session.line().await;
    assert!(timed_out.contains(r#""isError":true"#), "{timed_out}");
    let own_cancel: Value = serde_json::from_str(&session.line().await).expect("JSON");
    assert_eq!(own_cancel["params"]["params"]["requestId"], 3);
    session.send(&cancel(3)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    assert_eq!(
        session.line_after(&ping).await,
        r#"{"jsonrpc":"2.0","id":4,"result":{}}"#
    );
}

#[tokio::test]
async fn a_call_the_client_cancels_is_not_answered_when_the_child_dies() {
    let server = Server::scripted(json!({
        "on": {"notifications/cancelled": [send(GOT)], "tools/call die": [{"exit": 3}]},
    }));
    let mut session = Session::wrapped(&[], &server);
    session
        .send(&tool_call(1, "hang", json!({})).to_string())
        .await;
    session.send(&cancel(1)).await;
    assert_eq!(session.line().await, GOT.replace("$LINE", &cancel(1)));
    session
        .send(&tool_call(2, "die", json!({})).to_string())
        .await;
    let mut answered = Vec::new();
    while let Some(line) = session.line_or_eof().await {
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        answered.push(answer["id"].clone());
    }
    assert_eq!(answered, [json!(2)]);
    assert_eq!(session.wait().await.code(), Some(3));
}

#[tokio::test]
#[ignore = "120,000 calls, 40 s against a debug build: .ci/run runs it once, against the wheel's executable"]
async fn resident_memory_stays_flat_over_a_hundred_thousand_timed_out_calls() {
    if cfg!(not(target_os = "linux")) {
        return;
    }
    // The child never answers a `hang`: every call is answered by its timeout,
    // and its id is then remembered as given up, in case the child answers late.
    let server = Server::scripted(json!({"on": {}}));
    let mut session = Session::wrapped(&["--tool-timeout", "1ms"], &server);
    const ROUND: usize = 1000;
    // Warm-up: the tables' and the timers' high-water marks, and most of the
    // allocator's, whose arenas (one per thread that frees) fragment slowly:
    // about 0.7 MB over the 100,000 calls that follow.
    for round in 0..20 {
        timed_out_calls(&mut session, round * ROUND, ROUND).await;
    }
    let before = resident_kb(session.pid());
    let mut most_threads = 0;
    for round in 20..120 {
        timed_out_calls(&mut session, round * ROUND, ROUND).await;
        most_threads = most_threads.max(process_status(session.pid(), "Threads:"));
    }
    let after = resident_kb(session.pid());
    eprintln!(
        "resident memory: {before} kB before, {after} kB after 100,000 timed-out calls; \
         at most {most_threads} threads"
    );
    assert!(
        after <= before + 2048,
        "{before} kB before, {after} kB after 100,000 timed-out calls"
    );
    // The runtime's thread, one per pipe, and the blocking pool's four: a
    // timeout's answer does not start a thread of its own.
    assert!(most_threads <= 8, "{most_threads} threads");
}

/// The resident memory of process `pid`, in kB.
fn resident_kb(pid: u32) -> u64 {
    process_status(pid, "VmRSS:")
}

/// The number on the line `key` of `/proc/PID/status`.
fn process_status(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc is read");
    let line = status
        .lines()
        .find(|line| line.starts_with(key))
        .unwrap_or_else(|| panic!("{key} is listed"));
    line.split_whitespace()
        .nth(1)
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("{key} is a number"))
}

/// `count` calls from `first` on, each with a long string id, each cancelled
/// right after it is sent, then a ping that waits for the wrapper to catch up.
async fn cancelled_calls(session: &mut Session, first: usize, count: usize) {
    let padding = "x".repeat(200);
    let mut lines = Vec::with_capacity(2 * count);
    for n in first..first + count {
        let id = format!("{padding}-{n}");
        let mut call = tool_call(0, "hang", json!({}));
        call["id"] = json!(id);
        lines.push(call.to_string());
        lines.push(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
                .to_string(),
        );
    }
    session.send(&lines.join("\n")).await;
    let sync = json!({"jsonrpc": "2.0", "id": format!("sync-{first}"), "method": "ping"});
    let answered = session.exchange(&sync).await;
    assert_eq!(answered.len(), 1, "only the ping is answered: {answered:?}");
}

#[tokio::test]
async fn resident_memory_stays_flat_over_a_hundred_thousand_cancelled_calls() {
    if cfg!(not(target_os = "linux")) {
        return;
    }
    let server = Server::scripted(json!({
        "on": {"ping": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)]},
    }));
    let mut session = Session::wrapped(&[], &server);
    const ROUND: usize = 1000;
    // Warm-up: the allocator's and the tables' high-water marks for a round.
    for round in 0..5 {
        cancelled_calls(&mut session, round * ROUND, ROUND).await;
    }
    let before = resident_kb(session.pid());
    for round in 5..105 {
        cancelled_calls(&mut session, round * ROUND, ROUND).await;
    }
    let after = resident_kb(session.pid());
    eprintln!("resident memory: {before} kB before, {after} kB after 100,000 cancelled calls");
    assert!(
        after <= before + 2048,
        "{before} kB before, {after} kB after 100,000 cancelled calls"
    );
}

/// `count` calls from `first` on, each with a long string id, sent together;
/// returns once each is answered, by its timeout.
async fn timed_out_calls(session: &mut Session, first: usize, count: usize) {
    let padding = "x".repeat(200);
    let lines: Vec<String> = (first..first + count)
        .map(|n| {
            let mut call = tool_call(0, "hang", json!({}));
            call["id"] = json!(format!("{padding}-{n}"));
            call.to_string()
        })
        .collect();
    session.send(&lines.join("\n")).await;
    for _ in 0..count {
        // Not parsed: 120,000 parses would cost this test more than the command.
        let answer = session.line().await;
        assert!(
            answer.contains(r#""isError":true"#),
            "a timeout's answer: {answer}"
        );
    }
}
