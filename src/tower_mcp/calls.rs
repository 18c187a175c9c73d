//! Reading a [`RouterRequest`] into [`TowerMcpCalls`].

use ::tower_mcp::{McpRequest, RouterRequest};
use compact_str::CompactString;

use super::id::RouterId;
use crate::exchange::ToolCallRequest;

/// What the layer remembers of a [`RouterRequest`]: its id and, for a
/// `tools/call`, the tool name.
///
/// A `RouterRequest` is always one request that expects an answer: tower-mcp's
/// transports split batches and handle notifications before the router service
/// sees anything. For an integer id (or a string id up to 24 bytes) and a tool
/// name up to 24 bytes, nothing is allocated.
#[derive(Debug, Clone)]
pub struct TowerMcpCalls {
    pub(super) id: RouterId,
    /// `Some` for a `tools/call`.
    pub(super) tool: Option<CompactString>,
}

impl ToolCallRequest for RouterRequest {
    type Calls = TowerMcpCalls;

    fn tool_calls(&self) -> TowerMcpCalls {
        let tool = match &self.inner {
            McpRequest::CallTool(params) => Some(CompactString::from(params.name.as_str())),
            _ => None,
        };
        TowerMcpCalls {
            id: RouterId::new(&self.id),
            tool,
        }
    }
}
