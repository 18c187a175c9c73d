//! The messages of the service stack: the child's answer with its original
//! line, written as it is while nothing in the stack has changed it, and with
//! only the changed values replaced once something has (see `splice`).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use mcp_tool_errors::JsonRpcId;
use serde_json::Value;
use tokio::sync::oneshot;
use tower_service::Service;

use crate::jsonrpc::member::{Member, members};
use crate::jsonrpc::splice::Spliced;

/// The answer to a client request (or batch).
#[derive(Debug)]
pub(crate) struct Answer {
    /// The answer as the layer reads it; `Null` for one the layer does not
    /// read ([`Answer::as_is`]).
    pub(crate) value: Value,
    /// The child's line, newline included; `None` for an answer the wrapper
    /// made, which is serialized.
    pub(crate) line: Option<Vec<u8>>,
    /// Whether the layer reads the answer: not when its envelope shows that
    /// the layer would leave it as it is. The line of an answer it read is
    /// written with what the layer changed spliced in (`crate::jsonrpc::splice`).
    pub(crate) read: bool,
    /// Told when the answer is written to the client, so that the child's next
    /// line is not written before it.
    pub(crate) queued: Option<oneshot::Sender<()>>,
}

impl Answer {
    /// An answer the wrapper made itself.
    pub(crate) fn made(value: Value) -> Self {
        Self {
            value,
            line: None,
            read: true,
            queued: None,
        }
    }

    /// The child's `line`, which the layer is to read as `value`.
    pub(crate) fn from_child(line: Vec<u8>, value: Value) -> Self {
        Self {
            value,
            line: Some(line),
            read: true,
            queued: None,
        }
    }

    /// The child's `line`, written as it is: the layer would leave it alone.
    pub(crate) fn as_is(line: Vec<u8>) -> Self {
        Self {
            value: Value::Null,
            line: Some(line),
            read: false,
            queued: None,
        }
    }

    /// The line to write for the client: the child's own bytes when
    /// unchanged; and who is to be told once it is written.
    pub(crate) fn into_line(self) -> (Vec<u8>, Option<oneshot::Sender<()>>) {
        let line = match self.line {
            Some(line) if !self.read => line,
            Some(line) => match crate::jsonrpc::splice::splice(&line, &self.value) {
                Some(Spliced::Same) => line,
                Some(Spliced::Changed(spliced)) => spliced,
                None => serialized(&self.value),
            },
            None => serialized(&self.value),
        };
        (line, self.queued)
    }
}

/// `value` as a line of its own.
fn serialized(value: &Value) -> Vec<u8> {
    let mut line = crate::jsonrpc::nested::to_vec(value);
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
    cancelled_ids_among(&members(message))
}

/// The ids of the requests that `members` (a message's) cancel.
pub(crate) fn cancelled_ids_among<'a>(members: &[Member<'a>]) -> Vec<&'a Value> {
    members
        .iter()
        .filter_map(|member| member.cancelled_id())
        .collect()
}

/// Whether an answer with the id `answer` answers the request with the id
/// `request`: JSON-RPC's rule, the library's ([`JsonRpcId`]): `9` answers
/// `9.0`, `-0` answers `0`, a number never answers a string.
pub(crate) fn answers(answer: &Value, request: &Value) -> bool {
    JsonRpcId::same(answer, request)
}

/// The requests of a message or batch that expect an answer: their ids, and
/// whether each is a `tools/call`.
pub(crate) fn requests(message: &Value) -> Vec<(Value, bool)> {
    requests_among(&members(message))
}

