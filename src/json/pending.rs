//! Reading a JSON-RPC request (or batch) into [`JsonPending`].

use compact_str::CompactString;
use serde_json::Value;

use super::field::str_field;
use crate::exchange::Request;
use crate::exchange::request_id::RequestId;

/// What the layer remembers of a JSON-RPC message or batch: for each request, its
/// id and, for a `tools/call`, the tool name.
///
/// For a single request with an integer id (or a string id up to 24 bytes) and a
/// tool name up to 24 bytes, nothing is allocated.
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

impl JsonCall {
    fn read(message: &Value) -> Option<Self> {
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
        let method = method?;
        let tool = match method {
            "tools/call" => params
                .and_then(|params| str_field(params, "name"))
                .map(CompactString::from),
            _ => None,
        };
        let asks = match method {
            "tasks/get" => Some(TaskAsks::Status),
            "tasks/result" => Some(TaskAsks::Result),
            _ => None,
        };
        let task = asks.and_then(|asks| {
            let task_id = params.and_then(|params| str_field(params, "taskId"))?;
            Some(TaskRequest {
                task_id: task_id.into(),
                asks,
            })
        });
        Some(Self {
            id: id.map(RequestId::from_value),
            tool,
            task,
        })
    }
}
