//! A JSON-RPC response (or batch of them): its answers, and the layer's own.

use serde_json::{Map, Value};

use super::created::created_object;
use super::field::field;
use super::result::text_item;
use crate::NoAnswer;
use crate::model::{Answer, AnswerId, LayerAnswer, LayerAnswers, Response};

impl<E> Response<E> for Value {
    type Body = Map<String, Value>;

    fn visit_answers(
        response: &mut Result<Value, E>,
        mut visit: impl FnMut(AnswerId<'_>, Answer<'_, Map<String, Value>>),
    ) {
        match response {
            Ok(Value::Array(answers)) => answers
                .iter_mut()
                .for_each(|answer| visit_one(answer, &mut visit)),
            Ok(answer) => visit_one(answer, &mut visit),
            Err(_) => visit(AnswerId::Implicit, Answer::ServiceError),
        }
    }

    fn is_batch(response: &Result<Value, E>) -> bool {
        matches!(response, Ok(Value::Array(_)))
    }

    fn take_no_answer(response: &mut Result<Value, E>) -> Option<NoAnswer> {
        response.as_mut().ok().and_then(NoAnswer::take)
    }

    fn layer_response(answers: LayerAnswers<'_>) -> Result<Value, E> {
        let batch = answers.is_batch();
        let mut responses: Vec<Value> = answers
            .into_answers()
            .map(|(id, answer)| response(id.map_or(Value::Null, |id| id.to_value()), answer))
            .collect();
        Ok(match (batch, responses.len()) {
            (_, 0) => Value::Null,
            (false, _) => responses.swap_remove(0),
            (true, _) => Value::Array(responses),
        })
    }
}

/// `None` is no response: a notification, or a batch of them.
impl<E> Response<E> for Option<Value> {
    type Body = Map<String, Value>;

    fn visit_answers(
        response: &mut Result<Option<Value>, E>,
        mut visit: impl FnMut(AnswerId<'_>, Answer<'_, Map<String, Value>>),
    ) {
        match response {
            Ok(Some(Value::Array(answers))) => answers
                .iter_mut()
                .for_each(|answer| visit_one(answer, &mut visit)),
            Ok(Some(answer)) => visit_one(answer, &mut visit),
            Ok(None) => {}
            Err(_) => visit(AnswerId::Implicit, Answer::ServiceError),
        }
    }

    fn is_batch(response: &Result<Option<Value>, E>) -> bool {
        matches!(response, Ok(Some(Value::Array(_))))
    }

    fn take_no_answer(response: &mut Result<Option<Value>, E>) -> Option<NoAnswer> {
        let response = response.as_mut().ok()?.as_mut()?;
        NoAnswer::take(response)
    }

    fn layer_response(answers: LayerAnswers<'_>) -> Result<Option<Value>, E> {
        <Value as Response<E>>::layer_response(answers)
            .map(|response| (!response.is_null()).then_some(response))
    }
}

/// Visits `answer` if it is a JSON-RPC response: one pass over its keys.
fn visit_one(
    answer: &mut Value,
    visit: &mut impl FnMut(AnswerId<'_>, Answer<'_, Map<String, Value>>),
) {
    let Value::Object(answer) = answer else {
        return;
    };
    let (mut id, mut error, mut result) = (None, None, None);
    for (key, value) in answer.iter_mut() {
        match key.as_str() {
            "id" => id = Some(&*value),
            "error" => error = Some(&*value),
            "result" => result = Some(value),
            _ => {}
        }
    }
    let id = id.map_or(AnswerId::Missing, AnswerId::Json);
    match (error, result) {
        (Some(error), _) => {
            let code = error
                .as_object()
                .and_then(|error| field(error, "code"))
                .and_then(Value::as_i64);
            visit(id, Answer::Error { code });
        }
        (None, Some(Value::Object(result))) => visit(id, Answer::Result(result)),
        _ => {}
    }
}

/// The JSON-RPC response carrying `answer` to the request with `id`.
fn response(id: Value, answer: LayerAnswer) -> Value {
    let jsonrpc = Value::from("2.0");
    match answer {
        LayerAnswer::ToolError { text } => created_object([
            ("id", id),
            ("jsonrpc", jsonrpc),
            ("result", tool_error_result(text)),
        ]),
        LayerAnswer::ErrorResponse { code, message } => {
            let error = created_object([
                ("code", Value::from(code)),
                ("message", Value::String(message)),
            ]);
            created_object([("error", error), ("id", id), ("jsonrpc", jsonrpc)])
        }
    }
}

/// The `tools/call` result of [`LayerAnswer::ToolError`]: `text` as its one
/// text item, and `isError: true`.
pub(crate) fn tool_error_result(text: String) -> Value {
    created_object([
        ("content", Value::Array(vec![text_item(text)])),
        ("isError", Value::Bool(true)),
    ])
}
