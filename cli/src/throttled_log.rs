//! A log line that a child can cause at any rate (a line on its stdout that is
//! not JSON, a late answer), written at most once a second: the lines in
//! between are counted, and the count is written when the second is over.
//!
//! A server that floods its stdout with text would otherwise flood the host's
//! log with a line of ours for each of its lines; so would, in the HTTP mode,
//! a flood of connections that cannot be accepted. Where no two lines may
//! come in one second, the count goes in the next line written
//! ([`ThrottledLog::event_line`]).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The period in which at most one line of a kind is written.
const PERIOD: Duration = Duration::from_secs(1);

/// One kind of log line, throttled.
#[derive(Debug)]
pub(crate) struct ThrottledLog {
    /// What the lines of this kind begin with, which their count repeats.
    what: &'static str,
    /// The end of the period that began with the last line written.
    period_end: Option<Instant>,
    /// Lines not written since the last one that was.
    suppressed: u64,
}

impl ThrottledLog {
    /// A log whose lines begin with `what`; so does the count of those not
    /// shown: `WHAT: N more, not shown`.
    pub(crate) fn new(what: &'static str) -> Self {
        Self {
            what,
            period_end: None,
            suppressed: 0,
        }
    }

    /// The lines to write for one event at `now`: `message()` if no line was
    /// written in the last second (after the count of those suppressed, if
    /// still due), nothing otherwise.
    pub(crate) fn event(&mut self, now: Instant, message: impl FnOnce() -> String) -> Vec<String> {
        if self.period_end.is_some_and(|end| now < end) {
            self.suppressed += 1;
            return Vec::new();
        }
        let mut lines: Vec<String> = self.count().into_iter().collect();
        lines.push(message());
        self.period_end = Some(now + PERIOD);
        lines
    }

    /// The line to write for one event at `now`, never more than one a
    /// second: `message()` if no line was written in the last second, with
    /// the count of those not shown since the last one after it; nothing
    /// otherwise.
    pub(crate) fn event_line(
        &mut self,
        now: Instant,
        message: impl FnOnce() -> String,
    ) -> Option<String> {
        if self.period_end.is_some_and(|end| now < end) {
            self.suppressed += 1;
            return None;
        }
        self.period_end = Some(now + PERIOD);
        let line = message();
        Some(match std::mem::take(&mut self.suppressed) {
            0 => line,
            suppressed => format!("{line} ({suppressed} more, not shown)"),
        })
    }

    /// The count of the lines not shown, once the second of the last line
    /// written is over (nothing before, nor when none was suppressed): a line
    /// that starts a second of its own, like any other.
    pub(crate) fn due_count_line(&mut self, now: Instant) -> Option<String> {
        if self.suppressed == 0 || self.period_end.is_some_and(|end| now < end) {
            return None;
        }
        self.period_end = Some(now + PERIOD);
        self.count()
    }

    /// When the count of suppressed lines is due: the end of the period, if a
    /// line was suppressed in it.
    pub(crate) fn count_due(&self) -> Option<Instant> {
        self.period_end.filter(|_| self.suppressed > 0)
    }

    /// The count of the lines suppressed since the last one written, if any.
    pub(crate) fn count(&mut self) -> Option<String> {
        let suppressed = std::mem::take(&mut self.suppressed);
        (suppressed > 0).then(|| format!("{}: {suppressed} more, not shown", self.what))
    }
}

/// Writes `message()` to the log through `log`, which shows one line a second
/// and counts the others.
pub(crate) fn log_throttled(log: &Mutex<ThrottledLog>, message: impl FnOnce() -> String) {
    let lines = log
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .event(Instant::now(), message);
    for line in lines {
        crate::telemetry::log(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_a_second_then_the_count_of_the_others() {
        let mut log = ThrottledLog::new("event");
        let start = Instant::now();
        let mut written = Vec::new();
        // 10,000 events spread over 3.5 s.
        for n in 0..10_000u64 {
            let now = start + Duration::from_micros(n * 350);
            if let Some(due) = log.count_due()
                && due <= now
            {
                written.extend(log.count());
            }
            written.extend(log.event(now, || format!("event {n}")));
        }
        written.extend(log.count());
        assert_eq!(
            written,
            [
                "event 0",
                "event: 2857 more, not shown",
                "event 2858",
                "event: 2857 more, not shown",
                "event 5716",
                "event: 2857 more, not shown",
                "event 8574",
                "event: 1425 more, not shown",
            ]
        );
    }

    #[test]
    fn one_line_a_second_carries_the_count_of_those_not_shown() {
        let mut log = ThrottledLog::new("event");
        let start = Instant::now();
        let mut written = Vec::new();
        // 10,000 events spread over 3.5 s, then the count, due.
        for n in 0..10_000u64 {
            let now = start + Duration::from_micros(n * 350);
            written.extend(log.event_line(now, || format!("event {n}")));
        }
        let end = start + Duration::from_secs(5);
        assert_eq!(log.due_count_line(start + Duration::from_secs(4)), None);
        written.extend(log.due_count_line(end));
        // That line started a second: the next event waits for its end.
        assert_eq!(log.event_line(end, || "too soon".to_owned()), None);
        assert_eq!(log.due_count_line(end), None);
        written.extend(log.due_count_line(end + PERIOD));
        assert_eq!(
            written,
            [
                "event 0",
                "event 2858 (2857 more, not shown)",
                "event 5716 (2857 more, not shown)",
                "event 8574 (2857 more, not shown)",
                "event: 1425 more, not shown",
                "event: 1 more, not shown",
            ]
        );
    }

    #[test]
    fn nothing_is_counted_when_nothing_was_suppressed() {
        let mut log = ThrottledLog::new("event");
        let start = Instant::now();
        assert_eq!(log.event(start, || "a".to_owned()), ["a"]);
        assert_eq!(log.count_due(), None);
        assert_eq!(log.count(), None);
        assert_eq!(log.event(start + PERIOD, || "b".to_owned()), ["b"]);
    }
}
