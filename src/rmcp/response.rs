//! rmcp's [`ServerResult`] as the layer reads it, and builds it in place of the
//! handler's (after a panic or a timeout).

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorCode, JsonObject, ServerResult, TaskPayload, TaskStatus,
};
use tower::BoxError;

use crate::model::{
    Answer, AnswerBody, AnswerId, CallResult, LayerAnswer, LayerAnswers, Response, TaskState,
    ToolResult,
};

/// `E` is the inner service's error: [`ErrorData`] itself, or any error it
/// converts into (a `tower::BoxError`, for instance). rmcp has no way to carry
/// an error inside a [`ServerResult`]: its `ErrorData` *is* the JSON-RPC error
/// response, so an error is an answer, and the layer's own error answer is `Err`.
impl<E: From<ErrorData> + 'static> Response<E> for ServerResult {
    type Body = ServerResult;

    fn visit_answers(
        response: &mut Result<ServerResult, E>,
        mut visit: impl FnMut(AnswerId<'_>, Answer<'_, ServerResult>),
    ) {
        let answer = match response {
            Ok(result) => Answer::Result(result),
            Err(error) => match error_data(error) {
                Some(error) => Answer::Error {
                    code: Some(error.code.0.into()),
                },
                None => Answer::ServiceError,
            },
        };
        visit(AnswerId::Implicit, answer);
    }

    fn layer_response(answers: LayerAnswers<'_>) -> Result<ServerResult, E> {
        match answers.into_first().map(|(_, answer)| answer) {
            // rmcp's own constructor: `resultType` is set as rmcp sets it on
            // every result, and rmcp's server drops it for older peers.
            Some(LayerAnswer::ToolError { text }) => {
                Ok(ServerResult::CallToolResult(CallToolResult::error(vec![
                    ContentBlock::text(text),
                ])))
            }
            Some(LayerAnswer::ErrorResponse { code, message }) => {
                Err(E::from(ErrorData::new(ErrorCode(code), message, None)))
            }
            None => unreachable!("an rmcp request always expects an answer"),
        }
    }
}

/// The result of a `tools/call` made a task is the `result` of a `completed`
/// `tasks/get` answer: a JSON object, as rmcp's `TaskManager` stores it.
impl AnswerBody for ServerResult {
    type Tool = CallToolResult;
    type Task = JsonObject;

    fn as_call_result(&mut self) -> CallResult<'_, CallToolResult> {
        match self {
            ServerResult::CallToolResult(result) => CallResult::Tool {
                is_error: result.is_error == Some(true),
                result,
            },
            ServerResult::CreateTaskResult(created) => CallResult::Task {
                task_id: &created.task.task_id,
                ttl_ms: created.task.ttl_ms,
            },
            _ => CallResult::Other,
        }
    }

    fn as_task_state(&mut self) -> TaskState<'_, JsonObject> {
        let ServerResult::GetTaskResult(got) = self else {
            return TaskState::unknown();
        };
        let status = status_as_sent(got.task.payload.status());
        let result = match &mut got.task.payload {
            TaskPayload::Completed { result } => Some(result),
            _ => None,
        };
        TaskState { status, result }
    }

    fn visit_listed_tools(&self, visit: impl FnMut(&str)) {
        if let ServerResult::ListToolsResult(list) = self {
            list.tools
                .iter()
                .map(|tool| tool.name.as_ref())
                .for_each(visit);
        }
    }
}

/// The `status` rmcp writes on the wire for `status`; `None` for a status
/// this version of the layer does not know.
fn status_as_sent(status: TaskStatus) -> Option<&'static str> {
    Some(match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => return None,
    })
}

impl ToolResult for CallToolResult {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        if self.is_error != Some(true) {
            return None;
        }
        Some(self.content.iter_mut().filter_map(|block| match block {
            ContentBlock::Text(text) => Some(&mut text.text),
            _ => None,
        }))
    }

    fn insert_text(&mut self, text: String) {
        self.content.insert(0, ContentBlock::text(text));
    }
}

/// `error` as rmcp's [`ErrorData`], if it is one (bare, or in a `BoxError`).
fn error_data<E: 'static>(error: &E) -> Option<&ErrorData> {
    let error: &dyn std::any::Any = error;
    error.downcast_ref::<ErrorData>().or_else(|| {
        error
            .downcast_ref::<BoxError>()
            .and_then(|error| error.downcast_ref::<ErrorData>())
    })
}
