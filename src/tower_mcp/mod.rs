//! tower-mcp support (feature `tower-mcp`).
