//! The layer over tower-mcp's typed router messages: the golden corpus through
//! the typed path, a real `McpRouter` behind tower-mcp's stdio transport, and
//! the `tower_mcp_stdio` example driven as a child process; a timeout through
//! tower-mcp's in-process transport.

mod support;

#[path = "tower_mcp/golden.rs"]
mod golden;
#[path = "tower_mcp/router.rs"]
mod router;
#[path = "tower_mcp/stdio_example.rs"]
mod stdio_example;
#[path = "tower_mcp/timeouts.rs"]
mod timeouts;
#[path = "tower_mcp/wire.rs"]
mod wire;
