//! The messages of the service stack: a client request with its original line,
//! and the child's answer with its original line, written as it is while
//! nothing in the stack has changed it, and with only the changed values
//! replaced once something has (see `splice`).

use mcp_tool_errors::exchange::{
    JsonPending, LayerAnswer, Outcome, Pending, Request, RequestView, TaskExchange, UnansweredCall,
};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

/// A client request (or a batch holding at least one), read from one line.
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub(crate) value: Value,
    /// The line as the client wrote it, newline included: what the child gets.
    pub(crate) line: Vec<u8>,
}

/// The answer to an [`Outgoing`].
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) value: Value,
    /// The child's line, newline included; `None` for an answer the wrapper
    /// made, which is serialized.
    pub(crate) line: Option<Vec<u8>>,
    /// Whether `value` may no longer be what `line` says: the line is then
    /// written with the changed values spliced in.
    pub(crate) changed: bool,
    /// Told when the answer is queued for the client, so that the child's next
    /// line is not written before it.
    pub(crate) queued: Option<oneshot::Sender<()>>,
}

impl Answer {
    /// An answer the wrapper made itself.
    pub(crate) fn made(value: Value) -> Self {
        Self {
            value,
            line: None,
            changed: true,
            queued: None,
        }
    }

    /// Queues the answer for the client: the child's own bytes when unchanged.
    pub(crate) fn queue(self, to_client: &mpsc::UnboundedSender<Vec<u8>>) {
        let line = match self.line {
            Some(line) if !self.changed => line,
            Some(line) => spliced(&line, &self.value).unwrap_or_else(|| serialized(&self.value)),
            None => serialized(&self.value),
        };
        let _ = to_client.send(line);
        if let Some(queued) = self.queued {
            let _ = queued.send(());
        }
    }
}

/// The child's `line` with the values that differ in `value` written in place.
fn spliced(line: &[u8], value: &Value) -> Option<Vec<u8>> {
    let original: Value = serde_json::from_slice(line).ok()?;
    crate::splice::splice(line, &original, value)
}

/// `value` as a line of its own.
fn serialized(value: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).expect("a JSON value serializes");
    line.push(b'\n');
    line
}

/// The error of the child's service: the client cancelled the request, which
/// gets no answer then (the layer passes service errors through untouched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Withdrawn;

/// The ids of the requests that a client's message (or batch) cancels: the
/// `params.requestId` of each `notifications/cancelled`.
pub(crate) fn cancelled_ids(message: &Value) -> Vec<&Value> {
    fn read(message: &Value) -> Option<&Value> {
        let object = message.as_object()?;
        if object.get("method")?.as_str()? != "notifications/cancelled" || object.contains_key("id")
        {
            return None;
        }
        object.get("params")?.get("requestId")
    }
    match message {
        Value::Array(batch) => batch.iter().filter_map(read).collect(),
        single => read(single).into_iter().collect(),
    }
}

/// The id of a request as a map key: an integer as it is, anything else as its
/// JSON text, so `1`, `1.0` and `"1"` are three keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdKey {
    Integer(i64),
    Json(String),
}

pub(crate) fn id_key(id: &Value) -> IdKey {
    match id.as_i64() {
        Some(integer) if id.is_i64() => IdKey::Integer(integer),
        _ => IdKey::Json(id.to_string()),
    }
}

/// The requests of a message or batch that expect an answer: their ids, and
/// whether each is a `tools/call`.
pub(crate) fn requests(message: &Value) -> Vec<(Value, bool)> {
    fn read(message: &Value) -> Option<(Value, bool)> {
        let object = message.as_object()?;
        let method = object.get("method")?.as_str()?;
        let id = object.get("id")?;
        Some((id.clone(), method == "tools/call"))
    }
    match message {
        Value::Array(batch) => batch.iter().filter_map(read).collect(),
        single => read(single).into_iter().collect(),
    }
}

