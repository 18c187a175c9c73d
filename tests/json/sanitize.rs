//! Sanitizing without the built-in patterns, through the public API: the
//! user's scrubber alone, and `install_panic_hook`, which keeps a caught
//! payload off stderr while other panics print as before (`the_panic_hook_*`,
//! in child processes). The built-in redaction is tested in `redact.rs`, the
//! cap in `cap.rs`.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::support::failing_tool::FailingTool;
use mcp_tool_errors::{ErrorRenderer, ToolErrorLayer, render_error};
use serde_json::{Value, json};
use tower::{Layer, Service, service_fn};

pub(super) const TOOL: &str = "fetch_upstream";

/// The text the model reads when the tool fails with `message` behind `layer`.
pub(super) fn rendered<R: ErrorRenderer>(layer: &ToolErrorLayer<R>, message: &str) -> String {
    let mut service = layer.layer(FailingTool {
        text: message.to_owned(),
    });
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": TOOL, "arguments": {}}});
    let future = service.call(request);
    let Poll::Ready(Ok(response)) = pin!(future).poll(&mut Context::from_waker(Waker::noop()))
    else {
        panic!("the inner service answers at once");
    };
    response["result"]["content"][0]["text"]
        .as_str()
        .expect("a text item")
        .to_owned()
}

#[test]
fn the_scrubber_runs_alone_without_the_built_in_redaction() {
    let alone = ToolErrorLayer::new().redact_with(|text: &str| Cow::Owned(text.to_uppercase()));
    assert_eq!(
        rendered(&alone, "token=abc"),
        render_error(TOOL, "TOKEN=ABC")
    );
}

// ---------------------------------------------------------------------------
// The panic hook, in child processes: a panic hook is global to the process.
// ---------------------------------------------------------------------------

/// Selects what the child run of `panic_hook_child` does.
const CHILD_MODE: &str = "MCP_TOOL_ERRORS_PANIC_HOOK_CHILD";
const INSIDE_PAYLOAD: &str = "inside-payload token=hook-secret-1";
const OUTSIDE_PAYLOAD: &str = "outside-payload-2";

/// Not a test of its own: the body of the child processes below. It panics
/// once inside the layer (answered) and once outside (on another thread).
#[test]
fn panic_hook_child() {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        return;
    };
    if mode == "hook" {
        mcp_tool_errors::install_panic_hook();
    }
    let panicking = service_fn(|_: Value| async {
        panic!("{INSIDE_PAYLOAD}");
        #[allow(unreachable_code)]
        Ok::<Value, Infallible>(Value::Null)
    });
    let mut service = ToolErrorLayer::new().layer(panicking);
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                         "params": {"name": "deploy", "arguments": {}}});
    let future = service.call(request);
    let Poll::Ready(Ok(response)) = pin!(future).poll(&mut Context::from_waker(Waker::noop()))
    else {
        panic!("the layer answers a panic at once");
    };
    assert_eq!(response["result"]["isError"], true);
    let outside = std::thread::spawn(|| panic!("{OUTSIDE_PAYLOAD}")).join();
    assert!(outside.is_err());
}

/// The stderr of `panic_hook_child` run alone in a new process.
fn child_stderr(mode: &str) -> String {
    crate::support::test_child::stderr_of("sanitize::panic_hook_child", CHILD_MODE, mode)
}

#[test]
fn the_panic_hook_control_without_it_the_payload_is_on_stderr() {
    let stderr = child_stderr("default");
    assert!(stderr.contains(INSIDE_PAYLOAD), "{stderr}");
    assert!(stderr.contains(OUTSIDE_PAYLOAD), "{stderr}");
}

#[test]
fn the_panic_hook_keeps_a_caught_payload_off_stderr() {
    let stderr = child_stderr("hook");
    assert!(!stderr.contains("hook-secret-1"), "{stderr}");
    assert!(!stderr.contains("inside-payload"), "{stderr}");
    assert!(
        stderr.contains(
            "mcp-tool-errors: the handler of tool \"deploy\" (request id 7) panicked; \
             the answer is an error and the panic message is withheld"
        ),
        "{stderr}"
    );
    assert!(stderr.contains(OUTSIDE_PAYLOAD), "{stderr}");
}