/// The requests among `members` (a message's): their ids, and whether each
/// is a `tools/call`, as the command's own answers to them need.
pub(crate) fn requests_among(members: &[Member<'_>]) -> Vec<(Value, bool)> {
    members
        .iter()
        .filter_map(|member| member.request())
        .map(|request| (request.id.clone(), request.is_tool_call()))
        .collect()
}

/// The ids of the responses in a message or batch from the child.
pub(crate) fn response_ids(message: &Value) -> Vec<&Value> {
    members(message)
        .into_iter()
        .filter_map(Member::response_id)
        .collect()
}

/// The inner service of the layer for one client message: `S`, which answers
/// with the child's [`Answer`], kept aside so that [`answered`] can write the
/// child's own bytes when the layer changed nothing. An answer the layer does
/// not read ([`Answer::as_is`]) reaches it as no response.
///
/// The layer sees a `tower::Service<Value, Response = Option<Value>>`, as any
/// user's transport gives it: the library's `exchange` traits are not used.
#[derive(Debug)]
pub(crate) struct WithChildAnswer<S> {
    inner: S,
    child_answer: ChildAnswer,
}

/// Where [`WithChildAnswer`] keeps the child's answer for [`answered`].
pub(crate) type ChildAnswer = Arc<Mutex<Option<Answer>>>;

impl<S> WithChildAnswer<S> {
    /// The service for one message; the child's answer goes to `child_answer`.
    pub(crate) fn new(inner: S, child_answer: ChildAnswer) -> Self {
        Self {
            inner,
            child_answer,
        }
    }
}

impl<S> Service<Value> for WithChildAnswer<S>
where
    S: Service<Value, Response = Answer, Error = Withdrawn>,
    S::Future: Send + 'static,
{
    type Response = Option<Value>;
    type Error = Withdrawn;
    type Future = Pin<Box<dyn Future<Output = Result<Option<Value>, Withdrawn>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Withdrawn>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Value) -> Self::Future {
        let answer = self.inner.call(request);
        let child_answer = self.child_answer.clone();
        Box::pin(async move {
            let mut answer = answer.await?;
            // The layer's to read and change: `answered` puts it back.
            let value = answer.read.then(|| std::mem::take(&mut answer.value));
            *child_answer.lock().expect("never poisoned") = Some(answer);
            Ok(value)
        })
    }
}

/// The answer to write for what the layer returned (`value`): the child's
/// answer holding the layer's value, whose line keeps the child's bytes but
/// for what the layer changed; an answer of the layer's own (the child's was
/// never read: a timeout) is serialized. `None` when there is nothing to
/// write.
pub(crate) fn answered(value: Option<Value>, child_answer: &ChildAnswer) -> Option<Answer> {
    let kept = child_answer.lock().expect("never poisoned").take();
    match (kept, value) {
        (Some(answer), None) if !answer.read => Some(answer),
        (Some(mut answer), Some(value)) => {
            answer.value = value;
            Some(answer)
        }
        (_, value) => value.map(Answer::made),
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

    /// The child's answer `line`, which the layer is to read.
    fn child_answer(line: &[u8]) -> ChildAnswer {
        let value = serde_json::from_slice(line).unwrap();
        Arc::new(Mutex::new(Some(Answer::from_child(line.to_vec(), value))))
    }

    #[test]
    fn an_answer_the_layer_left_alone_keeps_the_childs_line_unchanged() {
        let line = b"{ \"jsonrpc\":\"2.0\",\"id\":1, \"result\":{\"content\":[]}}\n";
        let value = serde_json::from_slice(line).unwrap();
        let answer = answered(Some(value), &child_answer(line)).unwrap();
        assert_eq!(answer.into_line().0, line);
    }

    #[test]
    fn an_answer_the_layer_changed_is_the_childs_line_with_the_change_spliced_in() {
        let line =
            b"{\"id\":1, \"jsonrpc\":\"2.0\",\"result\":{\"content\":[],\"isError\":true}}\n";
        let layer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}], "isError": true}});
        let answer = answered(Some(layer.clone()), &child_answer(line)).unwrap();
        assert_eq!(answer.value, layer);
        // The new list is serialized in the map's order, which serde_json's
        // `preserve_order` (on in `--all-features` builds) changes.
        let content = serde_json::to_string(&layer["result"]["content"]).unwrap();
        let expected = format!(
            "{{\"id\":1, \"jsonrpc\":\"2.0\",\"result\":{{\"content\":{content},\"isError\":true}}}}\n"
        );
        assert_eq!(String::from_utf8(answer.into_line().0).unwrap(), expected);
    }

    #[test]
    fn an_answer_without_the_childs_is_the_layers_own_and_serialized() {
        let layer =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "timed out"}});
        let answer = answered(Some(layer.clone()), &ChildAnswer::default()).unwrap();
        assert!(answer.line.is_none());
        assert_eq!(answer.value, layer);
    }

    #[test]
    fn an_answer_the_layer_did_not_read_is_written_as_the_childs_line() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".to_vec();
        let kept = Arc::new(Mutex::new(Some(Answer::as_is(line.clone()))));
        let answer = answered(None, &kept).expect("the child's answer");
        assert_eq!(answer.into_line().0, line);
        assert!(
            answered(None, &ChildAnswer::default()).is_none(),
            "nothing to write"
        );
    }
}
