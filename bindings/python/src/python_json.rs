//! A tool's result carried between Python and JSON: the dict a host hands its
//! middleware or hook, as a `serde_json::Value` the library reads, and back.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// How deep a result may nest before it is not read (serde_json's own limit
/// when it parses).
const MAX_DEPTH: usize = 128;

/// `object` as JSON; `None` when it holds anything JSON has no value for (a
/// URL object, bytes, a float that is not finite, a key that is not a string)
/// or nests deeper than [`MAX_DEPTH`]: such a result is not one the layer
/// reads. An integer beyond 64 bits is a float, as serde_json reads it from
/// text; a string with a lone surrogate (a file name decoded with
/// `surrogateescape`) has U+FFFD in its place, as UTF-8 cannot carry it.
pub(crate) fn to_json(object: &Bound<'_, PyAny>) -> Option<Value> {
    to_json_at(object, 0)
}

fn to_json_at(object: &Bound<'_, PyAny>, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    if object.is_none() {
        return Some(Value::Null);
    }
    if let Ok(text) = object.cast::<PyString>() {
        return Some(Value::String(text.to_string_lossy().into_owned()));
    }
    if let Ok(flag) = object.cast::<PyBool>() {
        return Some(Value::Bool(flag.is_true()));
    }
    if let Ok(number) = object.cast::<PyInt>() {
        if let Ok(number) = number.extract::<i64>() {
            return Some(Value::from(number));
        }
        if let Ok(number) = number.extract::<u64>() {
            return Some(Value::from(number));
        }
        return number
            .extract::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number);
    }
    if let Ok(number) = object.cast::<PyFloat>() {
        return Number::from_f64(number.value()).map(Value::Number);
    }
    if let Ok(map) = object.cast::<PyDict>() {
        let mut json = Map::with_capacity(map.len());
        for (key, value) in map.iter() {
            let key = key.cast::<PyString>().ok()?.to_string_lossy().into_owned();
            json.insert(key, to_json_at(&value, depth + 1)?);
        }
        return Some(Value::Object(json));
    }
    if let Ok(list) = object.cast::<PyList>() {
        return list
            .iter()
            .map(|item| to_json_at(&item, depth + 1))
            .collect();
    }
    if let Ok(tuple) = object.cast::<PyTuple>() {
        return tuple
            .iter()
            .map(|item| to_json_at(&item, depth + 1))
            .collect();
    }
    None
}

/// `json` as the Python value `json.loads` would make of it.
pub(crate) fn to_python<'py>(py: Python<'py>, json: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match json {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(number), _) => number.into_pyobject(py)?.into_any(),
            (None, Some(number)) => number.into_pyobject(py)?.into_any(),
            (None, None) => PyFloat::new(py, number.as_f64().unwrap_or(f64::NAN)).into_any(),
        },
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, value) in map {
                dict.set_item(key, to_python(py, value)?)?;
            }
            dict.into_any()
        }
    })
}
