//! Answers the proxy passes on without reading them, and the one rule that
//! follows: a request answered so gets no answer of the proxy's as well.
//!
//! The proxy reads an answer strictly: its data UTF-8 and JSON. A client may
//! read more: bytes that are not UTF-8 replaced. An event whose data the proxy could not read
//! as the answer it awaits is looked at once more, as such a client reads it,
//! before it passes; the requests it answers count as answered, so that the
//! proxy's own answer ([`Failure`](crate::exchange::failure::Failure), at the end
//! of the stream or of a drain) goes only to the requests nothing answered.
//! Reading an answer that way costs nothing on the common path: only the data
//! of an event that the strict reading found to be no answer of the awaited
//! ones (nor a message with a method, which is never one) is read again.

use std::sync::{LazyLock, Mutex};

use serde_json::Value;

use crate::jsonrpc::message::{answers, response_ids};
use crate::throttled_log::{ThrottledLog, log_throttled};

/// The ids among `awaited` that the message `data` (an event's data, which
/// the proxy could not read as an answer to one of them) answers, as a
/// lenient client reads it.
pub(crate) fn answered_ids<'a>(data: &[u8], awaited: &'a [Value]) -> Vec<&'a Value> {
    if !matches!(data.trim_ascii_start().first(), Some(b'{' | b'[')) {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(data);
    let Ok(message) = crate::jsonrpc::nested::from_slice(text.as_bytes()) else {
        return Vec::new();
    };
    awaited_among(&response_ids(&message), awaited)
}

/// The ids among `awaited` that one of `ids` (those of answers) answers.
pub(crate) fn awaited_among<'a>(ids: &[&Value], awaited: &'a [Value]) -> Vec<&'a Value> {
    awaited
        .iter()
        .filter(|request| ids.iter().any(|answer| answers(answer, request)))
        .collect()
}

/// Logs, at most once a second, that an answer went to the client as the
/// server wrote it because the proxy could not read it.
pub(crate) fn log_answer_passed_unread() {
    static LOG: LazyLock<Mutex<ThrottledLog>> =
        LazyLock::new(|| Mutex::new(ThrottledLog::new(ANSWER_PASSED_UNREAD)));
    log_throttled(&LOG, || {
        format!(
            "{ANSWER_PASSED_UNREAD}: its data is no UTF-8 JSON, or its id is the request's written \
             otherwise; passed on as the server wrote it, not rewrapped"
        )
    });
}

/// How the log line of an answer the proxy could not read begins.
const ANSWER_PASSED_UNREAD: &str = "an answer the proxy could not read";

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_answer_that_is_no_utf8_answers_its_request_as_a_lenient_client_reads_it() {
        let awaited = [json!(1), json!("a")];
        let data = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"caf\xE9\"}]}}";
        assert_eq!(answered_ids(data, &awaited), [&json!(1)]);
        let batch =
            br#"[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]"#;
        assert_eq!(answered_ids(batch, &awaited), [&json!("a")]);
        for no_answer in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":"1","result":{}}"#,
            b"",
            b"not json",
            b"{\"id\":1,",
        ] {
            assert!(
                answered_ids(no_answer, &awaited).is_empty(),
                "{no_answer:?}"
            );
        }
    }

    #[test]
    fn numbers_are_the_same_id_by_their_value() {
        let awaited = [json!(7), json!(9_007_199_254_740_993_u64)];
        assert_eq!(awaited_among(&[&json!(7.0)], &awaited), [&json!(7)]);
        assert_eq!(awaited_among(&[&json!(7)], &awaited), [&json!(7)]);
        assert!(awaited_among(&[&json!(7.5)], &awaited).is_empty());
        assert!(awaited_among(&[&json!("7")], &awaited).is_empty());
        // Two integers are compared exactly, not as floats.
        assert!(awaited_among(&[&json!(9_007_199_254_740_992_u64)], &awaited).is_empty());
    }
}
