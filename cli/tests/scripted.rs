//! The wrapper against the scripted example server: the relay's own behaviour,
//! message by message, over real pipes.

use mcp_tool_errors::render_error;
use serde_json::{Value, json};

use crate::support::{GOT, Server, Session, result_text, send, tool_call};

#[tokio::test]
async fn everything_but_tool_call_answers_passes_byte_for_byte_both_ways() {
    let ping_answer = r#"{"result":{},  "id":$ID ,"jsonrpc":"2.0"}"#;
    let server_batch = r#"[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"é"}} ,{"method":"notifications/tools/list_changed","jsonrpc":"2.0"}]"#;
    let sampling = r#"{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}"#;
    let progress = r#"{ "jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1} }"#;
    let success = r#"{"result":{"content":[{"type":"text","text":"hi"}],"isError":false},"jsonrpc":"2.0","id":$ID}"#;
    let server = Server::scripted(json!({
        "on": {
            "ping": [send(server_batch), send(ping_answer)],
            "tools/call echo": [send(progress), send(sampling), send(success)],
            "response": [send(GOT)],
            "notifications/roots/list_changed": [send(GOT)],
            "batch": [send(GOT)],
        },
    }));
    let mut session = Session::wrapped(&[], &server);

    let lines = session
        .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(
        lines,
        [server_batch.to_owned(), ping_answer.replace("$ID", "1")]
    );

    let lines = session.exchange(&tool_call(2, "echo", json!({}))).await;
    assert_eq!(
        lines,
        [
            progress.to_owned(),
            sampling.to_owned(),
            success.replace("$ID", "2")
        ]
    );

    // The client's side: a response to the child's request, a notification and
    // a batch without requests go to the child as they are.
    for client_line in [
        r#"{"id":"s-1" , "jsonrpc":"2.0","result":{"role":"assistant"}}"#,
        r#"{"method":"notifications/roots/list_changed","jsonrpc":"2.0"}"#,
        r#"[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]"#,
    ] {
        session.send(client_line).await;
        let got = session.line().await;
        assert_eq!(got, GOT.replace("$LINE", client_line));
    }
    session.close_stdin();
    assert!(session.wait().await.success());
}

#[tokio::test]
async fn a_blank_line_from_the_client_is_no_message_and_gets_no_answer() {
    let ping_answer = r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#;
    let server = Server::scripted(json!({"on": {"ping": [send(ping_answer)]}}));
    let mut session = Session::wrapped(&[], &server);
    for (id, blank) in [(1, ""), (2, "  \t"), (3, "\r")] {
        session.send(blank).await;
        let lines = session
            .exchange(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        assert_eq!(
            lines,
            [ping_answer.replace("$ID", &id.to_string())],
            "after {blank:?}"
        );
    }
}

#[tokio::test]
async fn tool_errors_are_rewrapped_and_answers_the_layer_leaves_alone_keep_their_bytes() {
    let error = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"no such change"}],"isError":true}}"#;
    let rendered = r#"{"result":{"isError":true,"content":[{"type":"text","text":"<error tool=\"already\">\nx\n</error>"}]} , "id":$ID,"jsonrpc":"2.0"}"#;
    let server = Server::scripted(json!({
        "on": {"tools/call fail": [send(error)], "tools/call already": [send(rendered)]},
    }));
    let mut session = Session::wrapped(&[], &server);

    let lines = session.exchange(&tool_call(1, "fail", json!({}))).await;
    assert_eq!(
        result_text(&lines[0]),
        render_error("fail", "no such change")
    );

    let lines = session.exchange(&tool_call(2, "already", json!({}))).await;
    assert_eq!(lines, [rendered.replace("$ID", "2")]);
}

