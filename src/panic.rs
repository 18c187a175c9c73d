//! Catching a panic of the user's code and logging it, without letting the
//! payload leak or take the process down. The answer the model reads in its
//! place is `crate::unanswered`'s.
//!
//! A handler's payload is logged, redacted and scrubbed as configured. A panic
//! of the renderer or the scrubber is logged by its location only: its message
//! may quote the very text it was given (Rust's own message for a slice off a
//! character boundary quotes the whole string), and that text is what the
//! scrubber was to clean.

use std::any::Any;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::Config;
use crate::model::UnansweredCall;
use crate::sanitize::Tally;
use crate::sanitize::panic_hook::{Withheld, catch_inside_layer, report};

/// Sent to the model for a panicked tool call when panic messages are hidden.
pub(crate) const HIDDEN_TOOL_MESSAGE: &str =
    "The tool failed with an internal error. The details are in the server log.";
/// Sent for any other panicked request when panic messages are hidden.
pub(crate) const HIDDEN_REQUEST_MESSAGE: &str =
    "Internal error: the server failed while handling this request.";
/// Stands for a payload that is neither `&str` nor `String`.
const OPAQUE_PAYLOAD: &str = "a panic payload that is not a string";
/// Stands, in the log, for a payload the user's scrubber panicked on.
const SCRUBBER_PANICKED_PAYLOAD: &str = "(withheld: the scrubber panicked on it)";

/// Runs `run` (a call into the inner service) and catches its panic, with the
/// thread marked as inside the layer for [`install_panic_hook`](crate::install_panic_hook).
pub(crate) fn catch<T>(run: impl FnOnce() -> T) -> Result<T, CaughtPanic> {
    match catch_inside_layer(run) {
        (Ok(value), _) => Ok(value),
        (Err(payload), withheld) => Err(CaughtPanic::new(payload, withheld)),
    }
}

/// A panic caught in the inner service, reduced to its message.
#[derive(Debug)]
pub(crate) struct CaughtPanic {
    message: Option<String>,
    /// Where it was raised, when the panic hook saw it.
    location: Option<String>,
    /// Whether the panic hook kept this panic off stderr and the layer still owes
    /// its one line there.
    unreported: AtomicBool,
}

