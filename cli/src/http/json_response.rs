//! The responses whose JSON body the command writes itself, for either HTTP
//! mode: an answer it made, and a JSON-RPC error with no id.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use crate::http::body::{ProxyBody, whole};

/// A `200` whose JSON body is an answer the proxy made.
pub(crate) fn made_response(bytes: Vec<u8>) -> Response<ProxyBody> {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(whole(bytes))
        .expect("a status and a content type make a response")
}

/// A `status` whose JSON body is a JSON-RPC error with no id, `code` and
/// `message`: the bridge's refusals, and the answer to a body that is no
/// JSON at the endpoint (the bridge's and the reverse proxy's).
pub(crate) fn json_error(status: StatusCode, code: i64, message: &str) -> Response<ProxyBody> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "error": {"code": code, "message": message},
        "id": null,
    });
    let mut response = Response::new(whole(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