#[tokio::test]
async fn redact_secrets_and_max_error_bytes_reach_the_layer() {
    let error = format!(
        r#"{{"jsonrpc":"2.0","id":$ID,"result":{{"content":[{{"type":"text","text":"connect postgres://app:hunter2@db/prod failed: {}"}}],"isError":true}}}}"#,
        "x".repeat(200)
    );
    let server = Server::scripted(json!({"on": {"tools/call connect": [send(&error)]}}));
    let call = tool_call(1, "connect", json!({}));

    let mut plain = Session::wrapped(&[], &server);
    let text = result_text(&plain.exchange(&call).await[0]);
    assert!(
        text.contains("hunter2") && !text.contains("[truncated"),
        "{text}"
    );

    let options = ["--redact-secrets", "--max-error-bytes", "64"];
    let mut sanitized = Session::wrapped(&options, &server);
    let text = result_text(&sanitized.exchange(&call).await[0]);
    assert!(text.starts_with("<error tool=\"connect\">\n"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("[REDACTED]"), "{text}");
    assert!(text.contains("[truncated"), "{text}");
}

/// A call sent with the id `9.0` and answered with `9`, as the TypeScript SDK's
/// servers write a number back (server-everything: `9.0` to `9`): the same call, its error rewrapped and
/// redacted, and answered once (not again at its timeout).
#[tokio::test]
async fn an_answer_with_another_spelling_of_the_calls_id_is_its_answer_once() {
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let error = format!(
        r#"{{"jsonrpc":"2.0","id":9,"result":{{"content":[{{"type":"text","text":"boom: token {secret}"}}],"isError":true}}}}"#
    );
    let ping = r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#;
    let server =
        Server::scripted(json!({"on": {"tools/call fail": [send(&error)], "ping": [send(ping)]}}));
    let call = r#"{"jsonrpc":"2.0","id":9.0,"method":"tools/call","params":{"name":"fail","arguments":{}}}"#;
    for options in [
        &["--redact-secrets"][..],
        &["--redact-secrets", "--tool-timeout", "300ms"],
    ] {
        let mut session = Session::wrapped(options, &server);
        session.send(call).await;
        let text = result_text(&session.line().await);
        assert!(
            text.starts_with("<error tool=\"fail\">\n"),
            "{options:?}: {text}"
        );
        assert!(
            !text.contains(secret) && text.contains("[REDACTED]"),
            "{options:?}: {text}"
        );
        // Past the timeout: the next line is the ping's answer, not a second
        // answer to the call.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let lines = session
            .exchange(&json!({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
            .await;
        assert_eq!(
            lines,
            [r#"{"jsonrpc":"2.0","id":10,"result":{}}"#],
            "{options:?}"
        );
    }
}

#[tokio::test]
async fn a_tasks_error_result_is_rewrapped_where_it_reaches_the_client() {
    let handle = r#"{"jsonrpc":"2.0","id":$ID,"result":{"task":{"taskId":"t-1","ttl":60000,"status":"working"}}}"#;
    let failed = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"compile failed"}],"isError":true}}"#;
    let server = Server::scripted(json!({
        "on": {"tools/call build": [send(handle)], "tasks/result": [send(failed)]},
    }));
    let mut session = Session::wrapped(&[], &server);

    let mut call = tool_call(1, "build", json!({}));
    call["params"]["task"] = json!({"ttl": 60000});
    let lines = session.exchange(&call).await;
    assert_eq!(lines, [handle.replace("$ID", "1")]);
    let result =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": "t-1"}});
    let lines = session.exchange(&result).await;
    assert_eq!(
        result_text(&lines[0]),
        render_error("build", "compile failed")
    );
}

#[tokio::test]
async fn a_batch_of_requests_is_answered_as_a_batch_through_the_layer() {
    let answer = r#"[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}]"#;
    let server = Server::scripted(json!({"on": {"batch": [send(answer)]}}));
    let mut session = Session::wrapped(&[], &server);

    let batch =
        json!([tool_call(1, "explode", json!({})), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]);
    session.send(&batch.to_string()).await;
    let answer: Value = serde_json::from_str(&session.line().await).expect("a JSON batch");
    assert_eq!(answer[0], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(
        answer[1]["result"]["content"][0]["text"],
        render_error("explode", "boom")
    );
}

#[tokio::test]
async fn a_hung_call_is_answered_at_its_timeout_cancelled_at_the_child_and_its_late_answer_dropped()
{
    let late = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"late"}]}}"#;
    let server = Server::scripted(json!({
        "on": {
            // The child hears of the cancellation, says so, and answers anyway.
            "notifications/cancelled": [send(GOT), send(late)],
            "ping": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)],
        },
    }));
    let mut session = Session::wrapped(&["--tool-timeout", "200ms"], &server);

    let lines = session.exchange(&tool_call(1, "hang", json!({}))).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    let text = result_text(&lines[0]);
    assert!(text.starts_with("<error tool=\"hang\">\n"), "{text}");
    let got: Value = serde_json::from_str(&session.line().await).expect("JSON");
    assert_eq!(got["params"]["method"], "notifications/cancelled");
    assert_eq!(got["params"]["params"]["requestId"], 1);
    // The late answer was dropped: the next line is the ping's answer.
    let lines = session
        .exchange(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]);
    session.stderr_shows("late answer").await;
}

