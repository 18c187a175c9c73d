//! [`ToolErrorsCore`]: the configured layer, as every Python adapter holds
//! it (`mcp_tool_errors.ToolErrorLayer`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::python_json::{to_json, to_python};
use crate::settings::{OPTIONS, Reader};

/// The layer configured from the adapters' keyword arguments (or a host's
/// configuration mapping), answering for one `tools/call` at a time: its
/// result rewrapped, its timeout, and the layer's own answers to a hang and
/// to a crash. Every text comes from the library.
///
/// Texts from Python (a tool's name, an exception's message) are read with
/// U+FFFD for a lone surrogate, which UTF-8 cannot carry (a file name decoded
/// with `surrogateescape`), so that no text makes an answer fail.
#[pyclass(frozen, name = "ToolErrorLayer", module = "mcp_tool_errors._core")]
#[derive(Debug)]
pub struct ToolErrorsCore {
    layer: ToolErrorLayer,
}

#[pymethods]
impl ToolErrorsCore {
    /// Reads the options (`tool_timeout`, `tool_timeouts`, `redact_secrets`,
    /// `max_error_bytes`, `expose_panic_messages`); raises `ValueError` naming
    /// the option that is unknown or holds a value it does not take.
    #[new]
    #[pyo3(signature = (**options))]
    fn new(py: Python<'_>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let keys = OPTIONS.map(str::to_owned);
        let reader = Reader {
            owner: "mcp_tool_errors",
            noun: "option",
            keys: &keys,
        };
        let options = match options {
            Some(options) => options.clone().into_any(),
            None => py.None().into_bound(py),
        };
        Ok(Self {
            layer: reader.layer(&options)?,
        })
    }

    /// The layer a host's configuration mapping describes (`None` for the
    /// defaults), taking only the options in `keys`; errors start with
    /// `owner` and call a key a `noun` (`config key`).
    #[staticmethod]
    fn from_config(
        config: &Bound<'_, PyAny>,
        keys: Vec<String>,
        owner: &str,
        noun: &str,
    ) -> PyResult<Self> {
        if let Some(key) = keys.iter().find(|key| !OPTIONS.contains(&key.as_str())) {
            return Err(PyValueError::new_err(format!(
                "mcp_tool_errors: `{key}` is not an option of the layer"
            )));
        }
        let reader = Reader {
            owner,
            noun,
            keys: &keys,
        };
        Ok(Self {
            layer: reader.layer(config)?,
        })
    }

    /// The result of a `tools/call` of `tool` as the layer writes it, as a new
    /// dict; `None` when the layer leaves it as it is (a success, a task
    /// handle, anything not a well-formed tool error, or not JSON).
    fn rewrap_result<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let tool = tool.to_string_lossy();
        guarded(|| {
            let Some(mut json) = to_json(result) else {
                return Ok(None);
            };
            if !self.layer.rewrap_result(&tool, &mut json) {
                return Ok(None);
            }
            to_python(py, &json).map(Some)
        })
    }

    /// How long a call of `tool` may take, in seconds: its own timeout, else
    /// every tool's; `None` when it has none.
    fn tool_timeout_of(&self, tool: &Bound<'_, PyString>) -> Option<f64> {
        self.layer
            .tool_timeout_of(&tool.to_string_lossy())
            .map(|timeout| timeout.as_secs_f64())
    }

    /// The result the layer answers a call of `tool` with when it did not
    /// finish within `timeout` seconds (the handler is to be cancelled).
    fn timed_out_result<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tool = tool.to_string_lossy();
        let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
            PyValueError::new_err("timeout must be a number of seconds of 0 or more")
        })?;
        guarded(|| to_python(py, &self.layer.timed_out_result(&tool, timeout)))
    }

    /// The result the layer answers a call of `tool` with when its handler
    /// failed without answering (an exception), `message` saying why: sent
    /// only under `expose_panic_messages`, redacted and capped as configured.
    fn crashed_result<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        message: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (tool, message) = (tool.to_string_lossy(), message.to_string_lossy());
        guarded(|| to_python(py, &self.layer.crashed_result(&tool, &message)))
    }

    /// What a log may show of a failure's `text`: redacted when
    /// `redact_secrets` is on, else `text` as it is.
    fn scrub_log_text(&self, text: &Bound<'_, PyString>) -> String {
        self.layer
            .scrub_log_text(&text.to_string_lossy())
            .into_owned()
    }
}

/// `make`'s answer; a `RuntimeError` if it panicked (the library catches the
/// panics of its own rendering, so this is a defect of the conversion).
fn guarded<T>(make: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(make))
        .unwrap_or_else(|_| Err(PyRuntimeError::new_err("mcp-tool-errors panicked")))
}
