//! Any JSON-RPC request at the MCP endpoint that is no
//! [`DirectCall`](crate::exchange::direct_call::DirectCall): a batch, another
//! method, a call of a tool a timeout applies to, a message naming a task id
//! of the proxy's. The layer's future is made as it is sent and holds the
//! tool timeout's timer ([`LayerCall`]); the answer is read as a direct
//! call's is ([`answer_reader`](crate::exchange::answer_reader)), in the shape the
//! upstream chose.
//!
//! What differs from a direct call, all decided here before the request
//! goes: the task ids the client named are the server's again
//! ([`task_ids`](crate::exchange::task_ids)), and the layer is told which tool
//! each task belongs to, since this replica may never have seen the call
//! that made it; a request other than `tools/call` waits for its response
//! head at most the bound of [`head_timeout`](crate::upstream::head_timeout);
//! with `--invalid-params-as-tool-errors`, the tools listed are learned from
//! the `tools/list` answers this process relayed
//! (`crate::jsonrpc::invalid_params`).

use hyper::{Request, Response};
use serde_json::{Value, json};

use crate::exchange::answer_reader::answer;
use crate::exchange::answer_rewriter::{AnswerRewriter, LayerWork};
use crate::exchange::layer_state::LayerState;
use crate::exchange::outbound::Outbound;
use crate::exchange::task_ids::ToClient;
use crate::http::body::ProxyBody;
use crate::jsonrpc::layer_call::LayerCall;
use crate::jsonrpc::layer_over_answer::layer_over_answer;
use crate::jsonrpc::layer_request::LayerRequest;
use crate::jsonrpc::message::Answer;
use crate::upstream::head_timeout::HeadTimeout;

/// Sends `request` (whose body is `message`) upstream through `outbound` and
/// the layer (`layer_state`'s), and returns the client's response, its head
/// awaited at most what `head_timeout` gives the message and until the end of
/// the drain;
/// `opened` are the tool and the server's id of each task the message named.
pub(crate) async fn exchange(
    layer_state: &LayerState,
    outbound: &Outbound,
    head_timeout: &HeadTimeout,
    request: Request<ProxyBody>,
    message: Value,
    opened: &[(String, String)],
) -> Response<ProxyBody> {
    for (tool, task_id) in opened {
        remember_task(layer_state, tool, task_id);
    }
    let to_client = ToClient::new(&message, opened, layer_state.known_tasks());
    let sent = LayerRequest::each_of(&message);
    let head_timeout = head_timeout.for_requests(&sent);
    let batch = message.is_array();
    let plain_results_unread = opened.is_empty() && is_one_tools_call(&sent, batch);
    let (sender, call) =
        LayerCall::call(layer_state.layer(), layer_state.invalid_params(), message);
    let rewriter = AnswerRewriter::new(
        layer_state,
        outbound,
        (sent, batch),
        request.headers(),
        to_client,
        LayerWork::Future(sender, call),
        plain_results_unread,
    );
    answer(outbound, request, rewriter, head_timeout).await
}

/// Has the layer remember that the server's task `task_id` belongs to `tool`,
/// as if it had seen the `tools/call` that created it: the task's id, which
/// the client sent, says so, and this replica may never have seen that call.
fn remember_task(layer_state: &LayerState, tool: &str, task_id: &str) {
    let call = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": tool}});
    let handle = json!({"jsonrpc": "2.0", "id": 0, "result": {"task": {"taskId": task_id}}});
    let _ = layer_over_answer(
        layer_state.layer(),
        layer_state.invalid_params(),
        call,
        Answer::made(handle),
    );
}

/// Whether `requests` (sent as a `batch` or not) are one `tools/call`.
fn is_one_tools_call(requests: &[LayerRequest], batch: bool) -> bool {
    !batch && matches!(requests, [request] if request.is_tool_call())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn one_tools_call_is_a_single_request_not_a_batch() {
        let one = |message: &Value| {
            is_one_tools_call(&LayerRequest::each_of(message), message.is_array())
        };
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}});
        assert!(one(&call));
        assert!(!one(&json!([call])));
        assert!(!one(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        ));
        assert!(!one(
            &json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "t"}})
        ));
    }
}
