//! A renderer or a `redact_with` scrubber that panics never escapes the layer:
//! the `tools/call` it was rendering for is answered with the built-in llmxml
//! element of a fixed sentence, the panic is logged by its location only (its
//! message may quote the text it was given, so no log has it), and the other
//! answers of a batch are unaffected. Covered: rewrapping an `isError` result,
//! the layer's own answer to a handler's panic, and to a timeout.

use std::borrow::Cow;
use std::convert::Infallible;
use std::time::Duration;

use crate::support::failing_tool::FailingTool;
use crate::support::log::CapturedLog;
use crate::support::quiet_panics::silence_expected_panics;
use crate::support::test_child;
use crate::support::{tool_call, within_hang_guard};
use mcp_tool_errors::{ToolErrorLayer, render_error};
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};

/// What the model reads when the error of a tool could not be rendered.
const RENDER_FAILED: &str =
    "The tool failed and its error could not be rendered. The details are in the server log.";

/// A renderer that panics for the tool `boom`, with the message in the payload,
/// and renders llmxml for any other.
fn panics_for_boom(tool: &str, message: &str) -> String {
    if tool == "boom" {
        panic!("[expected] the renderer failed on {message:?}");
    }
    render_error(tool, &format!("rendered: {message}"))
}

/// The only text item of the `isError` result `response`, with its id.
fn error_text(response: &Value, id: i64) -> &str {
    assert_eq!(response["id"], id, "{response}");
    assert_eq!(response["result"]["isError"], true, "{response}");
    let content = response["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{response}");
    content[0]["text"].as_str().unwrap()
}

/// Whether the log holds the error event of a panic caught while rendering
/// for `tool`, and not `secret`.
fn assert_logged(log: &CapturedLog, tool: &str, secret: &str) {
    let log = log.lines().join("\n");
    assert!(
        log.contains("ERROR") && log.contains("could not be rendered") && log.contains(tool),
        "{log}"
    );
    assert!(!log.contains(secret), "{log}");
}

#[tokio::test]
async fn a_renderer_panicking_on_an_error_result_answers_the_call() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let service = ToolErrorLayer::new()
        .renderer(panics_for_boom)
        .layer(FailingTool {
            text: "upstream said no".to_owned(),
        });
    let response = within_hang_guard("rewrap", service.oneshot(tool_call(4, "boom")))
        .await
        .unwrap();
    assert_eq!(
        error_text(&response, 4),
        render_error("boom", RENDER_FAILED)
    );
    let log = log.lines().join("\n");
    assert!(log.contains("could not be rendered"), "{log}");
    assert!(!log.contains("the renderer failed on"), "{log}");
}

#[tokio::test]
async fn a_panicking_scrubber_answers_the_call_and_leaks_nothing() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let service = ToolErrorLayer::new()
        .redact_with(|text: &str| -> Cow<'_, str> {
            panic!("[expected] the scrubber failed on {text}")
        })
        .layer(FailingTool {
            text: "token=scrub-secret-3 rejected".to_owned(),
        });
    let response = within_hang_guard("scrub", service.oneshot(tool_call(5, "fetch")))
        .await
        .unwrap();
    assert_eq!(
        error_text(&response, 5),
        render_error("fetch", RENDER_FAILED)
    );
    // The payload holds the text the scrubber was given; the same scrubber
    // cannot be trusted to clean it, so the log withholds it.
    assert_logged(&log, "fetch", "scrub-secret-3");
}

#[tokio::test]
async fn a_renderer_panicking_on_the_answer_to_a_handler_panic_answers_the_call() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let panicking = service_fn(|_: Value| async {
        panic!("[expected] the handler failed");
        #[allow(unreachable_code)]
        Ok::<Value, Infallible>(Value::Null)
    });
    let service = ToolErrorLayer::new()
        .renderer(panics_for_boom)
        .layer(panicking);
    let response = within_hang_guard("panic answer", service.oneshot(tool_call(6, "boom")))
        .await
        .unwrap();
    assert_eq!(
        error_text(&response, 6),
        render_error("boom", RENDER_FAILED)
    );
    assert_logged(&log, "boom", "no secret here");
    assert!(
        log.lines().join("\n").contains("the handler failed"),
        "the handler's panic is logged too"
    );
}

