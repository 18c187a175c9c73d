//! Sessionless clients (protocol 2026-07-28: no `initialize`, no session; the
//! protocol version in each request's `_meta`), served as a stateless server
//! serves them: each request by one of a few children the bridge started and
//! prepared itself, shared by every such client.
//!
//! A new child is asked `server/discover` first, as a client of 2026-07-28
//! asks: a server of that protocol answers it and serves such requests from
//! then on (the Python SDK's locks a connection to the first era it sees); a
//! server of an earlier one refuses it (`-32601`), and the bridge initializes
//! it as a client of 2025-11-25 would. Either way a client's own
//! `server/discover`, which the official clients send first, gets the
//! server's answer: one of an earlier protocol refuses it, and the client
//! falls back to `initialize`, which opens a session.
//!
//! No two clients' ids meet in one child: each request's id is replaced by one
//! of the bridge's (`"mte-N"`, unique in its child), and so is its
//! `_meta.progressToken`; the child's answer and progress get the client's
//! back. A pooled child's own messages (log messages, its requests to a
//! client) reach no client: no stream carries them, and they could belong to
//! any. A new child is started while every child has a call in flight, up to
//! [`SIZE`]; the children count in `--max-sessions`, and each goes at
//! `--session-idle-timeout` like any session.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use hyper::body::Bytes;
use mcp_tool_errors::JsonRpcId;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use crate::bridge::child_input::Queued;
use crate::bridge::routes::{ClientValues, Sent, call_request, data};
use crate::bridge::session::Session;
use crate::bridge::sessions::{Refusal, Sessions};
use crate::jsonrpc::envelope::{self, Envelope};
use crate::jsonrpc::member::Member;

/// The most children the pool starts.
pub(crate) const SIZE: usize = 4;

/// How long a new child may take to become ready (to answer
/// `server/discover`, or `initialize` after refusing it).
const READY_WITHIN: Duration = Duration::from_secs(30);

/// The children serving sessionless clients. No lock is held while a child
/// starts, and no request waits for a start while a child is ready: a busy
/// one takes it, and another child starts beside the calls in flight.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    children: Mutex<Children>,
    /// Told when a child becomes ready or is given up.
    changed: Notify,
}

#[derive(Debug, Default)]
struct Children {
    ready: Vec<Arc<Session>>,
    /// How many are starting.
    starting: usize,
}

/// What a request does for its child, when none is ready.
enum Choice {
    /// Starts one, and waits for it.
    Start,
    /// Waits for one that is starting: every place is taken.
    Wait,
}

impl Pool {
    /// The child for the next request: the least busy ready one; when every
    /// ready one is busy, another starts beside it (fewer than [`SIZE`], one
    /// at a time). A request waits for a start only when no child is ready.
    pub(crate) async fn child(
        self: &Arc<Self>,
        sessions: &Arc<Sessions>,
    ) -> Result<Arc<Session>, Refusal> {
        loop {
            let changed = self.changed.notified();
            let choice = {
                let mut children = self.children();
                children.ready.retain(|child| !child.has_ended());
                let least_busy = children
                    .ready
                    .iter()
                    .min_by_key(|child| child.calls_in_flight())
                    .cloned();
                let room = children.ready.len() + children.starting < SIZE;
                match least_busy {
                    Some(child) => {
                        if child.calls_in_flight() > 0 && room && children.starting == 0 {
                            children.starting += 1;
                            let (pool, sessions) = (self.clone(), sessions.clone());
                            tokio::spawn(async move {
                                let _ = pool.start(&sessions).await;
                            });
                        }
                        return Ok(child);
                    }
                    None if room => {
                        children.starting += 1;
                        Choice::Start
                    }
                    None => Choice::Wait,
                }
            };
            match choice {
                Choice::Start => return self.start(sessions).await,
                Choice::Wait => changed.await,
            }
        }
    }

    fn children(&self) -> MutexGuard<'_, Children> {
        self.children.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a child, its place counted in `starting` already; ready, it
    /// joins the pool. One that does not become ready is ended, and the next
    /// request starts another.
    async fn start(&self, sessions: &Arc<Sessions>) -> Result<Arc<Session>, Refusal> {
        let started = sessions.open_pooled();
        let ready = match &started {
            Ok(child) => prepare(child).await,
            Err(_) => false,
        };
        {
            let mut children = self.children();
            children.starting -= 1;
            if ready && let Ok(child) = &started {
                children.ready.push(child.clone());
            }
        }
        self.changed.notify_waiters();
        let child = started?;
        if ready {
            return Ok(child);
        }
        crate::telemetry::log(&format!(
            "a server started for sessionless clients did not become ready (it answered neither \
             server/discover nor initialize within {} s): ended; the next request starts another",
            READY_WITHIN.as_secs()
        ));
        child.end();
        Err(Refusal::Start(
            "the server answered neither server/discover nor initialize".to_owned(),
        ))
    }
}

/// A client's message as its pooled child is to see it.
#[derive(Debug)]
pub(crate) struct Translated {
    /// Its requests, to register.
    pub(crate) requests: Vec<Sent>,
    /// The child's ids of the requests it cancels: its own, in the same
    /// message.
    pub(crate) cancelled: Vec<JsonRpcId>,
}