#[tokio::test]
async fn a_line_from_the_child_that_is_not_json_is_logged_and_not_forwarded() {
    let server = Server::scripted(json!({
        "on": {"ping": [send("garbage {"), send(""), send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)]},
    }));
    let mut session = Session::wrapped(&[], &server);

    let lines = session
        .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]);
    session.stderr_shows("not JSON").await;
    assert!(session.stderr().contains("garbage {"));
}

#[tokio::test]
async fn a_crash_answers_every_request_in_flight_and_the_wrapper_exits_with_its_status() {
    let server = Server::scripted(json!({"on": {"tools/call die": [{"exit": 3}]}}));
    let mut session = Session::wrapped(&[], &server);

    session
        .send(&tool_call(1, "slow", json!({})).to_string())
        .await;
    session
        .send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#)
        .await;
    session
        .send(&tool_call(3, "die", json!({})).to_string())
        .await;
    let mut answers: Vec<Value> = Vec::new();
    while let Some(line) = session.line_or_eof().await {
        answers.push(serde_json::from_str(&line).expect("JSON"));
    }
    answers.sort_by_key(|answer| answer["id"].to_string());
    let message = "The server process exited (exit code 3) before answering.";
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["id"], "p");
    assert_eq!(answers[0]["error"]["code"], -32603);
    assert_eq!(answers[0]["error"]["message"], message);
    assert_eq!(
        answers[1]["result"]["content"][0]["text"],
        render_error("slow", message)
    );
    assert_eq!(answers[1]["result"]["isError"], true);
    assert_eq!(
        answers[2]["result"]["content"][0]["text"],
        render_error("die", message)
    );
    assert_eq!(session.wait().await.code(), Some(3));
}

#[tokio::test]
async fn the_end_of_stdin_closes_the_childs_and_the_wrapper_exits_with_its_status() {
    let server = Server::scripted(json!({"eof_exit": 7}));
    let mut session = Session::wrapped(&[], &server);
    session.close_stdin();
    assert_eq!(session.line_or_eof().await, None);
    assert_eq!(session.wait().await.code(), Some(7));
}

#[tokio::test]
async fn a_child_that_outlives_the_end_of_stdin_is_killed_after_the_grace_period() {
    let server = Server::scripted(json!({"eof_hang": true}));
    let mut session = Session::wrapped(&[], &server);
    session.close_stdin();
    // The grace period is 5 s of real time: the child is a separate process.
    assert_eq!(session.wait().await.code(), Some(128 + 9));
    let stderr = session.stderr_to_end().await;
    assert!(stderr.contains("killing it"), "{stderr}");
}

