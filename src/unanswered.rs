//! [`Unanswered`]: why the layer answers a request in place of the inner
//! service, and that answer.

use crate::config::Config;
use crate::model::{Calls, LayerAnswers, Outcome, Response, UnansweredCall};
use crate::panic::CaughtPanic;
use crate::render::ErrorRenderer;
use crate::telemetry::Cause;
use crate::timeout::TimedOut;

/// The cause of an answer made by the layer.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// The handler panicked, in `call` or while its future was polled.
    Panicked(CaughtPanic),
    /// The handler did not finish within its timeout; its future was dropped.
    TimedOut(TimedOut),
}

impl Unanswered {
    /// The cause the request span records.
    pub(crate) fn cause(&self) -> Cause {
        match self {
            Self::Panicked(_) => Cause::Panic,
            Self::TimedOut(_) => Cause::Timeout,
        }
    }

    /// The response the layer sends for `calls` in place of the inner
    /// service's, each call that expects an answer answered and logged by the
    /// rule of the cause, and its outcome for the span (the first failure of a
    /// batch; a success when nothing expected an answer).
    pub(crate) fn respond<Resp, R, E>(
        &self,
        calls: &Calls,
        config: &Config<R>,
    ) -> (Result<Resp, E>, Outcome)
    where
        Resp: Response<E>,
        R: ErrorRenderer,
    {
        let mut outcome = Outcome::Success;
        let mut answers = Vec::new();
        for call in calls.as_slice().iter().filter(|call| call.expects_answer()) {
            let id = call.request_id();
            let logged = UnansweredCall::new(call.tool(), id.map(|id| id as &dyn std::fmt::Debug));
            let answer = match self {
                Self::Panicked(panic) => panic.answer(logged, config),
                Self::TimedOut(timed_out) => timed_out.answer(logged, config),
            };
            outcome = outcome.or_else(|| answer.outcome());
            answers.push((id, answer));
        }
        if answers.is_empty() {
            match self {
                Self::Panicked(panic) => panic.log_unanswered(config),
                Self::TimedOut(timed_out) => timed_out.log_unanswered(),
            }
        }
        let answers = LayerAnswers {
            batch: calls.is_batch(),
            answers,
        };
        (Resp::layer_response(answers), outcome)
    }
}
