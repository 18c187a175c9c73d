//! One `tools/call` that the layer need not hold while it runs: sent upstream
//! as the client's bytes, its answer read by its envelope and put through the
//! layer only when the layer may change it, as the stdio mode sends the
//! requests no timeout applies to (`crate::jsonrpc::layer_over_answer`).
//!
//! Such a call is one request (not a batch), of a tool no `--tool-timeout`
//! applies to, naming no task id of the proxy's (nothing to translate before
//! it goes upstream). Everything else is an [`exchange`](crate::exchange::layered_exchange),
//! whose layer future holds the timer. Both are answered by the same reader
//! ([`answer_reader`](crate::exchange::answer_reader)); what differs is when the
//! layer reads the call: here, when the answer comes
//! ([`LayerWork::OnAnswer`]), or, when spans are exported, as the call is sent
//! ([`LayerWork::Future`], with the trace context of the call's `params._meta`
//! or of its `traceparent` header), so that the span covers the call.

use hyper::header::HeaderMap;
use hyper::{Request, Response};
use serde_json::Value;

use crate::exchange::answer_reader::answer;
use crate::exchange::answer_rewriter::{AnswerRewriter, LayerWork};
use crate::exchange::layer_state::LayerState;
use crate::exchange::outbound::Outbound;
use crate::exchange::task_ids::{self, ToClient};
use crate::http::body::ProxyBody;
use crate::jsonrpc::envelope::{self, Envelope};
use crate::jsonrpc::layer_call::LayerCall;
use crate::jsonrpc::layer_request::LayerRequest;
use crate::jsonrpc::method::Method;
use crate::jsonrpc::timed_tools::TimedTools;

/// A `tools/call` the layer need not hold: its id and tool.
#[derive(Debug)]
pub(crate) struct DirectCall {
    id: Value,
    tool: Box<str>,
    /// With spans exported, what the layer reads of the call, its trace
    /// context included: the layer's future is then made when the call is
    /// sent, and resolved with its answer ([`LayerCall`]).
    traced: Option<Value>,
}

impl DirectCall {
    /// The call that `bytes` (a request sent with `headers`) hold, when it is
    /// one `tools/call` of a tool that `timed` leaves out, naming no task id
    /// of the proxy's; `None` for anything else.
    pub(crate) fn read(bytes: &[u8], headers: &HeaderMap, timed: &TimedTools) -> Option<Self> {
        // A request with task ids to translate is read whole; so is one
        // whose bytes do not spell `"tools/call"` (written with an escape, it
        // is still answered right, by an exchange), without reading its
        // envelope first.
        if task_ids::may_name_a_task(bytes, headers)
            || memchr::memmem::find(bytes, b"\"tools/call\"").is_none()
        {
            return None;
        }
        let Ok(Envelope::Single(fields)) = envelope::read(bytes) else {
            return None;
        };
        let is_call =
            fields.is_request() && fields.method.as_deref().is_some_and(Method::calls_a_tool);
        let tool = fields.params.name?;
        if !is_call || timed.includes(&tool) {
            return None;
        }
        let id = fields.id?;
        let traced = crate::telemetry::spans_exported().then(|| {
            let mut request = read_by_layer(&id, &tool).traced(bytes).into_value();
            crate::telemetry::header_trace_context(headers, &mut request);
            request
        });
        Some(Self {
            id,
            tool: tool.into(),
            traced,
        })
    }

    pub(crate) fn id(&self) -> &Value {
        &self.id
    }

    pub(crate) fn tool(&self) -> &str {
        &self.tool
    }

    /// The call as the layer reads it (id, method, tool).
    #[cfg(test)]
    fn request(&self) -> Value {
        read_by_layer(&self.id, &self.tool).into_value()
    }

    /// What the client gets of the answer to the call, sent with `headers`:
    /// the layer's future is made now when the call's span is exported.
    pub(crate) fn rewriter(
        self,
        layer_state: &LayerState,
        outbound: &Outbound,
        headers: &HeaderMap,
    ) -> AnswerRewriter {
        let to_client = ToClient::for_call(&self.id, &self.tool, layer_state.known_tasks());
        let layer_work = match self.traced {
            // The span starts as the call is sent.
            Some(request) => {
                let (sender, call) =
                    LayerCall::call(layer_state.layer(), layer_state.invalid_params(), request);
                LayerWork::Future(sender, call)
            }
            None => LayerWork::OnAnswer,
        };
        let requests = (vec![read_by_layer(&self.id, &self.tool)], false);
        AnswerRewriter::new(
            layer_state,
            outbound,
            requests,
            headers,
            to_client,
            layer_work,
            true,
        )
    }
}

/// What the layer reads of the call of `tool` with `id`.
fn read_by_layer(id: &Value, tool: &str) -> LayerRequest {
    LayerRequest::Single {
        id: id.clone(),
        method: Method::ToolsCall,
        name: Some(tool.into()),
    }
}

/// Sends `request` (holding `call`) upstream through `outbound` and answers
/// the client through the layer (`layer_state`'s), unless the end of the
/// drain comes first.
pub(crate) async fn exchange(
    layer_state: &LayerState,
    outbound: &Outbound,
    request: Request<ProxyBody>,
    call: DirectCall,
) -> Response<ProxyBody> {
    let rewriter = call.rewriter(layer_state, outbound, request.headers());
    answer(outbound, request, rewriter, None).await
}

#[cfg(test)]
mod tests {

    use hyper::header::HeaderValue;
    use serde_json::json;

    use super::*;

    /// The tools `--tool-timeout` (`every`) or `--tool-timeout-for` (`named`)
    /// time.
    fn timed(every: bool, named: &[&str]) -> TimedTools {
        TimedTools::new(every, named.iter().map(|tool| (*tool).to_owned()).collect())
    }

    fn call(tool: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{tool}","arguments":{{"q":"x"}}}}}}"#
        )
    }

    fn read(body: &str, timed: &TimedTools) -> Option<Value> {
        DirectCall::read(body.as_bytes(), &HeaderMap::new(), timed).map(|call| call.request())
    }

    #[test]
    fn a_call_of_a_tool_without_a_timeout_is_direct_and_read_by_its_envelope() {
        assert_eq!(
            read(&call("search"), &timed(false, &[])),
            Some(
                json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search"}})
            )
        );
        let build_only = timed(false, &["build"]);
        assert!(read(&call("search"), &build_only).is_some());
        assert_eq!(read(&call("build"), &build_only), None);
        assert_eq!(read(&call("search"), &timed(true, &[])), None);
    }

    #[test]
    fn batches_other_methods_notifications_and_what_is_no_json_go_through_an_exchange() {
        let untimed = timed(false, &[]);
        for body in [
            format!("[{}]", call("search")),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            "not json".to_owned(),
        ] {
            assert_eq!(read(&body, &untimed), None, "{body}");
        }
    }

    #[test]
    fn a_call_that_may_name_a_task_of_the_proxys_goes_through_an_exchange() {
        let untimed = timed(false, &[]);
        let related = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"mte1.74.31.0badc0de"}}}}"#;
        assert_eq!(read(related, &untimed), None);
        // The escape may spell the prefix: only reading the message tells.
        let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"q":"\u006dte1."}}}"#;
        assert_eq!(read(escaped, &untimed), None);
        let mut headers = HeaderMap::new();
        headers.insert("mcp-name", HeaderValue::from_static("mte1.74.31.0badc0de"));
        assert!(DirectCall::read(call("t").as_bytes(), &headers, &untimed).is_none());
    }
}
