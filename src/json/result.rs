//! A JSON-RPC result object, read as what its call asked for: a tool result
//! (rewritable), a task handle, a task's state, or a list of tools.

use serde_json::{Map, Value};

use super::created::created_object;
use super::field::{field, field_mut, str_field};
use crate::model::{AnswerBody, CallResult, TaskState, ToolResult};

impl AnswerBody for Map<String, Value> {
    type Tool = Self;
    type Task = Self;

    /// One pass over the keys for `isError` and both shapes of a task handle:
    /// `{"resultType": "task", "taskId": .., "ttlMs": ..}` (2026-07-28) and
    /// `{"task": {"taskId": .., "ttl": ..}}` (2025-11-25). Nearly every result
    /// is neither, and a tool's result is read here on every successful call.
    fn as_call_result(&mut self) -> CallResult<'_, Self> {
        let (mut is_error, mut is_handle, mut has_task) = (false, false, false);
        for (key, value) in self.iter() {
            match key.as_str() {
                "isError" => is_error = matches!(value, Value::Bool(true)),
                "resultType" => is_handle = value.as_str() == Some("task"),
                "task" => has_task = value.is_object(),
                _ => {}
            }
        }
        if !is_handle && !has_task {
            return CallResult::Tool {
                result: self,
                is_error,
            };
        }
        let result = &*self;
        let (handle, ttl_key) = match field(result, "task").and_then(Value::as_object) {
            Some(task) if !is_handle => (task, "ttl"),
            _ => (result, "ttlMs"),
        };
        match str_field(handle, "taskId") {
            Some(task_id) => CallResult::Task {
                task_id,
                ttl_ms: field(handle, ttl_key).and_then(Value::as_u64),
            },
            None => CallResult::Other,
        }
    }

    /// `tools[].name`: every tool object's name that is a string.
    fn visit_listed_tools(&self, mut visit: impl FnMut(&str)) {
        let Some(Value::Array(tools)) = field(self, "tools") else {
            return;
        };
        tools
            .iter()
            .filter_map(|tool| str_field(tool.as_object()?, "name"))
            .for_each(&mut visit);
    }

    /// One pass over the keys: `status`, and the `result` that 2026-07-28
    /// embeds (2025-11-25 fetches it with `tasks/result`).
    fn as_task_state(&mut self) -> TaskState<'_, Self> {
        let mut state = TaskState::unknown();
        for (key, value) in self.iter_mut() {
            match (key.as_str(), value) {
                ("status", Value::String(status)) => state.status = Some(status),
                ("result", Value::Object(result)) => state.result = Some(result),
                _ => {}
            }
        }
        state
    }

    fn as_task_result(&mut self) -> Option<&mut Self> {
        Some(self)
    }
}

impl ToolResult for Map<String, Value> {
    fn error_texts(&mut self) -> Option<impl Iterator<Item = &mut String>> {
        let (mut is_error, mut content) = (false, None);
        for (key, value) in self.iter_mut() {
            match key.as_str() {
                "isError" => is_error = matches!(value, Value::Bool(true)),
                "content" => content = Some(value),
                _ => {}
            }
        }
        if !is_error {
            return None;
        }
        let content = content?.as_array_mut()?;
        // Malformed text items make the whole result untouchable.
        let malformed =
            |item: &Map<String, Value>| !matches!(field(item, "text"), Some(Value::String(_)));
        if content.iter().filter_map(text_item_object).any(malformed) {
            return None;
        }
        Some(content.iter_mut().filter_map(|item| match item {
            Value::Object(item) if is_text_type(item) => match field_mut(item, "text") {
                Some(Value::String(text)) => Some(text),
                _ => None,
            },
            _ => None,
        }))
    }

    fn insert_text(&mut self, text: String) {
        if let Some(Value::Array(content)) = field_mut(self, "content") {
            content.insert(0, text_item(text));
        }
    }
}

/// A `{"text": ..., "type": "text"}` content item.
pub(super) fn text_item(text: String) -> Value {
    created_object([("text", Value::String(text)), ("type", Value::from("text"))])
}

/// The item as an object, if it is a text item.
fn text_item_object(item: &Value) -> Option<&Map<String, Value>> {
    item.as_object().filter(|item| is_text_type(item))
}

fn is_text_type(item: &Map<String, Value>) -> bool {
    str_field(item, "type") == Some("text")
}
