//! tower-mcp's typed `tools/call` result, and the result of a task in its
//! answer to `tasks/get`.

use ::tower_mcp::tasks::DetailedTask;
use ::tower_mcp::{CallToolResult, Content, McpResponse};
use serde_json::{Map, Value};

use crate::model::ToolResult;

/// The typed result cannot be malformed, so an `isError` result is always
/// rewritable: its text items are the `Content::Text` items.
impl ToolResult for CallToolResult {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        if !self.is_error {
            return None;
        }
        Some(self.content.iter_mut().filter_map(|item| match item {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }))
    }

    fn insert_text(&mut self, text: String) {
        let item = Content::Text {
            text,
            annotations: None,
            meta: None,
        };
        self.content.insert(0, item);
    }
}

/// The result a task delivers in tower-mcp's answer to `tasks/get`: the
/// `CallToolResult` of a completed `GetTaskInfo` (before protocol 2026-07-28),
/// or the JSON object of a completed `FinalGetTask` (from it). Either is read
/// exactly as the result of a direct call. Any other answer holds no result
/// the layer may rewrite.
impl ToolResult for McpResponse {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        let (typed, json) = match delivered_result(self)? {
            Delivered::Typed(result) => (Some(result.error_texts()?), None),
            Delivered::Json(result) => (None, Some(result.error_texts()?)),
        };
        // One of the two is `Some`: chained, they make one iterator type.
        Some(
            typed
                .into_iter()
                .flatten()
                .chain(json.into_iter().flatten()),
        )
    }

    fn insert_text(&mut self, text: String) {
        match delivered_result(self) {
            Some(Delivered::Typed(result)) => result.insert_text(text),
            Some(Delivered::Json(result)) => result.insert_text(text),
            None => {}
        }
    }
}

/// Where a `tasks/get` answer holds the task's result.
enum Delivered<'a> {
    Typed(&'a mut CallToolResult),
    Json(&'a mut Map<String, Value>),
}

/// Whether a `tasks/get` answer holds the task's result.
pub(super) fn has_result(answer: &mut McpResponse) -> bool {
    delivered_result(answer).is_some()
}

fn delivered_result(answer: &mut McpResponse) -> Option<Delivered<'_>> {
    match answer {
        McpResponse::GetTaskInfo(task) => task.result.as_mut().map(Delivered::Typed),
        McpResponse::FinalGetTask(got) => match &mut got.task {
            DetailedTask::Completed { result, .. } => Some(Delivered::Json(result)),
            _ => None,
        },
        _ => None,
    }
}