#[tokio::test]
async fn a_scrubber_panicking_on_a_handler_panic_answers_the_call() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let panicking = service_fn(|_: Value| async {
        panic!("[expected] handler with token=handler-secret-8");
        #[allow(unreachable_code)]
        Ok::<Value, Infallible>(Value::Null)
    });
    let service = ToolErrorLayer::new()
        .expose_panic_messages(true)
        .redact_with(|text: &str| -> Cow<'_, str> {
            panic!("[expected] the scrubber failed on {text}")
        })
        .layer(panicking);
    let batch = json!([tool_call(1, "deploy"),
        {"jsonrpc": "2.0", "id": 2, "method": "ping"}]);
    let response = within_hang_guard("panic answer", service.oneshot(batch))
        .await
        .unwrap();
    assert_eq!(
        error_text(&response[0], 1),
        render_error("deploy", RENDER_FAILED)
    );
    // The request that is not a `tools/call` gets the hidden internal error.
    assert_eq!(response[1]["id"], 2);
    assert_eq!(response[1]["error"]["code"], -32603);
    let message = response[1]["error"]["message"].as_str().unwrap();
    assert!(!message.contains("handler-secret-8"), "{message}");
    assert_logged(&log, "deploy", "handler-secret-8");
}

#[tokio::test(start_paused = true)]
async fn a_renderer_panicking_on_the_timeout_answer_answers_the_call() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let hanging = service_fn(|_: Value| std::future::pending::<Result<Value, Infallible>>());
    let service = ToolErrorLayer::new()
        .renderer(panics_for_boom)
        .tool_timeout(Duration::from_secs(1))
        .layer(hanging);
    let response = within_hang_guard("timeout answer", service.oneshot(tool_call(7, "boom")))
        .await
        .unwrap();
    assert_eq!(
        error_text(&response, 7),
        render_error("boom", RENDER_FAILED)
    );
    assert_logged(&log, "boom", "no secret here");
}

#[tokio::test]
async fn in_a_batch_only_the_call_whose_rendering_panicked_changes() {
    silence_expected_panics();
    let inner = service_fn(|batch: Value| async move {
        let answers: Vec<Value> = batch
            .as_array()
            .unwrap()
            .iter()
            .map(|call| {
                json!({"jsonrpc": "2.0", "id": call["id"], "result": {"isError": true,
                    "content": [{"type": "text", "text": format!("{} failed", call["params"]["name"])}]}})
            })
            .collect();
        Ok::<Value, Infallible>(Value::Array(answers))
    });
    let service = ToolErrorLayer::new().renderer(panics_for_boom).layer(inner);
    let batch = json!([
        tool_call(1, "search"),
        tool_call(2, "boom"),
        tool_call(3, "fetch")
    ]);
    let response = within_hang_guard("batch", service.oneshot(batch))
        .await
        .unwrap();
    assert_eq!(
        error_text(&response[0], 1),
        render_error("search", "rendered: \"search\" failed")
    );
    assert_eq!(
        error_text(&response[1], 2),
        render_error("boom", RENDER_FAILED)
    );
    assert_eq!(
        error_text(&response[2], 3),
        render_error("fetch", "rendered: \"fetch\" failed")
    );
}

