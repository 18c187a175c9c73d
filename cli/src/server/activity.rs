//! What a client's connection is doing, as the limits on clients read it:
//! waiting for a request's head, serving a request, or idle between two; and,
//! while a request's body is read, since when it waits for the next bytes.
//!
//! The connection writes it as it goes ([`Activity`]: two atomic words, each
//! a step and the time it began), through its socket (the watched stream, `watched_stream`, sees
//! the first byte of a head), the request's body ([`RequestBody`] sees it
//! wait) and the response's ([`ResponseBody`] sees it end); the sweep of
//! the connections (`connections`) reads it. Times are
//! read from a clock that the sweep keeps ([`coarse_now`]): a connection
//! reads no clock and holds no timer, so a call costs a few atomic loads and
//! stores more than it did before the limits.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};

use crate::http::body::{BoxError, ProxyBody};
use crate::server::client_limits::ClientLimits;

/// What a connection is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Doing {
    /// Waiting for a request's head: from the connection's start for its
    /// first request, from the first byte of the head for the others.
    Head,
    /// Serving a request: from its head to the end of its response.
    Request,
    /// Kept alive, from the end of a response to the next request's first
    /// byte.
    Idle,
    /// Being closed by the sweep or to make room.
    Closing,
}

impl Doing {
    const SHIFT: u32 = 62;

    fn from_bits(bits: u64) -> Self {
        match bits >> Self::SHIFT {
            0 => Self::Head,
            1 => Self::Request,
            2 => Self::Idle,
            _ => Self::Closing,
        }
    }

    /// The word saying that the connection does this since `since`.
    const fn since(self, since: u64) -> u64 {
        let step: u64 = match self {
            Self::Head => 0,
            Self::Request => 1,
            Self::Idle => 2,
            Self::Closing => 3,
        };
        (step << Self::SHIFT) | (since & ((1 << Self::SHIFT) - 1))
    }
}

/// The clock's start: times are milliseconds since then.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// The clock the connections read: the time of the sweep's last look, in
/// milliseconds since [`EPOCH`]. Late by at most the time between two looks.
static COARSE_NOW: AtomicU64 = AtomicU64::new(0);

/// The time now, in milliseconds since [`EPOCH`]; kept for [`coarse_now`].
pub(crate) fn tick() -> u64 {
    let now = u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX >> 2);
    COARSE_NOW.store(now, Ordering::Relaxed);
    now
}

/// The time of the sweep's last look, in milliseconds since [`EPOCH`].
pub(crate) fn coarse_now() -> u64 {
    COARSE_NOW.load(Ordering::Relaxed)
}

/// A wait on the client: for its request body's next bytes, or for room to
/// write its response (a client that does not read). Zero when none, else
/// one more than the time it began, or [`Wait::CLOSING`].
#[derive(Debug, Default)]
struct Wait(AtomicU64);

impl Wait {
    const NONE: u64 = 0;

    /// Claimed by the sweep: the connection is being closed.
    const CLOSING: u64 = u64::MAX;

    /// The client keeps us waiting from `now`, unless it did already.
    fn begins(&self, now: impl FnOnce() -> u64) {
        if self.0.load(Ordering::Relaxed) == Self::NONE {
            self.0.store(now() + 1, Ordering::Relaxed);
        }
    }

    /// The client moved: bytes came, or went.
    fn ends(&self) {
        if self.0.load(Ordering::Relaxed) != Self::NONE {
            self.0.store(Self::NONE, Ordering::Relaxed);
        }
    }

    /// The word read, when the wait has lasted `limit` at `now`.
    fn past(&self, limit: Duration, now: u64) -> Option<u64> {
        let word = self.0.load(Ordering::Relaxed);
        (word != Self::NONE && word != Self::CLOSING && past(word - 1, limit, now)).then_some(word)
    }

