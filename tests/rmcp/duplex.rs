//! rmcp's own client against a layered server over an in-memory duplex.

use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::model::ProtocolVersion;

use super::scenarios::{self, Transport};
use super::servers::{ProbeClient, ToolServer, connect_duplex};

/// The protocol version rmcp's client negotiates with `initialize` by default
/// today, and on which a server may still send requests to the client.
const VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

#[tokio::test]
async fn panicking_tools_are_answered_and_the_connection_stays_usable() {
    super::support::quiet_panics::silence_expected_panics();
    let (client, _events) = ProbeClient::new(VERSION);
    let client = connect_duplex(ToolServer::new().with_tool_errors(), client).await;
    scenarios::panicking_tools_are_answered(&client).await;
}

#[tokio::test]
async fn tool_errors_are_rewrapped() {
    let (client, _events) = ProbeClient::new(VERSION);
    let client = connect_duplex(ToolServer::new().with_tool_errors(), client).await;
    scenarios::tool_errors_are_rewrapped(&client).await;
}

#[tokio::test]
async fn successes_and_protocol_errors_are_the_same_with_and_without_the_layer() {
    let bare = connect_duplex(ToolServer::new(), ProbeClient::new(VERSION).0).await;
    let layered = connect_duplex(
        ToolServer::new().with_tool_errors(),
        ProbeClient::new(VERSION).0,
    )
    .await;
    scenarios::the_layer_changes_nothing_else(&bare, &layered).await;
}

#[tokio::test]
async fn the_request_context_reaches_the_tool() {
    let (client, mut events) = ProbeClient::new(VERSION);
    let client = connect_duplex(ToolServer::new().with_tool_errors(), client).await;
    scenarios::the_context_reaches_the_tool(&client, &mut events, Transport::Duplex).await;
}
