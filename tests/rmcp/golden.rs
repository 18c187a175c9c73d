//! The golden corpus through rmcp's typed messages: the case's inner answer (or
//! panic) as typed rmcp values, the layer over `ClientRequest` and over
//! `RequestWithContext`, and the answer written as rmcp's own JSON-RPC message,
//! compared byte for byte with `golden/<case>.out.json`.
//!
//! rmcp's server sends a client that negotiated a version before 2026-07-28 its
//! results without `resultType: "complete"`: the corpus is that wire, so the
//! comparison applies the same shaping, with rmcp's own functions. Unshaped, the
//! only difference allowed is that one leading key of the result.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_tool_errors::rmcp::RequestWithContext;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tower::{Layer, Service, ServiceExt};

use super::servers::server_peer;
use super::support::golden::{
    Case, Inner, PanicAt, Payload, golden_dir, load_cases, panicking, serialize_output,
};

/// Cases rmcp's typed model cannot express, each with the reason. A case that is
/// neither run nor listed here fails the test, and so does a listed case that
/// rmcp turns out to express.
const NOT_EXPRESSIBLE: &[(&str, &str)] = &[
    (
        "batch-matched-by-id",
        "a batch: rmcp's JsonRpcMessage has no batch, its services see one request at a time",
    ),
    (
        "panic-batch",
        "a batch: rmcp's JsonRpcMessage has no batch, its services see one request at a time",
    ),
    (
        "id-mismatch-untouched",
        "an answer with another request's id: a service over ClientRequest answers without ids, rmcp pairs them",
    ),
    (
        "notification-no-response",
        "a notification: rmcp hands notifications to ServerHandler::on_*, never to a service over ClientRequest",
    ),
    (
        "panic-notification-no-response",
        "a notification: rmcp hands notifications to ServerHandler::on_*, never to a service over ClientRequest",
    ),
    (
        "keeps-other-fields-and-order",
        "rmcp's CallToolResult drops the unknown field x-unknown, and writes a text item's _meta before its annotations",
    ),
];

/// A golden case as rmcp values.
struct TypedCase {
    id: RequestId,
    request: ClientRequest,
    inner: TypedInner,
}

#[derive(Clone)]
enum TypedInner {
    /// Boxed: a `ServerResult` is large.
    Answer(Box<Result<ServerResult, ErrorData>>),
    Panic {
        at: PanicAt,
        payload: Payload,
    },
}

/// The case as rmcp values, or why rmcp cannot express it: its request is not
/// one rmcp request, or its inner answer does not survive rmcp's typed model
/// byte for byte.
fn typed(case: &Case) -> Result<TypedCase, String> {
    let message: ClientJsonRpcMessage = serde_json::from_value(case.request.clone())
        .map_err(|e| format!("not an rmcp client message: {e}"))?;
    let JsonRpcMessage::Request(request) = message else {
        return Err("not a request".to_owned());
    };
    let (id, request) = (request.id, request.request);
    let inner = match &case.inner {
        Inner::Respond(Value::Null) => return Err("a request without an answer".to_owned()),
        Inner::Respond(answer) => TypedInner::Answer(Box::new(typed_answer(&id, answer)?)),
        Inner::Panic { at, payload } => TypedInner::Panic {
            at: *at,
            payload: payload.clone(),
        },
    };
    Ok(TypedCase { id, request, inner })
}

fn typed_answer(id: &RequestId, answer: &Value) -> Result<Result<ServerResult, ErrorData>, String> {
    let message: ServerJsonRpcMessage = serde_json::from_value(answer.clone())
        .map_err(|e| format!("not an rmcp server message: {e}"))?;
    let (answer_id, typed) = match message {
        JsonRpcMessage::Response(response) => (Some(response.id), Ok(response.result)),
        JsonRpcMessage::Error(error) => (error.id, Err(error.error)),
        _ => return Err("the inner answer is not a response".to_owned()),
    };
    if answer_id.as_ref() != Some(id) {
        return Err("the inner answer is for another id".to_owned());
    }
    let written = wire(id, typed.clone());
    if written != serialize_output(answer) {
        return Err(format!(
            "rmcp's typed model changes the inner answer:\n{written}"
        ));
    }
    Ok(typed)
}

