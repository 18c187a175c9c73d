//! [`Unanswered`]: why the layer answers a request in place of the inner
//! service, and that answer: the one home of the layer's own answers.

use std::borrow::Cow;
use std::time::Duration;

use crate::config::Config;
use crate::model::{Calls, LayerAnswer, LayerAnswers, Outcome, Response, UnansweredCall};
use crate::panic::{CaughtPanic, HIDDEN_REQUEST_MESSAGE, HIDDEN_TOOL_MESSAGE};
use crate::render::ErrorRenderer;
use crate::telemetry::Cause;
use crate::timeout::{TIMED_OUT_REQUEST_MESSAGE, TimedOut, seconds, timed_out_message};

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
    match call.tool() {
        Some(tool) => LayerAnswer::ToolError {
            text: crashed_tool_text(tool, panic.payload_text(), config),
        },
        None => LayerAnswer::internal_error(if config.expose_panic_messages {
            config.sanitize_message(
                &format!("Internal error: {}", panic.payload_text()),
                HIDDEN_REQUEST_MESSAGE,
            )
        } else {
            HIDDEN_REQUEST_MESSAGE.to_owned()
        }),
    }
}

/// The text the model reads for a `tools/call` of `tool` whose handler failed
/// without answering, `message` saying why: the hidden text, or `message` under
/// `expose_panic_messages`; rendered, redacted and capped.
pub(crate) fn crashed_tool_text<R: ErrorRenderer>(
    tool: &str,
    message: &str,
    config: &Config<R>,
) -> String {
    let message = if config.expose_panic_messages {
        Cow::Owned(format!("The tool failed with an internal error: {message}"))
    } else {
        Cow::Borrowed(HIDDEN_TOOL_MESSAGE)
    };
    config.render_message(tool, &message)
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
            text: timed_out_tool_text(tool, timed_out.after(), config),
        },
        None => LayerAnswer::internal_error(TIMED_OUT_REQUEST_MESSAGE.to_owned()),
    }
}

/// The text the model reads for a `tools/call` of `tool` that did not finish
/// within `timeout`, rendered.
pub(crate) fn timed_out_tool_text<R: ErrorRenderer>(
    tool: &str,
    timeout: Duration,
    config: &Config<R>,
) -> String {
    config.render_message(tool, &timed_out_message(&seconds(timeout)))
}
