//! `notifications/cancelled` for the requests the proxy gives up (a timeout, the
//! end of a drain, a response head that never came, an event too large): the
//! upstream request is dropped, and dropping a connection is not cancelling, in
//! the protocol.
//!
//! A call the client cancelled itself (its own `notifications/cancelled`, on
//! any connection of the session, which went to the server as it was: see
//! [`crate::exchange::seen_calls::SeenCalls`]) is withdrawn, as the
//! stdio mode withdraws it: the proxy neither answers it (the client has
//! forgotten the id, and the TypeScript SDK reports an answer to it as an
//! error) nor cancels it a second time; and the client's cancellation of a
//! call the proxy cancelled first is not sent again. A stream the client
//! closed is no cancellation, as the transport says.

use http_body_util::BodyExt;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::exchange::outbound::Outbound;
use crate::exchange::seen_calls::SeenCalls;
use crate::http::body::{ProxyBody, whole};
use crate::jsonrpc::message::{answers, response_ids};
use crate::telemetry::describe;
use crate::telemetry::event;

/// The headers `notifications/cancelled` carries from the request it cancels:
/// the server finds the session, the protocol revision and the caller with them.
/// The session comes first ([`SESSION`]).
const CANCEL_HEADERS: [HeaderName; 3] = [
    HeaderName::from_static("mcp-session-id"),
    HeaderName::from_static("mcp-protocol-version"),
    header::AUTHORIZATION,
];

/// Where the session is among [`CANCEL_HEADERS`].
const SESSION: usize = 0;

/// `notifications/cancelled` for the requests the proxy gave up.
#[derive(Debug)]
pub(crate) struct Cancel {
    /// Where a cancellation goes; the drain it holds keeps the process until
    /// the cancellation is sent.
    outbound: Outbound,
    /// The values of [`CANCEL_HEADERS`] the request had.
    headers: [Option<HeaderValue>; 3],
    ids: Vec<Value>,
}

impl Cancel {
    /// For the requests `ids`, sent with `headers` through `outbound`.
    pub(crate) fn new(outbound: &Outbound, headers: &HeaderMap, ids: Vec<Value>) -> Self {
        Self {
            outbound: outbound.clone(),
            headers: CANCEL_HEADERS.map(|name| headers.get(name).cloned()),
            ids,
        }
    }

    /// Gives the requests up: `answer` is the proxy's own to them (or the
    /// layer's, at a timeout), to one request or a batch. Returns it without
    /// what it says to the calls the client cancelled, `None` when nothing is
    /// left; when `tell`, the server is told that the others are abandoned.
    /// The client's own cancellations are among the calls `seen`.
    ///
    /// Only here are the calls looked up: a call answered by the server pays
    /// nothing for its client's cancellations.
    pub(crate) fn give_up(&self, seen: &SeenCalls, answer: Value, tell: bool) -> Option<Value> {
        // Only the requests the answer answers: the others of a batch were
        // answered by the server already.
        let named = response_ids(&answer);
        let given_up: Vec<&Value> = self
            .ids
            .iter()
            .filter(|id| named.iter().any(|named| answers(named, id)))
            .collect();
        let withdrawn = self.withdrawn(seen, &given_up, tell);
        if tell {
            self.send(&given_up, &withdrawn);
        }
        without(answer, &withdrawn)
    }

    /// Those of `given_up` the client cancelled itself; the others are
    /// remembered as the proxy's to cancel when `tell`.
    fn withdrawn<'a>(
        &self,
        seen: &SeenCalls,
        given_up: &[&'a Value],
        tell: bool,
    ) -> Vec<&'a Value> {
        let Some(session) = self.headers[SESSION]
            .as_ref()
            .and_then(|session| session.to_str().ok())
        else {
            return Vec::new();
        };
        let withdrawn: Vec<&Value> = given_up
            .iter()
            .copied()
            .filter(|id| seen.give_up(session, id, tell))
            .collect();
        for id in &withdrawn {
            // The layer may have logged an answer and a cancellation at its
            // timeout: neither happens.
            event!(
                info,
                %id,
                "the client cancelled call {id}: no answer and no cancellation of the proxy's"
            );
        }
        withdrawn
    }

    /// Tells the server, in a task of its own, that the requests of
    /// `given_up` but those of `withdrawn` are abandoned: dropping the
    /// connection is not cancelling, in the protocol.
    fn send(&self, given_up: &[&Value], withdrawn: &[&Value]) {
        for id in given_up
            .iter()
            .filter(|id| !withdrawn.iter().any(|withdrawn| answers(id, withdrawn)))
        {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": mcp_tool_errors::TIMEOUT_CANCELLATION_REASON},
            });
            let mut request = Request::post(self.outbound.client.endpoint())
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
            // Held until it is sent: the drain waits for it.
            let outbound = self.outbound.clone();
            tokio::spawn(async move {
                match outbound.client.request(request).await {
                    Ok(response) => {
                        let _ = response.into_body().collect().await;
                    }
                    Err(error) => crate::telemetry::log(&format!(
                        "cannot send notifications/cancelled: {}",
                        describe(&error)
                    )),
                }
            });
        }
    }
}

/// The client's response to a request the proxy gave up and whose every call
/// the client cancelled ([`Cancel::give_up`] left no answer), and to a
/// cancellation not sent again: `202 Accepted` with no body, as a server
/// takes a message it does not answer; the official SDKs' clients read it as
/// nothing to read.
pub(crate) fn no_answer_response() -> Response<ProxyBody> {
    let mut response = Response::new(whole(Vec::new()));
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// `answer` without what it says to the requests `withdrawn`: `None` when
/// nothing is left.
fn without(answer: Value, withdrawn: &[&Value]) -> Option<Value> {
    let answers_withdrawn = |message: &Value| {
        message
            .get("id")
            .is_some_and(|id| withdrawn.iter().any(|withdrawn| answers(id, withdrawn)))
    };
    match answer {
        Value::Null => None,
        Value::Array(mut batch) => {
            batch.retain(|message| !answers_withdrawn(message));
            (!batch.is_empty()).then_some(Value::Array(batch))
        }
        single if answers_withdrawn(&single) => None,
        single => Some(single),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_answer_to_a_request_the_client_cancelled_is_left_out() {
        let answer = |id: Value| json!({"jsonrpc": "2.0", "id": id, "result": {}});
        let (one, two) = (json!(1), json!("2"));
        assert_eq!(without(answer(json!(1)), &[&one]), None);
        assert_eq!(without(answer(json!(1)), &[&two]), Some(answer(json!(1))));
        assert_eq!(
            without(json!([answer(json!(1)), answer(json!("2"))]), &[&one]),
            Some(json!([answer(json!("2"))]))
        );
        assert_eq!(without(json!([answer(json!(1))]), &[&one]), None);
        assert_eq!(without(Value::Null, &[]), None);
        assert_eq!(without(answer(json!(1)), &[]), Some(answer(json!(1))));
        // One id however a number is written: JSON-RPC's rule.
        let nine = json!(9.0);
        assert_eq!(without(answer(json!(9)), &[&nine]), None);
    }
}