    /// Claims the wait read as `read` for closing, unless it is over.
    fn claim(&self, read: u64) -> bool {
        self.0
            .compare_exchange(read, Self::CLOSING, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }
}

/// Whether what began at `since` has lasted `limit` at `now`.
fn past(since: u64, limit: Duration, now: u64) -> bool {
    u128::from(now.saturating_sub(since)) >= limit.as_millis()
}

/// What one connection is doing, and since when.
#[derive(Debug)]
pub(crate) struct Activity {
    /// A [`Doing`] and the time it began.
    doing: AtomicU64,
    /// The request's body waiting for bytes.
    body: Wait,
    /// A write to the client waiting for room.
    send: Wait,
}

/// A limit a connection went past, with what the sweep read: closing it
/// takes that the connection did not move on in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overdue {
    /// Its head took longer than `--client-header-timeout`.
    Head(u64),
    /// Its request's body waited longer than `--client-body-timeout`.
    Body(u64),
    /// A write to it waited longer than `--client-send-timeout`.
    Send(u64),
    /// It was idle longer than `--keepalive-timeout`.
    KeptAlive(u64),
    /// It lingered for [`LINGER_TIME`].
    Lingered(u64),
}

impl Activity {
    /// A connection accepted at `now`, waiting for its first request's head.
    pub(crate) fn new(now: u64) -> Self {
        Self {
            doing: AtomicU64::new(Doing::Head.since(now)),
            body: Wait::default(),
            send: Wait::default(),
        }
    }

    /// What the connection does, and since when.
    #[cfg(test)]
    fn doing(&self) -> (Doing, u64) {
        let word = self.doing.load(Ordering::Relaxed);
        (Doing::from_bits(word), word & ((1 << Doing::SHIFT) - 1))
    }

