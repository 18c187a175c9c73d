//! [`Calls`]: what the layer keeps of the requests of a message while the inner
//! service handles them.

use compact_str::CompactString;

use super::request_id::RequestId;

/// The calls of one message: none (it is not a request), one, or a batch's.
#[derive(Debug, Clone)]
pub struct Calls {
    shape: Shape,
}

#[derive(Debug, Clone)]
enum Shape {
    /// One message; `None` when it is not a request (a response, or not JSON-RPC).
    Single(Option<Call>),
    /// The requests of a batch, in order (its other elements are left out).
    Batch(Vec<Call>),
}

impl Calls {
    /// A message that is not a request.
    pub fn none() -> Self {
        Self {
            shape: Shape::Single(None),
        }
    }

    /// A message that is one request.
    pub fn one(call: Call) -> Self {
        Self {
            shape: Shape::Single(Some(call)),
        }
    }

    /// A batch, with the requests among its elements.
    pub fn batch(calls: impl IntoIterator<Item = Call>) -> Self {
        Self {
            shape: Shape::Batch(calls.into_iter().collect()),
        }
    }

    /// Whether the message is a batch (its answer is an array, even of one).
    pub fn is_batch(&self) -> bool {
        matches!(self.shape, Shape::Batch(_))
    }

    /// Every call, in order.
    pub fn as_slice(&self) -> &[Call] {
        match &self.shape {
            Shape::Single(call) => call.as_slice(),
            Shape::Batch(calls) => calls,
        }
    }

    /// The tool of every `tools/call`, in order: the layer picks the request's
    /// timeout from them.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &str> {
        self.as_slice().iter().filter_map(Call::tool)
    }
}

/// One request (or notification) of a message.
#[derive(Debug, Clone)]
pub struct Call {
    id: CallId,
    kind: CallKind,
}

/// How the answer to a call is known.
#[derive(Debug, Clone)]
pub enum CallId {
    /// A notification: it expects no answer.
    Notification,
    /// A request whose id the message type does not show: the one answer of
    /// the exchange is its answer (rmcp's typed requests).
    Unnamed,
    /// A request with its id.
    Id(RequestId),
}

/// What a call asks for, as far as the layer follows it.
#[derive(Debug, Clone)]
pub enum CallKind {
    /// A `tools/call` of this tool.
    Tool(CompactString),
    /// A `tasks/get` of this task: its state, with its result once completed
    /// (from protocol 2026-07-28).
    TaskStatus(CompactString),
    /// A `tasks/result` of this task: its result (protocol 2025-11-25).
    TaskResult(CompactString),
    /// A `tools/list`: its answer names the server's tools (one page of them).
    ToolList,
    /// Anything else: passed through.
    Other,
}

impl Call {
    /// A call with `id` that asks for `kind`.
    pub fn new(id: CallId, kind: CallKind) -> Self {
        Self { id, kind }
    }

    /// How its answer is known.
    pub fn id(&self) -> &CallId {
        &self.id
    }

    /// What it asks for.
    pub fn kind(&self) -> &CallKind {
        &self.kind
    }

    /// The tool, for a `tools/call`.
    pub fn tool(&self) -> Option<&str> {
        match &self.kind {
            CallKind::Tool(tool) => Some(tool),
            _ => None,
        }
    }

    /// The request id, when it has one.
    pub fn request_id(&self) -> Option<&RequestId> {
        match &self.id {
            CallId::Id(id) => Some(id),
            _ => None,
        }
    }

    /// Whether it expects an answer.
    pub fn expects_answer(&self) -> bool {
        !matches!(self.id, CallId::Notification)
    }

    /// Whether the layer reads its answer: a tool result or a task's always,
    /// a list of tools when `tool_lists` (the metric names the tools listed).
    pub(crate) fn is_followed(&self, tool_lists: bool) -> bool {
        self.expects_answer()
            && match self.kind {
                CallKind::Other => false,
                CallKind::ToolList => tool_lists,
                _ => true,
            }
    }
}