#[tokio::test]
async fn every_text_item_of_a_result_whose_rendering_panicked_is_replaced() {
    silence_expected_panics();
    // The scrubber panics on the second item, after the first was rewritten.
    let inner = service_fn(|request: Value| async move {
        Ok::<Value, Infallible>(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "isError": true,
        "content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "second holds password=item-secret-2"},
        ]}}))
    });
    let service = ToolErrorLayer::new()
        .redact_with(|text: &str| -> Cow<'_, str> {
            if text.contains("second") {
                panic!("[expected] the scrubber failed");
            }
            Cow::Borrowed(text)
        })
        .layer(inner);
    let response = within_hang_guard("items", service.oneshot(tool_call(9, "fetch")))
        .await
        .unwrap();
    let content = &response["result"]["content"];
    assert_eq!(content[0]["text"], render_error("fetch", RENDER_FAILED));
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[2]["text"], "");
    assert!(
        !response.to_string().contains("item-secret-2"),
        "{response}"
    );
}

#[tokio::test]
async fn an_error_result_without_text_gets_the_fixed_answer_inserted() {
    silence_expected_panics();
    // The renderer panics on the message the layer inserts for a result
    // with no text item.
    let inner = service_fn(|request: Value| async move {
        Ok::<Value, Infallible>(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "isError": true,
            "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}}))
    });
    let service = ToolErrorLayer::new().renderer(panics_for_boom).layer(inner);
    let response = within_hang_guard("insert", service.oneshot(tool_call(10, "boom")))
        .await
        .unwrap();
    let content = response["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{response}");
    assert_eq!(content[0]["text"], render_error("boom", RENDER_FAILED));
    assert_eq!(content[1]["type"], "image");
}

// ---------------------------------------------------------------------------
// A panic whose message quotes the text: Rust's own, for a slice off a
// character boundary. Nothing of it in any log; its location in the log when
// the panic hook, the one place a panic's location is told, is installed.
// ---------------------------------------------------------------------------

/// A secret in a tool's error, after a character of two bytes.
const SLICED_SECRET: &str = "hunter2-sliced";
/// The error text: Rust's message for a slice inside its first character
/// quotes all of it, `é password is hunter2-sliced`.
const SLICED_TEXT: &str = "é password is hunter2-sliced";

/// The text's first byte, as a careless renderer or scrubber might cut it: a
/// panic when that byte begins a longer character.
fn first_byte(text: &str) -> &str {
    &text[..1]
}

/// `file:line:` of the slice in `first_byte`, as a panic's location starts.
fn slice_location() -> String {
    let source = include_str!("render_panics.rs");
    let line = source
        .lines()
        .position(|line| line.trim() == "&text[..1]")
        .expect("the slice of first_byte")
        + 1;
    format!("{}:{line}:", file!())
}

/// A renderer that renders only the first byte of a message.
fn renders_the_first_byte(tool: &str, message: &str) -> String {
    render_error(tool, first_byte(message))
}

/// A scrubber that looks at the first byte of a text that starts with a
/// character beyond ASCII, and leaves any other text as it is: Rust's message
/// of its panic starts with ASCII, so it scrubs that message without a panic.
fn scrubs_by_the_first_byte(text: &str) -> Cow<'_, str> {
    if !text.starts_with(|c: char| c.is_ascii()) {
        let _ = first_byte(text);
    }
    Cow::Borrowed(text)
}

/// Answers a `tools/call` of `tool` behind `layer`, whose tool fails with
/// [`SLICED_TEXT`], and checks the fixed answer.
async fn answer_the_sliced_error<R: mcp_tool_errors::ErrorRenderer>(
    layer: ToolErrorLayer<R>,
    tool: &str,
) {
    let service = layer.layer(FailingTool {
        text: SLICED_TEXT.to_owned(),
    });
    let response = within_hang_guard("sliced", service.oneshot(tool_call(11, tool)))
        .await
        .unwrap();
    assert_eq!(error_text(&response, 11), render_error(tool, RENDER_FAILED));
}

/// Fails the test if `log` holds any part of the sliced text or of Rust's
/// message quoting it.
#[track_caller]
fn assert_no_part_of_the_message(log: &str) {
    for part in [SLICED_SECRET, "password is", "char boundary", "bytes 0..2"] {
        assert!(!log.contains(part), "{part:?} is in the log:\n{log}");
    }
}

