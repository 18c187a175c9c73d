//! The golden corpus through the tower-mcp path: a typed `RouterRequest` in, a
//! scripted tower service answering with typed `RouterResponse`s, the layer, and
//! the response serialized as the JSON-RPC message tower-mcp writes
//! (`RouterResponse::into_jsonrpc`), compared byte for byte with
//! `golden/<case>.out.json` in tower-mcp's form: parsed into its types and
//! written back. tower-mcp's types write every object's keys in the order of
//! their fields (`jsonrpc`, `id`, `result`; `type`, `text`), where the JSON
//! path writes the objects the layer creates with their keys sorted; the
//! values must be the golden file's, but for the cases of `TYPED_FORM`.
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

use crate::support::golden::{
    Case, Inner, golden_dir, hanging, load_cases, panicking, serialize_output,
};
use crate::support::quiet_panics::silence_expected_panics;

/// Cases whose request no `RouterRequest` can carry, each with the reason
/// `router_request` must report: a listed case that a `RouterRequest` carries,
/// or that fails for another reason, fails the test.
const NOT_EXPRESSIBLE: &[(&str, NotCarried)] = &[
    ("batch-matched-by-id", NotCarried::Batch),
    ("panic-batch", NotCarried::Batch),
    ("timeout-batch", NotCarried::Batch),
    ("notification-no-response", NotCarried::Notification),
    ("panic-notification-no-response", NotCarried::Notification),
    ("task-get-result-rewrapped", NotCarried::Sequence),
    ("task-result-rewrapped-2025-11-25", NotCarried::Sequence),
    (
        "task-result-delivered-twice-2025-11-25",
        NotCarried::Sequence,
    ),
    ("task-failed-untouched", NotCarried::Sequence),
    (
        "task-failed-result-rewrapped-2025-11-25",
        NotCarried::Sequence,
    ),
];

/// Why no `RouterRequest` carries a request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotCarried {
    /// A `RouterRequest` is one request: tower-mcp's `JsonRpcService` splits a
    /// batch and calls the router service once per element.
    Batch,
    /// A notification never reaches the router service: tower-mcp's transports
    /// handle notifications themselves.
    Notification,
    /// A sequence of exchanges that follows a task from its handle to its
    /// result: this harness runs one request at a time, and tower-mcp has no
    /// `tasks/result` request (2025-11-25). Tasks over tower-mcp are tested in
    /// `tasks.rs`.
    Sequence,
    /// Anything else, with tower-mcp's complaint.
    Other(String),
}

/// Cases that run, but whose golden values tower-mcp's `CallToolResult` cannot
/// carry; the output is compared with the golden response as tower-mcp
/// carries it (parsed into its types and written back), as for every case,
/// and that form must hold other values than the golden file, so that a case
/// leaves this list when tower-mcp learns to keep it.
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
            Inner::Hang => hanging(),
        }
    }
}

/// The request as tower-mcp's transports hand it to the router service, or why
/// no single `RouterRequest` can carry it.
fn router_request(case: &Case) -> Result<RouterRequest, NotCarried> {
    let Some(exchange) = case.single() else {
        return Err(NotCarried::Sequence);
    };
    let message = &exchange.request;
    if message.is_array() {
        return Err(NotCarried::Batch);
    }
    if message.get("method").is_some() && message.get("id").is_none() {
        return Err(NotCarried::Notification);
    }
    let request: JsonRpcRequest = serde_json::from_value(message.clone())
        .map_err(|e| NotCarried::Other(format!("not a JSON-RPC request: {e}")))?;
    let inner = McpRequest::from_jsonrpc(&request)
        .map_err(|e| NotCarried::Other(format!("not an MCP request: {e:?}")))?;
    Ok(RouterRequest::new(request.id, inner))
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
    let service = case.layer().layer(ScriptedRouter {
        inner: only_inner(case).clone(),
    });
    wire_bytes(service.oneshot(request).await.unwrap())
}

/// How the inner service behaves in a case that is one exchange.
fn only_inner(case: &Case) -> &Inner {
    &case
        .single()
        .expect("a RouterRequest carries one exchange")
        .inner
}

fn golden_output(case: &Case) -> String {
    let path = golden_dir().join(format!("{}.out.json", case.name));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn reason<'a, T>(list: &'a [(&str, T)], case: &str) -> Option<&'a T> {
    list.iter()
        .find(|(name, _)| *name == case)
        .map(|(_, why)| why)
}

/// Checks one case that a `RouterRequest` can carry; `Err` describes a failure.
async fn check_case(case: &Case, request: RouterRequest) -> Result<(), String> {
    let name = &case.name;
    let method = request.inner.clone();
    let actual = run(case, request).await;
    let golden = golden_output(case);
    let golden_json: Value = serde_json::from_str(&golden).unwrap();
    let expected = wire_bytes(typed_response(&method, &golden_json));
    // `Value`'s equality, whatever the order of keys.
    let same_values = serde_json::from_str::<Value>(&expected).unwrap() == golden_json;
    match reason(TYPED_FORM, name) {
        None if !same_values => {
            return Err(format!(
                "{name}: tower-mcp's types change the golden values\n--- golden\n{golden}--- in tower-mcp's form\n{expected}"
            ));
        }
        Some(_) if same_values => {
            return Err(format!(
                "{name}: tower-mcp's types now carry the golden values; remove it from TYPED_FORM"
            ));
        }
        _ if actual != expected => {
            let why = reason(TYPED_FORM, name).map_or("", |why| why);
            return Err(format!(
                "{name}: tower-mcp output differs from the golden response in tower-mcp's form {why}\n\
                 --- expected\n{expected}--- actual\n{actual}"
            ));
        }
        _ => {}
    }
    if case.untouched {
        let Inner::Respond(inner) = only_inner(case) else {
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

/// Under the paused clock, so that a timeout case takes no real time.
#[tokio::test(start_paused = true)]
async fn every_golden_case_through_the_tower_mcp_path() {
    silence_expected_panics();
    let cases = load_cases();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        match (router_request(case), reason(NOT_EXPRESSIBLE, &case.name)) {
            (Ok(request), None) => {
                ran += 1;
                if let Err(failure) = check_case(case, request).await {
                    failures.push(failure);
                }
            }
            (Err(why), Some(listed)) if why == *listed => {}
            (Err(why), Some(listed)) => failures.push(format!(
                "{}: listed in NOT_EXPRESSIBLE as {listed:?}, but fails otherwise: {why:?}",
                case.name
            )),
            (Ok(_), Some(_)) => failures.push(format!(
                "{}: listed in NOT_EXPRESSIBLE, but a RouterRequest carries it; run it",
                case.name
            )),
            (Err(why), None) => failures.push(format!(
                "{}: no RouterRequest carries it ({why:?}), and it is not listed in \
                 NOT_EXPRESSIBLE with a reason",
                case.name
            )),
        }
    }
    let listed = NOT_EXPRESSIBLE.iter().map(|(name, _)| *name);
    for name in listed.chain(TYPED_FORM.iter().map(|(name, _)| *name)) {
        if !cases.iter().any(|case| case.name == name) {
            failures.push(format!("{name}: listed, but there is no such case"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(ran + NOT_EXPRESSIBLE.len(), cases.len());
}
