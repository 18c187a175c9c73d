//! The golden corpus through the tower-mcp path: a typed `RouterRequest` in, a
//! scripted tower service answering with typed `RouterResponse`s, the layer, and
//! the response serialized as the JSON-RPC message tower-mcp writes
//! (`RouterResponse::into_jsonrpc`), compared byte for byte with
//! `golden/<case>.out.json`.
//!
//! The JSON path owns the corpus: this test reads it and never rewrites it.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;
use tower::{Layer, Service, ServiceExt};
use tower_mcp::{
    CallToolResult, JsonRpcError, JsonRpcRequest, McpRequest, McpResponse, RequestId,
    RouterRequest, RouterResponse,
};

use crate::support::golden::{Case, Inner, golden_dir, load_cases, panicking, serialize_output};
use crate::support::quiet_panics::silence_expected_panics;

const BATCH: &str = "a RouterRequest is one request: tower-mcp's JsonRpcService splits a batch \
                     and calls the router service once per element";
const NOTIFICATION: &str = "a notification never reaches the router service: tower-mcp's \
                            transports handle notifications themselves";

/// Cases whose request no `RouterRequest` can carry.
const NOT_EXPRESSIBLE: &[(&str, &str)] = &[
    ("batch-matched-by-id", BATCH),
    ("panic-batch", BATCH),
    ("notification-no-response", NOTIFICATION),
    ("panic-notification-no-response", NOTIFICATION),
];

/// Cases that run, but whose golden bytes tower-mcp's `CallToolResult` cannot
/// carry; the output is compared with the golden response as tower-mcp would
/// carry it (parsed into its types and written back), and must differ from the
/// golden bytes, so that a case leaves this list when tower-mcp learns to keep it.
const TYPED_FORM: &[(&str, &str)] = &[
    (
        "is-error-false-untouched",
        "CallToolResult leaves `isError` out when it is false",
    ),
    (
        "keeps-other-fields-and-order",
        "CallToolResult has no `resultType` and no unknown fields, and writes its keys in its own \
         order (content, isError, structuredContent, _meta)",
    ),
];

/// The inner service of a case, typed: answers with a `RouterResponse`, or
/// panics in `call` or in its future.
#[derive(Clone)]
struct ScriptedRouter {
    inner: Inner,
}

impl Service<RouterRequest> for ScriptedRouter {
    type Response = RouterResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<RouterResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: RouterRequest) -> Self::Future {
        match self.inner.clone() {
            Inner::Respond(message) => {
                let response = typed_response(&request.inner, &message);
                Box::pin(async move { Ok(response) })
            }
            Inner::Panic { at, payload } => panicking(at, payload),
        }
    }
}

/// The request as tower-mcp's transports hand it to the router service, if a
/// single `RouterRequest` can carry it.
fn router_request(message: &Value) -> Option<RouterRequest> {
    let request: JsonRpcRequest = serde_json::from_value(message.clone()).ok()?;
    let inner = McpRequest::from_jsonrpc(&request).ok()?;
    Some(RouterRequest::new(request.id, inner))
}

/// A JSON-RPC response as a tower service built on tower-mcp's types would
/// produce it: a `tools/call` result that is a valid `CallToolResult` is typed,
/// anything else is `McpResponse::Raw` (tower-mcp has no typed form for a
/// malformed result).
fn typed_response(request: &McpRequest, message: &Value) -> RouterResponse {
    let id = RequestId::from_json(&message["id"]).expect("a scripted response has a valid id");
    let inner = match message.get("error") {
        Some(error) => Err(serde_json::from_value::<JsonRpcError>(error.clone())
            .expect("a scripted error is a JSON-RPC error object")),
        None => Ok(typed_result(request, &message["result"])),
    };
    RouterResponse { id, inner }
}

fn typed_result(request: &McpRequest, result: &Value) -> McpResponse {
    if matches!(request, McpRequest::CallTool(_))
        && let Ok(result) = serde_json::from_value::<CallToolResult>(result.clone())
    {
        return McpResponse::CallTool(result);
    }
    McpResponse::Raw(result.clone())
}

/// The bytes tower-mcp writes for `response`, pretty-printed like the corpus.
fn wire_bytes(response: RouterResponse) -> String {
    serialize_output(&serde_json::to_value(response.into_jsonrpc()).unwrap())
}

async fn run(case: &Case, request: RouterRequest) -> String {
    let layer = case.layer();
    let service = layer.layer(ScriptedRouter {
        inner: case.inner.clone(),
    });
    wire_bytes(service.oneshot(request).await.unwrap())
}

fn golden_output(case: &Case) -> String {
    let path = golden_dir().join(format!("{}.out.json", case.name));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn reason<'a>(list: &[(&str, &'a str)], case: &str) -> Option<&'a str> {
    list.iter()
        .find(|(name, _)| *name == case)
        .map(|(_, why)| *why)
}

/// Checks one case that a `RouterRequest` can carry; `Err` describes a failure.
async fn check_case(case: &Case, request: RouterRequest) -> Result<(), String> {
    let name = &case.name;
    let method = request.inner.clone();
    let actual = run(case, request).await;
    let golden = golden_output(case);
    match reason(TYPED_FORM, name) {
        None if actual == golden => {}
        None => {
            return Err(format!(
                "{name}: tower-mcp output differs from the golden file\n--- expected\n{golden}--- actual\n{actual}"
            ));
        }
        Some(_) if actual == golden => {
            return Err(format!(
                "{name}: now matches the golden bytes exactly; remove it from TYPED_FORM"
            ));
        }
        Some(why) => {
            let golden_json: Value = serde_json::from_str(&golden).unwrap();
            let expected = wire_bytes(typed_response(&method, &golden_json));
            if actual != expected {
                return Err(format!(
                    "{name} ({why}): output differs from the golden response in tower-mcp's form\n\
                     --- expected\n{expected}--- actual\n{actual}"
                ));
            }
        }
    }
    if case.untouched {
        let Inner::Respond(inner) = &case.inner else {
            return Err(format!("{name}: only a response can pass untouched"));
        };
        let without_layer = wire_bytes(typed_response(&method, inner));
        if actual != without_layer {
            return Err(format!(
                "{name}: {}\n--- without the layer\n{without_layer}--- with it\n{actual}",
                case.rule
            ));
        }
    }
    Ok(())
}

#[tokio::test]
async fn every_golden_case_through_the_tower_mcp_path() {
    silence_expected_panics();
    let cases = load_cases();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        match (
            router_request(&case.request),
            reason(NOT_EXPRESSIBLE, &case.name),
        ) {
            (Some(request), None) => {
                ran += 1;
                if let Err(failure) = check_case(case, request).await {
                    failures.push(failure);
                }
            }
            (None, Some(_)) => {}
            (Some(_), Some(_)) => failures.push(format!(
                "{}: listed in NOT_EXPRESSIBLE, but a RouterRequest carries it; run it",
                case.name
            )),
            (None, None) => failures.push(format!(
                "{}: no RouterRequest carries it, and it is not listed in NOT_EXPRESSIBLE \
                 with a reason",
                case.name
            )),
        }
    }
    for (name, _) in NOT_EXPRESSIBLE.iter().chain(TYPED_FORM) {
        if !cases.iter().any(|case| case.name == *name) {
            failures.push(format!("{name}: listed, but there is no such case"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(ran + NOT_EXPRESSIBLE.len(), cases.len());
}
