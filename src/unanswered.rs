//! [`Unanswered`]: why the layer answers a request in place of the inner
//! service, and that answer.

use crate::config::Config;
use crate::model::{Outcome, Pending};
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

    /// The response the layer sends for `pending` in place of the inner service's,
    /// each request answered and logged by the rule of the cause, and its
    /// outcome for the span: read from the layer's own answers, in the core,
    /// whatever the message type (the first failure of a batch; a success when
    /// nothing expected an answer).
    pub(crate) fn respond<P, R, Response, Error>(
        &self,
        pending: &P,
        config: &Config<R>,
    ) -> (Result<Response, Error>, Outcome)
    where
        P: Pending<Response, Error>,
        R: ErrorRenderer,
    {
        let mut answered = false;
        let mut outcome = Outcome::Success;
        let response = pending.layer_response(|call| {
            answered = true;
            let answer = match self {
                Self::Panicked(panic) => panic.answer(call, config),
                Self::TimedOut(timed_out) => timed_out.answer(call, config),
            };
            outcome = outcome.or_else(|| answer.outcome());
            answer
        });
        if !answered {
            match self {
                Self::Panicked(panic) => panic.log_unanswered(config),
                Self::TimedOut(timed_out) => timed_out.log_unanswered(),
            }
        }
        (response, outcome)
    }
}
