//! Finding tool results in a JSON-RPC response, and answering in place of the
//! inner service (after a panic or a timeout).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Number, Value};

use super::field::{field, field_mut, str_field};
use super::pending::{JsonCall, JsonPending, Shape, TaskAsks, TaskRequest};
use super::tool_result::text_item;
use crate::model::request_id::RequestId;
use crate::model::{LayerAnswer, Outcome, Pending, TaskExchange, UnansweredCall};

impl<E> Pending<Value, E> for JsonPending {
    type Result = Map<String, Value>;
    type TaskResult = Map<String, Value>;

    /// One pass over a single answer: its id is matched once. Tasks are
    /// followed in single messages only, not in batches.
    fn visit_answers<'a>(
        &'a self,
        response: &'a mut Value,
        mut rewrap: impl FnMut(&str, &mut Map<String, Value>),
    ) -> TaskExchange<'a, Map<String, Value>> {
        match (&self.shape, response) {
            (Shape::Single(Some(call)), response) => {
                visit_then_task_exchange(call, response, &mut rewrap)
            }
            (Shape::Batch(calls), Value::Array(answers)) => {
                visit_batch(calls, answers, &mut rewrap);
                TaskExchange::None
            }
            _ => TaskExchange::None,
        }
    }

    fn layer_response(
        &self,
        mut answer: impl FnMut(UnansweredCall<'_>) -> LayerAnswer,
    ) -> Result<Value, E> {
        let response = match &self.shape {
            Shape::Single(call) => call
                .as_ref()
                .and_then(|call| answer_call(call, &mut answer)),
            Shape::Batch(calls) => {
                let answers: Vec<Value> = calls
                    .iter()
                    .flatten()
                    .filter_map(|call| answer_call(call, &mut answer))
                    .collect();
                (!answers.is_empty()).then_some(Value::Array(answers))
            }
        };
        Ok(response.unwrap_or(Value::Null))
    }

    fn outcome(&self, result: &Result<Value, E>) -> Outcome {
        match result {
            Ok(response) => self.response_outcome(response),
            Err(_) => Outcome::ServiceError,
        }
    }

    fn called_tools(&self) -> impl Iterator<Item = &str> {
        self.calls()
            .iter()
            .flatten()
            .filter_map(|call| call.tool.as_deref())
    }
}

impl<E> Pending<Option<Value>, E> for JsonPending {
    type Result = Map<String, Value>;
    type TaskResult = Map<String, Value>;

    fn visit_answers<'a>(
        &'a self,
        response: &'a mut Option<Value>,
        rewrap: impl FnMut(&str, &mut Map<String, Value>),
    ) -> TaskExchange<'a, Map<String, Value>> {
        match response {
            Some(response) => Pending::<Value, E>::visit_answers(self, response, rewrap),
            None => TaskExchange::None,
        }
    }

    fn layer_response(
        &self,
        answer: impl FnMut(UnansweredCall<'_>) -> LayerAnswer,
    ) -> Result<Option<Value>, E> {
        Pending::<Value, E>::layer_response(self, answer)
            .map(|response| (!response.is_null()).then_some(response))
    }

    fn outcome(&self, result: &Result<Option<Value>, E>) -> Outcome {
        match result {
            Ok(Some(response)) => self.response_outcome(response),
            Ok(None) => Outcome::Success,
            Err(_) => Outcome::ServiceError,
        }
    }

    fn called_tools(&self) -> impl Iterator<Item = &str> {
        Pending::<Value, E>::called_tools(self)
    }
}

/// Visits the result of every answer of a batch that answers a `tools/call`
/// of it, each matched to its request through the batch's index.
fn visit_batch(
    calls: &[Option<JsonCall>],
    answers: &mut [Value],
    rewrap: &mut impl FnMut(&str, &mut Map<String, Value>),
) {
    if calls.iter().flatten().all(|call| call.tool.is_none()) {
        return;
    }
    let calls = CallsById::index(calls);
    for answer in answers {
        if let Some(call) = calls.answered_by(answer) {
            visit_answer(call, answer, rewrap);
        }
    }
}

/// Visits the result of `answer` if it answers `call` and `call` is a
/// `tools/call` (as [`visit_answer`]), then says what it says about a task.
fn visit_then_task_exchange<'a>(
    call: &'a JsonCall,
    answer: &'a mut Value,
    visit: &mut impl FnMut(&str, &mut Map<String, Value>),
) -> TaskExchange<'a, Map<String, Value>> {
    if call.tool.is_none() && call.task.is_none() {
        return TaskExchange::None;
    }
    let Some((has_error, result)) = answer_parts(call, answer) else {
        return TaskExchange::None;
    };
    match (&call.tool, &call.task, result) {
        (Some(tool), _, Some(result)) if !has_error => {
            visit(tool, result);
            created_task(tool, result)
        }
        (_, Some(task), _) if has_error => TaskExchange::Ended {
            task_id: &task.task_id,
        },
        (_, Some(task), Some(result)) => delivered_task(task, result),
        _ => TaskExchange::None,
    }
}

