//! The metric names a tool rmcp's server listed, though every call of it
//! failed: rmcp's own client lists the tools, then calls one that always
//! fails.

use mcp_tool_errors::ToolErrorLayer;
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ServerCapabilities, ServerConfig,
};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::exporter::{duration_points, exporter};

#[derive(Debug, Clone)]
struct Broken {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Broken {
    #[tool(description = "Always fails")]
    fn rmcp_listed_broken(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("the credentials are wrong")])
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Broken {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::test]
async fn a_tool_rmcp_listed_is_named_though_every_call_of_it_failed() {
    exporter();
    let transport = "listed-rmcp";
    let server = Broken {
        tool_router: Broken::tool_router(),
    }
    .layer(ToolErrorLayer::new().network_transport(transport));
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(server.serve(server_io), ().serve(client_io));
    tokio::spawn(server.expect("the server starts").waiting());
    let client = client.expect("the client connects");

    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(listed.len(), 1);
    for _ in 0..2 {
        let result = client
            .call_tool(CallToolRequestParams::new("rmcp_listed_broken"))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true));
    }
    client.cancel().await.unwrap();

    let (_, points) = duration_points("network.transport", transport);
    let calls: Vec<(String, String, u64)> = points
        .iter()
        .filter(|point| {
            point.attributes().any(|attribute| {
                attribute.key.as_str() == "mcp.method.name"
                    && attribute.value.as_str() == "tools/call"
            })
        })
        .map(|point| {
            let value = |key: &str| {
                point
                    .attributes()
                    .find(|attribute| attribute.key.as_str() == key)
                    .map(|attribute| attribute.value.to_string())
                    .unwrap_or_default()
            };
            (
                value("gen_ai.tool.name"),
                value("error.type"),
                point.count(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [("rmcp_listed_broken".to_owned(), "tool_error".to_owned(), 2)]
    );
}
