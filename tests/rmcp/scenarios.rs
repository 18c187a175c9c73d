//! What every transport must show a real client; run over a duplex and over
//! streamable HTTP.

use mcp_tool_errors::render_error;
use rmcp::RoleClient;
use rmcp::model::{ErrorCode, RequestId};
use rmcp::service::{InboundStreamOrigin, RunningService, ServiceError};
use serde_json::Value;
use tokio::sync::mpsc;

use super::servers::{ClientEvent, ProbeClient, SECRET, answered, call, echo, only_text};
use super::support::HIDDEN_TOOL_MESSAGE;

type Client = RunningService<RoleClient, ProbeClient>;

/// A panicking tool, sync or async, gets an `isError` answer without the panic
/// message, and the next call on the same connection succeeds.
pub(crate) async fn panicking_tools_are_answered(client: &Client) {
    for tool in ["panic_sync", "panic_async"] {
        let result = answered(tool, client.call_tool(call(tool)))
            .await
            .expect("an isError result");
        assert_eq!(result.is_error, Some(true), "{tool}: {result:?}");
        assert_eq!(only_text(&result), render_error(tool, HIDDEN_TOOL_MESSAGE));
        let sent = serde_json::to_string(&result).unwrap();
        assert!(
            !sent.contains(SECRET),
            "{tool}: the panic message reached the client: {sent}"
        );

        let next = answered("echo", client.call_tool(echo("still here")))
            .await
            .expect("the connection works");
        assert_eq!(only_text(&next), "still here");
        assert_ne!(next.is_error, Some(true));
    }
}

/// An `isError` result made by the tool is rewrapped for the model.
pub(crate) async fn tool_errors_are_rewrapped(client: &Client) {
    let result = answered("refuse", client.call_tool(call("refuse")))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        only_text(&result),
        "<error tool=\"refuse\">\nunknown action, expected submit (action=merge)\n</error>"
    );
}

/// Successes, the tool list and protocol errors (an unknown tool is -32602) are
/// the same through `layered` as through `bare`.
pub(crate) async fn the_layer_changes_nothing_else(bare: &Client, layered: &Client) {
    let bare_echo = answered("echo", bare.call_tool(echo("hi"))).await.unwrap();
    let layered_echo = answered("echo", layered.call_tool(echo("hi")))
        .await
        .unwrap();
    assert_eq!(only_text(&layered_echo), "hi");
    assert_eq!(
        serde_json::to_value(&bare_echo).unwrap(),
        serde_json::to_value(&layered_echo).unwrap()
    );

    let bare_tools = answered("tools/list", bare.list_all_tools()).await.unwrap();
    let layered_tools = answered("tools/list", layered.list_all_tools())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&bare_tools).unwrap(),
        serde_json::to_value(&layered_tools).unwrap()
    );

    let bare_error =
        protocol_error(answered("unknown tool", bare.call_tool(call("no_such_tool"))).await);
    let layered_error =
        protocol_error(answered("unknown tool", layered.call_tool(call("no_such_tool"))).await);
    assert_eq!(layered_error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(bare_error, layered_error);
}

fn protocol_error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> rmcp::ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("a JSON-RPC error expected, got {other:?}"),
    }
}

/// How the client reached the server, for what the context must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Duplex,
    StreamableHttp,
}

/// The tool gets the real request context: its progress notification and its
/// ping reach the client while the call runs (over HTTP, on the call's own
/// response stream, which rmcp picks from a task-local of the handler's task),
/// and the transport's extensions are there.
pub(crate) async fn the_context_reaches_the_tool(
    client: &Client,
    events: &mut mpsc::UnboundedReceiver<ClientEvent>,
    transport: Transport,
) {
    let result = answered("use_context", client.call_tool(call("use_context")))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let report: Value = serde_json::from_str(only_text(&result)).unwrap();
    let id: RequestId = serde_json::from_value(report["id"].clone()).unwrap();
    assert_eq!(report["pinged"], true, "{report}");
    assert_eq!(report["cancelled"], false, "{report}");
    let token = &report["progressToken"];
    assert!(
        !token.is_null(),
        "rmcp's client sends a progress token with every request: {report}"
    );

    let mut progress = None;
    let mut ping = None;
    for _ in 0..2 {
        match answered("a client event", events.recv())
            .await
            .expect("the client is alive")
        {
            ClientEvent::Progress(params) => progress = Some(params),
            ClientEvent::Pinged(origin) => ping = Some(origin),
        }
    }
    let progress = progress.expect("a progress notification");
    assert_eq!(
        &serde_json::to_value(&progress.progress_token).unwrap(),
        token
    );
    assert_eq!(progress.message.as_deref(), Some("halfway"));
    let origin = ping.expect("a ping");

    match transport {
        Transport::Duplex => {
            assert_eq!(origin, None);
            assert_eq!(report["httpMethod"], Value::Null);
        }
        Transport::StreamableHttp => {
            assert_eq!(origin, Some(InboundStreamOrigin::OutboundRequest(id)));
            assert_eq!(report["httpMethod"], "POST");
        }
    }
}
