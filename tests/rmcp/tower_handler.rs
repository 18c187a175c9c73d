//! `ToolErrors` as a `tower::Service<ClientRequest>` under rmcp's `TowerHandler`,
//! against rmcp's own client: a panic in `tools/call` is an `isError` result, a
//! panic in any other request a -32603 error, and the connection stays usable.

use mcp_tool_errors::{ToolErrors, render_error};
use rmcp::model::{
    CallToolResult, ClientConfig, ClientRequest, ContentBlock, ErrorCode, InitializeResult,
    ProtocolVersion, ServerConfig, ServerResult,
};
use rmcp::service::{ServiceError, TowerHandler, serve_directly};
use rmcp::{ErrorData, RoleClient, RoleServer};

use super::servers::{ProbeClient, SECRET, answered, call, only_text};
use super::support::HIDDEN_TOOL_MESSAGE;

/// A server written as a plain tower service: `deploy` and `tools/list` panic.
async fn handle(request: ClientRequest) -> Result<ServerResult, ErrorData> {
    match request {
        ClientRequest::CallToolRequest(call) if call.params.name == "deploy" => {
            panic!("[expected] deploy failed with token={SECRET}")
        }
        ClientRequest::CallToolRequest(call) => {
            Ok(ServerResult::CallToolResult(CallToolResult::success(vec![
                ContentBlock::text(format!("called {}", call.params.name)),
            ])))
        }
        ClientRequest::ListToolsRequest(_) => {
            panic!("[expected] listing failed with token={SECRET}")
        }
        other => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            other.method().to_owned(),
            None,
        )),
    }
}

#[tokio::test]
async fn panics_are_answered_through_tower_handler() {
    super::support::quiet_panics::silence_expected_panics();
    let version = ProtocolVersion::V_2025_11_25;
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let service = ToolErrors::new(tower::service_fn(handle));
    let handler = TowerHandler::<_, RoleServer>::new(service, ServerConfig::default());
    let mut client_info = ClientConfig::default();
    client_info.protocol_version = version.clone();
    let mut server_info = InitializeResult::default();
    server_info.protocol_version = version.clone();
    let _server = serve_directly::<RoleServer, _, _, _, _>(handler, server_io, Some(client_info));
    let client = serve_directly::<RoleClient, _, _, _, _>(
        ProbeClient::new(version).0,
        client_io,
        Some(server_info.into()),
    );

    let result = answered("deploy", client.call_tool(call("deploy")))
        .await
        .expect("an isError result");
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        only_text(&result),
        render_error("deploy", HIDDEN_TOOL_MESSAGE)
    );

    let listed = answered("tools/list", client.list_tools(None)).await;
    let Err(ServiceError::McpError(error)) = listed else {
        panic!("a JSON-RPC error expected, got {listed:?}")
    };
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(
        error.message,
        "Internal error: the server failed while handling this request."
    );
    assert_eq!(error.data, None);
    assert!(!format!("{error:?}").contains(SECRET));

    let next = answered("echo", client.call_tool(call("echo")))
        .await
        .expect("the connection works");
    assert_eq!(only_text(&next), "called echo");
}