/// The ids of the responses in a message or batch from the child.
pub(crate) fn response_ids(message: &Value) -> Vec<&Value> {
    fn read(message: &Value) -> Option<&Value> {
        let object = message.as_object()?;
        if object.contains_key("method") {
            return None;
        }
        object.get("id")
    }
    match message {
        Value::Array(batch) => batch.iter().filter_map(read).collect(),
        single => read(single).into_iter().collect(),
    }
}

impl Request for Outgoing {
    type Pending = OutgoingPending;

    fn pending(&self) -> OutgoingPending {
        OutgoingPending(self.value.pending())
    }

    fn view(&self) -> Option<RequestView<'_>> {
        self.value.view()
    }
}

/// What the layer remembers of an [`Outgoing`]: the JSON path's own memory.
#[derive(Debug, Clone)]
pub(crate) struct OutgoingPending(JsonPending);

impl<E> Pending<Answer, E> for OutgoingPending {
    type Result = Map<String, Value>;

    fn for_each_tool_result(
        &self,
        answer: &mut Answer,
        mut visit: impl FnMut(&str, &mut Self::Result),
    ) {
        // The layer changes error results only, so only those are compared; an
        // answer it left alone keeps the child's bytes.
        let mut changed = false;
        Pending::<Value, E>::for_each_tool_result(&self.0, &mut answer.value, |tool, result| {
            if result.get("isError") == Some(&Value::Bool(true)) {
                let before = result.clone();
                visit(tool, result);
                changed |= *result != before;
            } else {
                visit(tool, result);
            }
        });
        answer.changed |= changed;
    }

    fn layer_response(
        &self,
        answer: impl FnMut(UnansweredCall<'_>) -> LayerAnswer,
    ) -> Result<Answer, E> {
        Pending::<Value, E>::layer_response(&self.0, answer).map(Answer::made)
    }

    /// Read as the JSON path reads it. The command installs no subscriber, so
    /// this runs only when one is added; the copy is the price of reading an
    /// answer that keeps the child's bytes beside its value.
    fn outcome(&self, result: &Result<Answer, E>) -> Outcome {
        match result {
            Ok(answer) => Pending::<Value, E>::outcome(&self.0, &Ok(answer.value.clone())),
            Err(_) => Outcome::ServiceError,
        }
    }

    fn called_tools(&self) -> impl Iterator<Item = &str> {
        Pending::<Value, E>::called_tools(&self.0)
    }

    type TaskResult = Map<String, Value>;

    fn task_exchange<'a>(&'a self, answer: &'a mut Answer) -> TaskExchange<'a, Self::TaskResult> {
        let Answer { value, changed, .. } = answer;
        let exchange = Pending::<Value, E>::task_exchange(&self.0, value);
        // The layer gets the task's result by reference and is not asked back:
        // an error result may be rewrapped, so its answer is spliced.
        if let TaskExchange::Result { result, .. } = &exchange
            && result.get("isError") == Some(&Value::Bool(true))
        {
            *changed = true;
        }
        exchange
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_are_the_messages_with_a_method_and_an_id() {
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}},
            {"jsonrpc": "2.0", "method": "notifications/progress"},
            {"jsonrpc": "2.0", "id": "x", "method": "ping"},
            {"jsonrpc": "2.0", "id": 9, "result": {}},
        ]);
        assert_eq!(requests(&batch), [(json!(1), true), (json!("x"), false)]);
    }

    #[test]
    fn responses_are_the_messages_with_an_id_and_no_method() {
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "roots/list"},
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": ""}},
        ]);
        assert_eq!(response_ids(&batch), [&json!(1), &json!(3)]);
    }

    #[test]
    fn string_and_number_ids_are_different_keys() {
        assert_ne!(id_key(&json!(1)), id_key(&json!("1")));
        assert_ne!(id_key(&json!(1)), id_key(&json!(1.0)));
        assert_eq!(id_key(&json!(u64::MAX)), id_key(&json!(u64::MAX)));
    }
}