#[tokio::test]
async fn sigterm_is_forwarded_to_the_child_and_its_death_is_the_wrappers_status() {
    let server = Server::scripted(
        json!({"on": {"ping": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)]}}),
    );
    let mut session = Session::wrapped(&[], &server);
    // Answered: the wrapper has its signal handlers and the child is running.
    session
        .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    let pid = session.pid().to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(kill.expect("kill runs").success());
    // The wrapper caught it (no status of its own) and the child died of it.
    assert_eq!(session.wait().await.code(), Some(128 + 15));
}

#[tokio::test]
async fn invalid_params_of_a_listed_tool_become_a_tool_error_with_the_option() {
    let invalid = r#"{"jsonrpc":"2.0","id":$ID,"error":{"code":-32602,"message":"Invalid params","data":"query: required"}}"#;
    let script = json!({
        "on": {
            "tools/list": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{"tools":[{"name":"search","inputSchema":{"type":"object"}}]}}"#)],
            "tools/call": [send(invalid)],
        },
    });
    let server = Server::scripted(script);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});

    let mut session = Session::wrapped(&["--invalid-params-as-tool-errors"], &server);
    // Before tools/list, no tool is known: nothing is converted.
    let lines = session.exchange(&tool_call(2, "search", json!({}))).await;
    assert_eq!(lines, [invalid.replace("$ID", "2")]);
    session.exchange(&list).await;
    let lines = session.exchange(&tool_call(3, "search", json!({}))).await;
    let answer: Value = serde_json::from_str(&lines[0]).expect("JSON");
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("search", "Invalid params\nquery: required")
    );
    let lines = session.exchange(&tool_call(4, "ghost", json!({}))).await;
    assert_eq!(lines, [invalid.replace("$ID", "4")]);

    let mut without = Session::wrapped(&[], &server);
    without.exchange(&list).await;
    let lines = without.exchange(&tool_call(3, "search", json!({}))).await;
    assert_eq!(lines, [invalid.replace("$ID", "3")]);
}

#[tokio::test]
async fn an_unknown_option_a_bad_duration_or_a_missing_command_is_refused() {
    let usage = "Usage: mcp-tool-errors [OPTIONS] COMMAND [ARGS]...";
    for (args, says) in [
        (&["--no-such-option", "--", "true"][..], usage),
        (
            &["--tool-timeout", "5", "--", "true"][..],
            "`5` is not a duration",
        ),
        (
            &["--tool-timeout-for", "search", "--", "true"][..],
            "is not NAME=DURATION",
        ),
        (&[][..], usage),
    ] {
        let output = tokio::process::Command::new(crate::support::wrapper())
            .args(args)
            .output()
            .await
            .expect("the wrapper runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[tokio::test]
async fn help_names_every_option_and_version_says_the_crates() {
    let run = |arg: &'static str| async move {
        let output = tokio::process::Command::new(crate::support::wrapper())
            .arg(arg)
            .output()
            .await
            .expect("the wrapper runs");
        assert!(output.status.success(), "{arg}");
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    let help = run("--help").await;
    for option in [
        "--tool-timeout <DURATION>",
        "--tool-timeout-for <NAME=DURATION>",
        "--max-error-bytes <N>",
        "--redact-secrets",
        "--invalid-params-as-tool-errors",
    ] {
        assert!(help.contains(option), "{option} is not in:\n{help}");
    }
    let version = run("--version").await;
    assert_eq!(
        version.trim(),
        concat!("mcp-tool-errors ", env!("CARGO_PKG_VERSION"))
    );
}

#[tokio::test]
async fn a_command_that_cannot_start_is_reported_with_status_127() {
    let output = tokio::process::Command::new(crate::support::wrapper())
        .args(["--", "/nonexistent/mcp-server"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("the wrapper runs");
    assert_eq!(output.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot start `/nonexistent/mcp-server`"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_line_of_the_server_past_max_message_bytes_is_dropped_and_its_call_answered() {
    // The id last, as the TypeScript SDK writes it, in a line of 2 KiB; a log
    // line as long, which answers nothing; then a line within the bound.
    let text = "x".repeat(2048);
    let long = format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{text}"}}]}},"jsonrpc":"2.0","id":$ID}}"#
    );
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"{text}"}}}}"#
    );
    // Its `id` written with an escape, which names the same member.
    let escaped = long.replace(r#""id""#, r#""\u0069d""#);
    let short = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[]}}"#;
    let server = Server::scripted(json!({"on": {
        "tools/call long": [send(&note), send(&long)],
        "tools/call escaped": [send(&escaped)],
        "tools/call short": [send(short)],
    }}));
    let mut session = Session::wrapped(&["--max-message-bytes", "1024"], &server);
    for (id, tool) in [(1, "long"), (3, "escaped")] {
        let lines = session.exchange(&tool_call(id, tool, json!({}))).await;
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(
            result_text(&lines[0]),
            render_error(
                tool,
                "The server's answer is larger than 1024 bytes (--max-message-bytes): it was not read."
            )
        );
    }
    let lines = session.exchange(&tool_call(2, "short", json!({}))).await;
    assert_eq!(lines, [short.replace("$ID", "2")]);
    session
        .stderr_shows("dropped a line of the server longer than --max-message-bytes")
        .await;
}

