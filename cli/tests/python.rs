//! The wrapper in front of a server on the official Python SDK (PyPI `mcp`,
//! its `MCPServer` class): cli/tests/servers/python_server.py.

use mcp_tool_errors::render_error;
use serde_json::{Value, json};

use crate::support::{Server, Session, installed, result_text, tool_call};

/// The server, if scripts/install-test-servers.sh installed the SDK.
pub(crate) fn python_server() -> Option<Server> {
    let python = installed("python/bin/python", "the Python MCP SDK")?;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/servers/python_server.py"
    );
    Some(Server::new(python, &[script]))
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_tool_errors_become_the_element_with_the_sdks_own_text() {
    let Some(server) = python_server() else {
        return;
    };
    let (mut bare, mut wrapped) = (Session::bare(&server), Session::wrapped(&[], &server));
    bare.initialize().await;
    wrapped.initialize().await;
    // The SDK keeps the message of its own ToolError and hides that of any
    // other exception behind the tool's name.
    for (id, tool, says) in [
        (1, "tool_error", "/etc/missing"),
        (2, "plain_exception", "plain_exception"),
    ] {
        let call = tool_call(id, tool, json!({"path": "/etc/missing"}));
        let bare_text = result_text(bare.exchange(&call).await.last().expect("an answer"));
        let wrapped_text = result_text(wrapped.exchange(&call).await.last().expect("an answer"));
        assert!(bare_text.contains(says), "{bare_text}");
        assert_eq!(wrapped_text, render_error(tool, &bare_text));
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_tools_list_successes_and_progress_are_byte_identical_through_the_wrapper() {
    let Some(server) = python_server() else {
        return;
    };
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        tool_call(2, "echo", json!({"text": "héllo \"world\""})),
        json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "p-1"}},
        }),
    ];
    let mut transcripts = Vec::new();
    for mut session in [Session::bare(&server), Session::wrapped(&[], &server)] {
        let mut lines = session.initialize().await;
        for request in &requests {
            lines.extend(session.exchange(request).await);
        }
        transcripts.push(lines);
    }
    let progress = transcripts[0]
        .iter()
        .filter(|line| line.contains("notifications/progress"));
    assert_eq!(progress.count(), 3, "{:#?}", transcripts[0]);
    assert_eq!(transcripts[0], transcripts[1]);
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_invalid_params_of_a_listed_tool_become_a_tool_error_with_the_option() {
    let Some(server) = python_server() else {
        return;
    };
    let call = tool_call(2, "positive", json!({"count": 0}));
    let mut bare = Session::bare(&server);
    bare.initialize().await;
    let refused = bare.exchange(&call).await.pop().expect("an answer");
    let refused_value: Value = serde_json::from_str(&refused).expect("JSON");
    assert_eq!(refused_value["error"]["code"], -32602, "{refused}");

    let mut wrapped = Session::wrapped(&["--invalid-params-as-tool-errors"], &server);
    wrapped.initialize().await;
    wrapped
        .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let answer = wrapped.exchange(&call).await.pop().expect("an answer");
    assert_eq!(
        result_text(&answer),
        render_error(
            "positive",
            "Invalid params\ncount must be at least 1, got 0"
        )
    );

    let mut without = Session::wrapped(&[], &server);
    without.initialize().await;
    without
        .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(
        without.exchange(&call).await.pop().expect("an answer"),
        refused
    );
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_crash_answers_the_call_in_flight_and_the_wrapper_exits_with_status_3() {
    let Some(server) = python_server() else {
        return;
    };
    let mut session = Session::wrapped(&[], &server);
    session.initialize().await;
    let answer = session
        .exchange(&tool_call(1, "crash", json!({})))
        .await
        .pop()
        .expect("an answer");
    assert_eq!(
        result_text(&answer),
        render_error(
            "crash",
            "The server process exited (exit code 3) before answering."
        )
    );
    assert_eq!(session.line_or_eof().await, None);
    assert_eq!(session.wait().await.code(), Some(3));
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_hang_is_answered_at_its_timeout_and_the_server_is_told_to_cancel() {
    let Some(server) = python_server() else {
        return;
    };
    let mut session = Session::wrapped(
        &["--tool-timeout", "60s", "--tool-timeout-for", "sleep=300ms"],
        &server,
    );
    session.initialize().await;
    let answer = session
        .exchange(&tool_call(1, "sleep", json!({"seconds": 30})))
        .await
        .pop()
        .expect("an answer");
    let text = result_text(&answer);
    assert!(text.starts_with("<error tool=\"sleep\">\n"), "{text}");
    assert!(text.contains("did not finish within"), "{text}");
    session
        .stderr_shows("python_server: sleep was cancelled")
        .await;
    // Still serving: the next call is answered.
    let lines = session
        .exchange(&tool_call(2, "echo", json!({"text": "still here"})))
        .await;
    assert_eq!(result_text(lines.last().expect("an answer")), "still here");
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_a_call_the_client_cancels_is_cancelled_at_the_server_and_never_answered() {
    let Some(server) = python_server() else {
        return;
    };
    let mut session = Session::wrapped(&["--tool-timeout", "1s"], &server);
    session.initialize().await;
    session
        .send(&tool_call(1, "sleep", json!({"seconds": 30})).to_string())
        .await;
    // Sent once the call runs: the server logs nothing for a call it has not
    // started yet, so a cancellation sent at once may not show.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    session
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    session
        .stderr_shows("python_server: sleep was cancelled")
        .await;
    // Past the timeout, the next line is the echo's answer: nothing for 1.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let lines = session
        .exchange(&tool_call(2, "echo", json!({"text": "next"})))
        .await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(result_text(&lines[0]), "next");
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_a_second_sigint_stops_the_server_and_answers_the_call_in_flight() {
    let Some(server) = python_server() else {
        return;
    };
    let mut session = Session::wrapped(&[], &server);
    session.initialize().await;
    session
        .send(&tool_call(1, "sleep", json!({"seconds": 30})).to_string())
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    crate::support::signal(session.pid(), "INT");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    crate::support::signal(session.pid(), "INT");
    let text = result_text(&session.line().await);
    assert!(
        text.starts_with("<error tool=\"sleep\">\nThe server process exited ("),
        "{text}"
    );
    assert_eq!(session.line_or_eof().await, None);
    session.wait().await;
}

/// A call whose arguments hold `NaN`: no JSON to the wrapper, a float to the
/// SDK, which runs the tool. Its error must not reach the client without the
/// layer: the wrapper answers the line `-32700` and the tool never runs.
#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn python_a_call_holding_nan_runs_no_tool_without_the_layer() {
    let Some(server) = python_server() else {
        return;
    };
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tool_error","arguments":{"path":"/etc/missing","n":NaN}}}"#;
    let mut bare = Session::bare(&server);
    bare.initialize().await;
    bare.send(call).await;
    let direct = bare.until_answer(&json!(1)).await.pop().expect("an answer");
    assert!(
        direct.contains("\"isError\":true"),
        "the SDK runs it: {direct}"
    );

    let mut wrapped = Session::wrapped(&[], &server);
    wrapped.initialize().await;
    wrapped.send(call).await;
    let answer: Value = serde_json::from_str(&wrapped.line().await).unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // The session goes on.
    let next = tool_call(2, "tool_error", json!({"path": "/etc/missing"}));
    let text = result_text(wrapped.exchange(&next).await.last().expect("an answer"));
    assert!(text.starts_with("<error tool=\"tool_error\">"), "{text}");
}
