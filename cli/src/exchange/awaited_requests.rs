//! [`AwaitedRequests`]: the requests of one message sent upstream, and which
//! of them still await an answer: the one place the HTTP mode matches an
//! upstream answer to the request it answers.
//!
//! An answer answers the request not yet answered whose id is its id by
//! JSON-RPC's rule, the library's ([`JsonRpcId`]: `9.0` answers `9`). The
//! requests awaiting an answer are kept by that key, so finding the one an
//! answer answers is one look-up, whatever the size of the batch. The ids of a
//! message are distinct (one held twice is refused before it goes,
//! `crate::jsonrpc::id_in_use`), so a key names one request.

use std::collections::HashMap;

use mcp_tool_errors::JsonRpcId;
use serde_json::Value;

use crate::jsonrpc::layer_request::LayerRequest;

/// The requests of one message, each known by its place in the message, and
/// which of them await an answer.
#[derive(Debug)]
pub(crate) struct AwaitedRequests {
    /// The requests sent, as the layer reads each one.
    requests: Vec<LayerRequest>,
    /// The place of each request with an id that no answer reached yet, by
    /// its id as a key.
    awaiting: HashMap<JsonRpcId, usize>,
    /// Whether an answer reached the client for each request (in the order
    /// of `requests`).
    answered: Vec<bool>,
    /// How many of `answered` are still `false`.
    unanswered_count: usize,
}

impl AwaitedRequests {
    /// `requests`, none of them answered yet.
    pub(crate) fn new(requests: Vec<LayerRequest>) -> Self {
        let mut awaiting = HashMap::with_capacity(requests.len());
        for (place, request) in requests.iter().enumerate() {
            if let Some(id) = request.id() {
                awaiting.entry(JsonRpcId::new(id)).or_insert(place);
            }
        }
        Self {
            answered: vec![false; requests.len()],
            unanswered_count: requests.len(),
            awaiting,
            requests,
        }
    }

    /// The request at `place`.
    pub(crate) fn request(&self, place: usize) -> &LayerRequest {
        &self.requests[place]
    }

    /// The ids of the requests, answered or not, in their order.
    pub(crate) fn ids(&self) -> Vec<Value> {
        self.requests
            .iter()
            .filter_map(LayerRequest::id)
            .cloned()
            .collect()
    }

    /// Whether every request was answered.
    pub(crate) fn all_answered(&self) -> bool {
        self.unanswered_count == 0
    }

    /// Which request not yet answered the answer with `id` answers: its
    /// place.
    pub(crate) fn answered_by(&self, id: &Value) -> Option<usize> {
        self.awaiting.get(&JsonRpcId::new(id)).copied()
    }

    /// The ids of the requests not yet answered, in their order.
    pub(crate) fn unanswered_ids(&self) -> Vec<Value> {
        self.unanswered()
            .filter_map(|place| self.requests[place].id())
            .cloned()
            .collect()
    }

    /// The places of the requests with an id not yet answered, in their
    /// order: the ones left when no answer is to come.
    pub(crate) fn left(&self) -> Vec<usize> {
        self.unanswered()
            .filter(|&place| self.requests[place].id().is_some())
            .collect()
    }

    /// Counts the requests at `places` as answered.
    pub(crate) fn mark_answered(&mut self, places: &[usize]) {
        for &place in places {
            if !self.answered[place] {
                self.answered[place] = true;
                self.unanswered_count -= 1;
                if let Some(id) = self.requests[place].id() {
                    self.awaiting.remove(&JsonRpcId::new(id));
                }
            }
        }
    }

    /// The places of the requests not yet answered.
    fn unanswered(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.requests.len()).filter(|&place| !self.answered[place])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pings(ids: &[Value]) -> AwaitedRequests {
        let batch: Vec<Value> = ids
            .iter()
            .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .collect();
        AwaitedRequests::new(LayerRequest::each_of(&Value::Array(batch)))
    }

    #[test]
    fn an_answer_in_another_spelling_of_the_id_answers_its_request() {
        let requests = pings(&[json!(9), json!("9"), json!(2.0)]);
        assert_eq!(requests.answered_by(&json!(9.0)), Some(0));
        assert_eq!(requests.answered_by(&json!(9e0)), Some(0));
        assert_eq!(requests.answered_by(&json!("9")), Some(1));
        assert_eq!(requests.answered_by(&json!(2)), Some(2));
    }

    #[test]
    fn an_answer_with_no_request_answers_none() {
        let requests = pings(&[json!(1), json!("a")]);
        assert_eq!(requests.answered_by(&json!(3)), None);
        assert_eq!(requests.answered_by(&json!("1")), None);
        assert_eq!(requests.answered_by(&json!(null)), None);
    }

    #[test]
    fn answers_out_of_order_each_answer_their_request_once() {
        let mut requests = pings(&[json!(1), json!(2), json!(3)]);
        for (id, place) in [(json!(3), 2), (json!(1.0), 0), (json!(2), 1)] {
            assert_eq!(requests.answered_by(&id), Some(place));
            assert!(!requests.all_answered());
            requests.mark_answered(&[place]);
            assert_eq!(requests.answered_by(&id), None, "answered already");
        }
        assert!(requests.all_answered());
        assert_eq!(requests.ids(), [json!(1), json!(2), json!(3)]);
    }

    #[test]
    fn the_requests_left_are_the_unanswered_ones_in_their_order() {
        let mut requests = pings(&[json!(1), json!(2), json!(3), json!(4)]);
        requests.mark_answered(&[2, 0, 2]);
        assert_eq!(requests.left(), [1, 3]);
        assert_eq!(requests.unanswered_ids(), [json!(2), json!(4)]);
        requests.mark_answered(&[1, 3]);
        assert!(requests.all_answered());
        assert!(requests.left().is_empty());
    }
}