/// A request of the server's own past the bound, sent while the client's call
/// with the same id is in flight (server and client count their ids apart, so
/// they meet): the server gets an error to its request, the client's call its
/// one real answer. The second request names its `id` and `method` with
/// escapes, which say the same members.
#[tokio::test]
async fn a_request_of_the_server_past_max_message_bytes_is_refused_to_it_and_answers_no_call() {
    let text = "x".repeat(2048);
    let sampling = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{{"messages":[{{"role":"user","content":{{"type":"text","text":"{text}"}}}}],"maxTokens":1}}}}"#
    );
    let escaped = format!(
        r#"{{"jsonrpc":"2.0","\u0069d":2,"params":{{"text":"{text}"}},"\u006dethod":"sampling/createMessage"}}"#
    );
    let real = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"the real answer"}]}}"#;
    let server = Server::scripted(json!({"on": {
        "tools/call first": [send(&sampling), send(real)],
        "tools/call second": [send(&escaped), send(real)],
        "response": [send(GOT)],
    }}));
    let mut session = Session::wrapped(&["--max-message-bytes", "1024"], &server);
    for (id, tool) in [(1, "first"), (2, "second")] {
        let lines = session.exchange(&tool_call(id, tool, json!({}))).await;
        assert_eq!(lines, [real.replace("$ID", &id.to_string())], "{tool}");
        let got: Value = serde_json::from_str(&session.line().await).unwrap();
        assert_eq!(
            got["params"],
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603,
                "message": "The request is larger than 1024 bytes (--max-message-bytes): it was not read."
            }}),
            "{tool}"
        );
    }
}

/// A server that reads one request, then never reads its stdin again, and
/// sends requests past the bound: the wrapper's errors to them fill the
/// stdin's pipe and then its bounded queue; the server's later lines still
/// reach the client, and the client's end ends the wrapper, which stops the
/// server after its grace.
const STOPS_READING: &str = r#"
import json, sys, time
request = json.loads(sys.stdin.readline())
text = "x" * 2048
for n in range(2000):
    print(json.dumps({"jsonrpc": "2.0", "id": "r%d" % n, "method": "sampling/createMessage", "params": {"text": text}}), flush=True)
print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "still relayed"}}), flush=True)
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}}), flush=True)
time.sleep(60)
"#;