    /// Bytes came at `now`: an idle connection starts a head. Read first, and
    /// only read unless idle: it runs at every read of the socket.
    pub(crate) fn bytes_read(&self, now: impl FnOnce() -> u64) {
        let word = self.doing.load(Ordering::Relaxed);
        if Doing::from_bits(word) == Doing::Idle {
            let _ = self.doing.compare_exchange(
                word,
                Doing::Head.since(now()),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    /// A request's head came whole: it is served.
    pub(crate) fn request_started(&self) {
        self.doing.store(Self::AWAITING_ANSWER, Ordering::Relaxed);
    }

    /// The word of a request whose answer has not started: [`Doing::Request`]
    /// since 0. Serving a request, the time bits say only whether a byte of
    /// the answer was written (1), which no limit reads.
    const AWAITING_ANSWER: u64 = Doing::Request.since(0);

    /// Bytes went to the client: a request's answer has started. Read first,
    /// and only read unless awaiting its answer: it runs at every write.
    /// A write to the socket went out, or waits for room in it (`pending`:
    /// the client does not read).
    pub(crate) fn written(&self, pending: bool) {
        self.bytes_written();
        if pending {
            self.send.begins(coarse_now);
        } else {
            self.send.ends();
        }
    }

    fn bytes_written(&self) {
        if self.doing.load(Ordering::Relaxed) == Self::AWAITING_ANSWER {
            // Only this connection's task moves a request on (the sweep
            // claims idle connections and heads only).
            self.doing.store(Doing::Request.since(1), Ordering::Relaxed);
        }
    }

    /// Whether a request is served and nothing of its answer was written yet:
    /// its head is still to be made, and says `Connection: close` if the
    /// connection is shut down gracefully now.
    pub(crate) fn awaits_answer(&self) -> bool {
        self.doing.load(Ordering::Relaxed) == Self::AWAITING_ANSWER
    }

    /// The response was written at `now`: the connection waits for the next
    /// request.
    fn response_ended(&self, now: u64) {
        self.doing.store(Doing::Idle.since(now), Ordering::Relaxed);
    }

    /// The limit this connection is past at `now`, if any.
    pub(crate) fn overdue(&self, limits: &ClientLimits, now: u64) -> Option<Overdue> {
        if let Some(read) = self.body.past(limits.body_timeout, now) {
            return Some(Overdue::Body(read));
        }
        if let Some(read) = self.send.past(limits.send_timeout, now) {
            return Some(Overdue::Send(read));
        }
        let word = self.doing.load(Ordering::Relaxed);
        let since = word & ((1 << Doing::SHIFT) - 1);
        match Doing::from_bits(word) {
            Doing::Head if past(since, limits.header_timeout, now) => Some(Overdue::Head(word)),
            Doing::Idle if past(since, limits.keepalive_timeout, now) => {
                Some(Overdue::KeptAlive(word))
            }
            Doing::Closing if since > 0 && past(since, LINGER_TIME, now) => {
                Some(Overdue::Lingered(word))
            }
            _ => None,
        }
    }

    /// Marks the connection as being closed for `overdue`, unless it moved
    /// on since it was read: whether it is to be closed.
    pub(crate) fn claim(&self, overdue: Overdue) -> bool {
        match overdue {
            Overdue::Body(read) => self.body.claim(read),
            Overdue::Send(read) => self.send.claim(read),
            Overdue::Head(read) | Overdue::KeptAlive(read) | Overdue::Lingered(read) => {
                self.claim_unused(read)
            }
        }
    }

    /// Since when the connection has had no request in progress (waiting for
    /// a head, idle, or lingering), with the word read, for
    /// [`Activity::claim_unused`].
    pub(crate) fn unused_since(&self) -> Option<(u64, u64)> {
        let word = self.doing.load(Ordering::Relaxed);
        let since = word & ((1 << Doing::SHIFT) - 1);
        match Doing::from_bits(word) {
            Doing::Head | Doing::Idle => Some((since, word)),
            Doing::Closing if since > 0 => Some((since, word)),
            Doing::Request | Doing::Closing => None,
        }
    }

    /// The proxy ended its side of the connection at `now` and reads what
    /// the client still sends (a lingering close), unless the connection is
    /// being closed already.
    pub(crate) fn lingers_from(&self, now: u64) {
        let word = self.doing.load(Ordering::Relaxed);
        if word != Doing::Closing.since(0) {
            let _ = self.doing.compare_exchange(
                word,
                Doing::Closing.since(now.max(1)),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    /// Marks a connection with no request in progress as being closed,
    /// unless it moved on since `read`: whether it is to be closed.
    pub(crate) fn claim_unused(&self, read: u64) -> bool {
        self.doing
            .compare_exchange(
                read,
                Doing::Closing.since(0),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
    }
}

/// How long a connection the proxy ends reads what its client still sends,
/// at most (give or take the sweep's period): nginx's `lingering_timeout`.
pub(crate) const LINGER_TIME: Duration = Duration::from_secs(5);

/// A client's request body, which tells its [`Activity`] when it waits for
/// bytes and when they come.
#[derive(Debug)]
pub(crate) struct RequestBody {
    body: Incoming,
    activity: Arc<Activity>,
}

impl RequestBody {
    pub(crate) fn new(body: Incoming, activity: Arc<Activity>) -> Self {
        Self { body, activity }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let frame = Pin::new(&mut self.body).poll_frame(cx);
        if frame.is_pending() {
            self.activity.body.begins(coarse_now);
        } else {
            self.activity.body.ends();
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for RequestBody {
    /// A body no longer read waits for nothing.
    fn drop(&mut self) {
        self.activity.body.ends();
    }
}

/// A response to a client, which tells its [`Activity`] when it ends: hyper
/// drops it once written whole.
#[derive(Debug)]
pub(crate) struct ResponseBody {
    body: ProxyBody,
    activity: Arc<Activity>,
}

impl ResponseBody {
    pub(crate) fn new(body: ProxyBody, activity: Arc<Activity>) -> Self {
        Self { body, activity }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
        self.activity.response_ended(coarse_now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ClientLimits {
        ClientLimits {
            header_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(30),
            send_timeout: Duration::from_secs(45),
            keepalive_timeout: Duration::from_secs(75),
            max_connections: 10,
        }
    }

    #[test]
    fn a_head_is_overdue_at_the_header_timeout_from_the_start() {
        let activity = Activity::new(1_000);
        assert_eq!(activity.overdue(&limits(), 60_999), None);
        let overdue = activity.overdue(&limits(), 61_000).expect("overdue");
        assert!(matches!(overdue, Overdue::Head(_)));
        assert!(activity.claim(overdue));
        assert_eq!(activity.doing().0, Doing::Closing);
        assert_eq!(activity.overdue(&limits(), 1_000_000), None);
    }

    #[test]
    fn a_request_in_progress_is_never_overdue_but_for_its_body() {
        let activity = Activity::new(0);
        activity.request_started();
        assert_eq!(activity.overdue(&limits(), u64::MAX >> 3), None);
        assert_eq!(activity.unused_since(), None);
        activity.body.begins(|| 5_000);
        // Waiting again does not move the start of the wait.
        activity.body.begins(|| 9_000);
        assert_eq!(activity.overdue(&limits(), 34_999), None);
        let overdue = activity.overdue(&limits(), 35_000).expect("overdue");
        assert_eq!(overdue, Overdue::Body(5_001));
        // Bytes came after the sweep read: the wait it read is over.
        activity.body.ends();
        assert!(!activity.claim(overdue));
        assert_eq!(activity.overdue(&limits(), 35_000), None);
        // A write that waits for room.
        activity.send.begins(|| 40_000);
        assert_eq!(activity.overdue(&limits(), 84_999), None);
        let overdue = activity.overdue(&limits(), 85_000).expect("overdue");
        assert_eq!(overdue, Overdue::Send(40_001));
        assert!(activity.claim(overdue));
        assert_eq!(activity.overdue(&limits(), 1_000_000), None);
    }

    #[test]
    fn an_idle_connection_is_overdue_at_the_keepalive_timeout_and_its_next_head_starts_anew() {
        let activity = Activity::new(0);
        activity.request_started();
        activity.response_ended(10_000);
        assert_eq!(
            activity.unused_since().map(|(since, _)| since),
            Some(10_000)
        );
        assert_eq!(activity.overdue(&limits(), 84_999), None);
        let overdue = activity.overdue(&limits(), 85_000).expect("overdue");
        assert!(matches!(overdue, Overdue::KeptAlive(_)));
        // The next request's first byte came after the sweep read.
        activity.bytes_read(|| 80_000);
        assert!(!activity.claim(overdue));
        assert_eq!(activity.doing(), (Doing::Head, 80_000));
        assert_eq!(activity.overdue(&limits(), 139_999), None);
        assert!(activity.overdue(&limits(), 140_000).is_some());
    }

    #[test]
    fn a_request_awaits_its_answer_until_a_byte_of_it_is_written() {
        let activity = Activity::new(0);
        assert!(!activity.awaits_answer());
        activity.request_started();
        assert!(activity.awaits_answer());
        activity.bytes_written();
        assert!(!activity.awaits_answer());
        assert_eq!(activity.doing().0, Doing::Request);
        assert_eq!(activity.unused_since(), None);
        activity.response_ended(5);
        activity.bytes_written();
        assert_eq!(activity.doing(), (Doing::Idle, 5));
    }

    #[test]
    fn a_lingering_connection_is_overdue_at_the_linger_time_and_may_make_room() {
        let activity = Activity::new(0);
        activity.request_started();
        activity.response_ended(1_000);
        activity.lingers_from(2_000);
        assert_eq!(activity.doing(), (Doing::Closing, 2_000));
        assert_eq!(activity.unused_since().map(|(since, _)| since), Some(2_000));
        assert_eq!(activity.overdue(&limits(), 6_999), None);
        let overdue = activity.overdue(&limits(), 7_000).expect("overdue");
        assert!(matches!(overdue, Overdue::Lingered(_)));
        assert!(activity.claim(overdue));
        assert_eq!(activity.overdue(&limits(), 1_000_000), None);
        assert_eq!(activity.unused_since(), None);
        // Claimed already: it does not linger again.
        activity.lingers_from(8_000);
        assert_eq!(activity.doing(), (Doing::Closing, 0));
    }

    #[test]
    fn a_connection_with_no_request_in_progress_is_claimed_only_as_read() {
        let activity = Activity::new(7);
        let (since, read) = activity.unused_since().expect("waiting for a head");
        assert_eq!(since, 7);
        activity.request_started();
        assert!(!activity.claim_unused(read));
        activity.response_ended(8);
        let (_, read) = activity.unused_since().expect("idle");
        assert!(activity.claim_unused(read));
        assert_eq!(activity.unused_since(), None);
    }
}