/// Whether `answer` has an `error`, and its `result` object, when it is the
/// answer to `call` (an object with `call`'s id); `None` otherwise.
fn answer_parts<'a>(
    call: &JsonCall,
    answer: &'a mut Value,
) -> Option<(bool, Option<&'a mut Map<String, Value>>)> {
    let id = call.id.as_ref()?;
    let Value::Object(answer) = answer else {
        return None;
    };
    let (mut answer_id, mut has_error, mut result) = (None, false, None);
    for (key, value) in answer.iter_mut() {
        match key.as_str() {
            "id" => answer_id = Some(&*value),
            "error" => has_error = true,
            "result" => result = value.as_object_mut(),
            _ => {}
        }
    }
    answer_id
        .is_some_and(|answer_id| id.matches(answer_id))
        .then_some((has_error, result))
}

/// A `tools/call` result that is a task handle: `{"resultType": "task",
/// "taskId": .., "ttlMs": ..}` (2026-07-28) or `{"task": {"taskId": .., "ttl":
/// ..}}` (2025-11-25).
fn created_task<'a>(
    tool: &'a str,
    result: &'a Map<String, Value>,
) -> TaskExchange<'a, Map<String, Value>> {
    // One pass for both shapes: nearly every result is neither, and a tool's
    // result is read here on every successful call.
    let (mut is_handle, mut task) = (false, None);
    for (key, value) in result {
        match key.as_str() {
            "resultType" => is_handle = value.as_str() == Some("task"),
            "task" => task = value.as_object(),
            _ => {}
        }
    }
    let (handle, ttl_key) = match (is_handle, task) {
        (true, _) => (result, "ttlMs"),
        (false, Some(task)) => (task, "ttl"),
        (false, None) => return TaskExchange::None,
    };
    match str_field(handle, "taskId") {
        Some(task_id) => TaskExchange::Created {
            tool,
            task_id,
            ttl_ms: field(handle, ttl_key).and_then(Value::as_u64),
        },
        None => TaskExchange::None,
    }
}

/// The result of a `tasks/get` (the task's `result` once it is `completed`) or
/// of a `tasks/result` (the whole result).
fn delivered_task<'a>(
    task: &'a TaskRequest,
    result: &'a mut Map<String, Value>,
) -> TaskExchange<'a, Map<String, Value>> {
    let task_id = task.task_id.as_str();
    match task.asks {
        TaskAsks::Result => TaskExchange::Result { task_id, result },
        TaskAsks::Status => match str_field(result, "status") {
            Some("completed") => match field_mut(result, "result") {
                Some(Value::Object(result)) => TaskExchange::Result { task_id, result },
                // 2025-11-25: the result is fetched with `tasks/result`.
                _ => TaskExchange::None,
            },
            Some("failed" | "cancelled") => TaskExchange::Ended { task_id },
            _ => TaskExchange::None,
        },
    }
}

impl JsonPending {
    /// How the request ended, read from its response (or batch of responses).
    fn response_outcome(&self, response: &Value) -> Outcome {
        let calls_tool = self
            .calls()
            .iter()
            .flatten()
            .any(|call| call.tool.is_some());
        match response {
            Value::Array(answers) => answers.iter().fold(Outcome::Success, |outcome, answer| {
                outcome.or_else(|| answer_outcome(answer, calls_tool))
            }),
            answer => answer_outcome(answer, calls_tool),
        }
    }
}

/// How one JSON-RPC response ended; `calls_tool` says whether the request held a
/// `tools/call`, the only request whose result can be an `isError` result.
fn answer_outcome(answer: &Value, calls_tool: bool) -> Outcome {
    let Some(answer) = answer.as_object() else {
        return Outcome::Success;
    };
    if let Some(error) = field(answer, "error") {
        return match error.as_object().and_then(|error| field(error, "code")) {
            Some(code) => {
                code.as_i64()
                    .map_or(Outcome::ServiceError, |code| Outcome::ErrorResponse {
                        code,
                    })
            }
            None => Outcome::ServiceError,
        };
    }
    let is_error =
        |result: &Map<String, Value>| field(result, "isError") == Some(&Value::Bool(true));
    match field(answer, "result").and_then(Value::as_object) {
        Some(result) if calls_tool && is_error(result) => Outcome::ToolError,
        _ => Outcome::Success,
    }
}

/// Visits the result of `answer` if it answers `call` and `call` is a `tools/call`.
fn visit_answer(
    call: &JsonCall,
    answer: &mut Value,
    visit: &mut impl FnMut(&str, &mut Map<String, Value>),
) {
    let Some(tool) = &call.tool else {
        return;
    };
    if let Some((false, Some(result))) = answer_parts(call, answer) {
        visit(tool, result);
    }
}

