//! The requests sent to the child and not answered yet, found by the ids of the
//! child's responses.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::Value;
use tokio::sync::oneshot;

use mcp_tool_errors::JsonRpcId;

use crate::jsonrpc::id_in_use;
use crate::jsonrpc::layer_call::LayerCall;
use crate::jsonrpc::layer_request::LayerRequest;
use crate::jsonrpc::message::Answer;
use crate::stdio::exit_status::exited_answer;
use crate::stdio::given_up::GivenUp;

/// One request (or batch) waiting for the child's answer.
#[derive(Debug)]
pub(crate) struct Waiting {
    /// The requests of the message: their ids, and which are `tools/call`.
    pub(crate) requests: Vec<(Value, bool)>,
    pub(crate) batch: bool,
    /// What the layer reads of the message.
    pub(crate) request: LayerRequest,
    /// Where the layer's future waits for the answer, when one does (a
    /// timeout applies); without one, the answer goes through the layer where
    /// it is read, if the layer may change it.
    pub(crate) answer: Option<Awaiting>,
}

impl Waiting {
    /// Gives the request `answer`, one of the wrapper's own: to the layer's
    /// future that waits for it, which writes it; else returned, with what
    /// the layer reads of the request, for the caller to write.
    pub(crate) fn answered_with(self, answer: Answer) -> Option<Refused> {
        match self.answer {
            // The receiver may have been dropped this very moment; nothing
            // waits then.
            Some(awaiting) if awaiting.held.is_none() => {
                drop(awaiting.answer.send(answer));
                None
            }
            awaiting => Some(Refused {
                answer,
                request: self.request,
                awaiting,
            }),
        }
    }
}

/// Where the layer's future waits for a request's answer (a timeout applies).
#[derive(Debug)]
pub(crate) struct Awaiting {
    pub(crate) answer: oneshot::Sender<Answer>,
    /// Set by whichever writes the request's answer first: the thread reading
    /// the child (an answer written as the child's bytes), or the task of the
    /// layer's future (an answer the layer read, or made at a timeout that
    /// fired in the same instant); the other writes nothing.
    pub(crate) settled: Arc<AtomicBool>,
    /// The layer's future itself, when no task polls it (a request whose span
    /// is exported, with no timeout): whoever has the answer resolves it.
    pub(crate) held: Option<LayerCall>,
}

/// Names one registered request for [`InFlight::cancel`].
pub(crate) type Ticket = u64;

/// Hashes a [`Ticket`]: tickets are consecutive numbers the table makes, so a
/// multiplication spreads them well enough, without SipHash's cost.
#[derive(Debug, Default)]
struct TicketHasher(u64);

impl Hasher for TicketHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte) ^ self.0.rotate_left(8));
        }
    }

    fn write_u64(&mut self, ticket: u64) {
        // Fibonacci hashing: the high bits, which the table reads, depend on
        // every bit of the ticket.
        self.0 = ticket.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The table of requests in flight, keyed by id.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    waiting: HashMap<Ticket, Waiting, BuildHasherDefault<TicketHasher>>,
    by_id: HashMap<JsonRpcId, Ticket>,
    /// Ids given up (timed out, or cancelled by the client): the child's late
    /// answers to them are dropped.
    given_up: GivenUp,
    next_ticket: Ticket,
    /// How the child ended, once it has: new requests are answered at once.
    gone: Option<String>,
}

/// A request not sent, or left by a dead child: the wrapper's answer to it,
/// what the layer reads of it, and the layer's future that holds it, if one
/// does ([`Awaiting::held`]).
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) answer: Answer,
    pub(crate) request: LayerRequest,
    pub(crate) awaiting: Option<Awaiting>,
}

