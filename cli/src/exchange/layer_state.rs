//! The layer and the state the exchanges of every worker share with it: the
//! layer itself, whose memory of tasks every exchange reads through it, the
//! memory of `--invalid-params-as-tool-errors`, the server task ids this
//! process knows the tools of, and the `tools/call`s relayed in each
//! session. What a worker has of its own (its client of the upstream) and
//! what the server owns (the drain) go to each exchange beside it
//! ([`Outbound`](crate::exchange::outbound::Outbound)).

use std::sync::Arc;

use mcp_tool_errors::ToolErrorLayer;

use crate::exchange::seen_calls::SeenCalls;
use crate::exchange::task_ids::KnownTasks;
use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;

/// The layer and the state every worker's exchanges share with it; a clone
/// is a reference to the same.
#[derive(Debug, Clone)]
pub(crate) struct LayerState(Arc<Memories>);

#[derive(Debug)]
struct Memories {
    layer: ToolErrorLayer,
    invalid_params: InvalidParamsAsToolErrors<()>,
    known_tasks: Arc<KnownTasks>,
    seen_calls: SeenCalls,
}

impl LayerState {
    /// Exchanges layered by `layer`, with `invalid_params`, knowing no task
    /// and no call yet.
    pub(crate) fn new(
        layer: ToolErrorLayer,
        invalid_params: InvalidParamsAsToolErrors<()>,
    ) -> Self {
        Self(Arc::new(Memories {
            layer,
            invalid_params,
            known_tasks: Arc::default(),
            seen_calls: SeenCalls::default(),
        }))
    }

    /// The layer every exchange is layered by.
    pub(crate) fn layer(&self) -> &ToolErrorLayer {
        &self.0.layer
    }

    /// `--invalid-params-as-tool-errors`: each exchange puts its call under
    /// it with [`InvalidParamsAsToolErrors::over`], so that all share the
    /// tools listed.
    pub(crate) fn invalid_params(&self) -> &InvalidParamsAsToolErrors<()> {
        &self.0.invalid_params
    }

    /// The server task ids this process knows the tools of.
    pub(crate) fn known_tasks(&self) -> Arc<KnownTasks> {
        self.0.known_tasks.clone()
    }

    /// The `tools/call`s relayed in each session, for their answers on `GET`
    /// streams.
    pub(crate) fn seen_calls(&self) -> &SeenCalls {
        &self.0.seen_calls
    }
}
