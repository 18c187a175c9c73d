//! With the default configuration no byte of a panic payload reaches the client
//! through the JSON path; the payload goes to the `tracing` log instead, in an
//! error event that names the tool and the request id. (The same for rmcp and
//! tower-mcp: `tests/rmcp/leaks.rs`, `tests/tower_mcp/leaks.rs`.)
//!
//! Each test captures the log of its own thread: the tests run on
//! current-thread runtimes, so every task they spawn logs there too.

use crate::support;

use std::convert::Infallible;

use mcp_tool_errors::{ToolErrorLayer, ToolErrors, is_rendered};
use serde_json::{Value, json};
use support::log::CapturedLog;
use support::secret_payload::{
    PanicLog, SECRET, assert_nothing_of_the_payload_in, panic_with_secret, payload_parts_in,
};
use support::{tool_call, within_hang_guard};
use tower::{Layer, Service, ServiceExt, service_fn};

// ---------------------------------------------------------------------------
// The JSON path.
// ---------------------------------------------------------------------------

/// The default layer over a service that panics with the secret, in `call` or
/// in its future.
fn leaky_json_service(
    in_call: bool,
) -> ToolErrors<impl Service<Value, Response = Option<Value>, Error = Infallible> + Clone> {
    ToolErrors::new(service_fn(move |_request: Value| {
        if in_call {
            panic_with_secret::<()>();
        }
        async move {
            tokio::task::yield_now().await;
            panic_with_secret::<Result<Option<Value>, Infallible>>()
        }
    }))
}

async fn send<S>(service: S, request: Value) -> Option<Value>
where
    S: Service<Value, Response = Option<Value>, Error = Infallible>,
{
    match within_hang_guard("the layered service", service.oneshot(request)).await {
        Ok(response) => response,
    }
}

#[tokio::test]
async fn json_path_keeps_the_payload_in_the_log() {
    support::quiet_panics::silence_expected_panics();
    let log = CapturedLog::start();
    for (n, in_call) in [(4101u64, true), (4102, false)] {
        let service = leaky_json_service(in_call);
        let response = send(service.clone(), tool_call(n, "deploy")).await.unwrap();
        let sent = serde_json::to_string(&response).unwrap();
        assert_nothing_of_the_payload_in(&sent);
        assert_eq!(response["result"]["isError"], true, "{sent}");
        assert!(is_rendered(
            response["result"]["content"][0]["text"].as_str().unwrap()
        ));
        log.assert_panic_logged(Some("deploy"), &n.to_string());

        let other = json!({"jsonrpc": "2.0", "id": format!("r{n}"), "method": "resources/read", "params": {"uri": "file:///etc"}});
        let response = send(service.clone(), other).await.unwrap();
        let sent = serde_json::to_string(&response).unwrap();
        assert_nothing_of_the_payload_in(&sent);
        assert_eq!(response["error"]["code"], -32603, "{sent}");
        log.assert_panic_logged(None, &format!("\"r{n}\""));

        let batch = json!([tool_call(n + 10, "deploy"), tool_call(n + 20, "rollback")]);
        let response = send(service, batch).await.unwrap();
        assert_nothing_of_the_payload_in(&serde_json::to_string(&response).unwrap());
        log.assert_panic_logged(Some("deploy"), &(n + 10).to_string());
        log.assert_panic_logged(Some("rollback"), &(n + 20).to_string());
    }
}

#[tokio::test]
async fn json_path_logs_a_panicked_notification() {
    support::quiet_panics::silence_expected_panics();
    let log = CapturedLog::start();
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send(leaky_json_service(true), notification).await, None);
    let lines = log.lines();
    let event = lines
        .iter()
        .find(|line| line.contains("handler panicked on a message that expects no response"))
        .unwrap_or_else(|| panic!("no event in\n{}", &lines.join("\n")));
    assert!(
        event.contains("ERROR") && event.contains(SECRET),
        "{}",
        event
    );
}

/// The control: the check finds the payload once it is let through on purpose.
#[tokio::test]
async fn json_path_sends_the_payload_only_when_told_to() {
    support::quiet_panics::silence_expected_panics();
    let exposing = ToolErrorLayer::new()
        .expose_panic_messages(true)
        .layer(leaky_json_service(true).into_inner());
    let response = send(exposing, tool_call(1, "deploy")).await.unwrap();
    let sent = serde_json::to_string(&response).unwrap();
    assert!(payload_parts_in(&sent).contains(&SECRET), "{}", &sent);
}
