//! [`CallIndex`]: which call of a message each answer of its response answers.
//!
//! One request: an answer is its answer when it has the request's id, or no id
//! at all where the message type shows none (rmcp). A batch: each answer goes
//! to the first call with its id that has no answer yet, through an index of
//! the batch's ids built once, so that matching is linear in the batch's
//! length whatever order the answers come in. A batch that repeats an id thus
//! has its answers matched to its calls in order: the first answer with the id
//! to the first call, the second to the second.
//!
//! Ids compare as JSON-RPC ids, whichever message type showed them: a number
//! by its value (`9` answers `9.0`, as a peer that re-encodes numbers sends
//! it), a string as a string (`1` is not `"1"`).

use std::cell::Cell;
use std::collections::HashMap;

use crate::model::request_id::IdKey;
use crate::model::{AnswerId, Call, CallId, Calls};

/// The calls of a message, ready to be found by the id of an answer.
pub(crate) enum CallIndex<'a> {
    /// One call (or none).
    Single(Option<&'a Call>),
    /// A batch's calls that expect an answer.
    Batch(Unanswered<'a>),
}

/// The calls of a batch that have no answer yet, by id: for each id, the
/// first such call, and after each call the next one with the same id.
pub(crate) struct Unanswered<'a> {
    calls: &'a [Call],
    /// For each id: the position in `calls` of the first call with that id
    /// that has no answer yet ([`NONE_LEFT`] once all have one), and of the
    /// last call with that id.
    first_and_last: HashMap<IdKey<'a>, (Cell<usize>, usize)>,
    /// For each position in `calls`: the next call with the same id.
    next_with_same_id: Vec<Option<usize>>,
}

impl<'a> CallIndex<'a> {
    pub(crate) fn new(calls: &'a Calls) -> Self {
        match calls.as_slice() {
            [call] if !calls.is_batch() => Self::Single(Some(call)),
            _ if !calls.is_batch() => Self::Single(None),
            batch => Self::Batch(Unanswered::new(batch)),
        }
    }

    /// The call an answer with `id` answers, if any. In a batch, that call
    /// counts as answered from now on.
    pub(crate) fn answered_by(&self, id: &AnswerId<'_>) -> Option<&'a Call> {
        match self {
            Self::Single(call) => call.filter(|call| answers(call, id)),
            Self::Batch(unanswered) => unanswered.take(IdKey::of_answer(id)?),
        }
    }
}

impl<'a> Unanswered<'a> {
    fn new(calls: &'a [Call]) -> Self {
        let mut first_and_last: HashMap<IdKey<'a>, (Cell<usize>, usize)> =
            HashMap::with_capacity(calls.len());
        let mut next_with_same_id = vec![None; calls.len()];
        for (position, call) in calls.iter().enumerate() {
            let CallId::Id(id) = call.id() else {
                continue;
            };
            first_and_last
                .entry(id.key())
                .and_modify(|(_, last)| {
                    next_with_same_id[*last] = Some(position);
                    *last = position;
                })
                .or_insert((Cell::new(position), position));
        }
        Self {
            calls,
            first_and_last,
            next_with_same_id,
        }
    }

    /// The first call with `id` that has no answer yet, now answered.
    fn take(&self, id: IdKey<'_>) -> Option<&'a Call> {
        let (first, _) = self.first_and_last.get(&id)?;
        let position = first.get();
        let call = self.calls.get(position)?;
        first.set(self.next_with_same_id[position].unwrap_or(NONE_LEFT));
        Some(call)
    }
}

/// The position of the first unanswered call of an id all of whose calls have
/// an answer: past the end of any batch.
const NONE_LEFT: usize = usize::MAX;

/// Whether an answer with `id` answers `call`.
fn answers(call: &Call, id: &AnswerId<'_>) -> bool {
    match (call.id(), id) {
        (CallId::Notification, _) | (_, AnswerId::Missing) => false,
        (_, AnswerId::Implicit) => true,
        (CallId::Id(own), id) => own.is_answered_by(id),
        (CallId::Unnamed, _) => false,
    }
}
