//! Tool calls through rmcp's own client and a layered rmcp server over an
//! in-memory duplex.

use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ErrorCode, MetaObject, RequestMetaObject,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::exporter::{
    PARENT_SPAN_ID, TRACE_ID, TRACEPARENT, assert_failed, assert_logged, assert_no_attribute_holds,
    assert_protocol_error, assert_span, assert_timed_out, assert_tool_error, exporter, span_named,
};

/// In every tool call's arguments; no span may hold it.
const ARGUMENT: &str = "argument-Bergen-4410";
/// In every panic message; no span may hold it.
const PAYLOAD: &str = "token=hunter2";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct City {
    /// The city to forecast.
    city: String,
}

#[derive(Debug, Clone)]
struct Forecasts {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Forecasts {
    #[tool(description = "Forecasts the weather")]
    fn rmcp_weather(&self, Parameters(City { city }): Parameters<City>) -> String {
        format!("sunny in {city}")
    }

    #[tool(description = "Forecasts the weather, traced by the client")]
    fn rmcp_traced(&self, Parameters(City { city }): Parameters<City>) -> String {
        format!("sunny in {city}")
    }

    #[tool(description = "Has no forecast")]
    fn rmcp_refuse(&self, Parameters(_): Parameters<City>) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("no forecast for that city")])
    }

    #[tool(description = "Panics")]
    fn rmcp_panic(&self, Parameters(_): Parameters<City>) -> String {
        panic!("[expected] the forecast service failed, {PAYLOAD}");
    }

    #[tool(description = "Never finishes")]
    async fn rmcp_hang(&self, Parameters(_): Parameters<City>) -> String {
        std::future::pending::<()>().await;
        unreachable!("a pending future never finishes")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Forecasts {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn forecasts() -> Forecasts {
    Forecasts {
        tool_router: Forecasts::tool_router(),
    }
}

/// rmcp's client, connected to the layered server through rmcp's handshake.
async fn connect() -> RunningService<RoleClient, ()> {
    connect_to(forecasts().with_tool_errors()).await
}

/// rmcp's client, connected to `server` through rmcp's handshake.
async fn connect_to(server: impl ServerHandler) -> RunningService<RoleClient, ()> {
    exporter();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(server.serve(server_io), ().serve(client_io));
    tokio::spawn(server.expect("the server starts").waiting());
    client.expect("the client connects")
}

fn call(tool: &'static str) -> CallToolRequestParams {
    let arguments = serde_json::json!({"city": ARGUMENT});
    CallToolRequestParams::new(tool).with_arguments(arguments.as_object().unwrap().clone())
}

#[tokio::test]
async fn a_successful_call_is_a_server_span_named_after_the_tool() {
    let client = connect().await;
    let result = client.call_tool(call("rmcp_weather")).await.unwrap();
    assert_ne!(result.is_error, Some(true));

    let span = span_named("tools/call rmcp_weather");
    assert_span(
        &span,
        &[
            ("mcp.method.name", Some("tools/call")),
            ("gen_ai.operation.name", Some("execute_tool")),
            ("gen_ai.tool.name", Some("rmcp_weather")),
            ("error.type", None),
        ],
    );
    let id = crate::exporter::attribute(&span, "jsonrpc.request.id").expect("an id");
    assert!(
        id.parse::<u64>().is_ok(),
        "rmcp's client numbers its requests: {id}"
    );
    let version = crate::exporter::attribute(&span, "mcp.protocol.version");
    assert!(version.is_some(), "the session's version: {span:#?}");
    assert_failed(&span, false);
    assert_no_attribute_holds(&span, &[ARGUMENT]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_tool_error_is_a_failed_span_with_error_type_tool_error() {
    let client = connect().await;
    let result = client.call_tool(call("rmcp_refuse")).await.unwrap();
    assert_eq!(result.is_error, Some(true));

    let span = span_named("tools/call rmcp_refuse");
    assert_tool_error(&span, "tool_error");
    assert_no_attribute_holds(&span, &[ARGUMENT, "no forecast"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_panic_is_a_failed_span_whose_cause_is_panic() {
    crate::quiet_panics::silence_expected_panics();
    let client = connect().await;
    let result = client.call_tool(call("rmcp_panic")).await.unwrap();
    assert_eq!(result.is_error, Some(true));

    let span = span_named("tools/call rmcp_panic");
    assert_tool_error(&span, "panic");
    assert_no_attribute_holds(&span, &[ARGUMENT, PAYLOAD]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_with_its_code() {
    let client = connect().await;
    let error = client
        .call_tool(call("rmcp_no_such_tool"))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("a JSON-RPC error: {error:?}");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);

    let span = span_named("tools/call rmcp_no_such_tool");
    assert_protocol_error(&span, "-32602");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_traceparent_in_meta_continues_the_clients_trace() {
    let client = connect().await;
    let mut meta = MetaObject::new();
    meta.set_traceparent(TRACEPARENT);
    let mut request = call("rmcp_traced");
    request.meta = Some(RequestMetaObject(meta));
    client.call_tool(request).await.unwrap();

    let span = span_named("tools/call rmcp_traced");
    assert_eq!(span.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(span.parent_span_id.to_string(), PARENT_SPAN_ID);
    assert!(span.parent_span_is_remote);
    client.cancel().await.unwrap();
}

/// The whole test runs on one current-thread runtime with a paused clock (the
/// server's task too), so the timeout passes as soon as everything waits.
#[tokio::test(start_paused = true)]
async fn a_timeout_is_a_failed_span_whose_cause_is_timeout() {
    let server = forecasts().layer(ToolErrorLayer::new().tool_timeout(Duration::from_secs(2)));
    let client = connect_to(server).await;
    let result = client.call_tool(call("rmcp_hang")).await.unwrap();
    assert_eq!(result.is_error, Some(true));

    let span = span_named("tools/call rmcp_hang");
    assert_timed_out(&span);
    assert_span(&span, &[("gen_ai.tool.name", Some("rmcp_hang"))]);
    assert_no_attribute_holds(&span, &[ARGUMENT]);
    assert_logged(&span, "tool call timed out");
    client.cancel().await.unwrap();
}
