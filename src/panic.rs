//! Turning a caught panic into an answer, without letting the payload leak or
//! take the process down.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::config::Config;
use crate::exchange::{LayerAnswer, UnansweredCall};
use crate::render::ErrorRenderer;

/// Sent to the model for a panicked tool call when panic messages are hidden.
pub(crate) const HIDDEN_TOOL_MESSAGE: &str =
    "The tool failed with an internal error. The details are in the server log.";
/// Sent for any other panicked request when panic messages are hidden.
const HIDDEN_REQUEST_MESSAGE: &str =
    "Internal error: the server failed while handling this request.";
/// Stands for a payload that is neither `&str` nor `String`.
const OPAQUE_PAYLOAD: &str = "a panic payload that is not a string";

/// A panic caught in the inner service, reduced to its message.
#[derive(Debug)]
pub(crate) struct CaughtPanic {
    message: Option<String>,
}

impl CaughtPanic {
    /// Reads the message out of `payload` and drops the payload under control.
    pub(crate) fn new(payload: Box<dyn Any + Send>) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned());
        drop_quietly(payload);
        Self { message }
    }

    fn payload_text(&self) -> &str {
        self.message.as_deref().unwrap_or(OPAQUE_PAYLOAD)
    }

    /// Decides the answer for one panicked request, and logs it.
    pub(crate) fn answer<R: ErrorRenderer>(
        &self,
        call: UnansweredCall<'_>,
        config: &Config<R>,
    ) -> LayerAnswer {
        tracing::error!(
            tool = call.tool(),
            id = call.id().map(tracing::field::debug),
            payload = self.payload_text(),
            "handler panicked; answering with an error"
        );
        let exposed = config.expose_panic_messages.then(|| self.payload_text());
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
            None => LayerAnswer::InternalError {
                message: match exposed {
                    Some(payload) => format!("Internal error: {payload}"),
                    None => HIDDEN_REQUEST_MESSAGE.to_owned(),
                },
            },
        }
    }

    /// Logs the panic of the operation of task `task_id`, when it is caught.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn log_in_task(&self, task_id: &str) {
        tracing::error!(
            task_id,
            payload = self.payload_text(),
            "task operation panicked; the task completes with an error"
        );
    }

    /// Logs a panic raised while dropping the inner future; the answer stands.
    pub(crate) fn log_in_drop(&self) {
        tracing::error!(
            payload = self.payload_text(),
            "the handler's future panicked while being dropped; the answer is kept"
        );
    }

    /// Logs a panic that no response will carry (a notification).
    pub(crate) fn log_unanswered(&self) {
        tracing::error!(
            payload = self.payload_text(),
            "handler panicked on a message that expects no response"
        );
    }
}

/// Drops a panic payload; if its `Drop` panics in turn, that second payload is
/// leaked rather than dropped, since dropping it could panic again.
fn drop_quietly(value: Box<dyn Any + Send>) {
    if let Err(second) = catch_unwind(AssertUnwindSafe(move || drop(value))) {
        std::mem::forget(second);
    }
}
