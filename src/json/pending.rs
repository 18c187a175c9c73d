//! Reading a JSON-RPC request (or batch) into [`JsonPending`].

use std::borrow::Cow;

use compact_str::CompactString;
use serde_json::{Map, Value};

use super::field::{field, str_field};
use crate::model::request_id::RequestId;
use crate::model::{Request, RequestView};

/// The `_meta` key of the protocol version each request carries from MCP
/// 2026-07-28 on.
const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// What the layer remembers of a JSON-RPC message or batch: for each request, its
/// id and, for a `tools/call`, the tool name.
///
/// For a single request with an integer id (or a string id up to 24 bytes) and a
/// tool name up to 24 bytes, nothing is allocated.
///
/// In a batch, each answer is matched to a request by its id, whatever order the
/// answers come in, through an index of the batch's ids built once per batch
/// that holds a `tools/call`, so matching is linear in the batch's length. Ids
/// match when they are the same JSON value of the same type (`1` is neither
/// `"1"` nor `1.0`). An id that several requests of a batch share belongs to the
/// first of them: every answer with that id is read as that request's answer
/// (rewrapped with its tool when it is a `tools/call`, left alone otherwise).
#[derive(Debug, Clone)]
pub struct JsonPending {
    pub(super) shape: Shape,
}

#[derive(Debug, Clone)]
pub(super) enum Shape {
    /// One message; `None` when it is not a request (a response, or not JSON-RPC).
    Single(Option<JsonCall>),
    /// A batch: one entry per element, `None` where the element is not a request.
    Batch(Vec<Option<JsonCall>>),
}

/// One request of a message or batch.
#[derive(Debug, Clone)]
pub(super) struct JsonCall {
    /// `None` for a notification.
    pub(super) id: Option<RequestId>,
    /// `Some` for a `tools/call` whose `params.name` is a string.
    pub(super) tool: Option<CompactString>,
    /// `Some` for a `tasks/get` or `tasks/result` whose `params.taskId` is a string.
    pub(super) task: Option<TaskRequest>,
}

/// A request about one task.
#[derive(Debug, Clone)]
pub(super) struct TaskRequest {
    pub(super) task_id: CompactString,
    pub(super) asks: TaskAsks,
}

/// Where the answer carries the task's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TaskAsks {
    /// `tasks/get`: the task, with its `result` once `completed` (2026-07-28).
    Status,
    /// `tasks/result`: the whole answer is the result (2025-11-25).
    Result,
}

impl Request for Value {
    type Pending = JsonPending;

    fn pending(&self) -> JsonPending {
        let shape = match self {
            Value::Array(batch) => Shape::Batch(batch.iter().map(JsonCall::read).collect()),
            single => Shape::Single(JsonCall::read(single)),
        };
        JsonPending { shape }
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

impl JsonPending {
    /// Every element of the message, as one slice whether it is a batch or not.
    pub(super) fn calls(&self) -> &[Option<JsonCall>] {
        match &self.shape {
            Shape::Single(call) => std::slice::from_ref(call),
            Shape::Batch(calls) => calls,
        }
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

impl JsonCall {
    fn read(message: &Value) -> Option<Self> {
        let request = RequestFields::read(message)?;
        let asks = match request.method {
            "tasks/get" => Some(TaskAsks::Status),
            "tasks/result" => Some(TaskAsks::Result),
            _ => None,
        };
        let task = asks.and_then(|asks| {
            let task_id = request
                .params
                .and_then(|params| str_field(params, "taskId"))?;
            Some(TaskRequest {
                task_id: task_id.into(),
                asks,
            })
        });
        Some(Self {
            id: request.id.map(RequestId::from_value),
            tool: request.tool().map(CompactString::from),
            task,
        })
    }
}
