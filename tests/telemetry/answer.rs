//! The JSON-RPC response the test servers of this binary send.

use serde_json::{Value, json};

/// The response to `request` whose other members are those of `answer`
/// (`{"result": …}` or `{"error": …}`).
pub(crate) fn respond(request: &Value, answer: Value) -> Value {
    let mut response = json!({"jsonrpc": "2.0", "id": request["id"].clone()});
    let Value::Object(members) = answer else {
        panic!("an answer is an object: {answer}");
    };
    response.as_object_mut().unwrap().extend(members);
    response
}
