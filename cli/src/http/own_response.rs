//! The responses the command makes itself, for either HTTP mode: a status
//! alone, an answer it made, a JSON-RPC error with no id (the JSON-RPC shape
//! is `crate::jsonrpc::own_answer`'s).

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use serde_json::Value;

use crate::http::body::{ProxyBody, whole};
use crate::jsonrpc::own_answer;

/// A `200` whose JSON body is an answer the proxy made.
pub(crate) fn made_response(bytes: Vec<u8>) -> Response<ProxyBody> {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(whole(bytes))
        .expect("a status and a content type make a response")
}

/// A `status` whose JSON body is a JSON-RPC error with no id, `code` and
/// `message`: the bridge's refusals.
pub(crate) fn json_error(status: StatusCode, code: i64, message: &str) -> Response<ProxyBody> {
    json_status(status, &own_answer::error(&Value::Null, code, message))
}

/// The `400` to a body at the endpoint that is no JSON, in either HTTP mode:
/// the answer every mode gives a message it cannot read.
pub(crate) fn parse_error() -> Response<ProxyBody> {
    json_status(StatusCode::BAD_REQUEST, &own_answer::parse_error())
}

/// A `status` whose body is `body`, JSON.
fn json_status(status: StatusCode, body: &Value) -> Response<ProxyBody> {
    let mut response = Response::new(whole(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A `status` with no body.
pub(crate) fn status_only(status: StatusCode) -> Response<ProxyBody> {
    let mut response = Response::new(whole(Vec::new()));
    *response.status_mut() = status;
    response
}
