//! [`ToolNames`]: the tool names the metric `mcp.server.operation.duration`
//! records as they are, so that its attribute `gen_ai.tool.name` has a bounded
//! number of values whatever the clients send.
//!
//! A tool name is learned from the server, never from a client: when the
//! server lists it in an answer to `tools/list` (every page the layer passes
//! adds its names), or answers a `tools/call` of it with a success. So a tool
//! that has failed at every call is named, with its `error.type`, once the
//! server has listed it. An `isError` result, a JSON-RPC error, a panic or a
//! timeout teaches nothing, since the name called may be anything a client
//! made up, and servers answer an unknown tool with an error result (the
//! official Python SDK) as well as with a JSON-RPC error. At most
//! [`MAX_TOOL_NAMES`] are learned, listed and answered together, first come
//! first named; the metric records any other name as `_OTHER`. The span is
//! not bounded: it keeps the name as sent.
//!
//! The names are the layer value's, shared by its clones and by every service
//! they build, as its memory of tasks is. A read takes a read lock and hashes
//! the name; a known name's attribute value is a reference count, not a copy.
//! Only the layer's own code runs under the lock. A `tools/list` answer is
//! read only when the metric is recorded.

#[cfg(feature = "opentelemetry")]
use std::collections::HashSet;
#[cfg(feature = "opentelemetry")]
use std::sync::{Arc, PoisonError, RwLock};

#[cfg(feature = "opentelemetry")]
use opentelemetry::Value;

/// How many distinct tool names the metric records, per layer value.
#[cfg(feature = "opentelemetry")]
const MAX_TOOL_NAMES: usize = 1_000;

/// What the metric records in place of a tool name it does not know: the
/// conventions' value for "some other value".
#[cfg(feature = "opentelemetry")]
const OTHER: &str = "_OTHER";

/// The tool names the metric records as they are: those of the tools the server
/// listed or answered with a success, at most [`MAX_TOOL_NAMES`]. Cloning
/// shares them.
#[derive(Clone, Default)]
pub(crate) struct ToolNames {
    // Only ever grows, to its bound: a name once recorded stays the same
    // series.
    #[cfg(feature = "opentelemetry")]
    known: Arc<RwLock<HashSet<Arc<str>>>>,
}

#[cfg(feature = "opentelemetry")]
impl ToolNames {
    /// The value of `gen_ai.tool.name` for `tool`: the name when it is known,
    /// or learned now because the server `answered` a `tools/call` of it with a
    /// success and there is room; `_OTHER` otherwise.
    pub(super) fn attribute(&self, tool: &str, answered: bool) -> Value {
        {
            let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(name) = known.get(tool) {
                return Value::from(Arc::clone(name));
            }
            if !answered || known.len() >= MAX_TOOL_NAMES {
                return Value::from(OTHER);
            }
        }
        self.learn(tool)
    }

    /// Learns `tool`, listed by the server, if it is new and there is room.
    fn learn_listed_name(&self, tool: &str) {
        {
            let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
            if known.contains(tool) || known.len() >= MAX_TOOL_NAMES {
                return;
            }
        }
        self.learn(tool);
    }

    /// Learns `tool`, if there is still room.
    #[cold]
    #[inline(never)]
    fn learn(&self, tool: &str) -> Value {
        // Made before the lock is taken, so that the lock is held for the
        // insertion only.
        let name: Arc<str> = Arc::from(tool);
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(known_name) = known.get(tool) {
            return Value::from(Arc::clone(known_name));
        }
        if known.len() >= MAX_TOOL_NAMES {
            return Value::from(OTHER);
        }
        known.insert(Arc::clone(&name));
        Value::from(name)
    }

    /// How many names are known.
    fn len(&self) -> usize {
        self.known
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl ToolNames {
    /// Whether the names a `tools/list` answer lists are worth reading: the
    /// metric is recorded in this process.
    pub(crate) fn learns_listed(&self) -> bool {
        #[cfg(feature = "opentelemetry")]
        return super::instrument::is_recorded();
        #[cfg(not(feature = "opentelemetry"))]
        false
    }

    /// Learns `tool`, which the server listed in an answer to `tools/list`, if
    /// there is still room.
    pub(crate) fn learn_listed(&self, tool: &str) {
        #[cfg(feature = "opentelemetry")]
        self.learn_listed_name(tool);
        #[cfg(not(feature = "opentelemetry"))]
        let _ = tool;
    }
}

impl std::fmt::Debug for ToolNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("ToolNames");
        #[cfg(feature = "opentelemetry")]
        debug.field("known", &self.len());
        debug.finish()
    }
}
