//! `notifications/cancelled` for the requests the proxy gives up (a timeout, the
//! end of a drain, a response head that never came, an event too large): the
//! upstream request is dropped, and dropping a connection is not cancelling, in
//! the protocol.

use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::Request;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::http::body::whole;
use crate::http::failure::describe;
use crate::http::proxy::Proxy;

/// The headers `notifications/cancelled` carries from the request it cancels:
/// the server finds the session, the protocol revision and the caller with them.
const CANCEL_HEADERS: [HeaderName; 3] = [
    HeaderName::from_static("mcp-session-id"),
    HeaderName::from_static("mcp-protocol-version"),
    header::AUTHORIZATION,
];

/// `notifications/cancelled` for the requests the proxy gave up.
#[derive(Debug)]
pub(crate) struct Cancel {
    proxy: Arc<Proxy>,
    /// The values of [`CANCEL_HEADERS`] the request had.
    headers: [Option<HeaderValue>; 3],
    ids: Vec<Value>,
}

impl Cancel {
    /// For the requests `ids`, sent with `headers`.
    pub(crate) fn new(proxy: &Arc<Proxy>, headers: &HeaderMap, ids: Vec<Value>) -> Self {
        Self {
            proxy: proxy.clone(),
            headers: CANCEL_HEADERS.map(|name| headers.get(name).cloned()),
            ids,
        }
    }

    /// Tells the server, in a task of its own, that the requests are abandoned:
    /// dropping the connection is not cancelling, in the protocol.
    pub(crate) fn send(&self) {
        for id in &self.ids {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "The client's tool timeout expired."},
            });
            let mut request = Request::post(self.proxy.endpoint())
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ACCEPT, "application/json, text/event-stream");
            for (name, value) in CANCEL_HEADERS.iter().zip(&self.headers) {
                let Some(value) = value else {
                    continue;
                };
                request = request.header(name, value);
            }
            let body = crate::jsonrpc::nested::to_vec(&notification);
            let request = request
                .body(whole(body))
                .expect("a URI and headers of a request make a request");
            let proxy = self.proxy.clone();
            tokio::spawn(async move {
                match proxy.client().request(request).await {
                    Ok(response) => {
                        let _ = response.into_body().collect().await;
                    }
                    Err(error) => crate::log(&format!(
                        "cannot send notifications/cancelled: {}",
                        describe(&error)
                    )),
                }
            });
        }
    }
}
