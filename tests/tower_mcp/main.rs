//! The layer over tower-mcp's typed router messages: the golden corpus through
//! the typed path, a real `McpRouter` behind tower-mcp's stdio transport, no
//! panic payload on the wire, the `tower_mcp_stdio` example driven as a child
//! process, and a timeout through tower-mcp's in-process transport.

#[path = "../support/mod.rs"]
mod support;

mod golden;
mod leaks;
mod router;
mod stdio_example;
mod timeouts;
mod wire;
