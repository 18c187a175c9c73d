//! Reading the inner service's response, once, for every message type: each
//! answer matched to its call ([`CallIndex`]), tool errors rewrapped, tasks
//! followed ([`TaskMemory`]), the tools a `tools/list` answer names learned
//! for the metric ([`ToolNames`]), and the outcome the request span records.

use crate::config::Config;
use crate::matching::CallIndex;
use crate::model::{Answer, AnswerBody, Call, CallKind, CallResult, Calls, Outcome, Response};
use crate::render::ErrorRenderer;
use crate::tasks::{Delivered, TaskEvent, TaskMemory, rule};
use crate::telemetry::ToolNames;

/// What the core read in a response.
#[derive(Debug)]
pub(crate) struct ReadResponse {
    /// How the request ended: the first failure of a batch.
    pub(crate) outcome: Outcome,
    /// The result of a task the response delivered, if it did.
    pub(crate) delivered: Option<Delivered>,
}

/// Reads `response`, the inner service's answer to `calls`, rewriting it where
/// the layer rewrites. `with_outcome`: whether something records the outcome;
/// without it, a response to calls the layer does not follow is not read.
/// `tool_names` learns the tools a `tools/list` answer names, when the metric
/// records them.
pub(crate) fn read<Resp, E, R>(
    calls: &Calls,
    response: &mut Result<Resp, E>,
    config: &Config<R>,
    tasks: &TaskMemory,
    tool_names: &ToolNames,
    with_outcome: bool,
) -> ReadResponse
where
    Resp: Response<E>,
    R: ErrorRenderer,
{
    let mut read = ReadResponse {
        outcome: Outcome::Success,
        delivered: None,
    };
    let tool_names = tool_names.learns_listed().then_some(tool_names);
    let followed = calls
        .as_slice()
        .iter()
        .any(|call| call.is_followed(tool_names.is_some()));
    if !followed && !with_outcome {
        return read;
    }
    // A response of the other shape (an array for one request, say) answers
    // none of the calls: it is read for its errors only.
    let same_shape = Resp::is_batch(response) == calls.is_batch();
    let index = (followed && same_shape).then(|| CallIndex::new(calls));
    Resp::visit_answers(response, |id, answer| {
        // Every answer takes its call, whatever it is: in a batch that repeats
        // an id, the next answer with that id goes to the next call.
        let call = index.as_ref().and_then(|index| index.answered_by(&id));
        let failure = match answer {
            Answer::ServiceError => Outcome::ServiceError,
            // An error answering a task's poll changes nothing (`tasks::rule`).
            Answer::Error { code } => code.map_or(Outcome::ServiceError, |code| {
                Outcome::ErrorResponse { code }
            }),
            Answer::Result(body) => match call {
                Some(call) => {
                    read_result(call, body, config, tasks, tool_names, &mut read.delivered)
                }
                None => Outcome::Success,
            },
        };
        read.outcome = read.outcome.or_else(|| failure);
    });
    read
}

/// Reads `body`, the result answering `call`, and says how the call ended.
fn read_result<B, R>(
    call: &Call,
    body: &mut B,
    config: &Config<R>,
    tasks: &TaskMemory,
    tool_names: Option<&ToolNames>,
    delivered: &mut Option<Delivered>,
) -> Outcome
where
    B: AnswerBody,
    R: ErrorRenderer,
{
    let event: TaskEvent<'_, B::Task> = match call.kind() {
        CallKind::Tool(tool) => match body.as_call_result() {
            CallResult::Tool { result, is_error } => {
                if !is_error {
                    return Outcome::Success;
                }
                config.rewrap(result, tool);
                return Outcome::ToolError;
            }
            CallResult::Task { task_id, ttl_ms } => TaskEvent::Created {
                tool,
                task_id,
                ttl_ms,
            },
            CallResult::Other => return Outcome::Success,
        },
        CallKind::TaskStatus(task_id) => match rule::polled(task_id, body.as_task_state()) {
            Some(event) => event,
            None => return Outcome::Success,
        },
        CallKind::TaskResult(task_id) => match rule::fetched(task_id, body.as_task_result()) {
            Some(event) => event,
            None => return Outcome::Success,
        },
        CallKind::ToolList => {
            if let Some(tool_names) = tool_names {
                body.visit_listed_tools(|tool| tool_names.learn_listed(tool));
            }
            return Outcome::Success;
        }
        CallKind::Other => return Outcome::Success,
    };
    let this_delivery = tasks.observe(event, config);
    let outcome = match &this_delivery {
        Some(task) if task.failed => Outcome::ToolError,
        _ => Outcome::Success,
    };
    if delivered.is_none() {
        *delivered = this_delivery;
    }
    outcome
}
