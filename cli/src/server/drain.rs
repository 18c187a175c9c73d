//! Draining on SIGTERM (or SIGINT): the listener is closed, and the calls in
//! flight get `--drain-timeout` to be answered. The connections the system
//! queued before the listener closed are served too. No connection is closed
//! under a client that may still send on it: a load balancer keeps its
//! connections alive and sends on any of them at any time, and a request it
//! sent on a connection closed at that moment is lost (nginx retries no `POST`
//! once sent). So a connection is shut down only once it reads a request
//! whose answer has not started: that answer then says `Connection: close`
//! and the connection closes after it, so the balancer sends nothing more on
//! it and, its new connections refused, moves on to another replica. A
//! connection with no such request stays open until its client closes it,
//! its own limits close it (`--keepalive-timeout`, longer than a balancer's
//! idle timeout), or the drain timeout. At the drain timeout the calls still
//! waiting for the server are answered as at a timeout: an `isError` result
//! for a `tools/call`, `-32603` otherwise, with the sentence of a drained
//! call (the HTTP mode's exchanges and the bridge's sessions each answer
//! theirs), and the server is sent `notifications/cancelled` for each. The
//! command then exits 0, as soon as every connection is closed, or after
//! [`GRACE`].

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::sync::{Notify, watch};

use crate::server::activity::Activity;

/// The drain timeout when `--drain-timeout` does not say.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the answers made at the deadline, and the cancellations, get to be
/// written before the command exits anyway (a GET event stream, for one, is
/// never done by itself).
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// Where the process is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    /// Accepting connections.
    Serving,
    /// Stopped accepting; calls in flight may still be answered by the server.
    Draining,
    /// The drain timeout has passed: what is still waiting is answered now.
    Expired,
}

/// What every connection and call watches. Each holds a clone while it runs:
/// the sender sees all of them gone when the drain is over.
#[derive(Debug, Clone)]
pub(crate) struct Drain(watch::Receiver<Phase>);

impl Drain {
    /// The sender (kept by the accept loop) and the first watcher.
    pub(crate) fn new() -> (watch::Sender<Phase>, Self) {
        let (sender, receiver) = watch::channel(Phase::Serving);
        (sender, Self(receiver))
    }

    /// Resolves once the process has reached `phase`.
    pub(crate) async fn reached(&self, phase: Phase) {
        let mut receiver = self.0.clone();
        if receiver.wait_for(|now| *now >= phase).await.is_err() {
            // The sender is gone: the process is exiting.
        }
    }
}

/// Drives `connection`, whose client's requests `requests` tells of and
/// whose `activity` says whether the answer to its request has started, from
/// the drain's start until it may be shut down: until it reads a request
/// whose answer has not started (the answer then says `Connection: close`),
/// or the drain timeout. `true` when the connection ended first.
///
/// A request in progress whose answer has started when the drain starts is
/// finished as it began, the connection kept alive after it: closing at its
/// end would race the balancer's next request, as closing an idle connection
/// does.
pub(crate) async fn until_closing_is_safe<C: Future>(
    mut connection: Pin<&mut C>,
    drain: &Drain,
    requests: &Notify,
    activity: &Activity,
) -> bool {
    loop {
        if activity.awaits_answer() {
            return false;
        }
        // A request read before the drain may have left a permit: the check
        // above then runs once more, and the wait starts over.
        tokio::select! {
            biased;
            () = requests.notified() => {}
            () = drain.reached(Phase::Expired) => return false,
            _ = connection.as_mut() => return true,
        }
    }
}
