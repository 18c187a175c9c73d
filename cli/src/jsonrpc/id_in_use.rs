//! The answer to a request whose id is already in flight: `-32600`, made by the
//! wrapper, and the request is not sent to the child.
//!
//! The child's answer to either request would carry the same id, and the
//! wrapper could not tell which it answers; JSON-RPC requires a client to keep
//! ids unique among its requests in flight. The earlier request keeps its own
//! answer. The message names the id as its JSON text: `id 7`, `id "a"`.
//!
//! A batch that holds such an id, or one id twice, is refused whole: each of its
//! requests gets `-32600`, the reused ones `Invalid request: id ID is already in
//! use.`, the others `Invalid request: the batch holds id ID, which is already in
//! use.` (the first reused id), since forwarding part of a batch would change
//! the client's bytes.

use serde_json::Value;

use crate::jsonrpc::message::Answer;
use crate::jsonrpc::own_answer::{self, INVALID_REQUEST};

/// The refusal of `requests` (a message or a batch), where `reused[i]` says
/// whether the id of `requests[i]` is already in use; at least one is.
pub(crate) fn refusal(requests: &[(Value, bool)], batch: bool, reused: &[bool]) -> Answer {
    let first_reused = requests
        .iter()
        .zip(reused)
        .find_map(|((id, _), reused)| reused.then_some(id))
        .unwrap_or(&Value::Null);
    let mut answers = requests.iter().zip(reused).map(|((id, _), reused)| {
        let message = if *reused {
            format!("Invalid request: id {id} is already in use.")
        } else {
            format!("Invalid request: the batch holds id {first_reused}, which is already in use.")
        };
        own_answer::error(id, INVALID_REQUEST, &message)
    });
    let value = if batch {
        Value::Array(answers.collect())
    } else {
        answers.next().unwrap_or(Value::Null)
    };
    Answer::made(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_message_names_the_id_as_json() {
        let answer = refusal(&[(json!("a"), true)], false, &[true]);
        assert_eq!(
            answer.value,
            json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32600, "message": "Invalid request: id \"a\" is already in use."}})
        );
    }
}
