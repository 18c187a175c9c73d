//! The command's own log on stderr: `--log-format json` (one object a line)
//! and the text lines, the library's events among them, `RUST_LOG` filtering
//! both.

use serde_json::{Value, json};

use crate::support::{Server, Session, send, tool_call};

/// A child whose calls of `hang` time out, that writes a line that is not
/// JSON at a ping, and exits 3 at a call of `die`: a warning of the library
/// (the timeout) and three of the command (not JSON, the late answer, the
/// exit).
fn eventful_server() -> Server {
    let late = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
    Server::scripted(json!({
        "on": {
            "notifications/cancelled": [send(late)],
            "ping": [send("garbage {"), send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)],
            "tools/call die": [{"exit": 3}],
        },
    }))
}

/// Runs [`eventful_server`] through the command with `options` (and the
/// environment `env`, with the scripted child's): its stderr at the end.
async fn eventful_run(options: &[&str], env: &[(&str, &str)]) -> String {
    let mut server = eventful_server();
    server.env.extend(
        env.iter()
            .map(|(key, value)| (key.to_string(), value.to_string())),
    );
    let mut options = options.to_vec();
    options.extend(["--tool-timeout", "200ms"]);
    let mut session = Session::wrapped(&options, &server);
    session.exchange(&tool_call(1, "hang", json!({}))).await;
    session
        .exchange(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    session
        .send(&tool_call(3, "die", json!({})).to_string())
        .await;
    while session.line_or_eof().await.is_some() {}
    assert_eq!(session.wait().await.code(), Some(3));
    session.stderr_to_end().await
}

/// Whether `text` is an RFC 3339 UTC timestamp: `2026-12-02T19:25:16.123456Z`.
fn is_rfc3339(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
        && bytes[10] == b'T'
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19)
        && text.ends_with('Z')
}

#[tokio::test]
async fn every_line_of_the_json_log_is_an_object_with_timestamp_level_message_and_fields() {
    let stderr = eventful_run(&["--log-format", "json"], &[]).await;
    let events: Vec<Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    for event in &events {
        let timestamp = event["timestamp"].as_str().unwrap_or_default();
        assert!(is_rfc3339(timestamp), "{event}");
        assert!(event["level"].is_string(), "{event}");
        assert!(event["message"].is_string(), "{event}");
    }
    let with = |key: &str, value: &str| {
        events
            .iter()
            .find(|event| event[key] == value)
            .unwrap_or_else(|| panic!("no event with {key} = {value}:\n{stderr}"))
    };
    // The library's event, through the same pipe, with its fields.
    let timeout = with("tool", "hang");
    assert_eq!(timeout["level"], "WARN");
    assert_eq!(timeout["target"], "mcp_tool_errors::timeout");
    assert_eq!(timeout["timeout"], "0.2 s", "{timeout}");
    // The command's own.
    let exited = with("exit_status", "exit code 3");
    assert_eq!(exited["level"], "WARN");
    assert_eq!(exited["message"], "the server exited with exit code 3");
    assert_eq!(exited["target"], "mcp_tool_errors_cli");
    assert!(with("target", "mcp_tool_errors_cli")["message"].is_string());
    assert!(stderr.contains("garbage {"), "{stderr}");
}

#[tokio::test]
async fn the_text_log_has_the_commands_lines_and_the_librarys_with_their_fields() {
    let stderr = eventful_run(&[], &[]).await;
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.contains(&"mcp-tool-errors: the server exited with exit code 3"),
        "{stderr}"
    );
    assert!(
        lines.iter().any(|line| line
            .starts_with("mcp-tool-errors: WARN mcp_tool_errors::timeout: tool call timed out")
            && line.contains("tool=\"hang\"")),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .all(|line| line.starts_with("mcp-tool-errors: ")),
        "{stderr}"
    );
}

#[tokio::test]
async fn rust_log_filters_the_commands_lines_and_the_librarys_apart() {
    let stderr = eventful_run(&[], &[("RUST_LOG", "mcp_tool_errors_cli=off,info")]).await;
    assert!(stderr.contains("tool call timed out"), "{stderr}");
    assert!(!stderr.contains("the server exited"), "{stderr}");
    let stderr = eventful_run(&[], &[("RUST_LOG", "mcp_tool_errors::timeout=off,info")]).await;
    assert!(!stderr.contains("tool call timed out"), "{stderr}");
    assert!(stderr.contains("the server exited"), "{stderr}");
}
