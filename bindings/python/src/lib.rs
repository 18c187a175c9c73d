//! The native core of the `mcp_tool_errors` Python package: the
//! mcp-tool-errors layer for Python MCP servers and gateways.
//!
//! The Python side (`python/mcp_tool_errors/`) holds one adapter per host (the
//! official SDK's middleware, FastMCP's, LiteLLM's guardrail; the
//! ContextForge plugin, a distribution of its own, uses it too); each hands
//! [`ToolErrorsCore`] a tool's name and its result, or the way its call
//! ended (a timeout, an exception), and returns what comes back. Every rule
//! and every text is the library's ([`mcp_tool_errors::ToolErrorLayer`]):
//! this crate only reads the options and carries results between Python and
//! JSON.

mod python_json;
mod settings;
mod tool_errors_core;

use pyo3::prelude::*;

pub use crate::tool_errors_core::ToolErrorsCore;

/// The extension module `mcp_tool_errors._core`.
#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<ToolErrorsCore>()?;
    Ok(())
}
