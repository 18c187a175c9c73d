//! The native core of the `mcp_tool_errors_contextforge` Python package: the
//! mcp-tool-errors layer applied to each result ContextForge's
//! `tool_post_invoke` hook hands the plugin.
//!
//! The Python side (`python/mcp_tool_errors_contextforge/`) is the gateway's
//! `Plugin` subclass; it hands the tool's name and result to
//! [`ToolErrorsCore::rewrap`] and returns what comes back. Every rule is the
//! library's ([`mcp_tool_errors::ToolErrorLayer::rewrap_result`]): this crate
//! only reads the plugin's configuration and carries the result between
//! Python and JSON.

mod python_json;
mod settings;
mod tool_errors_core;

use pyo3::prelude::*;

pub use crate::tool_errors_core::ToolErrorsCore;

/// The extension module `mcp_tool_errors_contextforge._core`.
#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<ToolErrorsCore>()?;
    Ok(())
}