#[tokio::test]
async fn a_server_that_stops_reading_stalls_neither_its_output_nor_the_wrappers_exit() {
    let server = Server::new("python3", &["-c", STOPS_READING]);
    let mut session = Session::wrapped(&["--max-message-bytes", "1024"], &server);
    let lines = session.exchange(&tool_call(1, "any", json!({}))).await;
    let data: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .collect();
    assert_eq!(data.len(), 2, "{lines:?}");
    assert_eq!(data[0]["params"]["data"], "still relayed");
    assert_eq!(data[1]["result"]["content"], json!([]));
    session.close_stdin();
    // The grace is 5 s; the server would sleep a minute.
    let status = session.wait().await;
    assert!(!status.success() || status.code() == Some(0), "{status:?}");
}

/// A log line past the bound that quotes an answer to the client's call: not
/// JSON, so it answers nothing (as it would within the bound), and the call
/// gets its one real answer.
#[tokio::test]
async fn a_line_of_the_server_past_max_message_bytes_that_is_not_json_answers_no_call() {
    let text = "x".repeat(2048);
    let logged = format!(r#"DEBUG sent {{"jsonrpc":"2.0","id":$ID,"result":{{"text":"{text}"}}}}"#);
    let trailing = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{text}"}}}} {{"jsonrpc":"2.0","id":$ID,"result":{{}}}}"#
    );
    let real = r#"{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"the real answer"}]}}"#;
    let server = Server::scripted(json!({"on": {
        "tools/call logged": [send(&logged), send(real)],
        "tools/call trailing": [send(&trailing), send(real)],
    }}));
    let mut session = Session::wrapped(&["--max-message-bytes", "1024"], &server);
    for (id, tool) in [(1, "logged"), (2, "trailing")] {
        let lines = session.exchange(&tool_call(id, tool, json!({}))).await;
        assert_eq!(lines, [real.replace("$ID", &id.to_string())], "{tool}");
    }
}

/// A batch of the server's requests past the bound whose errors make a line
/// longer than what the wrapper queues for the child's stdin: sent all the
/// same, as nothing else waits. Its first request passes the bound, so that
/// the errors go as one batch.
#[tokio::test]
async fn a_batch_of_requests_of_the_server_past_max_message_bytes_gets_its_errors_however_many() {
    let mut batch: Vec<Value> = (1..1000)
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "roots/list"}))
        .collect();
    batch.insert(
        0,
        json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list", "params": {"x": "x".repeat(2048)}}),
    );
    let got = r#"{"jsonrpc":"2.0","method":"test/got","params":{"a":"batch"}}"#;
    let server = Server::scripted(json!({"on": {
        "tools/call batch": [send(&json!(batch).to_string())],
        "batch": [send(got)],
    }}));
    let mut session = Session::wrapped(&["--max-message-bytes", "1024"], &server);
    session
        .send(&tool_call(1, "batch", json!({})).to_string())
        .await;
    assert_eq!(session.line().await, got);
}

/// A server that sends requests past the bound and stops reading its stdin:
/// the errors to them wait and the rest are not sent, which is said; they
/// leave room in its pipe for the client's lines, and the end of the
/// client's stdin ends it at the grace period.
#[tokio::test]
async fn a_server_that_reads_no_errors_to_its_requests_past_the_bound_still_ends_with_stdin() {
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{{"x":"{}"}}}}"#,
        "x".repeat(2048)
    );
    let server = Server::scripted(json!({"on": {
        "tools/call flood": [{"repeat": request, "times": 3000}, {"park": true}],
    }}));
    let mut session = Session::wrapped(&["--max-message-bytes", "1024"], &server);
    session
        .send(&tool_call(1, "flood", json!({})).to_string())
        .await;
    session
        .stderr_shows("not answered: a request of the server longer than --max-message-bytes")
        .await;
    session
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    session.close_stdin();
    // The grace period is 5 s of real time: the child is a separate process.
    assert_eq!(session.wait().await.code(), Some(128 + 9));
}