/// The JSON-RPC response the layer sends for one request; `None` for a
/// notification.
fn answer_call(
    call: &JsonCall,
    answer: &mut impl FnMut(UnansweredCall<'_>) -> LayerAnswer,
) -> Option<Value> {
    let id = call.id.as_ref()?;
    let outcome = match answer(UnansweredCall::new(call.tool.as_deref(), Some(id))) {
        LayerAnswer::ToolError { text } => ("result", tool_error_result(text)),
        LayerAnswer::ErrorResponse { code, message } => ("error", error(code, message)),
    };
    let mut response = Map::with_capacity(3);
    response.insert("jsonrpc".to_owned(), Value::from("2.0"));
    response.insert("id".to_owned(), id.to_value());
    response.insert(outcome.0.to_owned(), outcome.1);
    Some(Value::Object(response))
}

fn tool_error_result(text: String) -> Value {
    let mut result = Map::with_capacity(2);
    result.insert("content".to_owned(), Value::Array(vec![text_item(text)]));
    result.insert("isError".to_owned(), Value::Bool(true));
    Value::Object(result)
}

fn error(code: i32, message: String) -> Value {
    let mut error = Map::with_capacity(2);
    error.insert("code".to_owned(), Value::from(code));
    error.insert("message".to_owned(), Value::String(message));
    Value::Object(error)
}

/// The requests of a batch by id, to match each answer of the batch to its
/// request in constant time: built once per batch, so that matching a batch is
/// linear in its length whatever the order of the answers.
///
/// An id that several requests of the batch carry belongs to the first of
/// them: every answer with that id is matched to it.
struct CallsById<'a> {
    first_with_id: HashMap<IdKey<'a>, &'a JsonCall>,
}

impl<'a> CallsById<'a> {
    fn index(calls: &'a [Option<JsonCall>]) -> Self {
        let mut first_with_id = HashMap::with_capacity(calls.len());
        for call in calls.iter().flatten() {
            if let Some(id) = &call.id {
                first_with_id.entry(IdKey::of_request(id)).or_insert(call);
            }
        }
        Self { first_with_id }
    }

    /// The request `answer` answers, if its id is one of the batch's.
    fn answered_by(&self, answer: &Value) -> Option<&'a JsonCall> {
        let id = field(answer.as_object()?, "id")?;
        self.first_with_id.get(&IdKey::of_answer(id)).copied()
    }
}

/// A request id as a key: equal exactly when [`RequestId::matches`] says the
/// ids are the same (same JSON type, equal values).
#[derive(Debug, Clone, Copy)]
enum IdKey<'a> {
    Number(&'a Number),
    String(&'a str),
    Null,
    /// Not a valid JSON-RPC id (an object, an array, a boolean).
    Other(&'a Value),
}

impl<'a> IdKey<'a> {
    fn of_request(id: &'a RequestId) -> Self {
        match id {
            RequestId::Number(n) => Self::Number(n),
            RequestId::String(s) => Self::String(s),
            RequestId::Null => Self::Null,
            RequestId::Other(value) => Self::Other(value),
        }
    }

    fn of_answer(id: &'a Value) -> Self {
        match id {
            Value::Number(n) => Self::Number(n),
            Value::String(s) => Self::String(s),
            Value::Null => Self::Null,
            other => Self::Other(other),
        }
    }
}

impl PartialEq for IdKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Number(a), Self::Number(b)) => a == b,
            (Self::String(a), Self::String(b)) => a == b,
            (Self::Null, Self::Null) => true,
            (Self::Other(a), Self::Other(b)) => a == b,
            _ => false,
        }
    }
}

// JSON numbers are finite, so value equality is an equivalence.
impl Eq for IdKey<'_> {}

impl Hash for IdKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Self::Number(n) => (0u8, n).hash(state),
            Self::String(s) => (1u8, s).hash(state),
            Self::Null => 2u8.hash(state),
            Self::Other(value) => {
                3u8.hash(state);
                hash_value(value, state);
            }
        }
    }
}

/// Hashes `value` consistently with its equality: an object's members in any
/// order hash alike, as objects with the same members are equal.
fn hash_value<H: Hasher>(value: &Value, state: &mut H) {
    match value {
        Value::Null => 0u8.hash(state),
        Value::Bool(b) => (1u8, b).hash(state),
        Value::Number(n) => (2u8, n).hash(state),
        Value::String(s) => (3u8, s).hash(state),
        Value::Array(items) => {
            (4u8, items.len()).hash(state);
            for item in items {
                hash_value(item, state);
            }
        }
        Value::Object(members) => {
            let unordered = members.iter().fold(0u64, |sum, (key, value)| {
                let mut member = DefaultHasher::new();
                key.hash(&mut member);
                hash_value(value, &mut member);
                sum.wrapping_add(member.finish())
            });
            (5u8, members.len(), unordered).hash(state);
        }
    }
}
