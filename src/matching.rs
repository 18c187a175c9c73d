//! [`CallIndex`]: which call of a message each answer of its response answers.
//!
//! One request: an answer is its answer when it has the request's id, or no id
//! at all where the message type shows none (rmcp). A batch: each answer is
//! matched by its id through an index of the batch's ids built once, so that
//! matching is linear in the batch's length whatever order the answers come
//! in. Ids match when they are the same JSON value of the same type (`1` is
//! neither `"1"` nor `1.0`). An id that several requests of a batch share
//! belongs to the first of them: every answer with that id is read as that
//! request's answer.

use std::collections::HashMap;

use crate::model::request_id::IdKey;
use crate::model::{AnswerId, Call, CallId, Calls};

/// The calls of a message, ready to be found by the id of an answer.
pub(crate) enum CallIndex<'a> {
    /// One call (or none).
    Single(Option<&'a Call>),
    /// A batch's calls that expect an answer, by id.
    Batch(HashMap<IdKey<'a>, &'a Call>),
}

impl<'a> CallIndex<'a> {
    pub(crate) fn new(calls: &'a Calls) -> Self {
        match calls.as_slice() {
            [call] if !calls.is_batch() => Self::Single(Some(call)),
            _ if !calls.is_batch() => Self::Single(None),
            batch => {
                let mut first_with_id = HashMap::with_capacity(batch.len());
                for call in batch {
                    if let CallId::Id(id) = call.id() {
                        first_with_id.entry(id.key()).or_insert(call);
                    }
                }
                Self::Batch(first_with_id)
            }
        }
    }

    /// The call an answer with `id` answers, if any.
    pub(crate) fn answered_by(&self, id: &AnswerId<'_>) -> Option<&'a Call> {
        match self {
            Self::Single(call) => call.filter(|call| answers(call, id)),
            Self::Batch(by_id) => by_id.get(&IdKey::of_answer(id)?).copied(),
        }
    }
}

/// Whether an answer with `id` answers `call`.
fn answers(call: &Call, id: &AnswerId<'_>) -> bool {
    match (call.id(), id) {
        (CallId::Notification, _) | (_, AnswerId::Missing) => false,
        (_, AnswerId::Implicit) => true,
        (CallId::Id(own), id) => own.is_answered_by(id),
        (CallId::Unnamed, _) => false,
    }
}
