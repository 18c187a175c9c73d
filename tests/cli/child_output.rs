//! What the child writes: lines that are not JSON, and answers the layer
//! rewrites.

use std::time::Instant;

use serde_json::json;

use crate::support::{Server, Session};

/// How the wrapper's log line for a line that is not JSON begins.
const NOT_JSON: &str = "mcp-tool-errors: not forwarded: the server wrote a line that is not JSON";

#[tokio::test]
async fn a_child_flooding_stdout_with_text_gets_one_log_line_a_second_and_a_count() {
    const FLOOD: u64 = 200_000;
    let server = Server::scripted(json!({
        "on": {"ping": [
            {"repeat": "this is not JSON", "times": FLOOD},
            {"send": r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#},
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
    let seconds = started.elapsed().as_secs();
    let stderr = session.stderr();
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
