//! Per-tool timeouts: which one bounds a request, and the timer inside the
//! response future. The answer the layer sends when it fires is
//! `crate::unanswered`'s.
//!
//! The timer is tokio's: a request with a timeout must be called (and its future
//! polled) inside a tokio runtime with the time driver enabled. Without a
//! timeout, no timer is made and no runtime is needed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use crate::model::UnansweredCall;

/// Sent, as a -32603 error, for each request of a timed-out batch that is not a
/// `tools/call`: the batch is answered as a whole, so they share its fate.
pub(crate) const TIMED_OUT_REQUEST_MESSAGE: &str =
    "Internal error: the batch did not finish within the time allowed for its tool calls.";

/// The timeouts the layer was configured with: none by default.
#[derive(Clone, Default, Debug)]
pub(crate) struct Timeouts {
    /// For every tool without one of its own.
    every_tool: Option<Duration>,
    /// Shared: the layer is cloned into every service and future. A list, not a
    /// map: for the handful of tools that get a timeout of their own, comparing
    /// names costs less than hashing the one looked for.
    by_tool: Option<Arc<Vec<(String, Duration)>>>,
}

impl Timeouts {
    pub(crate) fn set_every_tool(&mut self, after: Duration) {
        self.every_tool = Some(after);
    }

    pub(crate) fn set_for_tool(&mut self, tool: String, after: Duration) {
        let by_tool = Arc::make_mut(self.by_tool.get_or_insert_with(Default::default));
        match by_tool.iter_mut().find(|(name, _)| *name == tool) {
            Some((_, timeout)) => *timeout = after,
            None => by_tool.push((tool, after)),
        }
    }

    /// The timeout of a call of `tool`: its own, else every tool's.
    pub(crate) fn for_tool(&self, tool: &str) -> Option<Duration> {
        self.by_tool
            .as_ref()
            .and_then(|by_tool| by_tool.iter().find(|(name, _)| name == tool))
            .map(|(_, after)| *after)
            .or(self.every_tool)
    }

    /// The timeout of a request whose `tools/call` call `tools`: the shortest of
    /// theirs, since a batch is answered as a whole. `None` when no tool has one
    /// (a request that is not a `tools/call` calls no tool).
    pub(crate) fn for_tools<'a>(&self, tools: impl Iterator<Item = &'a str>) -> Option<Duration> {
        if self.every_tool.is_none() && self.by_tool.is_none() {
            return None;
        }
        tools.filter_map(|tool| self.for_tool(tool)).min()
    }
}

pin_project! {
    /// The timer of one request, with the timeout it was started for.
    pub(crate) struct Timer {
        #[pin]
        sleep: Sleep,
        after: Duration,
    }
}

impl Timer {
    /// Starts the timer now. Panics outside a tokio runtime with the time driver.
    pub(crate) fn start(after: Duration) -> Self {
        Self {
            sleep: tokio::time::sleep(after),
            after,
        }
    }

    /// Ready once the timeout has passed.
    pub(crate) fn poll_expired(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<TimedOut> {
        let this = self.project();
        this.sleep
            .poll(cx)
            .map(|()| TimedOut { after: *this.after })
    }
}

/// A request the inner service did not answer within its timeout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimedOut {
    after: Duration,
}

impl TimedOut {
    /// How long the request had.
    pub(crate) fn after(&self) -> Duration {
        self.after
    }

    /// How long the request had, as the model reads it (`30 s`).
    fn timeout_text(&self) -> String {
        seconds(self.after)
    }

    /// Logs the timeout of one request that the layer answers in its place.
    pub(crate) fn log_answered(&self, call: UnansweredCall<'_>) {
        tracing::warn!(
            tool = call.tool(),
            id = call.id().map(tracing::field::debug),
            timeout = self.timeout_text(),
            "tool call timed out; answering with an error and cancelling it"
        );
    }

    /// Logs a timeout that no response will carry (a notification).
    pub(crate) fn log_unanswered(&self) {
        tracing::warn!(
            timeout = seconds(self.after),
            "tool call timed out on a message that expects no response; it was cancelled"
        );
    }
}

/// What the model reads for a `tools/call` that ran out of time.
pub(crate) fn timed_out_message(timeout: &str) -> String {
    format!("The tool did not finish within {timeout} and was cancelled.")
}

/// `after` as the model reads it: seconds with up to three decimals, without
/// trailing zeros, then ` s` (`30 s`, `0.25 s`, `1.5 s`).
pub(crate) fn seconds(after: Duration) -> String {
    let millis = (after.as_nanos() + 500_000) / 1_000_000;
    let (whole, fraction) = (millis / 1000, millis % 1000);
    if fraction == 0 {
        return format!("{whole} s");
    }
    let fraction = format!("{fraction:03}");
    format!("{whole}.{} s", fraction.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_keep_up_to_three_decimals_without_trailing_zeros() {
        let cases = [
            (Duration::from_secs(30), "30 s"),
            (Duration::from_millis(250), "0.25 s"),
            (Duration::from_millis(1500), "1.5 s"),
            (Duration::from_millis(50), "0.05 s"),
            (Duration::from_millis(1), "0.001 s"),
            (Duration::from_micros(1_234_567), "1.235 s"),
            (Duration::from_micros(999_600), "1 s"),
            (Duration::ZERO, "0 s"),
        ];
        for (after, expected) in cases {
            assert_eq!(seconds(after), expected, "{after:?}");
        }
    }

    #[test]
    fn a_tool_timeout_overrides_the_default_and_a_batch_takes_the_shortest() {
        let mut timeouts = Timeouts::default();
        assert_eq!(timeouts.for_tools(["deploy"].into_iter()), None);
        timeouts.set_every_tool(Duration::from_secs(30));
        timeouts.set_for_tool("deploy".to_owned(), Duration::from_secs(300));
        timeouts.set_for_tool("ping".to_owned(), Duration::from_secs(1));
        timeouts.set_for_tool("ping".to_owned(), Duration::from_secs(2));
        assert_eq!(
            timeouts.for_tools(["deploy"].into_iter()),
            Some(Duration::from_secs(300))
        );
        assert_eq!(
            timeouts.for_tools(["search"].into_iter()),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            timeouts.for_tools(["deploy", "ping", "search"].into_iter()),
            Some(Duration::from_secs(2))
        );
        assert_eq!(timeouts.for_tools(std::iter::empty()), None);
    }
}
