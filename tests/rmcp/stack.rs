//! `ServerHandlerExt::layer` with a stack of one's own: only `tools/call` and
//! `tools/list` (and `tasks/get`) go through it, a configured `ToolErrorLayer`
//! keeps its settings, and errors of the stack reach the client as JSON-RPC
//! errors.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use mcp_tool_errors::rmcp::{HandlerService, RequestWithContext, ServerHandlerExt};
use mcp_tool_errors::{ToolErrorLayer, render_error};
use rmcp::ErrorData;
use rmcp::model::{ClientRequest, ErrorCode, ProtocolVersion, RequestId, ServerResult};
use rmcp::service::RequestContext;
use rmcp::service::ServiceError;
use tower::layer::layer_fn;
use tower::{BoxError, Service, ServiceBuilder, ServiceExt};

use super::servers::{
    ProbeClient, SECRET, ToolServer, answered, call, connect_duplex, echo, only_text, server_peer,
};

const VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// Notes the method of every request that goes through it.
#[derive(Clone)]
struct Witness<S> {
    inner: S,
    seen: Arc<Mutex<Vec<String>>>,
}

impl<S: Service<RequestWithContext>> Service<RequestWithContext> for Witness<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: RequestWithContext) -> S::Future {
        self.seen
            .lock()
            .unwrap()
            .push(request.request.method().to_owned());
        self.inner.call(request)
    }
}

#[tokio::test]
async fn only_tools_call_and_tools_list_go_through_a_configured_stack() {
    super::support::quiet_panics::silence_expected_panics();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let witness = {
        let seen = Arc::clone(&seen);
        layer_fn(move |inner| Witness {
            inner,
            seen: Arc::clone(&seen),
        })
    };
    let stack = ServiceBuilder::new()
        .layer(witness)
        .layer(ToolErrorLayer::new().expose_panic_messages(true));
    let client = connect_duplex(ToolServer::new().layer(stack), ProbeClient::new(VERSION).0).await;

    answered("tools/list", client.list_all_tools())
        .await
        .unwrap();
    let result = answered("panic_sync", client.call_tool(call("panic_sync")))
        .await
        .unwrap();
    let message = format!(
        "The tool failed with an internal error: [expected] sync tool failed with token={SECRET}"
    );
    assert_eq!(only_text(&result), render_error("panic_sync", &message));
    let echoed = answered("echo", client.call_tool(echo("hi")))
        .await
        .unwrap();
    assert_eq!(only_text(&echoed), "hi");

    assert_eq!(
        *seen.lock().unwrap(),
        ["tools/list", "tools/call", "tools/call"]
    );
}

/// Fails every request with `error`, as a rate limiter or an authorizer would.
#[derive(Clone)]
struct Refuse {
    error: fn() -> BoxError,
}

impl Service<RequestWithContext> for Refuse {
    type Response = ServerResult;
    type Error = BoxError;
    type Future = std::future::Ready<Result<ServerResult, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: RequestWithContext) -> Self::Future {
        std::future::ready(Err((self.error)()))
    }
}

async fn refused_with(error: fn() -> BoxError) -> ErrorData {
    let refuse = layer_fn(move |_inner| Refuse { error });
    let client = connect_duplex(ToolServer::new().layer(refuse), ProbeClient::new(VERSION).0).await;
    let answer = answered("echo", client.call_tool(echo("hi"))).await;
    let Err(ServiceError::McpError(error)) = answer else {
        panic!("a JSON-RPC error expected, got {answer:?}")
    };
    error
}

#[tokio::test]
async fn a_stack_error_reaches_the_client_as_a_json_rpc_error() {
    let error = refused_with(|| "quota exceeded".into()).await;
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(error.message, "quota exceeded");

    let error = refused_with(|| Box::new(ErrorData::invalid_params("not allowed", None))).await;
    assert_eq!(error, ErrorData::invalid_params("not allowed", None));
}

#[tokio::test]
async fn the_handler_service_answers_other_requests_as_rmcp_dispatches_them() {
    let (peer, _stream) = server_peer();
    let service = HandlerService::new(Arc::new(ToolServer::new()));
    let request = |json: serde_json::Value| {
        let request: ClientRequest = serde_json::from_value(json).unwrap();
        RequestWithContext::new(
            request,
            RequestContext::new(RequestId::Number(1), peer.clone()),
        )
    };

    let listed = service
        .clone()
        .oneshot(request(serde_json::json!({"method": "tools/list"})))
        .await;
    let Ok(ServerResult::ListToolsResult(listed)) = listed else {
        panic!("a tool list expected, got {listed:?}")
    };
    assert!(
        listed.tools.iter().any(|tool| tool.name == "echo"),
        "{listed:?}"
    );

    let echo = serde_json::json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}});
    let Ok(ServerResult::CallToolResult(echoed)) = service.oneshot(request(echo)).await else {
        panic!("a tool result expected")
    };
    assert_eq!(only_text(&echoed), "hi");
}
