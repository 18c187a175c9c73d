//! The requests sent to the child and not answered yet, found by the ids of the
//! child's responses.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::exit_status::exited_answer;
use crate::id_in_use;
use crate::message::{Answer, IdKey, id_key};

/// One request (or batch) waiting for the child's answer.
#[derive(Debug)]
struct Waiting {
    answer: oneshot::Sender<Answer>,
    /// The requests of the message: their ids, and which are `tools/call`.
    requests: Vec<(Value, bool)>,
    batch: bool,
}

/// Names one registered request for [`InFlight::cancel`].
pub(crate) type Ticket = u64;

/// The table of requests in flight, keyed by id.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    waiting: HashMap<Ticket, Waiting>,
    by_id: HashMap<IdKey, Ticket>,
    /// Ids given up at the client: the child's late answers to them are dropped.
    cancelled: HashSet<IdKey>,
    next_ticket: Ticket,
    /// How the child ended, once it has: new requests are answered at once.
    gone: Option<String>,
}

impl InFlight {
    /// Records a request before it is sent; after the child is gone, answers it
    /// at once instead.
    pub(crate) fn register(
        &mut self,
        requests: Vec<(Value, bool)>,
        batch: bool,
        answer: oneshot::Sender<Answer>,
    ) -> Result<Ticket, Answer> {
        if let Some(status) = &self.gone {
            return Err(exited_answer(&requests, batch, status));
        }
        let reused = self.reused(&requests);
        if reused.contains(&true) {
            return Err(id_in_use::refusal(&requests, batch, &reused));
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        for (id, _) in &requests {
            let key = id_key(id);
            self.cancelled.remove(&key);
            self.by_id.insert(key, ticket);
        }
        let waiting = Waiting {
            answer,
            requests,
            batch,
        };
        self.waiting.insert(ticket, waiting);
        Ok(ticket)
    }

    /// For each request, whether its id is in flight already or earlier in the
    /// same message.
    fn reused(&self, requests: &[(Value, bool)]) -> Vec<bool> {
        let keys: Vec<IdKey> = requests.iter().map(|(id, _)| id_key(id)).collect();
        keys.iter()
            .enumerate()
            .map(|(at, key)| self.by_id.contains_key(key) || keys[..at].contains(key))
            .collect()
    }

    /// Takes the request that a response with one of `ids` answers.
    pub(crate) fn answered(&mut self, ids: &[&Value]) -> Option<oneshot::Sender<Answer>> {
        let ticket = ids
            .iter()
            .find_map(|id| self.by_id.get(&id_key(id)).copied())?;
        self.take(ticket).map(|waiting| waiting.answer)
    }

    /// Whether a response with these ids answers a request given up at the
    /// client; forgets them, since an id is answered once.
    pub(crate) fn was_cancelled(&mut self, ids: &[&Value]) -> bool {
        let mut any = false;
        for id in ids {
            any |= self.cancelled.remove(&id_key(id));
        }
        any
    }

    /// Gives up a request whose answer is no longer awaited; returns its ids,
    /// for the child to be told.
    pub(crate) fn cancel(&mut self, ticket: Ticket) -> Option<Vec<Value>> {
        let waiting = self.take(ticket)?;
        let ids: Vec<Value> = waiting.requests.into_iter().map(|(id, _)| id).collect();
        self.cancelled.extend(ids.iter().map(id_key));
        Some(ids)
    }

    /// The child is gone: every request in flight is answered with `status`.
    pub(crate) fn child_gone(&mut self, status: String) {
        for (_, waiting) in self.waiting.drain() {
            let answer = exited_answer(&waiting.requests, waiting.batch, &status);
            // The receiver may have been dropped this very moment; nothing waits then.
            let _ = waiting.answer.send(answer);
        }
        self.by_id.clear();
        self.gone = Some(status);
    }

    fn take(&mut self, ticket: Ticket) -> Option<Waiting> {
        let waiting = self.waiting.remove(&ticket)?;
        for (id, _) in &waiting.requests {
            let key = id_key(id);
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

    #[test]
    fn a_response_finds_its_request_by_id_once() {
        let mut in_flight = InFlight::default();
        let (sender, _receiver) = oneshot::channel();
        in_flight
            .register(vec![(json!(7), true)], false, sender)
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
            .register(vec![(json!(7), true)], false, sender)
            .expect("registered");
        let (sender, _receiver) = oneshot::channel();
        let refused = in_flight.register(vec![(json!(7), false)], false, sender);
        assert_eq!(refused.expect_err("refused").value["error"]["code"], -32600);
        let (sender, _receiver) = oneshot::channel();
        let twice = vec![(json!("a"), false), (json!("a"), false)];
        assert!(in_flight.register(twice, true, sender).is_err());
        assert_eq!(in_flight.waiting.len(), 1);
        assert!(in_flight.answered(&[&json!(7)]).is_some());
    }

    #[test]
    fn a_batch_is_answered_by_a_response_holding_any_of_its_ids() {
        let mut in_flight = InFlight::default();
        let (sender, _receiver) = oneshot::channel();
        let requests = vec![(json!(1), true), (json!(2), false)];
        in_flight
            .register(requests, true, sender)
            .expect("registered");
        assert!(in_flight.answered(&[&json!(2), &json!(1)]).is_some());
        assert!(in_flight.by_id.is_empty());
    }

    #[test]
    fn a_late_answer_to_a_cancelled_request_is_recognised_once() {
        let mut in_flight = InFlight::default();
        let (sender, _receiver) = oneshot::channel();
        let ticket = in_flight
            .register(vec![(json!(3), true)], false, sender)
            .expect("registered");
        assert_eq!(in_flight.cancel(ticket), Some(vec![json!(3)]));
        assert!(in_flight.answered(&[&json!(3)]).is_none());
        assert!(in_flight.was_cancelled(&[&json!(3)]));
        assert!(!in_flight.was_cancelled(&[&json!(3)]));
    }

    #[test]
    fn requests_after_the_child_is_gone_are_answered_at_once() {
        let mut in_flight = InFlight::default();
        let (sender, mut receiver) = oneshot::channel();
        in_flight
            .register(vec![(json!(1), false)], false, sender)
            .expect("registered");
        in_flight.child_gone("exit code 3".to_owned());
        let answer = receiver.try_recv().expect("answered");
        assert_eq!(answer.value["error"]["code"], -32603);
        let (sender, _receiver) = oneshot::channel();
        let refused = in_flight.register(vec![(json!(2), true)], false, sender);
        assert_eq!(
            refused.expect_err("answered at once").value["result"]["isError"],
            true
        );
    }
}