/// The answer as rmcp writes it: its own JSON-RPC message, pretty, and a newline.
fn wire(id: &RequestId, answer: Result<ServerResult, ErrorData>) -> String {
    let message: ServerJsonRpcMessage = match answer {
        Ok(result) => JsonRpcMessage::response(result, id.clone()),
        Err(error) => JsonRpcMessage::error(error, Some(id.clone())),
    };
    let mut out = serde_json::to_string_pretty(&message).unwrap();
    out.push('\n');
    out
}

/// What rmcp's server does to a result for a client on a version before 2026-07-28.
fn shaped_for_legacy_peer(
    answer: &Result<ServerResult, ErrorData>,
) -> Result<ServerResult, ErrorData> {
    answer.clone().map(|mut result| {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
        result
    })
}

/// The inner service of a case, over both request types.
#[derive(Clone)]
struct Scripted {
    inner: TypedInner,
}

type Answer = Pin<Box<dyn Future<Output = Result<ServerResult, ErrorData>> + Send>>;

impl Scripted {
    fn answer(&self) -> Answer {
        match self.inner.clone() {
            TypedInner::Answer(answer) => Box::pin(async move { *answer }),
            TypedInner::Panic { at, payload } => panicking(at, payload),
        }
    }
}

/// Any request: the answer is the case's, whatever was asked.
impl<Request> Service<Request> for Scripted {
    type Response = ServerResult;
    type Error = ErrorData;
    type Future = Answer;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ErrorData>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request) -> Answer {
        self.answer()
    }
}

/// Runs `case` through the layer over both request types; they must agree.
async fn run(
    case: &Case,
    typed: &TypedCase,
    peer: &Peer<RoleServer>,
) -> Result<ServerResult, ErrorData> {
    let layer = case.layer();
    let scripted = Scripted {
        inner: typed.inner.clone(),
    };
    let bare = layer
        .layer(scripted.clone())
        .oneshot(typed.request.clone())
        .await;
    let context = RequestContext::new(typed.id.clone(), peer.clone());
    let with_context = layer
        .layer(scripted)
        .oneshot(RequestWithContext::new(typed.request.clone(), context))
        .await;
    assert_eq!(
        wire(&typed.id, bare.clone()),
        wire(&typed.id, with_context),
        "{}: ClientRequest and RequestWithContext disagree",
        case.name
    );
    bare
}

#[tokio::test]
async fn every_golden_case_rmcp_can_express_through_the_rmcp_path() {
    super::support::quiet_panics::silence_expected_panics();
    let (peer, _client_io) = server_peer();
    let cases = load_cases();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        let listed = NOT_EXPRESSIBLE.iter().find(|(name, _)| *name == case.name);
        let typed = match (typed(case), listed) {
            (Ok(typed), None) => typed,
            (Err(_), Some(_)) => continue,
            (Ok(_), Some(_)) => {
                failures.push(format!(
                    "{}: listed as not expressible, yet rmcp keeps it: run it",
                    case.name
                ));
                continue;
            }
            (Err(why), None) => {
                failures.push(format!(
                    "{}: rmcp cannot express it ({why}): list it with a reason",
                    case.name
                ));
                continue;
            }
        };
        ran += 1;
        let answer = run(case, &typed, &peer).await;
        let path = golden_dir().join(format!("{}.out.json", case.name));
        let expected = std::fs::read_to_string(&path).unwrap();
        let sent = wire(&typed.id, shaped_for_legacy_peer(&answer));
        if sent != expected {
            failures.push(format!(
                "{}: differs from {}\n--- expected\n{expected}--- rmcp\n{sent}",
                case.name,
                path.display()
            ));
        }
        let unshaped = wire(&typed.id, answer);
        let without_result_type = unshaped.replacen(
            "\n  \"result\": {\n    \"resultType\": \"complete\",\n",
            "\n  \"result\": {\n",
            1,
        );
        if without_result_type != expected {
            failures.push(format!(
                "{}: unshaped, more than resultType differs:\n{unshaped}",
                case.name
            ));
        }
    }
    for (name, _) in NOT_EXPRESSIBLE {
        if !cases.iter().any(|case| case.name == *name) {
            failures.push(format!(
                "{name}: listed as not expressible, but there is no such case"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(ran + NOT_EXPRESSIBLE.len(), cases.len());
}
