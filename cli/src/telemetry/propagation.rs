//! The client's trace, in the HTTP mode: with spans exported, every request
//! goes through the layer (a direct call's future is held from its sending to
//! its answer), and the W3C trace context of the HTTP request's headers is
//! the one the layer continues for a request whose `params._meta` carries
//! none.

use std::sync::atomic::{AtomicBool, Ordering};

use hyper::HeaderMap;
use serde_json::{Map, Value};

/// Whether request spans are exported: set once, at start.
static SPANS_EXPORTED: AtomicBool = AtomicBool::new(false);

pub(super) fn set_spans_exported() {
    SPANS_EXPORTED.store(true, Ordering::Relaxed);
}

/// Whether request spans are exported: then every request of the HTTP mode
/// goes through the layer when it is sent, a direct call's included.
pub(crate) fn spans_exported() -> bool {
    SPANS_EXPORTED.load(Ordering::Relaxed)
}

/// With spans exported, puts the `traceparent` and `tracestate` headers of
/// an HTTP request into the `params._meta` of each request in `message` (what
/// the layer reads, not what the upstream gets) that has no `traceparent` of
/// its own.
pub(crate) fn header_trace_context(headers: &HeaderMap, message: &mut Value) {
    if !spans_exported() {
        return;
    }
    let Some(context) = context_of(headers) else {
        return;
    };
    match message {
        Value::Array(batch) => batch
            .iter_mut()
            .for_each(|request| into_meta(request, &context)),
        request => into_meta(request, &context),
    }
}

/// The trace context headers, when there is a `traceparent`.
fn context_of(headers: &HeaderMap) -> Option<Map<String, Value>> {
    headers.get("traceparent")?;
    Some(
        ["traceparent", "tracestate"]
            .into_iter()
            .filter_map(|name| {
                let value = headers.get(name)?.to_str().ok()?;
                Some((name.to_owned(), Value::from(value)))
            })
            .collect(),
    )
}

fn into_meta(request: &mut Value, context: &Map<String, Value>) {
    let Some(request) = request.as_object_mut() else {
        return;
    };
    if !request.contains_key("method") {
        return;
    }
    let params = request
        .entry("params")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(params) = params.as_object_mut() else {
        return;
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    if meta.contains_key("traceparent") {
        return;
    }
    meta.extend(context.clone());
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_headers_context_goes_where_a_request_has_none() {
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", "00-aa-bb-01".parse().unwrap());
        headers.insert("tracestate", "k=v".parse().unwrap());
        let context = context_of(&headers).unwrap();
        let mut batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "t", "_meta": {"traceparent": "00-cc-dd-01"}}},
            {"jsonrpc": "2.0", "id": 4, "result": {}},
        ]);
        for request in batch.as_array_mut().unwrap() {
            into_meta(request, &context);
        }
        let both = json!({"traceparent": "00-aa-bb-01", "tracestate": "k=v"});
        assert_eq!(batch[0]["params"]["_meta"], both);
        assert_eq!(batch[1]["params"]["_meta"], both);
        assert_eq!(
            batch[2]["params"]["_meta"],
            json!({"traceparent": "00-cc-dd-01"})
        );
        assert_eq!(batch[3], json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
        assert!(context_of(&HeaderMap::new()).is_none());
    }
}
