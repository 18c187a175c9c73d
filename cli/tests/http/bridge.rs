//! The bridge, `--listen ADDR -- COMMAND`: a scripted stdio child served over
//! Streamable HTTP, the real binary and a plain HTTP client on 127.0.0.1.
//! Sessions and their children, what each failure of a child is answered
//! with, and who may use the bridge. Every wait is bounded.

use std::path::Path;
use std::time::Duration;

use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use mcp_tool_errors::render_error;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::process_support::{Server, children_of, process_group, running_in_group, send};
use crate::support::{
    Events, ListeningProcess, bounded, event_data, json as json_body, post_to, send_to, tool_call,
};

/// The `initialize` a client sends.
pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

/// The child's answer to `initialize`.
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}"#;

/// A scripted child that answers `initialize`, and `script`'s other entries.
pub(crate) fn child(mut on: Value) -> Server {
    on["initialize"] = json!([send(INITIALIZED)]);
    Server::scripted(json!({ "on": on }))
}

/// The command as a bridge in front of `server`, with `options`.
pub(crate) struct Bridge {
    pub(crate) process: ListeningProcess,
}

impl Bridge {
    pub(crate) async fn start(options: &[&str], server: &Server) -> Self {
        Self::start_at("127.0.0.1:0", options, server).await
    }

    pub(crate) async fn start_at(listen: &str, options: &[&str], server: &Server) -> Self {
        let mut command = Command::new(Path::new(env!("CARGO_BIN_EXE_mcp-tool-errors")));
        command
            .args(options)
            .args(["--listen", listen, "--"])
            .arg(&server.program)
            .args(&server.args)
            .envs(server.env.iter().map(|(key, value)| (key, value)));
        let process = ListeningProcess::spawn(command, "mcp-tool-errors: listening on ").await;
        Self { process }
    }

    pub(crate) fn children(&self) -> Vec<u32> {
        children_of(self.process.pid())
    }

    /// Opens a session: its id and the answer to `initialize`.
    pub(crate) async fn open(&self) -> Session {
        self.open_with(&[]).await.expect("a session")
    }

    pub(crate) async fn open_with(
        &self,
        headers: &[(&str, &str)],
    ) -> Result<Session, Response<Incoming>> {
        let response = post_to(self.process.address, INITIALIZE, headers).await;
        if response.status() != StatusCode::OK {
            return Err(response);
        }
        let id = response
            .headers()
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .unwrap()
            .to_owned();
        let answers = answers(response).await;
        assert_eq!(answers.len(), 1, "{answers:?}");
        Ok(Session {
            address: self.process.address,
            id,
            initialized: answers[0].clone(),
        })
    }
}

/// A client's session with the bridge.
pub(crate) struct Session {
    pub(crate) address: std::net::SocketAddr,
    pub(crate) id: String,
    pub(crate) initialized: Value,
}

impl Session {
    pub(crate) async fn post(&self, body: &str) -> Response<Incoming> {
        post_to(self.address, body, &[("mcp-session-id", &self.id)]).await
    }

    /// Posts `body` and reads its stream to its end: the events' data.
    pub(crate) async fn call(&self, body: &str) -> Vec<Value> {
        let response = self.post(body).await;
        assert_eq!(response.status(), StatusCode::OK);
        answers(response).await
    }

    pub(crate) async fn delete(&self) -> StatusCode {
        let request = Request::delete("/mcp")
            .header("mcp-session-id", &self.id)
            .body(http_body_util::Empty::<Bytes>::new())
            .unwrap();
        send_to(self.address, request).await.status()
    }
}

/// Every event's data of a stream, to its end.
pub(crate) async fn answers(response: Response<Incoming>) -> Vec<Value> {
    let mut events = Events::new(response);
    let mut data = Vec::new();
    while let Some(event) = events.next().await {
        data.push(event_data(&event));
    }
    data
}

