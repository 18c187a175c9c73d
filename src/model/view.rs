//! [`RequestView`]: what the request span says about one request, borrowed from
//! the request itself.

use std::borrow::Cow;
use std::fmt::Display;

/// What the request span records of one request or notification: its method,
/// id, tool, protocol version and W3C trace context, all borrowed.
///
/// Made by [`Request::view`](super::Request::view), and only when a subscriber
/// records the span: a server without one never reads these fields.
#[derive(Clone)]
pub struct RequestView<'a> {
    method: &'a str,
    id: Option<&'a dyn Display>,
    tool: Option<&'a str>,
    protocol_version: Option<Cow<'a, str>>,
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
}

impl<'a> RequestView<'a> {
    /// A request (or notification) with JSON-RPC method `method` and nothing else
    /// known yet.
    pub fn new(method: &'a str) -> Self {
        Self {
            method,
            id: None,
            tool: None,
            protocol_version: None,
            traceparent: None,
            tracestate: None,
        }
    }

    /// The request id, shown as it is on the wire without JSON quotes (`7`,
    /// `req-7`); leave it out for a notification or a `null` id.
    pub fn with_id(mut self, id: &'a dyn Display) -> Self {
        self.id = Some(id);
        self
    }

    /// The tool a `tools/call` calls (`params.name`).
    pub fn with_tool(mut self, tool: Option<&'a str>) -> Self {
        self.tool = tool;
        self
    }

    /// The MCP protocol version the request was made under, if the request (or
    /// its session) says.
    pub fn with_protocol_version(mut self, version: Option<Cow<'a, str>>) -> Self {
        self.protocol_version = version;
        self
    }

    /// The W3C trace context the client sent in `params._meta`: `traceparent`
    /// and `tracestate`.
    pub fn with_trace_context(
        mut self,
        traceparent: Option<&'a str>,
        tracestate: Option<&'a str>,
    ) -> Self {
        self.traceparent = traceparent;
        self.tracestate = tracestate;
        self
    }

    /// The JSON-RPC method (`tools/call`, `initialize`, ...).
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The request id; `None` for a notification.
    pub fn id(&self) -> Option<&'a dyn Display> {
        self.id
    }

    /// The tool called, for a `tools/call`.
    pub fn tool(&self) -> Option<&'a str> {
        self.tool
    }

    /// The MCP protocol version, when known.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// `params._meta.traceparent`.
    pub fn traceparent(&self) -> Option<&'a str> {
        self.traceparent
    }

    /// `params._meta.tracestate`.
    pub fn tracestate(&self) -> Option<&'a str> {
        self.tracestate
    }
}

impl std::fmt::Debug for RequestView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestView")
            .field("method", &self.method)
            .field("id", &self.id.map(|id| id.to_string()))
            .field("tool", &self.tool)
            .field("protocol_version", &self.protocol_version)
            .field("traceparent", &self.traceparent)
            .field("tracestate", &self.tracestate)
            .finish()
    }
}
