//! [`ToolErrorsCore`]: the configured layer, as the Python plugin holds it.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mcp_tool_errors::ToolErrorLayer;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::python_json::{to_json, to_python};
use crate::settings::layer_from_config;

/// The layer configured from the plugin's `config:`, applied to one tool
/// result at a time.
#[pyclass(frozen, module = "mcp_tool_errors_contextforge._core")]
#[derive(Debug)]
pub struct ToolErrorsCore {
    layer: ToolErrorLayer,
}

#[pymethods]
impl ToolErrorsCore {
    /// Reads `config` (a mapping, or `None` for the defaults); raises
    /// `ValueError` naming the key that is unknown or holds a value its option
    /// does not take.
    #[new]
    fn new(config: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self {
            layer: layer_from_config(config)?,
        })
    }

    /// The result of a `tools/call` of `tool` as the layer writes it, as a new
    /// dict; `None` when the layer leaves it as it is (a success, a task
    /// handle, anything not a well-formed tool error, or not JSON).
    ///
    /// Raises `RuntimeError` only if the conversion itself panicked (the
    /// library catches the panics of its own rendering).
    fn rewrap<'py>(
        &self,
        py: Python<'py>,
        tool: &str,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let rewrap = || -> PyResult<Option<Bound<'py, PyAny>>> {
            let Some(mut json) = to_json(result) else {
                return Ok(None);
            };
            if !self.layer.rewrap_result(tool, &mut json) {
                return Ok(None);
            }
            to_python(py, &json).map(Some)
        };
        catch_unwind(AssertUnwindSafe(rewrap))
            .unwrap_or_else(|_| Err(PyRuntimeError::new_err("mcp-tool-errors panicked")))
    }
}
