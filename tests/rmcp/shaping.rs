//! rmcp's protocol-version shaping applies to the results the layer makes: a
//! client before 2026-07-28 never sees `resultType`, a 2026-07-28 client does.

use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::model::{CallToolResult, ClientConfig, InitializeResult, ProtocolVersion, ResultType};
use rmcp::service::serve_directly;
use rmcp::{RoleClient, RoleServer};

use super::servers::{ProbeClient, ToolServer, answered, call};

/// Calls `tool` from a client that agreed on `version` with the layered server.
/// 2026-07-28 has no `initialize`, so both ends start with the version agreed,
/// as its discover lifecycle leaves them.
async fn call_on(version: ProtocolVersion, tool: &'static str) -> CallToolResult {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (client, _events) = ProbeClient::new(version.clone());
    let mut client_info = ClientConfig::default();
    client_info.protocol_version = version.clone();
    let mut server_info = InitializeResult::default();
    server_info.protocol_version = version;
    let _server = serve_directly::<RoleServer, _, _, _, _>(
        ToolServer::new().with_tool_errors(),
        server_io,
        Some(client_info),
    );
    let client =
        serve_directly::<RoleClient, _, _, _, _>(client, client_io, Some(server_info.into()));
    answered(tool, client.call_tool(call(tool)))
        .await
        .expect("a tool result")
}

#[tokio::test]
async fn a_client_before_2026_07_28_never_sees_result_type() {
    super::support::quiet_panics::silence_expected_panics();
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        for tool in ["panic_sync", "panic_async", "refuse"] {
            let result = call_on(version.clone(), tool).await;
            assert_eq!(result.is_error, Some(true), "{version} {tool}");
            assert_eq!(
                result.result_type, None,
                "{version} {tool}: resultType was sent"
            );
        }
    }
}

#[tokio::test]
async fn a_2026_07_28_client_gets_result_type_complete() {
    super::support::quiet_panics::silence_expected_panics();
    for tool in ["panic_sync", "panic_async", "refuse"] {
        let result = call_on(ProtocolVersion::V_2026_07_28, tool).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert_eq!(result.result_type, Some(ResultType::COMPLETE), "{tool}");
    }
}