/// Waits until `pids` have all exited.
async fn all_exited(what: &str, pids: &[u32]) {
    bounded(what, async {
        while pids.iter().any(|pid| crate::process_support::runs(*pid)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_session_gets_its_child_at_initialize_and_its_tool_errors_wrapped() {
    let failed = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"quota exceeded"}],"isError":true}}"#;
    let listed = r#"{"jsonrpc":"2.0","id":$ID,"result":{"tools":[{"name":"fail","inputSchema":{"type":"object"}}]}}"#;
    let unknown =
        r#"{"jsonrpc":"2.0","id":$ID,"error":{"code":-32601,"message":"Method not found"}}"#;
    let bridge = Bridge::start(
        &[],
        &child(json!({
            "tools/call fail": [send(failed)],
            "tools/list": [send(listed)],
            "nope": [send(unknown)],
        })),
    )
    .await;
    assert!(bridge.children().is_empty(), "no child before a session");
    let session = bridge.open().await;
    assert_eq!(
        session.initialized["result"]["serverInfo"]["name"],
        "scripted"
    );
    assert_eq!(session.id.len(), 32);
    assert_eq!(bridge.children().len(), 1);

    let answers = session.call(&tool_call(1, "fail")).await;
    assert_eq!(
        answers[0]["result"]["content"][0]["text"],
        render_error("fail", "quota exceeded")
    );
    let answers = session
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    assert_eq!(
        answers,
        [serde_json::from_str::<Value>(&listed.replace("$ID", "2")).unwrap()]
    );
    let answers = session
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#)
        .await;
    assert_eq!(
        answers,
        [serde_json::from_str::<Value>(&unknown.replace("$ID", "3")).unwrap()]
    );
    // A notification is accepted.
    let response = session
        .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn a_child_that_crashes_answers_its_calls_and_its_session_is_gone() {
    let bridge = Bridge::start(&[], &child(json!({"tools/call crash": [{"exit": 3}]}))).await;
    let session = bridge.open().await;
    let answers = session.call(&tool_call(1, "crash")).await;
    assert_eq!(
        answers[0]["result"]["content"][0]["text"],
        render_error(
            "crash",
            "The server process exited (exit code 3) before answering."
        )
    );
    let response = session.post(&tool_call(2, "crash")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_body(response).await["error"]["code"], -32001);
    // The client starts a new session, with a child of its own.
    let again = bridge.open().await;
    assert_ne!(again.id, session.id);
}

#[tokio::test]
async fn a_child_that_crashes_during_initialize_is_answered_at_once() {
    let bridge = Bridge::start(
        &[],
        &Server::scripted(json!({"on": {"initialize": [{"exit": 1}]}})),
    )
    .await;
    let response = post_to(bridge.process.address, INITIALIZE, &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    let answers = bounded("the crash answer", answers(response)).await;
    assert_eq!(answers[0]["id"], 0);
    assert_eq!(answers[0]["error"]["code"], -32603);
}

#[tokio::test]
async fn two_sessions_never_see_each_others_answers() {
    let echo =
        r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"$LINE"}]}}"#;
    let bridge = Bridge::start(
        &[],
        &child(json!({"tools/call echo": [send(&echo.replace("$LINE", "\\\"seen\\\""))]})),
    )
    .await;
    let (first, second) = tokio::join!(bridge.open(), bridge.open());
    assert_ne!(first.id, second.id);
    assert_eq!(bridge.children().len(), 2);
    // The same id in both sessions at once: each gets one answer, its own.
    let call = tool_call(7, "echo");
    let (a, b) = tokio::join!(first.call(&call), second.call(&call));
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    // Deleting one ends its child only.
    let children = bridge.children();
    assert_eq!(first.delete().await, StatusCode::OK);
    let response = first.post(&tool_call(8, "echo")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(second.call(&tool_call(8, "echo")).await.len(), 1);
    bounded("one child left", async {
        while bridge.children().len() != 1 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(children.contains(&bridge.children()[0]));
}

#[tokio::test]
async fn a_call_the_client_cancelled_ends_its_stream_unanswered_and_the_child_hears_of_it() {
    let late = r#"{"jsonrpc":"2.0","id":$REQUEST_ID,"result":{"content":[]}}"#;
    let heard = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cancelled $REQUEST_ID"}}"#;
    let bridge = Bridge::start(
        &[],
        // The child says it heard of the cancellation, and answers anyway.
        &child(json!({"notifications/cancelled": [send(heard), send(late)]})),
    )
    .await;
    let session = bridge.open().await;
    let request = Request::get("/mcp")
        .header("mcp-session-id", &session.id)
        .header("accept", "text/event-stream")
        .body(http_body_util::Empty::<Bytes>::new())
        .unwrap();
    let mut listening = Events::new(send_to(session.address, request).await);
    let hanging = session.post(&tool_call(1, "hang")).await;
    assert_eq!(hanging.status(), StatusCode::OK);
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    assert_eq!(session.post(cancel).await.status(), StatusCode::ACCEPTED);
    assert_eq!(answers(hanging).await, Vec::<Value>::new());
    let event = listening.next().await.expect("the child's message");
    assert_eq!(event_data(&event)["params"]["data"], "cancelled 1");
    // The late answer reaches no stream; the session serves on.
    let response = session
        .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

/// A `GET` stream of `session`.
async fn listen(session: &Session) -> Events {
    let request = Request::get("/mcp")
        .header("mcp-session-id", &session.id)
        .header("accept", "text/event-stream")
        .body(http_body_util::Empty::<Bytes>::new())
        .unwrap();
    let response = send_to(session.address, request).await;
    assert_eq!(response.status(), StatusCode::OK);
    Events::new(response)
}

#[tokio::test]
async fn an_answer_whose_id_the_child_spelled_otherwise_reaches_its_call() {
    // The TypeScript SDK's servers parse an id as a number and write it
    // back: `9` for `9.0`, `100` for `1e2`, `0` for `-0`.
    let listed = r#"{"jsonrpc":"2.0","id":$JS_ID,"result":{"tools":[]}}"#;
    let bridge = Bridge::start(&[], &child(json!({"tools/list": [send(listed)]}))).await;
    let session = bridge.open().await;
    for id in ["9.0", "1e2", "-0"] {
        let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
        let answered = bounded("the answer", session.call(&request)).await;
        assert_eq!(answered.len(), 1, "{answered:?}");
        assert_eq!(answered[0]["result"]["tools"], json!([]), "{id}");
    }
}

#[tokio::test]
async fn a_cancellation_inside_a_batch_ends_its_calls_stream() {
    // A 2025-03-26 client batches; its server answers the batch's request in
    // a batch.
    let pong = r#"[{"jsonrpc":"2.0","id":2,"result":{}}]"#;
    let bridge = Bridge::start(&[], &child(json!({"batch": [send(pong)]}))).await;
    let session = bridge.open().await;
    let hanging = session.post(&tool_call(1, "hang")).await;
    assert_eq!(hanging.status(), StatusCode::OK);
    let batch = r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]"#;
    let answered = session.call(batch).await;
    assert_eq!(
        answered,
        [json!([{"jsonrpc": "2.0", "id": 2, "result": {}}])]
    );
    let unanswered = bounded("the cancelled call's stream ends", answers(hanging)).await;
    assert_eq!(unanswered, Vec::<Value>::new());
}

#[tokio::test]
async fn progress_reaches_its_calls_stream_after_an_invalid_member_of_its_batch() {
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}"#;
    let done = r#"[{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"Invalid Request"}},{"jsonrpc":"2.0","id":1,"result":{"content":[]}}]"#;
    let bridge = Bridge::start(&[], &child(json!({"batch": [send(progress), send(done)]}))).await;
    let session = bridge.open().await;
    // With a GET stream open, a notification that is no call's goes there.
    let _listening = listen(&session).await;
    let batch = r#"[{"jsonrpc":"2.0","id":"x","method":5},{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{},"_meta":{"progressToken":"p1"}}}]"#;
    let answered = bounded("the call's stream", session.call(batch)).await;
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert_eq!(answered[0]["params"]["progressToken"], "p1");
    assert_eq!(answered[1][1]["id"], 1);
}

#[tokio::test]
async fn the_session_cap_answers_503_with_retry_after_and_frees_at_delete() {
    let bridge = Bridge::start(&["--max-sessions", "2"], &child(json!({}))).await;
    let first = bridge.open().await;
    let _second = bridge.open().await;
    let refused = bridge.open_with(&[]).await.err().expect("refused");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "5");
    assert_eq!(first.delete().await, StatusCode::OK);
    bounded("a session is free again", async {
        while bridge.open_with(&[]).await.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_hundred_sessions_opened_and_deleted_leave_no_process() {
    let bridge = Bridge::start(&[], &child(json!({}))).await;
    let mut seen = Vec::new();
    for _ in 0..100 {
        let session = bridge.open().await;
        seen.extend(bridge.children());
        assert_eq!(session.delete().await, StatusCode::OK);
    }
    seen.sort_unstable();
    seen.dedup();
    assert!(seen.len() >= 100, "{} children seen", seen.len());
    all_exited("every child exits", &seen).await;
    // An exited child stays a zombie until the bridge reaps it.
    bounded("every child is reaped", async {
        while !bridge.children().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn an_idle_session_is_ended_and_one_with_an_open_stream_is_not() {
    let bridge = Bridge::start(&["--session-idle-timeout", "1s"], &child(json!({}))).await;
    let idle = bridge.open().await;
    let listening = bridge.open().await;
    let request = Request::get("/mcp")
        .header("mcp-session-id", &listening.id)
        .header("accept", "text/event-stream")
        .body(http_body_util::Empty::<Bytes>::new())
        .unwrap();
    let stream = send_to(listening.address, request).await;
    assert_eq!(stream.status(), StatusCode::OK);
    bounded("the idle session's child exits", async {
        while bridge.children().len() != 1 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let response = idle.post(&tool_call(1, "x")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // The log line names the session by its prefix, and its server's pid.
    let log = bridge.process.log();
    let line = log
        .lines()
        .find(|line| line.contains("session idle: ending it"))
        .unwrap_or_else(|| panic!("no idle line in {log}"));
    assert!(
        line.contains(&idle.id[..8]) && !line.contains(&idle.id),
        "{line}"
    );
    assert!(line.contains("the server's pid "), "{line}");
    let response = listening
        .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    drop(stream);
}

#[tokio::test]
async fn a_session_whose_client_went_away_mid_call_ends_at_the_idle_timeout() {
    // The child answers neither the call nor an `initialize` with the id
    // "never"; each client hangs up waiting.
    let child = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize" and message["id"] != "never":
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "silent", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;
    let bridge = Bridge::start(
        &["--session-idle-timeout", "1s"],
        &Server::new("python3", &["-c", child]),
    )
    .await;
    let session = bridge.open().await;
    let hanging = session.post(&tool_call(1, "hang")).await;
    assert_eq!(hanging.status(), StatusCode::OK);
    drop(hanging);
    let unanswered = post_to(
        bridge.process.address,
        &INITIALIZE.replace("\"id\":0", "\"id\":\"never\""),
        &[],
    )
    .await;
    assert_eq!(unanswered.status(), StatusCode::OK);
    drop(unanswered);
    assert_eq!(bridge.children().len(), 2);
    bounded("both sessions end", async {
        while !bridge.children().is_empty() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let response = session.post(&tool_call(2, "x")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_servers_own_messages_go_to_the_get_stream_and_a_second_one_keeps_the_session() {
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}"#;
    let done = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[]}}"#;
    let bridge = Bridge::start(
        &[],
        &child(json!({"tools/call note": [send(note), send(done)]})),
    )
    .await;
    let session = bridge.open().await;
    let get = || {
        Request::get("/mcp")
            .header("mcp-session-id", &session.id)
            .header("accept", "text/event-stream")
            .body(http_body_util::Empty::<Bytes>::new())
            .unwrap()
    };
    let mut first = Events::new(send_to(session.address, get()).await);
    let mut second = Events::new(send_to(session.address, get()).await);
    // The second stream replaced the first, which ends; the session lives on.
    assert_eq!(first.next().await, None);
    let answers = session.call(&tool_call(1, "note")).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    let event = second.next().await.expect("the notification");
    assert_eq!(event_data(&event)["params"]["data"], "hello");
    assert_eq!(bridge.children().len(), 1);
}

#[tokio::test]
async fn an_origin_not_the_bridges_is_refused_and_a_token_is_asked_for() {
    let token = std::env::temp_dir().join(format!("bridge-token-{}", std::process::id()));
    std::fs::write(&token, "s3cret\n").unwrap();
    let bridge = Bridge::start(
        &["--auth-token-file", token.to_str().unwrap()],
        &child(json!({})),
    )
    .await;
    let own = format!("http://{}", bridge.process.address);
    let refused = bridge
        .open_with(&[
            ("authorization", "Bearer s3cret"),
            ("origin", "http://evil.example"),
        ])
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let refused = bridge
        .open_with(&[("origin", &own)])
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.headers()["www-authenticate"],
        "Bearer realm=\"mcp\""
    );
    let refused = bridge
        .open_with(&[("authorization", "Bearer s3cre")])
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    bridge
        .open_with(&[("authorization", "Bearer s3cret"), ("origin", &own)])
        .await
        .map_err(|response| response.status())
        .expect("served");
    assert!(
        bridge.children().len() == 1,
        "no child for a refused client"
    );
    std::fs::remove_file(token).unwrap();
}

#[tokio::test]
async fn listening_off_loopback_without_a_token_is_refused_at_start() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-tool-errors"))
        .args(["--listen", "0.0.0.0:0", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--auth-token-file"), "{stderr}");
}

/// What the bridge answers a call its child had not answered when the drain
/// ended.
const STOPPING: &str = "The bridge is stopping: the server did not answer within the drain (--drain-timeout); the request was cancelled.";

#[tokio::test]
async fn the_drain_answers_every_call_in_flight_and_opens_no_session() {
    let pong = r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#;
    let bridge = Bridge::start(
        &["--drain-timeout", "1s"],
        &child(json!({"ping": [send(pong)]})),
    )
    .await;
    let session = bridge.open().await;
    // A connection kept alive from before the signal, as a balancer keeps.
    let stream = tokio::net::TcpStream::connect(session.address)
        .await
        .unwrap();
    let (mut kept, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let post = |body: &str, session_id: Option<&str>| {
        let mut request = Request::post("/mcp")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(id) = session_id {
            request = request.header("mcp-session-id", id);
        }
        request
            .body(http_body_util::Full::new(Bytes::from(body.to_owned())))
            .unwrap()
    };
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    let pinged = bounded("the ping", kept.send_request(post(ping, Some(&session.id))))
        .await
        .unwrap();
    assert_eq!(answers(pinged).await.len(), 1);
    // Calls the child never answers: two tool calls, and a batch.
    let mut waiting = Vec::new();
    for body in [
        tool_call(1, "hang"),
        tool_call(2, "hang"),
        r#"[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#.to_owned(),
    ] {
        let response = session.post(&body).await;
        assert_eq!(response.status(), StatusCode::OK);
        waiting.push(response);
    }
    let mut process = bridge.process;
    process.terminate();
    process.log_shows("draining").await;
    let refused = bounded("the refusal", kept.send_request(post(INITIALIZE, None)))
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["connection"], "close");
    let mut answered = Vec::new();
    for response in waiting {
        answered.extend(answers(response).await);
    }
    assert_eq!(answered.len(), 3, "{answered:?}");
    for (answer, id) in answered[..2].iter().zip([1, 2]) {
        assert_eq!(answer["id"], id);
        assert_eq!(
            answer["result"]["content"][0]["text"],
            render_error("hang", STOPPING)
        );
    }
    assert_eq!(answered[2]["id"], 3);
    assert_eq!(answered[2]["error"]["message"], STOPPING);
    assert!(process.exited().await.success());
}

/// A stdio server in a few lines of Python: it answers `initialize`, and a
/// `tools/call` a second after it came.
pub(crate) const SLOW_CHILD: &str = r#"
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "tools/call":
        time.sleep(1)
        result = {"content": [{"type": "text", "text": "done"}]}
    else:
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "slow", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

#[tokio::test]
async fn sigterm_lets_the_call_in_flight_finish_then_ends_every_child() {
    let bridge = Bridge::start(
        &["--drain-timeout", "5s"],
        &Server::new("python3", &["-c", SLOW_CHILD]),
    )
    .await;
    let first = bridge.open().await;
    let _second = bridge.open().await;
    let children = bridge.children();
    assert_eq!(children.len(), 2);
    let response = first.post(&tool_call(1, "slow")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut process = bridge.process;
    process.terminate();
    let answers = answers(response).await;
    assert_eq!(answers[0]["result"]["content"][0]["text"], "done");
    assert!(process.exited().await.success());
    all_exited("every child exits with the bridge", &children).await;
}

#[tokio::test]
async fn sigkill_of_the_bridge_leaves_no_child_nor_a_child_of_a_shell_wrapper() {
    // The second child runs the server under `sh -c`, as launchers do: the
    // shell dies with the bridge, the server at the end of its stdin.
    for (server, wrapped) in [
        (Server::new("python3", &["-c", SLOW_CHILD]), false),
        // `; true`: the shell waits for python3 instead of becoming it.
        (
            Server::new("sh", &["-c", "python3 -c \"$0\"; true", SLOW_CHILD]),
            true,
        ),
    ] {
        let bridge = Bridge::start(&[], &server).await;
        let _first = bridge.open().await;
        let _second = bridge.open().await;
        let children = bridge.children();
        let grandchildren: Vec<u32> = children.iter().flat_map(|pid| children_of(*pid)).collect();
        assert_eq!(
            (children.len(), grandchildren.len()),
            (2, if wrapped { 2 } else { 0 })
        );
        bridge.process.signal("KILL");
        all_exited("the children exit", &children).await;
        all_exited("their children exit", &grandchildren).await;
    }
}

#[tokio::test]
async fn a_sessions_process_group_ends_with_it_after_its_first_process_exited() {
    // A server that starts a helper of its own (a browser, a language
    // server), which keeps its stdout, and exits at the end of its stdin.
    let server = Server::new(
        "sh",
        &["-c", "sleep 300 & exec python3 -c \"$0\"", SLOW_CHILD],
    );
    let bridge = Bridge::start(&[], &server).await;
    let deleted = bridge.open().await;
    let _kept = bridge.open().await;
    let groups: Vec<u32> = bridge.children().into_iter().map(process_group).collect();
    assert_eq!(groups.len(), 2);
    bounded("each server starts its helper", async {
        while groups
            .iter()
            .any(|group| running_in_group(*group).len() < 2)
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let group_ends = |group: u32| async move {
        bounded("every process of the group exits", async {
            while !running_in_group(group).is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    };
    assert_eq!(deleted.delete().await, StatusCode::OK);
    // One of the two groups ends: the deleted session's.
    bounded("the deleted session's group ends", async {
        while groups
            .iter()
            .all(|group| !running_in_group(*group).is_empty())
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let mut process = bridge.process;
    process.terminate();
    assert!(process.exited().await.success());
    for group in groups {
        group_ends(group).await;
    }
}

/// `server/discover` answered as a server of 2026-07-28 answers it.
const DISCOVERED: &str = r#"{"jsonrpc":"2.0","id":$ID,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete"}}"#;

/// `server/discover` refused, as a server of an earlier protocol refuses it.
const NO_DISCOVER: &str =
    r#"{"jsonrpc":"2.0","id":$ID,"error":{"code":-32601,"message":"Method not found"}}"#;

/// A sessionless request: a `tools/call` of `tool` with `id`, and a progress
/// token.
fn sessionless_call(id: u64, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},"_meta":{{"progressToken":"p{id}","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
    )
}

#[tokio::test]
async fn sessionless_requests_are_served_by_a_pooled_child_with_their_own_ids() {
    // The child echoes the token it was given in its progress, then answers;
    // a modern server: it answers server/discover, and would die of an
    // initialize, which the bridge must not send it.
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":$ID,"progress":1}}"#;
    let failed = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"quota exceeded"}],"isError":true}}"#;
    let bridge = Bridge::start(
        &[],
        &Server::scripted(json!({"on": {
            "server/discover": [send(DISCOVERED)],
            "initialize": [{"exit": 9}],
            "tools/call fail": [send(progress), send(failed)],
        }})),
    )
    .await;
    let address = bridge.process.address;
    // Two clients with the same id and token at once.
    let call = sessionless_call(1, "fail");
    let (first, second) = tokio::join!(post_to(address, &call, &[]), post_to(address, &call, &[]));
    for response in [first, second] {
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers().get("mcp-session-id").is_none());
        let answers = answers(response).await;
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert_eq!(answers[0]["params"]["progressToken"], "p1");
        assert_eq!(answers[1]["id"], 1);
        assert_eq!(
            answers[1]["result"]["content"][0]["text"],
            render_error("fail", "quota exceeded")
        );
    }
    assert!(!bridge.children().is_empty() && bridge.children().len() <= 2);
    // A notification without a session is accepted, and goes nowhere.
    let response = post_to(
        address,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        &[],
    )
    .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn a_server_of_an_earlier_protocol_is_initialized_by_the_bridge_and_refuses_discover() {
    let echo = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"ok"}]}}"#;
    let bridge = Bridge::start(
        &[],
        &child(json!({
            "server/discover": [send(NO_DISCOVER)],
            "tools/call echo": [send(echo)],
        })),
    )
    .await;
    let address = bridge.process.address;
    // A client's own probe gets the server's refusal: it falls back to a
    // session.
    let probe = r#"{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}}"#;
    let refused = answers(post_to(address, probe, &[]).await).await;
    assert_eq!(refused[0]["id"], 5);
    assert_eq!(refused[0]["error"]["code"], -32601);
    let served = answers(post_to(address, &sessionless_call(6, "echo"), &[]).await).await;
    assert_eq!(served[0]["id"], 6);
    assert_eq!(served[0]["result"]["content"][0]["text"], "ok");
    assert_eq!(bridge.children().len(), 1, "one pooled child served both");
}

/// A modern stdio server in a few lines of Python, as the SDKs answer: a
/// `tools/call` a second after it came, any other request at once, a batch
/// with a batch, a member that is not a request with `-32600`.
const POOLED_CHILD: &str = r#"
import json, sys, time
def answer(message):
    if not isinstance(message, dict) or "id" not in message:
        return None
    if not isinstance(message.get("method"), str):
        if "result" in message or "error" in message:
            return None
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32600, "message": "Invalid Request"}}
    if message["method"] == "tools/call":
        time.sleep(1)
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": "done"}]}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
for line in sys.stdin:
    message = json.loads(line)
    if isinstance(message, list):
        answers = [a for a in map(answer, message) if a]
        if answers:
            print(json.dumps(answers), flush=True)
    elif (a := answer(message)):
        print(json.dumps(a), flush=True)
"#;

#[tokio::test]
async fn a_sessionless_client_reaches_none_of_another_clients_calls() {
    // One pooled child, shared by both clients.
    let bridge = Bridge::start(
        &["--max-sessions", "1"],
        &Server::new("python3", &["-c", POOLED_CHILD]),
    )
    .await;
    let address = bridge.process.address;
    let theirs = post_to(address, &sessionless_call(1, "slow"), &[]).await;
    assert_eq!(theirs.status(), StatusCode::OK);
    // Another client names the bridge's own ids: in a cancellation, in a
    // member that is not a request (which the server answers with its id),
    // in an answer to a request of the server's.
    let mut batch = vec![json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})];
    for n in 1..=4 {
        let id = format!("mte-{n}");
        batch.push(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}));
        batch.push(json!({"jsonrpc": "2.0", "id": id, "method": 5}));
        batch.push(json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
    let own = answers(post_to(address, &json!(batch).to_string(), &[]).await).await;
    assert_eq!(own, [json!([{"jsonrpc": "2.0", "id": 1, "result": {}}])]);
    let answered = bounded("the first client's answer", answers(theirs)).await;
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["id"], 1);
    assert_eq!(answered[0]["result"]["content"][0]["text"], "done");
    // A client's cancellation of its own call, in the call's batch, is the
    // child's id of that call: the call's stream ends unanswered.
    let cancelled = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]"#;
    let unanswered = answers(post_to(address, cancelled, &[]).await).await;
    assert_eq!(unanswered, Vec::<Value>::new());
}

/// A stdio server in a few lines of Python that answers `tools/call huge`
/// with 100 MiB (the id first, as the Python SDK writes it), `tools/call
/// last` with 20 MiB (the id last, as the TypeScript SDK writes it), and
/// `tools/call endless` with a line that never ends (100 MiB, then
/// nothing more, the line still open).
const LARGE_CHILD: &str = r#"
import json, sys
MiB = 1024 * 1024
def write(text):
    sys.stdout.write(text)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    id = json.dumps(message["id"])
    name = message.get("params", {}).get("name")
    if name == "huge":
        write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % id)
        for _ in range(100):
            write("x" * MiB)
        write('"}]}}\n')
    elif name == "last":
        write('{"result":{"content":[{"type":"text","text":"' + "x" * (20 * MiB) + '"}]},"jsonrpc":"2.0","id":%s}\n' % id)
    elif name == "endless":
        write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % id)
        for _ in range(100):
            write("x" * MiB)
        sys.stdout.flush()
        print("endless line sent", file=sys.stderr, flush=True)
        for _ in sys.stdin:
            pass
        sys.exit(0)
    else:
        write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "large", "version": "1"}}}) + "\n")
    sys.stdout.flush()
