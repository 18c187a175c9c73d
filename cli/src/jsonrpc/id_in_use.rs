//! The refusal of a request whose id is already in use, in every mode: an id
//! in flight (a request sent earlier and not answered yet) or held twice in
//! one batch. Such a request is answered `-32600` by the command and never
//! reaches the server.
//!
//! The server's answer to either request would carry the same id, and the
//! command could not tell which it answers (the layer would read one, the
//! other would pass raw); JSON-RPC requires a client to keep ids unique among
//! its requests in flight. Ids are compared by JSON-RPC's rule, the library's
//! [`JsonRpcId`]: `1` and `1.0` are one id. Within one batch, two numbers
//! that are one IEEE double are one id too (`9007199254740992` and
//! `9007199254740993`): a server that reads numbers so (JavaScript's
//! `JSON.parse`; RFC 8259 §6 gives no other range to interoperate in)
//! answers both with one id. The earlier request keeps its own answer. The
//! message names the id as its JSON text: `id 7`, `id "a"`.
//!
//! A batch that holds such an id, or one id twice, is refused whole: each of its
//! requests gets `-32600`, the reused ones `Invalid request: id ID is already in
//! use.`, the others `Invalid request: the batch holds id ID, which is already in
//! use.` (the first reused id), since forwarding part of a batch would change
//! the client's bytes.
//!
//! Each mode says which ids it has in flight: the stdio mode its table of
//! requests sent to the child, the bridge its session's calls, the HTTP mode
//! none (each `POST` is answered on its own response, so only a batch can
//! hold an id twice).

use std::collections::HashSet;

use mcp_tool_errors::JsonRpcId;
use serde_json::Value;

use crate::jsonrpc::message::Answer;
use crate::jsonrpc::own_answer::{self, INVALID_REQUEST};

/// The answer refusing `requests` (their ids, and which are `tools/call`: a
/// message's, or a `batch`'s), when one's id is in flight by `in_flight` or
/// earlier in the same message; `None` when every id is free and the
/// message goes on.
pub(crate) fn refused(
    requests: &[(Value, bool)],
    batch: bool,
    in_flight: impl Fn(&JsonRpcId) -> bool,
) -> Option<Answer> {
    let keys: Vec<JsonRpcId> = requests.iter().map(|(id, _)| JsonRpcId::new(id)).collect();
    let reused = in_use(&keys, in_flight)?;
    Some(refusal(requests, batch, &reused))
}

/// Whether each of `keys` (the ids of a message's requests, in order) is in
/// use: in flight by `in_flight`, or earlier among `keys`; `None` when none
/// is.
pub(crate) fn in_use(
    keys: &[JsonRpcId],
    in_flight: impl Fn(&JsonRpcId) -> bool,
) -> Option<Vec<bool>> {
    // A set, not a scan of the keys before: a batch may hold many requests.
    // A single message has no earlier key to read.
    let mut earlier: HashSet<HeldId<'_>> = HashSet::new();
    let last = keys.len().saturating_sub(1);
    let reused: Vec<bool> = keys
        .iter()
        .enumerate()
        .map(|(at, key)| {
            let held_earlier = last > 0
                && if at < last {
                    !earlier.insert(HeldId::of(key))
                } else {
                    earlier.contains(&HeldId::of(key))
                };
            in_flight(key) || held_earlier
        })
        .collect();
    reused.contains(&true).then_some(reused)
}

/// An id of a batch as the server may tell it from the others: a number as
/// the IEEE double it reads as, which takes in every spelling
/// [`JsonRpcId`] takes for one id (`-0` is `0`); any other id as
/// [`JsonRpcId`] compares it.
#[derive(PartialEq, Eq, Hash)]
enum HeldId<'a> {
    /// The bits of the double, `0.0`'s for `-0`.
    Double(u64),
    /// A string, `null`, or a value that is no valid id.
    Id(&'a JsonRpcId),
}

impl<'a> HeldId<'a> {
    fn of(key: &'a JsonRpcId) -> Self {
        match key.to_value() {
            Value::Number(number) => {
                let double = number.as_f64().unwrap_or_default();
                Self::Double(if double == 0.0 { 0 } else { double.to_bits() })
            }
            _ => Self::Id(key),
        }
    }
}

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
            JsonRpcId::new(id).in_use_message()
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

    #[test]
    fn an_id_in_flight_or_earlier_in_the_batch_in_any_spelling_is_in_use() {
        let nothing_in_flight = |_: &JsonRpcId| false;
        let free = [(json!(1), true), (json!("1"), false), (json!(2), true)];
        assert!(refused(&free, true, nothing_in_flight).is_none());
        let twice = [(json!(1), true), (json!(2), false), (json!(1.0), true)];
        let answer = refused(&twice, true, nothing_in_flight).expect("refused");
        assert_eq!(
            answer.value,
            json!([
                {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid request: the batch holds id 1.0, which is already in use."}},
                {"jsonrpc": "2.0", "id": 2, "error": {"code": -32600, "message": "Invalid request: the batch holds id 1.0, which is already in use."}},
                {"jsonrpc": "2.0", "id": 1.0, "error": {"code": -32600, "message": "Invalid request: id 1.0 is already in use."}},
            ])
        );
        let seven = JsonRpcId::new(&json!(7));
        let in_flight = |key: &JsonRpcId| *key == seven;
        let answer = refused(&[(json!(7e0), true)], false, in_flight).expect("refused");
        assert_eq!(answer.value["error"]["code"], -32600);
        assert!(refused(&[(json!("7"), true)], false, in_flight).is_none());
    }

    /// Two ids JSON-RPC tells apart that a server reading numbers as doubles
    /// takes for one: refused together in a batch, as one id twice.
    #[test]
    fn numbers_that_are_one_double_are_one_id_in_a_batch() {
        let nothing_in_flight = |_: &JsonRpcId| false;
        for (first, second) in [
            (json!(9007199254740992_u64), json!(9007199254740993_u64)),
            (json!(-9007199254740992_i64), json!(-9007199254740993_i64)),
            (json!(0), json!(-0.0)),
        ] {
            let batch = [(first.clone(), true), (second.clone(), true)];
            let answer = refused(&batch, true, nothing_in_flight).expect("refused");
            assert_eq!(answer.value[1]["error"]["code"], -32600, "{first} {second}");
        }
        let apart = [
            (json!(9007199254740991_u64), true),
            (json!(9007199254740992_u64), true),
        ];
        assert!(refused(&apart, true, nothing_in_flight).is_none());
        let kinds = [(json!(1), true), (json!("1"), true), (json!(null), true)];
        assert!(refused(&kinds, true, nothing_in_flight).is_none());
    }
}
