//! tower-mcp's messages as the layer reads and builds them (feature
//! `tower-mcp`); the user's documentation is in `src/docs/tower_mcp.md`, part of
//! the crate docs.

mod id;
mod request;
mod response;
mod tool_result;