/// Rewrites `message` for `child`: each request gets an id of the child's
/// (and its progress token the same), the client's kept; a cancellation of
/// one of these requests names the child's id; every other member (a
/// cancellation of anything else, progress, an answer to a request the
/// client was never shown, a member that is not JSON-RPC) is dropped, since
/// it could name another client's call or one of the bridge's own ids.
pub(crate) fn with_the_childs_ids(message: &mut Value, child: &Session) -> Translated {
    let batch = message.is_array();
    let members = match message.take() {
        Value::Array(batch) => batch,
        single => vec![single],
    };
    let mut requests = Vec::new();
    let mut kept = Vec::new();
    let mut cancellations = Vec::new();
    for mut member in members {
        match Member::of(&member) {
            Member::Request(request) => {
                let layer_request = call_request(request.id, request.method, request.tool);
                requests.push(with_the_childs_id(&mut member, child, layer_request));
                kept.push(member);
            }
            Member::Notification(notification) if notification.cancelled_id().is_some() => {
                cancellations.push(member);
            }
            _ => {}
        }
    }
    let mut cancelled = Vec::new();
    for mut cancellation in cancellations {
        let Some(named) = cancellation.pointer_mut("/params/requestId") else {
            continue;
        };
        let key = JsonRpcId::new(named);
        let Some(own) = requests.iter().find(|sent| {
            sent.client
                .as_ref()
                .is_some_and(|client| JsonRpcId::new(&client.id) == key)
        }) else {
            continue;
        };
        *named = own.id.to_value();
        cancelled.push(own.id.clone());
        kept.push(cancellation);
    }
    *message = match (batch, kept.len()) {
        (false, 1) => kept.pop().expect("one member"),
        _ => Value::Array(kept),
    };
    Translated {
        requests,
        cancelled,
    }
}

/// Gives `request` an id of `child`'s, and its progress token the same,
/// keeping the client's: the request to register, which the layer reads as
/// `layer_request`.
fn with_the_childs_id(request: &mut Value, child: &Session, layer_request: Value) -> Sent {
    let ours = child.next_call_id();
    let client_id = request
        .get_mut("id")
        .map(|id| std::mem::replace(id, ours.clone()))
        .unwrap_or_default();
    let client_token = request
        .pointer_mut("/params/_meta/progressToken")
        .map(|token| std::mem::replace(token, ours.clone()));
    let id = JsonRpcId::new(&ours);
    Sent {
        progress_token: client_token.as_ref().map(|_| id.clone()),
        id,
        request: layer_request,
        client: Some(ClientValues {
            id: client_id,
            progress_token: client_token,
        }),
    }
}

/// Prepares a new child: whether it became ready within [`READY_WITHIN`].
async fn prepare(child: &Session) -> bool {
    tokio::time::timeout(READY_WITHIN, handshake(child))
        .await
        .unwrap_or(false)
}

/// `server/discover`, else `initialize`: whether the child answered either
/// with a result.
async fn handshake(child: &Session) -> bool {
    let discover = json!({
        "jsonrpc": "2.0",
        "id": child.next_call_id(),
        "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": client_info(),
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    match ask(child, &discover).await {
        Some(true) => return true,
        Some(false) => {}
        None => return false,
    }
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": child.next_call_id(),
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": client_info(),
        },
    });
    ask(child, &initialize).await == Some(true)
        && child.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#) == Queued::Yes
}

/// The bridge, as a client of its children.
fn client_info() -> Value {
    json!({"name": "mcp-tool-errors", "version": env!("CARGO_PKG_VERSION")})
}

/// Sends `request` to `child`: whether its answer is a result (`false`: an
/// error); `None` when none came (the child ended).
async fn ask(child: &Session, request: &Value) -> Option<bool> {
    let (events, mut answer) = mpsc::channel::<Bytes>(1);
    let method = request["method"].as_str().unwrap_or_default();
    let registered = child.register(
        vec![Sent {
            id: JsonRpcId::new(&request["id"]),
            progress_token: None,
            request: call_request(&request["id"], method, None),
            client: None,
        }],
        &events,
    );
    drop(events);
    if registered.is_err() || child.send(request.to_string().as_bytes()) != Queued::Yes {
        return None;
    }
    let event = answer.recv().await?;
    Some(is_result(data(&event)))
}

/// Whether `answer` is a response with a result, not an error.
fn is_result(answer: &[u8]) -> bool {
    matches!(
        envelope::read(answer),
        Ok(Envelope::Single(fields)) if fields.is_response() && !fields.has_error
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handshake_is_answered_by_a_result_not_by_an_error_that_says_result() {
        assert!(is_result(br#"{"jsonrpc":"2.0","id":"mte-1","result":{}}"#));
        assert!(!is_result(
            br#"{"jsonrpc":"2.0","id":"mte-1","error":{"code":-32601,"message":"no \"result\": unknown method"}}"#
        ));
        assert!(!is_result(
            br#"{"jsonrpc":"2.0","id":"mte-1","error":{"code":-32601,"message":"Method not found","data":{"result":1}}}"#
        ));
        assert!(!is_result(
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"result":{}}}"#
        ));
    }
}
