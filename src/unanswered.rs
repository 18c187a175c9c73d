//! [`Unanswered`]: why the layer answers a request in place of the inner
//! service, and that answer: the one home of the layer's own answers.

use crate::config::Config;
use crate::model::{Calls, LayerAnswer, LayerAnswers, Outcome, Response, UnansweredCall};
use crate::panic::{CaughtPanic, HIDDEN_REQUEST_MESSAGE, HIDDEN_TOOL_MESSAGE};
use crate::render::ErrorRenderer;
use crate::telemetry::Cause;
use crate::timeout::{TIMED_OUT_REQUEST_MESSAGE, TimedOut, timed_out_message};

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
            let answer = self.answer(logged, config);
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

impl Unanswered {
    /// Decides the answer for one request, and logs it.
    fn answer<R: ErrorRenderer>(
        &self,
        call: UnansweredCall<'_>,
        config: &Config<R>,
    ) -> LayerAnswer {
        match self {
            Self::Panicked(panic) => panic_answer(panic, call, config),
            Self::TimedOut(timed_out) => timeout_answer(*timed_out, call, config),
        }
    }
}

/// The answer to one request whose handler panicked, logged: the model reads
/// that the tool failed (with the panic's message only under
/// `expose_panic_messages`) in the element of the tool it called; any other
/// request gets a JSON-RPC error. A task's panic is answered the same way
/// where its result is delivered (`crate::tasks::panics`).
pub(crate) fn panic_answer<R: ErrorRenderer>(
    panic: &CaughtPanic,
    call: UnansweredCall<'_>,
    config: &Config<R>,
) -> LayerAnswer {
    panic.log_answered(call, config);
    let exposed = config.expose_panic_messages.then(|| panic.payload_text());
    match call.tool() {
        Some(tool) => {
            let message = match exposed {
                Some(payload) => format!("The tool failed with an internal error: {payload}"),
                None => HIDDEN_TOOL_MESSAGE.to_owned(),
            };
            LayerAnswer::ToolError {
                text: config.render_message(tool, &message),
            }
        }
        None => LayerAnswer::internal_error(match exposed {
            Some(payload) => config.sanitize_message(
                &format!("Internal error: {payload}"),
                HIDDEN_REQUEST_MESSAGE,
            ),
            None => HIDDEN_REQUEST_MESSAGE.to_owned(),
        }),
    }
}

/// The answer to one request that ran out of time, logged.
fn timeout_answer<R: ErrorRenderer>(
    timed_out: TimedOut,
    call: UnansweredCall<'_>,
    config: &Config<R>,
) -> LayerAnswer {
    timed_out.log_answered(call);
    match call.tool() {
        Some(tool) => LayerAnswer::ToolError {
            text: config.render_message(tool, &timed_out_message(&timed_out.timeout_text())),
        },
        None => LayerAnswer::internal_error(TIMED_OUT_REQUEST_MESSAGE.to_owned()),
    }
}
