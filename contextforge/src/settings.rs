//! The plugin's `config:` as the gateway's configuration file gives it, read
//! into the layer: the options of the library that apply to a result at hand.

use mcp_tool_errors::ToolErrorLayer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};

/// The keys the plugin reads, each an option of the layer of the same name.
const KEYS: [&str; 2] = ["redact_secrets", "max_error_bytes"];

/// The layer that `config` (the plugin's `config:`, a mapping or `None`)
/// describes; an error naming the key when a key is unknown or its value is
/// not one the option takes.
pub(crate) fn layer_from_config(config: &Bound<'_, PyAny>) -> PyResult<ToolErrorLayer> {
    let mut layer = ToolErrorLayer::new();
    if config.is_none() {
        return Ok(layer);
    }
    let config = config
        .cast::<PyDict>()
        .map_err(|_| invalid("config", "must be a mapping of options"))?;
    for (key, value) in config.iter() {
        let key: String = key
            .extract()
            .map_err(|_| invalid("config", "has a key that is not a string"))?;
        match key.as_str() {
            "redact_secrets" => {
                let redact = value
                    .cast::<PyBool>()
                    .map_err(|_| invalid(&key, "must be true or false"))?;
                layer = layer.redact_secrets(redact.is_true());
            }
            "max_error_bytes" if value.is_none() => {}
            "max_error_bytes" => {
                let max = value
                    .cast::<PyInt>()
                    .ok()
                    .filter(|_| !value.is_instance_of::<PyBool>())
                    .and_then(|max| max.extract::<usize>().ok())
                    .filter(|&max| max >= 1)
                    .ok_or_else(|| invalid(&key, "must be a whole number of 1 or more, or null"))?;
                layer = layer.max_error_bytes(max);
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "mcp-tool-errors-contextforge: unknown config key `{key}` (known: {})",
                    KEYS.join(", ")
                )));
            }
        }
    }
    Ok(layer)
}

fn invalid(key: &str, why: &str) -> PyErr {
    PyValueError::new_err(format!(
        "mcp-tool-errors-contextforge: config key `{key}` {why}"
    ))
}
