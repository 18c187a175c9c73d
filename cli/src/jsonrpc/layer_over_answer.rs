//! The layer over an answer already at hand: a direct call's answer (the
//! HTTP mode) or the stdio child's answer to a request no timeout applies
//! to, put through the stack at once, without a future kept for it.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mcp_tool_errors::ToolErrorLayer;
use serde_json::Value;
use tower_layer::Layer;
use tower_service::Service;

use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
use crate::jsonrpc::message::{self, Answer, ChildAnswer, WithChildAnswer, Withdrawn};

/// `answer` through `layer` over the `-32602` conversion, for `request` (what
/// the layer reads of it), at once: the answer to write, its bytes kept when
/// nothing changed it; `None` when there is nothing to write. Called in a
/// runtime's context (the layer makes its timer in the call).
pub(crate) fn layer_over_answer(
    layer: &ToolErrorLayer,
    invalid_params: &InvalidParamsAsToolErrors<()>,
    request: Value,
    answer: Answer,
) -> Option<Answer> {
    let child_answer = ChildAnswer::default();
    let mut service = layer.layer(WithChildAnswer::new(
        invalid_params.over(AtHand(Some(answer))),
        child_answer.clone(),
    ));
    resolved(poll_fn(|cx| service.poll_ready(cx))).ok()?;
    let value = resolved(service.call(request)).ok().flatten();
    message::answered(value, &child_answer)
}

/// The output of a future that is ready at its first poll: the stack over an
/// answer already at hand.
pub(crate) fn resolved<F: Future>(future: F) -> F::Output {
    // Out of tokio's cooperative budget: an answer just sent on a oneshot is
    // ready even in a task that spent its budget on other resources, where
    // the receiver would say pending.
    let future = pin!(tokio::task::coop::unconstrained(future));
    match future.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => unreachable!("the stack over an answer at hand is ready at once"),
    }
}

/// The innermost service over an answer at hand.
#[derive(Debug)]
struct AtHand(Option<Answer>);

impl Service<Value> for AtHand {
    type Response = Answer;
    type Error = Withdrawn;
    type Future = std::future::Ready<Result<Answer, Withdrawn>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Withdrawn>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: Value) -> Self::Future {
        std::future::ready(Ok(self.0.take().expect("one call per answer")))
    }
}