"#;

/// The peak resident memory of `pid`, in bytes (`VmHWM`).
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .expect("a size in kB");
    kib * 1024
}

#[tokio::test]
async fn a_line_of_the_child_past_the_bound_is_dropped_as_it_comes_and_its_call_answered() {
    let bridge = Bridge::start(&[], &Server::new("python3", &["-c", LARGE_CHILD])).await;
    let session = bridge.open().await;
    for (id, tool) in [(1, "huge"), (2, "last"), (3, "endless")] {
        let answered = bounded("the call's answer", session.call(&tool_call(id, tool))).await;
        assert_eq!(answered.len(), 1, "{tool}");
        assert_eq!(answered[0]["id"], id);
        assert_eq!(
            answered[0]["result"]["content"][0]["text"],
            render_error(
                tool,
                "The server's answer is larger than 16777216 bytes (--max-message-bytes): it was not read."
            ),
        );
    }
    bridge.process.log_shows("endless line sent").await;
    let peak = peak_memory(bridge.process.pid());
    eprintln!(
        "the bridge's peak resident memory: {} MiB",
        peak / (1024 * 1024)
    );
    assert!(peak < 80 * 1024 * 1024, "{peak} bytes");
}

/// A bridge in front of the Python server `child`, which is given the
/// prefix of the files it marks its children's starts with; its first
/// pooled child busy with a call of `slow`: the bridge, the prefix, and that
/// call's stream.
async fn pool_with_a_busy_child(
    child: &str,
    name: &str,
) -> (Bridge, std::path::PathBuf, Response<Incoming>) {
    let marks = std::env::temp_dir().join(format!("{name}-{}-", std::process::id()));
    let bridge = Bridge::start(
        &[],
        &Server::new("python3", &["-c", child, marks.to_str().unwrap()]),
    )
    .await;
    let busy = post_to(bridge.process.address, &sessionless_call(1, "slow"), &[]).await;
    assert_eq!(busy.status(), StatusCode::OK);
    (bridge, marks, busy)
}