#[tokio::test]
async fn a_renderer_panicking_on_a_slice_logs_nothing_of_its_message() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let layer = ToolErrorLayer::new().renderer(renders_the_first_byte);
    answer_the_sliced_error(layer, "slice_render").await;
    let log = log.lines().join("\n");
    assert!(
        log.contains("could not be rendered") && log.contains("slice_render"),
        "{log}"
    );
    assert_no_part_of_the_message(&log);
}

#[tokio::test]
async fn a_scrubber_panicking_on_a_slice_logs_nothing_of_its_message() {
    silence_expected_panics();
    let log = CapturedLog::start();
    let layer = ToolErrorLayer::new().redact_with(scrubs_by_the_first_byte);
    answer_the_sliced_error(layer, "slice_scrub").await;
    let log = log.lines().join("\n");
    assert!(
        log.contains("could not be rendered") && log.contains("slice_scrub"),
        "{log}"
    );
    assert_no_part_of_the_message(&log);
}

/// Selects what the child run of `sliced_child` logs to: `subscriber` (a
/// `tracing` subscriber on stderr, at `DEBUG`) or `plain` (none).
const SLICED_CHILD_MODE: &str = "MCP_TOOL_ERRORS_SLICED_CHILD";

/// Not a test of its own: the body of the child processes below, with the
/// panic hook installed. A renderer's and a scrubber's slice panic.
#[tokio::test]
async fn sliced_child() {
    let Ok(mode) = std::env::var(SLICED_CHILD_MODE) else {
        return;
    };
    if mode == "subscriber" {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
    }
    mcp_tool_errors::install_panic_hook();
    let renderer = ToolErrorLayer::new().renderer(renders_the_first_byte);
    answer_the_sliced_error(renderer, "slice_render").await;
    let scrubber = ToolErrorLayer::new().redact_with(scrubs_by_the_first_byte);
    answer_the_sliced_error(scrubber, "slice_scrub").await;
}

/// The stderr of `sliced_child` run alone in a new process in `mode`.
fn sliced_child_stderr(mode: &str) -> String {
    test_child::stderr_of("render_panics::sliced_child", SLICED_CHILD_MODE, mode)
}

/// The lines of `stderr` that mention `tool`.
fn lines_of<'a>(stderr: &'a str, tool: &str) -> Vec<&'a str> {
    stderr.lines().filter(|line| line.contains(tool)).collect()
}

#[test]
fn with_the_panic_hook_the_log_has_a_slice_panics_location_only() {
    let stderr = sliced_child_stderr("subscriber");
    assert_no_part_of_the_message(&stderr);
    let at = slice_location();
    for tool in ["slice_render", "slice_scrub"] {
        let lines = lines_of(&stderr, tool);
        // The layer's error event, and the hook's line about the withheld panic.
        let event = lines
            .iter()
            .find(|line| line.contains("ERROR") && line.contains("could not be rendered"));
        let event = event.unwrap_or_else(|| panic!("no error event for {tool}:\n{stderr}"));
        assert!(event.contains(&format!("location=\"{at}")), "{event}");
        let hook = lines.iter().find(|line| line.contains(" WARN "));
        let hook = hook.unwrap_or_else(|| panic!("no hook line for {tool}:\n{stderr}"));
        assert!(hook.contains(&format!("panicked at {at}")), "{hook}");
    }
}

#[test]
fn with_the_panic_hook_and_no_subscriber_stderr_has_a_slice_panics_location_only() {
    let stderr = sliced_child_stderr("plain");
    assert_no_part_of_the_message(&stderr);
    let at = slice_location();
    for tool in ["slice_render", "slice_scrub"] {
        let lines = lines_of(&stderr, tool);
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].starts_with("mcp-tool-errors: the renderer or the scrubber"),
            "{stderr}"
        );
        assert!(lines[0].contains(&format!("panicked at {at}")), "{stderr}");
    }
}