impl InFlight {
    /// Records a request before it is sent; refuses one whose id is in flight
    /// or held twice in its batch (the command's one rule, [`id_in_use`]),
    /// and after the child is gone answers it at once instead. The refusal
    /// is boxed: it is rare, and the common result stays small.
    pub(crate) fn register(&mut self, waiting: Waiting) -> Result<Ticket, Box<Refused>> {
        let keys: Vec<JsonRpcId> = waiting
            .requests
            .iter()
            .map(|(id, _)| JsonRpcId::new(id))
            .collect();
        let refusal = match &self.gone {
            Some(status) => Some(exited_answer(&waiting.requests, waiting.batch, status)),
            None => id_in_use::in_use(&keys, |key| self.by_id.contains_key(key))
                .map(|reused| id_in_use::refusal(&waiting.requests, waiting.batch, &reused)),
        };
        if let Some(answer) = refusal {
            return Err(Box::new(Refused {
                answer,
                request: waiting.request,
                awaiting: waiting.answer.filter(|awaiting| awaiting.held.is_some()),
            }));
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        for key in keys {
            self.given_up.forget(&key);
            self.by_id.insert(key, ticket);
        }
        self.waiting.insert(ticket, waiting);
        Ok(ticket)
    }

    /// Takes the request that a response with one of `ids` answers.
    pub(crate) fn answered(&mut self, ids: &[&Value]) -> Option<Waiting> {
        let ticket = ids
            .iter()
            .find_map(|id| self.by_id.get(&JsonRpcId::new(id)).copied())?;
        self.take(ticket)
    }

    /// Whether a response with these ids answers a request given up. The ids
    /// stay remembered: the client may still cancel one, which the child, told
    /// already, is not told again.
    pub(crate) fn was_given_up(&self, ids: &[&Value]) -> bool {
        ids.iter()
            .any(|id| self.given_up.contains(&JsonRpcId::new(id)))
    }

    /// Gives up a request whose answer is no longer awaited (its timeout
    /// expired); returns its ids, for the child to be told.
    pub(crate) fn cancel(&mut self, ticket: Ticket) -> Option<Vec<Value>> {
        let waiting = self.take(ticket)?;
        let ids: Vec<Value> = waiting.requests.into_iter().map(|(id, _)| id).collect();
        for id in &ids {
            self.given_up.remember(&JsonRpcId::new(id));
        }
        Some(ids)
    }

    /// The client cancelled request `id`: it is given up without an answer
    /// (its future ends with [`Withdrawn`](crate::jsonrpc::message::Withdrawn), as its
    /// sender is dropped here). Returns whether the child is to be told, which
    /// it is unless the id was given up already (the child was told then).
    ///
    /// A request inside a batch in flight stays: the batch is answered whole.
    pub(crate) fn withdraw(&mut self, id: &Value) -> bool {
        let key = JsonRpcId::new(id);
        let Some(&ticket) = self.by_id.get(&key) else {
            return !self.given_up.contains(&key);
        };
        if !self.waiting[&ticket].batch {
            self.take(ticket);
            self.given_up.remember(&key);
        }
        true
    }

    /// The child is gone: every request in flight is answered with `status`.
    /// Returns the answers that no future of the layer waits for, with what
    /// the layer reads of their requests.
    pub(crate) fn child_gone(&mut self, status: String) -> Vec<Refused> {
        let mut unawaited = Vec::new();
        for (_, waiting) in self.waiting.drain() {
            let answer = exited_answer(&waiting.requests, waiting.batch, &status);
            unawaited.extend(waiting.answered_with(answer));
        }
        self.by_id.clear();
        self.gone = Some(status);
        unawaited
    }

    fn take(&mut self, ticket: Ticket) -> Option<Waiting> {
        let waiting = self.waiting.remove(&ticket)?;
        for (id, _) in &waiting.requests {
            let key = JsonRpcId::new(id);
            if self.by_id.get(&key) == Some(&ticket) {
                self.by_id.remove(&key);
            }
        }
        Some(waiting)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A request waiting for its answer on `answer`.
    fn waiting(
        requests: Vec<(Value, bool)>,
        batch: bool,
        answer: oneshot::Sender<Answer>,
    ) -> Waiting {
        Waiting {
            requests,
            batch,
            request: LayerRequest::Whole(Value::Null),
            answer: Some(Awaiting {
                answer,
                settled: Arc::default(),
                held: None,
            }),
        }
    }

    #[test]
    fn a_response_finds_its_request_by_id_once() {
        let mut in_flight = InFlight::default();
        let (sender, _receiver) = oneshot::channel();
        in_flight
            .register(waiting(vec![(json!(7), true)], false, sender))
            .expect("registered");
        assert!(in_flight.answered(&[&json!("7")]).is_none());
        assert!(in_flight.answered(&[&json!(7)]).is_some());
        assert!(in_flight.answered(&[&json!(7)]).is_none());
    }

    #[test]
    fn an_id_in_flight_or_twice_in_a_batch_is_refused_and_not_registered() {
        let mut in_flight = InFlight::default();
        let (sender, _receiver) = oneshot::channel();
        in_flight
            .register(waiting(vec![(json!(7), true)], false, sender))
            .expect("registered");
        let (sender, _receiver) = oneshot::channel();
        let refused = in_flight.register(waiting(vec![(json!(7), false)], false, sender));
        assert_eq!(
            refused.expect_err("refused").answer.value["error"]["code"],
            -32600
        );
        let (sender, _receiver) = oneshot::channel();
        let twice = vec![(json!("a"), false), (json!("a"), false)];
        assert!(in_flight.register(waiting(twice, true, sender)).is_err());
        assert_eq!(in_flight.waiting.len(), 1);
        assert!(in_flight.answered(&[&json!(7)]).is_some());
    }

    #[test]
    fn a_batch_is_answered_by_a_response_holding_any_of_its_ids() {
        let mut in_flight = InFlight::default();
        let (sender, _receiver) = oneshot::channel();
        let requests = vec![(json!(1), true), (json!(2), false)];
        in_flight
            .register(waiting(requests, true, sender))
            .expect("registered");
        assert!(in_flight.answered(&[&json!(2), &json!(1)]).is_some());
        assert!(in_flight.by_id.is_empty());
    }

    #[test]
    fn a_late_answer_to_a_cancelled_request_is_recognised_until_the_id_is_reused() {
        let mut in_flight = InFlight::default();
        let (sender, _receiver) = oneshot::channel();
        let ticket = in_flight
            .register(waiting(vec![(json!(3), true)], false, sender))
            .expect("registered");
        assert_eq!(in_flight.cancel(ticket), Some(vec![json!(3)]));
        assert!(in_flight.answered(&[&json!(3)]).is_none());
        assert!(in_flight.was_given_up(&[&json!(3)]));
        assert!(in_flight.was_given_up(&[&json!(3)]));
        let (sender, _receiver) = oneshot::channel();
        in_flight
            .register(waiting(vec![(json!(3), true)], false, sender))
            .expect("an id given up can be used again");
        assert!(!in_flight.was_given_up(&[&json!(3)]));
    }

    #[test]
    fn a_hundred_thousand_calls_given_up_leave_a_bounded_table() {
        let mut in_flight = InFlight::default();
        // The worst input: every id new and long, half timed out, half
        // cancelled by the client, none ever answered by the child.
        let long = "x".repeat(64);
        for n in 0..100_000 {
            let id = json!(format!("{long}{n}"));
            let (sender, _receiver) = oneshot::channel();
            let ticket = in_flight
                .register(waiting(vec![(id.clone(), true)], false, sender))
                .expect("registered");
            if n % 2 == 0 {
                assert!(in_flight.cancel(ticket).is_some());
            } else {
                assert!(in_flight.withdraw(&id));
            }
        }
        assert!(in_flight.waiting.is_empty() && in_flight.by_id.is_empty());
        assert!(in_flight.waiting.capacity() < 16 && in_flight.by_id.capacity() < 16);
        let (remembered, queued) = in_flight.given_up.sizes();
        assert_eq!(remembered, crate::stdio::given_up::REMEMBERED);
        assert_eq!(queued, crate::stdio::given_up::REMEMBERED);
    }

    #[test]
    fn a_cancelled_request_is_withdrawn_unanswered_and_its_cancellation_sent_once() {
        let mut in_flight = InFlight::default();
        let (sender, mut receiver) = oneshot::channel();
        in_flight
            .register(waiting(vec![(json!(5), true)], false, sender))
            .expect("registered");
        assert!(in_flight.withdraw(&json!(5)));
        assert!(receiver.try_recv().is_err(), "withdrawn, not answered");
        assert!(in_flight.was_given_up(&[&json!(5)]));
        assert!(!in_flight.withdraw(&json!(5)), "the child was told already");
        assert!(
            in_flight.withdraw(&json!(6)),
            "an unknown id is the child's to judge"
        );
        in_flight.child_gone("exit code 1".to_owned());
    }

    #[test]
    fn requests_after_the_child_is_gone_are_answered_at_once() {
        let mut in_flight = InFlight::default();
        let (sender, mut receiver) = oneshot::channel();
        in_flight
            .register(waiting(vec![(json!(1), false)], false, sender))
            .expect("registered");
        in_flight.child_gone("exit code 3".to_owned());
        let answer = receiver.try_recv().expect("answered");
        assert_eq!(answer.value["error"]["code"], -32603);
        let (sender, _receiver) = oneshot::channel();
        let refused = in_flight.register(waiting(vec![(json!(2), true)], false, sender));
        assert_eq!(
            refused.expect_err("answered at once").answer.value["result"]["isError"],
            true
        );
    }
}
