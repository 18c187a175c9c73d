//! The golden corpus through rmcp's typed messages: the case's inner answer (or
//! panic) as typed rmcp values, the layer over `ClientRequest` and over
//! `RequestWithContext`, and the answer written as rmcp's own JSON-RPC message,
//! compared byte for byte with `golden/<case>.out.json` in rmcp's form: parsed
//! into rmcp's message and written back, with the same values. rmcp's types
//! write every object's keys in the order of their fields (`jsonrpc`, `id`,
//! `result`; `type`, `text`), where the JSON path writes the objects the
//! layer creates with their keys sorted.
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
    Case, Exchange, Inner, PanicAt, Payload, golden_dir, hanging, in_this_build_order, load_cases,
    panicking, preserves_key_order, serialize_output,
};

/// Cases rmcp's typed model cannot express, each with the reason `typed` must
/// report. A case that is neither run nor listed here fails the test, and so
/// does a listed case that rmcp turns out to express, or that fails for another
/// reason than the one listed.
const NOT_EXPRESSIBLE: &[(&str, Listed)] = &[
    ("batch-matched-by-id", Listed::Batch),
    ("panic-batch", Listed::Batch),
    ("timeout-batch", Listed::Batch),
    ("task-get-result-rewrapped", Listed::Sequence),
    ("task-result-rewrapped-2025-11-25", Listed::Sequence),
    ("task-result-delivered-twice-2025-11-25", Listed::Sequence),
    ("task-failed-result-rewrapped-2025-11-25", Listed::Sequence),
    ("task-failed-untouched", Listed::Sequence),
    ("id-mismatch-untouched", Listed::AnswerForAnotherId),
    ("notification-no-response", Listed::Notification),
    ("panic-notification-no-response", Listed::Notification),
    (
        "keeps-other-fields-and-order",
        Listed::Rewritten {
            dropped: "\"x-unknown\"",
            moved: "\"trace\"",
            past: "\"annotations\"",
        },
    ),
];

/// Why a listed case cannot go through rmcp's typed messages.
#[derive(Debug, Clone, Copy)]
enum Listed {
    /// rmcp's `JsonRpcMessage` has no batch: its services see one request at a
    /// time.
    Batch,
    /// A sequence of exchanges whose responses are pinned for a client of the
    /// wire as written, which this harness's shaping for a client before
    /// 2026-07-28 would change (a task handle's `resultType: "task"` is kept,
    /// a `tasks/get` answer's `resultType: "complete"` is not), or which rmcp has
    /// no request for (`tasks/result`, 2025-11-25). rmcp's own tasks, end to
    /// end, are tested in `stdio_example.rs`.
    Sequence,
    /// rmcp hands notifications to `ServerHandler::on_*`, never to a service
    /// over `ClientRequest`.
    Notification,
    /// An answer with another request's id: a service over `ClientRequest`
    /// answers without ids, and rmcp pairs them.
    AnswerForAnotherId,
    /// rmcp's `CallToolResult` rewrites the inner answer: it drops the field
    /// `dropped`, and writes `moved` (in a text item's `_meta`) before `past`
    /// (its annotations), which the case has the other way round.
    Rewritten {
        dropped: &'static str,
        moved: &'static str,
        past: &'static str,
    },
}

/// Why `typed` could not express a case.
enum WhyNot {
    Batch,
    Sequence,
    Notification,
    AnswerForAnotherId,
    /// What rmcp's typed model writes for the inner answer, which is not the
    /// case's.
    Rewritten(String),
    /// Anything else, with rmcp's complaint.
    Other(String),
}

impl std::fmt::Display for WhyNot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WhyNot::Batch => f.write_str("a batch"),
            WhyNot::Sequence => f.write_str("a sequence of exchanges"),
            WhyNot::Notification => f.write_str("a notification"),
            WhyNot::AnswerForAnotherId => f.write_str("the inner answer is for another id"),
            WhyNot::Rewritten(written) => {
                write!(f, "rmcp's typed model changes the inner answer:\n{written}")
            }
            WhyNot::Other(why) => f.write_str(why),
        }
    }
}

impl Listed {
    /// Whether `why` is this reason, down to what a rewrite changes.
    fn is(self, why: &WhyNot, case: &Case) -> bool {
        match (self, why) {
            (Listed::Batch, WhyNot::Batch)
            | (Listed::Sequence, WhyNot::Sequence)
            | (Listed::Notification, WhyNot::Notification)
            | (Listed::AnswerForAnotherId, WhyNot::AnswerForAnotherId) => true,
            (
                Listed::Rewritten {
                    dropped,
                    moved,
                    past,
                },
                WhyNot::Rewritten(written),
            ) => {
                let Some(Exchange {
                    inner: Inner::Respond(answer),
                    ..
                }) = case.single()
                else {
                    return false;
                };
                let before = serialize_output(answer);
                let in_order = |text: &str| matches!((text.find(moved), text.find(past)), (Some(m), Some(p)) if m < p);
                // Without preserve_order the inner answer's keys are sorted, so
                // only the dropped field can be seen.
                let reordered = !preserves_key_order() || (!in_order(&before) && in_order(written));
                before.contains(dropped) && !written.contains(dropped) && reordered
            }
            _ => false,
        }
    }
}

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
    Hang,
}