#[tokio::test]
async fn a_pooled_child_that_is_slow_to_start_holds_back_no_other_request() {
    // The second child started never becomes ready; every other answers
    // `server/discover` at once, a `tools/call slow` in 2 s and any other
    // call at once.
    let child = r#"
import json, os, sys, time
marks = sys.argv[1]
def claim(n):
    try:
        os.close(os.open(marks + str(n), os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False
if not claim(1) and claim(2):
    for line in sys.stdin:
        pass
    sys.exit(0)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message.get("params", {}).get("name") == "slow":
        time.sleep(2)
    result = {"content": [{"type": "text", "text": "ok"}]} if message["method"] == "tools/call" else {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;
    let (bridge, marks, _busy) = pool_with_a_busy_child(child, "pool-marks").await;
    let address = bridge.process.address;
    // The first child busy: this request starts the second, which never
    // becomes ready.
    let waiting = tokio::spawn(async move {
        post_to(address, &sessionless_call(2, "echo"), &[]).await;
    });
    let second = format!("{}2", marks.display());
    bounded("the second child starts", async {
        while !Path::new(&second).exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // Served by the first child once it is free, or by a third: long before
    // the second child's start is given up (30 s), or its client (20 s).
    let served = tokio::time::timeout(
        Duration::from_secs(10),
        post_to(address, &sessionless_call(3, "echo"), &[]),
    )
    .await
    .expect("served while a child starts");
    let served = answers(served).await;
    assert_eq!(served[0]["id"], 3);
    assert_eq!(served[0]["result"]["content"][0]["text"], "ok");
    waiting.abort();
    for n in 1..=2 {
        let _ = std::fs::remove_file(format!("{}{n}", marks.display()));
    }
}

#[tokio::test]
async fn a_pooled_child_that_never_becomes_ready_is_given_up_with_one_line_and_replaced() {
    // The first child started exits before it answers anything.
    let child = r#"
import json, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_CREAT | os.O_EXCL))
    sys.exit(3)
except FileExistsError:
    pass
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        result = {"content": [{"type": "text", "text": "ok"}]} if message["method"] == "tools/call" else {}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;
    let mark = std::env::temp_dir().join(format!("pool-first-{}", std::process::id()));
    let bridge = Bridge::start(
        &[],
        &Server::new("python3", &["-c", child, mark.to_str().unwrap()]),
    )
    .await;
    let address = bridge.process.address;
    let refused = post_to(address, &sessionless_call(1, "echo"), &[]).await;
    assert_eq!(refused.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let given_up = "a server started for sessionless clients did not become ready";
    bridge.process.log_shows(given_up).await;
    let served = answers(post_to(address, &sessionless_call(2, "echo"), &[]).await).await;
    assert_eq!(served[0]["result"]["content"][0]["text"], "ok");
    assert_eq!(bridge.process.log().matches(given_up).count(), 1);
    let _ = std::fs::remove_file(mark);
}

#[tokio::test]
async fn a_busy_pooled_child_takes_a_request_while_another_child_starts_beside_it() {
    // The first child started serves at once, each call on a thread of its
    // own (`slow` for 10 s); every later one takes 10 s to start, and marks
    // when it is ready.
    let child = r#"
import json, os, sys, threading, time
marks = sys.argv[1]
try:
    os.close(os.open(marks + "first", os.O_CREAT | os.O_EXCL))
except FileExistsError:
    print("a later child starts", file=sys.stderr, flush=True)
    time.sleep(10)
    open(marks + "ready", "w").close()
lock = threading.Lock()
def answer(message):
    if message.get("params", {}).get("name") == "slow":
        time.sleep(10)
    result = {"content": [{"type": "text", "text": "ok"}]} if message["method"] == "tools/call" else {}
    with lock:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        threading.Thread(target=answer, args=(message,), daemon=True).start()
"#;
    let (bridge, marks, busy) = pool_with_a_busy_child(child, "pool-busy").await;
    let address = bridge.process.address;
    let served = answers(post_to(address, &sessionless_call(2, "echo"), &[]).await).await;
    let later_ready = Path::new(&format!("{}ready", marks.display())).exists();
    assert_eq!(served[0]["id"], 2);
    assert_eq!(served[0]["result"]["content"][0]["text"], "ok");
    assert!(
        !later_ready,
        "the request waited for the start of another child"
    );
    // The start happens beside the calls in flight.
    bridge.process.log_shows("a later child starts").await;
    drop(busy);
    for mark in ["first", "ready"] {
        let _ = std::fs::remove_file(format!("{}{mark}", marks.display()));
    }
}
