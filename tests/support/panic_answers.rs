//! The oracle for a panic of the inner service: which requests of a message or
//! batch must be answered, and whether the layer's response answers exactly
//! those.
//!
//! Shared with the fuzz target (`fuzz/fuzz_targets/json_path.rs` includes this
//! file), so it depends on `serde_json` and the crate only.
#![allow(dead_code)]

use mcp_tool_errors::{is_rendered, render_error};
use serde_json::Value;

/// A request that expects an answer: its id and, for a `tools/call` whose
/// `params.name` is a string, the tool.
pub type Expected<'a> = (&'a Value, Option<&'a str>);

/// The requests of `request` (a message, or the elements of a batch) that
/// expect an answer, in order: objects with a string `method` and an `id`.
/// Notifications and anything that is not a request expect none.
pub fn expected_answers(request: &Value) -> Vec<Expected<'_>> {
    let messages: Vec<&Value> = match request {
        Value::Array(batch) => batch.iter().collect(),
        single => vec![single],
    };
    messages
        .into_iter()
        .filter_map(|message| {
            let method = message.get("method")?.as_str()?;
            let id = message.get("id")?;
            let tool = (method == "tools/call")
                .then(|| message.get("params")?.get("name")?.as_str())
                .flatten();
            Some((id, tool))
        })
        .collect()
}

/// Checks the layer's response to `request` when the inner service panicked on
/// it: each request that expects an answer gets exactly one, in order, with its
/// id (an `isError` result holding an element for its tool for a `tools/call`,
/// the internal error -32603 otherwise); nothing else gets one; and no request
/// that expects an answer means no response at all. `Err` says what is wrong.
pub fn check_panic_answers(request: &Value, response: Option<&Value>) -> Result<(), String> {
    let expected = expected_answers(request);
    let answers: Vec<&Value> = match (request, response) {
        (_, None) => Vec::new(),
        (Value::Array(_), Some(Value::Array(answers))) => answers.iter().collect(),
        (Value::Array(_), Some(other)) => return Err(format!("a batch answered with {other}")),
        (_, Some(answer)) => vec![answer],
    };
    if answers.len() != expected.len() {
        let ids: Vec<&Value> = expected.iter().map(|(id, _)| *id).collect();
        return Err(format!(
            "{} answers for the {} requests with ids {ids:?} of {request}: {response:?}",
            answers.len(),
            expected.len()
        ));
    }
    if answers.is_empty() && response.is_some() {
        return Err(format!("an empty batch answered {request}: {response:?}"));
    }
    for (answer, (id, tool)) in answers.into_iter().zip(expected) {
        check_answer(answer, id, tool)?;
    }
    Ok(())
}

/// Checks one answer to the panicked request `id` (a `tools/call` of `tool`).
fn check_answer(answer: &Value, id: &Value, tool: Option<&str>) -> Result<(), String> {
    if answer.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err(format!("not a JSON-RPC 2.0 answer: {answer}"));
    }
    if answer.get("id") != Some(id) {
        return Err(format!("the answer to id {id} has another id: {answer}"));
    }
    match tool {
        Some(tool) => {
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            let opening = render_error(tool, "")
                .strip_suffix("\n</error>")
                .map(str::to_owned)
                .unwrap_or_default();
            if answer["result"]["isError"] != true
                || !is_rendered(text)
                || !text.starts_with(&opening)
            {
                return Err(format!("not the error result of {tool:?}: {answer}"));
            }
        }
        None if answer["error"]["code"] != -32603 => {
            return Err(format!("not the internal error: {answer}"));
        }
        None => {}
    }
    Ok(())
}