/// The case as rmcp values, or why rmcp cannot express it: its request is not
/// one rmcp request, or its inner answer does not survive rmcp's typed model
/// byte for byte.
fn typed(case: &Case) -> Result<TypedCase, WhyNot> {
    let Some(exchange) = case.single() else {
        return Err(WhyNot::Sequence);
    };
    if exchange.request.is_array() {
        return Err(WhyNot::Batch);
    }
    let message: ClientJsonRpcMessage = serde_json::from_value(exchange.request.clone())
        .map_err(|e| WhyNot::Other(format!("not an rmcp client message: {e}")))?;
    let request = match message {
        JsonRpcMessage::Request(request) => request,
        JsonRpcMessage::Notification(_) => return Err(WhyNot::Notification),
        other => return Err(WhyNot::Other(format!("not a request: {other:?}"))),
    };
    let (id, request) = (request.id, request.request);
    let inner = match &exchange.inner {
        Inner::Respond(Value::Null) => {
            return Err(WhyNot::Other("a request without an answer".to_owned()));
        }
        Inner::Respond(answer) => TypedInner::Answer(Box::new(typed_answer(&id, answer)?)),
        Inner::Panic { at, payload } => TypedInner::Panic {
            at: *at,
            payload: payload.clone(),
        },
        Inner::Hang => TypedInner::Hang,
    };
    Ok(TypedCase { id, request, inner })
}

fn typed_answer(id: &RequestId, answer: &Value) -> Result<Result<ServerResult, ErrorData>, WhyNot> {
    let message: ServerJsonRpcMessage = serde_json::from_value(answer.clone())
        .map_err(|e| WhyNot::Other(format!("not an rmcp server message: {e}")))?;
    let (answer_id, typed) = match message {
        JsonRpcMessage::Response(response) => (Some(response.id), Ok(response.result)),
        JsonRpcMessage::Error(error) => (error.id, Err(error.error)),
        _ => {
            return Err(WhyNot::Other(
                "the inner answer is not a response".to_owned(),
            ));
        }
    };
    if answer_id.as_ref() != Some(id) {
        return Err(WhyNot::AnswerForAnotherId);
    }
    let written = wire(id, typed.clone());
    if in_this_build_order(&written) != serialize_output(answer) {
        return Err(WhyNot::Rewritten(written));
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

/// `golden` (an answer as the JSON path writes it) as rmcp writes the same
/// message, in this build's order; `Err` when it is not one rmcp message or
/// rmcp's types change a value of it.
fn in_rmcp_form(golden: &str) -> Result<String, String> {
    let message: ServerJsonRpcMessage =
        serde_json::from_str(golden).map_err(|e| format!("not an rmcp server message: {e}"))?;
    let mut written = serde_json::to_string_pretty(&message).unwrap();
    written.push('\n');
    // `Value`'s equality, whatever the order of keys.
    if serde_json::from_str::<Value>(golden).ok() != Some(serde_json::to_value(&message).unwrap()) {
        return Err(format!("rmcp's types change its values:\n{written}"));
    }
    Ok(in_this_build_order(&written))
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
            TypedInner::Hang => hanging(),
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

/// Under the paused clock, so that a timeout case takes no real time.
#[tokio::test(start_paused = true)]
async fn every_golden_case_rmcp_can_express_through_the_rmcp_path() {
    super::support::quiet_panics::silence_expected_panics();
    let (peer, _client_io) = server_peer();
    let cases = load_cases();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        let listed = NOT_EXPRESSIBLE
            .iter()
            .find(|(name, _)| *name == case.name)
            .map(|(_, listed)| *listed);
        let typed = match (typed(case), listed) {
            (Ok(typed), None) => typed,
            (Err(why), Some(listed)) if listed.is(&why, case) => continue,
            (Err(why), Some(listed)) => {
                failures.push(format!(
                    "{}: listed as not expressible ({listed:?}), but fails otherwise: {why}",
                    case.name
                ));
                continue;
            }
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
        let expected = match in_rmcp_form(&std::fs::read_to_string(&path).unwrap()) {
            Ok(expected) => expected,
            Err(why) => {
                failures.push(format!("{}: {}: {why}", case.name, path.display()));
                continue;
            }
        };
        let sent = in_this_build_order(&wire(&typed.id, shaped_for_legacy_peer(&answer)));
        if sent != expected {
            failures.push(format!(
                "{}: differs from {}\n--- expected\n{expected}--- rmcp\n{sent}",
                case.name,
                path.display()
            ));
        }
        let unshaped = wire(&typed.id, answer);
        let without_result_type = in_this_build_order(&unshaped.replacen(
            "\n  \"result\": {\n    \"resultType\": \"complete\",\n",
            "\n  \"result\": {\n",
            1,
        ));
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
