//! JSON of any depth in the stdio mode: a call nested deeper than serde_json's
//! limit of 128 levels still goes through the layer (its `--tool-timeout`
//! holds), an answer that deep is still rewrapped, and a line 100,000 levels
//! deep from either side neither crashes the wrapper nor goes around it.
//!
//! The child is a few lines of Python, whose `json` reads far deeper than
//! serde_json's default.

use mcp_tool_errors::render_error;
use serde_json::{Value, json};

use crate::support::{Server, Session, result_text, tool_call};

/// Answers `deep_error` with an `isError` result whose `structuredContent`
/// is 200 levels deep, `hang` never, anything else with an empty result; a
/// line it cannot read is skipped.
const CHILD: &str = r#"
import json, sys
for line in sys.stdin:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        continue
    if "id" not in message or "method" not in message:
        continue
    name = message.get("params", {}).get("name")
    if name == "hang":
        continue
    if name == "deep_error":
        deep = 1
        for _ in range(200):
            deep = [deep]
        result = {"content": [{"type": "text", "text": "quota exceeded"}],
                  "structuredContent": {"deep": deep}, "isError": True}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

fn child() -> Server {
    Server::new("python3", &["-c", CHILD])
}

/// A value `levels` deep: arrays around `1`.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |inner, _| json!([inner]))
}

#[tokio::test]
async fn an_answer_nested_past_serde_jsons_limit_is_rewrapped() {
    let mut session = Session::wrapped(&[], &child());
    // The answer is read as text: serde_json would not read it either.
    let line = session
        .line_after(&tool_call(1, "deep_error", json!({})))
        .await;
    let rendered = Value::from(render_error("deep_error", "quota exceeded")).to_string();
    assert!(line.contains(&rendered), "{line}");
    assert!(line.contains(r#""deep": [[[["#), "{line}");
}

#[tokio::test]
async fn a_call_nested_past_serde_jsons_limit_is_answered_at_its_timeout() {
    let mut session = Session::wrapped(&["--tool-timeout", "300ms"], &child());
    let lines = session
        .exchange(&tool_call(1, "hang", json!({"deep": nested(129)})))
        .await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        result_text(&lines[0]),
        render_error(
            "hang",
            "The tool did not finish within 0.3 s and was cancelled."
        )
    );
}

#[tokio::test]
async fn lines_100000_levels_deep_are_passed_on_and_the_wrapper_serves_on() {
    let mut session = Session::wrapped(&["--tool-timeout", "5s"], &child());
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"deep":{}1{}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    session.send(&deep).await;
    let lines = session
        .exchange(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(lines, [r#"{"jsonrpc": "2.0", "id": 2, "result": {}}"#]);
    assert!(!session.has_exited());
}
