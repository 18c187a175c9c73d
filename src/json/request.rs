//! Reading a JSON-RPC request (or batch): its calls, and its view for the span.

use std::borrow::Cow;

use compact_str::CompactString;
use serde_json::{Map, Value};

use super::field::{field, str_field};
use crate::model::request_id::RequestId;
use crate::model::{Call, CallId, CallKind, Calls, Request, RequestView};

/// The `_meta` key of the protocol version each request carries from MCP
/// 2026-07-28 on.
const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

impl Request for Value {
    type Cancellation = std::convert::Infallible;

    fn calls(&self) -> Calls {
        match self {
            Value::Array(batch) => Calls::batch(batch.iter().filter_map(read_call)),
            single => read_call(single).map_or_else(Calls::none, Calls::one),
        }
    }

    fn view(&self) -> Option<RequestView<'_>> {
        let request = RequestFields::read(self)?;
        let meta = request
            .params
            .and_then(|params| field(params, "_meta"))
            .and_then(Value::as_object);
        let meta_str = |key| meta.and_then(|meta| str_field(meta, key));
        let protocol_version = meta_str(PROTOCOL_VERSION_META).or_else(|| match request.method {
            "initialize" => request
                .params
                .and_then(|params| str_field(params, "protocolVersion")),
            _ => None,
        });
        let view = RequestView::new(request.method)
            .with_tool(request.tool())
            .with_protocol_version(protocol_version.map(Cow::Borrowed))
            .with_trace_context(meta_str("traceparent"), meta_str("tracestate"));
        Some(match request.id {
            None | Some(Value::Null) => view,
            Some(Value::String(id)) => view.with_id(id),
            Some(id) => view.with_id(id),
        })
    }
}

/// The members of a JSON-RPC request the layer reads.
struct RequestFields<'a> {
    method: &'a str,
    params: Option<&'a Map<String, Value>>,
    /// `None` for a notification.
    id: Option<&'a Value>,
}

impl<'a> RequestFields<'a> {
    /// `None` when `message` is not a request or notification.
    fn read(message: &'a Value) -> Option<Self> {
        // One pass over the keys: a JSON-RPC request has a handful of them.
        let (mut method, mut params, mut id) = (None, None, None);
        for (key, value) in message.as_object()? {
            match key.as_str() {
                "method" => method = value.as_str(),
                "params" => params = value.as_object(),
                "id" => id = Some(value),
                _ => {}
            }
        }
        Some(Self {
            method: method?,
            params,
            id,
        })
    }

    /// `params.name` of a `tools/call`.
    fn tool(&self) -> Option<&'a str> {
        match self.method {
            "tools/call" => self.params.and_then(|params| str_field(params, "name")),
            _ => None,
        }
    }
}

/// The call `message` makes; `None` when it is not a request or notification.
fn read_call(message: &Value) -> Option<Call> {
    let request = RequestFields::read(message)?;
    let task_id = || {
        let params = request.params?;
        str_field(params, "taskId").map(CompactString::from)
    };
    let kind = match (request.method, request.tool()) {
        (_, Some(tool)) => CallKind::Tool(tool.into()),
        ("tasks/get", _) => task_id().map_or(CallKind::Other, CallKind::TaskStatus),
        ("tasks/result", _) => task_id().map_or(CallKind::Other, CallKind::TaskResult),
        ("tools/list", _) => CallKind::ToolList,
        _ => CallKind::Other,
    };
    let id = request.id.map_or(CallId::Notification, |id| {
        CallId::Id(RequestId::from_value(id))
    });
    Some(Call::new(id, kind))
}
