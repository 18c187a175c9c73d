//! What the child writes: lines that are not JSON, and answers the layer
//! rewrites.

use std::time::Instant;

use serde_json::json;

use crate::support::{Server, Session, send};

/// How the wrapper's log line for a line that is not JSON begins.
const NOT_JSON: &str = "mcp-tool-errors: not forwarded: the server wrote a line that is not JSON";

#[tokio::test]
async fn a_child_flooding_stdout_with_text_gets_one_log_line_a_second_and_a_count() {
    const FLOOD: u64 = 200_000;
    let server = Server::scripted(json!({
        "on": {"ping": [
            {"repeat": "this is not JSON", "times": FLOOD},
            send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#),
        ]},
    }));
    let mut session = Session::wrapped(&[], &server);
    let started = Instant::now();
    let lines = session
        .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(lines, [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]);
    session.close_stdin();
    session.wait().await;
    let stderr = session.stderr_to_end().await;
    let seconds = started.elapsed().as_secs();
    let logged: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with(NOT_JSON))
        .collect();
    // A line a second and the count after it, however slow this machine is.
    assert!(
        logged.len() as u64 <= 2 * (seconds + 1),
        "{} lines in {seconds} s:\n{}",
        logged.len(),
        logged[..logged.len().min(10)].join("\n")
    );
    // Every line of the flood is shown or counted.
    let counted: u64 = logged
        .iter()
        .map(|line| match line.strip_suffix(" more, not shown") {
            Some(count) => count.rsplit(' ').next().unwrap().parse::<u64>().unwrap(),
            None => 1,
        })
        .sum();
    assert_eq!(counted, FLOOD, "{stderr}");
}

/// The child's line with its error text `"boom"` replaced by `text`, as JSON.
fn with_text(line: &str, text: &str) -> String {
    let quoted = serde_json::to_string(text).expect("a string serializes");
    assert_eq!(line.matches(r#""boom""#).count(), 1, "{line}");
    line.replace(r#""boom""#, &quoted)
}

#[tokio::test]
async fn a_rewritten_answer_keeps_the_childs_key_order_and_every_other_byte() {
    use mcp_tool_errors::render_error;

    use crate::support::tool_call;

    let error = r#"{"result":{"isError":true,"content":[{"type":"text", "text":"boom","annotations":{"priority":1.50}}],"zeta":1,"alpha":"\u00e9"} ,"jsonrpc":"2.0","id":$ID}"#;
    let batch = r#"[ {"id":2,"result":{"zeta":[],"isError":true,"content":[{"text":"boom","type":"text"}]},"jsonrpc":"2.0"},{"jsonrpc":"2.0","id":3,"result":{"b":1,"a":2}} ]"#;
    let task_error = r#"{"jsonrpc":"2.0","id":$ID,"result":{"isError":true,"content":[{"type":"text","text":"boom"}],"_meta":{"z":1,"a":2}}}"#;
    let server = Server::scripted(json!({
        "on": {
            "tools/call fail": [send(error)],
            "batch": [send(batch)],
            "tools/call build": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{"task":{"taskId":"t-1","status":"working"}}}"#)],
            "tasks/result": [send(task_error)],
        },
    }));
    let mut session = Session::wrapped(&["--max-error-bytes", "100"], &server);

    let lines = session.exchange(&tool_call(1, "fail", json!({}))).await;
    assert_eq!(
        lines,
        [with_text(
            &error.replace("$ID", "1"),
            &render_error("fail", "boom")
        )]
    );

    let requests =
        json!([tool_call(2, "fail", json!({})), {"jsonrpc": "2.0", "id": 3, "method": "ping"}]);
    session.send(&requests.to_string()).await;
    assert_eq!(
        session.line().await,
        with_text(batch, &render_error("fail", "boom"))
    );

    let mut call = tool_call(4, "build", json!({}));
    call["params"]["task"] = json!({"ttl": 60000});
    session.exchange(&call).await;
    let result =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/result", "params": {"taskId": "t-1"}});
    let lines = session.exchange(&result).await;
    assert_eq!(
        lines,
        [with_text(
            &task_error.replace("$ID", "5"),
            &render_error("build", "boom")
        )]
    );
}
