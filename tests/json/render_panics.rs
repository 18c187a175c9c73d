//! A renderer or a `redact_with` scrubber that panics never escapes the layer:
//! the `tools/call` it was rendering for is answered with the built-in llmxml
//! element of a fixed sentence, the panic is logged like any other, and the
//! other answers of a batch are unaffected. Covered: rewrapping an `isError`
//! result, the layer's own answer to a handler's panic, and to a timeout.

use std::borrow::Cow;
use std::convert::Infallible;
use std::time::Duration;

use crate::support::failing_tool::FailingTool;
use crate::support::log::CapturedLog;
use crate::support::quiet_panics::silence_expected_panics;
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
    assert!(log.contains("the renderer failed on"), "{log}");
    assert!(log.contains("could not be rendered"), "{log}");
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
