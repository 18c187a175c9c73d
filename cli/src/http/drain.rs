//! Draining on SIGTERM (or SIGINT): the listener is closed, every connection
//! finishes the request it serves and closes, and the calls in flight get
//! `--drain-timeout` to be answered. The connections the system queued before
//! the listener closed are served too, and a connection that has sent no
//! request yet gets [`FIRST_REQUEST_GRACE`] to send one: a load balancer's
//! request on them was sent, and is retried nowhere if dropped. At the drain
//! timeout the calls still waiting for the server are answered as at a
//! timeout: an `isError` result for a
//! `tools/call`, `-32603` otherwise, with [`Failure::Drained`]'s sentence, and
//! the server is sent `notifications/cancelled` for each. The command then
//! exits 0, as soon as every connection is closed, or after [`GRACE`].
//!
//! [`Failure::Drained`]: crate::http::failure::Failure::Drained

use std::time::Duration;

use tokio::sync::watch;

/// The drain timeout when `--drain-timeout` does not say.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the answers made at the deadline, and the cancellations, get to be
/// written before the command exits anyway (a GET event stream, for one, is
/// never done by itself).
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// How long a connection that has sent no request when the drain starts gets
/// to send its first: a load balancer writes it right after connecting, and
/// one that connected just before the listener closed has its request on the
/// way. A connection that sends nothing is closed then.
pub(crate) const FIRST_REQUEST_GRACE: Duration = Duration::from_secs(1);

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