impl CaughtPanic {
    /// Reads the message out of `payload` and drops the payload under control.
    fn new(payload: Box<dyn Any + Send>, withheld: Option<Withheld>) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned());
        drop_quietly(payload);
        let unreported = AtomicBool::new(withheld.is_some());
        Self {
            message,
            location: withheld.and_then(|withheld| withheld.location),
            unreported,
        }
    }

    /// Where the panic was raised (`file:line:column`): known when
    /// [`install_panic_hook`](crate::install_panic_hook) was called, since only a
    /// panic hook is told.
    fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }

    /// The payload as the log may show it ([`logged_text`]).
    fn logged_payload<R>(&self, config: &Config<R>) -> Cow<'_, str> {
        logged_text(self.payload_text(), config)
    }

    /// Writes the one stderr line of a withheld panic whose message the
    /// `tracing` log has, once: who panicked, never the payload.
    fn report_withheld(&self, what: std::fmt::Arguments<'_>) {
        if self.unreported.swap(false, Ordering::Relaxed) {
            report(format_args!(
                "{what} panicked; the answer is an error and the panic message is withheld \
                 (it is in the tracing log)"
            ));
        }
    }

    /// Writes the one stderr line of a withheld panic of the renderer or the
    /// scrubber, once: who panicked and where, never the payload, which no log
    /// has either.
    fn report_withheld_from_every_log(&self, what: std::fmt::Arguments<'_>) {
        if self.unreported.swap(false, Ordering::Relaxed) {
            let at = self.location().unwrap_or("an unknown location");
            report(format_args!(
                "{what} panicked at {at}; the answer is an error and the panic message is \
                 withheld from every log"
            ));
        }
    }

    /// Logs the panic of one request that the layer answers in its place.
    pub(crate) fn log_answered<R>(&self, call: UnansweredCall<'_>, config: &Config<R>) {
        tracing::error!(
            tool = call.tool(),
            id = call.id().map(tracing::field::debug),
            payload = &*self.logged_payload(config),
            "handler panicked; answering with an error"
        );
        match (call.tool(), call.id()) {
            (Some(tool), Some(id)) => self.report_withheld(format_args!(
                "the handler of tool {tool:?} (request id {id:?})"
            )),
            (Some(tool), None) => {
                self.report_withheld(format_args!("the handler of tool {tool:?}"))
            }
            (None, Some(id)) => {
                self.report_withheld(format_args!("the handler of request id {id:?}"))
            }
            (None, None) => self.report_withheld(format_args!("a handler")),
        }
    }

    /// The panic's message, as the answer may show it when
    /// `expose_panic_messages` is on.
    pub(crate) fn payload_text(&self) -> &str {
        self.message.as_deref().unwrap_or(OPAQUE_PAYLOAD)
    }

    /// Logs the panic of the operation of task `task_id` (of `tool`, when the
    /// layer remembers it), which the layer forgets without having delivered its
    /// result: no delivery will log it.
    pub(crate) fn log_undelivered_task<R>(
        &self,
        task_id: &str,
        tool: Option<&str>,
        config: &Config<R>,
    ) {
        tracing::error!(
            tool,
            task_id,
            payload = &*self.logged_payload(config),
            "task operation panicked; its result was never delivered"
        );
        self.report_withheld(format_args!("the operation of task {task_id:?}"));
    }

    /// Logs, without its payload, the panic of the operation of task `task_id`
    /// that no layer delivered or forgot before it was dropped: no layer's
    /// redaction settings reach it.
    pub(crate) fn log_unclaimed_task(&self, task_id: &str) {
        tracing::error!(
            task_id,
            "task operation panicked and no layer delivered its result; \
             the payload is dropped unlogged"
        );
        self.report_withheld(format_args!("the operation of task {task_id:?}"));
    }

    /// Logs, without its payload, a panic raised while dropping the future of
    /// the operation of task `task_id`: no layer's redaction settings reach it.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn log_dropped_in_task(&self, task_id: &str) {
        tracing::error!(
            task_id,
            "the future of a task operation panicked while being dropped; \
             the payload is not logged"
        );
        self.report_withheld(format_args!(
            "the future of the operation of task {task_id:?}, while being dropped,"
        ));
    }

    /// Logs a panic of the renderer or the user's scrubber while it rendered an
    /// error of `tool` (or, with no tool, scrubbed a JSON-RPC error message);
    /// the answer is then a fixed one. Only the panic's location is logged,
    /// never its message: it may quote the text being rendered, which no
    /// scrubber has cleaned.
    pub(crate) fn log_in_render(&self, tool: Option<&str>) {
        tracing::error!(
            tool,
            location = self.location(),
            "the renderer or the scrubber panicked, so the error could not be rendered; \
             answering with a fixed error (the panic message is withheld)"
        );
        match tool {
            Some(tool) => self.report_withheld_from_every_log(format_args!(
                "the renderer or the scrubber, on an error of tool {tool:?},"
            )),
            None => self.report_withheld_from_every_log(format_args!(
                "the scrubber, on a JSON-RPC error message,"
            )),
        }
    }

    /// Logs a panic raised while dropping the inner future; the answer stands.
    pub(crate) fn log_in_drop<R>(&self, config: &Config<R>) {
        tracing::error!(
            payload = &*self.logged_payload(config),
            "the handler's future panicked while being dropped; the answer is kept"
        );
        self.report_withheld(format_args!("the handler's future, while being dropped,"));
    }

    /// Logs a panic that no response will carry (a notification).
    pub(crate) fn log_unanswered<R>(&self, config: &Config<R>) {
        tracing::error!(
            payload = &*self.logged_payload(config),
            "handler panicked on a message that expects no response"
        );
        self.report_withheld(format_args!("the handler of a notification"));
    }
}

/// `text`, a panic's message, as the log may show it: redacted and scrubbed as
/// configured, not capped (the log is the operator's, not the model's). If the
/// user's scrubber panics on it, the text is withheld, and so is the
/// scrubber's own message: both may hold what the scrubber was to remove. The
/// scrubber's location stands in their place, when known.
pub(crate) fn logged_text<'t, R>(text: &'t str, config: &Config<R>) -> Cow<'t, str> {
    let scrubbed = catch(|| config.sanitizer.scrub(text, &mut Tally::default()));
    scrubbed.unwrap_or_else(|scrubber_panic| {
        scrubber_panic
            .report_withheld_from_every_log(format_args!("the scrubber, on a panic message,"));
        match scrubber_panic.location() {
            Some(at) => Cow::Owned(format!("(withheld: the scrubber panicked on it, at {at})")),
            None => Cow::Borrowed(SCRUBBER_PANICKED_PAYLOAD),
        }
    })
}

/// Drops a panic payload; if its `Drop` panics in turn, that second payload is
/// leaked rather than dropped, since dropping it could panic again.
pub(crate) fn drop_quietly(value: Box<dyn Any + Send>) {
    if let (Err(second), _) = catch_inside_layer(move || drop(value)) {
        std::mem::forget(second);
    }
}
