//! The layer's options as Python hands them: the keyword arguments of every
//! adapter (`tool_timeout=30`), or a host's configuration mapping (the
//! ContextForge plugin's `config:`), read into a [`ToolErrorLayer`], each
//! value checked and refused with an error that names its key.

use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyMapping, PyString};

/// Every option the binding reads, each the layer's builder method of the same
/// name (`tool_timeouts` is `tool_timeout_for`, once per tool).
pub(crate) const OPTIONS: [&str; 5] = [
    "tool_timeout",
    "tool_timeouts",
    "redact_secrets",
    "max_error_bytes",
    "expose_panic_messages",
];

/// Who reads the options, as an error names them: the adapters'
/// `mcp_tool_errors: option `tool_timeout` …`, the plugin's
/// `mcp-tool-errors-contextforge: config key `max_error_bytes` …`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reader<'a> {
    /// What the error starts with.
    pub(crate) owner: &'a str,
    /// What a key is called there.
    pub(crate) noun: &'a str,
    /// The options it takes: all of [`OPTIONS`], or some.
    pub(crate) keys: &'a [String],
}

impl Reader<'_> {
    /// The layer that `options` (a mapping, or `None` for the defaults)
    /// describes; a `ValueError` naming the key when a key is unknown or its
    /// value is not one the option takes. A value of `None` is the option's
    /// default.
    pub(crate) fn layer(&self, options: &Bound<'_, PyAny>) -> PyResult<ToolErrorLayer> {
        let mut layer = ToolErrorLayer::new();
        if options.is_none() {
            return Ok(layer);
        }
        let options = options
            .cast::<PyMapping>()
            .ok()
            .and_then(|options| options.items().ok())
            .ok_or(())
            .map_err(|_| self.invalid(self.noun, "s must be a mapping"))?;
        for pair in options.iter() {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
            let key: String = key
                .extract()
                .map_err(|_| self.invalid(self.noun, " is not a string"))?;
            if !self.keys.contains(&key) {
                return Err(PyValueError::new_err(format!(
                    "{}: unknown {} `{key}` (known: {})",
                    self.owner,
                    self.noun,
                    self.keys.join(", ")
                )));
            }
            if value.is_none() {
                continue;
            }
            layer = match key.as_str() {
                "tool_timeout" => layer.tool_timeout(self.duration(&key, &value)?),
                "tool_timeouts" => self.per_tool_timeouts(layer, &key, &value)?,
                "redact_secrets" => layer.redact_secrets(self.flag(&key, &value)?),
                "max_error_bytes" => layer.max_error_bytes(self.byte_count(&key, &value)?),
                "expose_panic_messages" => layer.expose_panic_messages(self.flag(&key, &value)?),
                _ => unreachable!("every key of OPTIONS is read"),
            };
        }
        Ok(layer)
    }

    fn flag(&self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        value
            .cast::<PyBool>()
            .map(|flag| flag.is_true())
            .map_err(|_| self.invalid_key(key, "must be true or false"))
    }

    fn byte_count(&self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        value
            .cast::<PyInt>()
            .ok()
            .filter(|_| !value.is_instance_of::<PyBool>())
            .and_then(|max| max.extract::<usize>().ok())
            .filter(|&max| max >= 1)
            .ok_or_else(|| {
                self.invalid_key(key, "must be a whole number of 1 or more, or None (null)")
            })
    }

    /// A number of seconds above zero (an int or a float, not a bool).
    fn duration(&self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<Duration> {
        let seconds = if value.is_instance_of::<PyBool>() {
            None
        } else if let Ok(number) = value.cast::<PyInt>() {
            number.extract::<f64>().ok()
        } else if let Ok(number) = value.cast::<PyFloat>() {
            Some(number.value())
        } else {
            None
        };
        seconds
            .filter(|seconds| *seconds > 0.0)
            .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
            .ok_or_else(|| {
                self.invalid_key(key, "must be a number of seconds above 0, or None (null)")
            })
    }

    fn per_tool_timeouts(
        &self,
        mut layer: ToolErrorLayer,
        key: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<ToolErrorLayer> {
        let by_tool = value
            .cast::<PyMapping>()
            .ok()
            .and_then(|by_tool| by_tool.items().ok())
            .ok_or(())
            .map_err(|_| self.invalid_key(key, "must be a mapping of tool names to seconds"))?;
        for pair in by_tool.iter() {
            let (tool, seconds): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
            let tool = tool
                .cast::<PyString>()
                .map_err(|_| self.invalid_key(key, "has a tool name that is not a string"))?
                .to_str()?
                .to_owned();
            let timeout = self.duration(&format!("{key}[{tool:?}]"), &seconds)?;
            layer = layer.tool_timeout_for(tool, timeout);
        }
        Ok(layer)
    }

    fn invalid_key(&self, key: &str, why: &str) -> PyErr {
        PyValueError::new_err(format!("{}: {} `{key}` {why}", self.owner, self.noun))
    }

    fn invalid(&self, noun: &str, why: &str) -> PyErr {
        PyValueError::new_err(format!("{}: {noun}{why}", self.owner))
    }
}
