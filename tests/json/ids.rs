//! `JsonRpcId` is the layer's own rule for matching an answer to its request:
//! for every pair of id spellings, the layer rewraps a tool error answered
//! with the second for a call sent with the first exactly when the two keys
//! are equal (and `JsonRpcId::same` says so without making keys), and equal
//! keys hash alike.

use std::collections::HashSet;
use std::future::ready;

use mcp_tool_errors::{JsonRpcId, ServiceBuilderExt};
use serde_json::{Value, json};
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

use crate::support::complete::block_on;
use crate::support::tool_call;

/// Ids as peers write them, each spelling parsed from its own text (`9.0` and
/// `9e0` stay what they are): the numbers the SDKs write back, zero's sign,
/// the edges of the integer ranges, fractions, strings that read as numbers.
const SPELLINGS: &[&str] = &[
    "9",
    "9.0",
    "9e0",
    "90e-1",
    "\"9\"",
    "100",
    "1e2",
    "100.0",
    "0",
    "-0",
    "0.0",
    "-0.0",
    "1",
    "\"1\"",
    "1.5",
    "15e-1",
    "-1",
    "-1.0",
    "9007199254740993",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "1e300",
    "\"\"",
    "\"a\"",
    "null",
];

fn parsed(spelling: &str) -> Value {
    serde_json::from_str(spelling).expect("a JSON value")
}

/// Whether the layer reads an error answered with `answered` as the answer to
/// a call sent with `sent`: it rewraps the text then.
fn layer_matches(sent: &Value, answered: &Value) -> bool {
    let answered = answered.clone();
    let server = service_fn(move |_request: Value| {
        ready(Ok::<_, std::convert::Infallible>(json!({
            "jsonrpc": "2.0", "id": answered,
            "result": {"content": [{"type": "text", "text": "boom"}], "isError": true},
        })))
    });
    let mut service = ServiceBuilder::new().tool_errors().service(server);
    let response = block_on(async {
        let ready = service.ready().await.expect("ready");
        ready
            .call(tool_call(sent.clone(), "fail"))
            .await
            .expect("answered")
    });
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    text != "boom"
}

#[test]
fn keys_are_equal_exactly_when_the_layer_matches_the_answer() {
    for sent in SPELLINGS {
        for answered in SPELLINGS {
            let (sent_value, answered_value) = (parsed(sent), parsed(answered));
            let equal = JsonRpcId::new(&sent_value) == JsonRpcId::new(&answered_value);
            assert_eq!(
                JsonRpcId::same(&sent_value, &answered_value),
                equal,
                "same, for sent {sent}, answered {answered}"
            );
            assert_eq!(
                equal,
                layer_matches(&sent_value, &answered_value),
                "sent {sent}, answered {answered}"
            );
        }
    }
}

#[test]
fn the_spellings_the_sdks_write_back_are_one_id_and_strings_never_numbers() {
    let id = |spelling: &str| JsonRpcId::new(&parsed(spelling));
    assert_eq!(id("9.0"), id("9"));
    assert_eq!(id("9e0"), id("9"));
    assert_eq!(id("1e2"), id("100"));
    assert_eq!(id("-0"), id("0"));
    assert_ne!(id("1"), id("\"1\""));
    assert_ne!(id("1.5"), id("1"));
    let distinct: HashSet<JsonRpcId> = SPELLINGS.iter().map(|spelling| id(spelling)).collect();
    let classes = SPELLINGS
        .iter()
        .enumerate()
        .filter(|(at, spelling)| {
            !SPELLINGS[..*at]
                .iter()
                .any(|earlier| id(earlier) == id(spelling))
        })
        .count();
    assert_eq!(distinct.len(), classes, "equal keys hash alike");
}

#[test]
fn a_key_shows_the_id_as_it_was_written() {
    for spelling in ["9.0", "\"a\\u0001\"", "null", "18446744073709551615"] {
        let value = parsed(spelling);
        let id = JsonRpcId::new(&value);
        assert_eq!(id.to_value(), value);
        assert_eq!(parsed(&id.to_string()), value, "{spelling}");
    }
}
