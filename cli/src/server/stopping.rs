//! How a listening mode (the HTTP mode, the bridge) stops: SIGTERM or SIGINT
//! ends the accept loop, then the drain ([`crate::server::drain`]) gives
//! the calls in flight `--drain-timeout`; a second signal ends the drain at
//! once (what is still waiting is answered then), a third exits without
//! waiting for those answers to be written.

use std::time::Duration;

use tokio::sync::watch;

use crate::server::drain::{self, Drain, Phase};
use crate::signals::Stops;
use crate::telemetry::event;

/// The signals that stop the process, and the drain they start.
#[derive(Debug)]
pub(crate) struct Stopping {
    /// `None` when SIGTERM and SIGINT could not be handled.
    stops: Option<Stops>,
    phase: watch::Sender<Phase>,
    drain_timeout: Duration,
}

impl Stopping {
    /// Takes SIGTERM and SIGINT over; the drain every connection follows.
    /// Installed before the listener accepts, so that a signal sent once
    /// `listening on` is printed is seen.
    /// The drain gives the calls in flight `drain_timeout`,
    /// [`drain::DEFAULT_TIMEOUT`] when `None`.
    pub(crate) fn install(drain_timeout: Option<Duration>) -> (Self, Drain) {
        let stops = match Stops::install() {
            Ok(stops) => Some(stops),
            Err(error) => {
                crate::telemetry::log(&format!(
                    "cannot handle SIGTERM and SIGINT ({error}): no draining"
                ));
                None
            }
        };
        let (phase, drain) = Drain::new();
        let stopping = Self {
            stops,
            phase,
            drain_timeout: drain_timeout.unwrap_or(drain::DEFAULT_TIMEOUT),
        };
        (stopping, drain)
    }

    /// Resolves at the next SIGTERM or SIGINT; never, when they could not be
    /// handled.
    pub(crate) async fn next_stop(&mut self) {
        next_stop(self.stops.as_mut()).await;
    }

    /// Drains, once the caller has stopped accepting and dropped what it
    /// holds of the drain: returns when every connection is done, or when
    /// the drain timeout (or a second signal) has had what was still
    /// waiting answered.
    pub(crate) async fn drain(self) {
        self.drain_then(|| {}).await;
    }

    /// [`drain`](Self::drain), calling `expired` when the drain timeout (or
    /// a second signal) ends the wait for the calls in flight: the bridge
    /// answers its own then.
    pub(crate) async fn drain_then(self, expired: impl FnOnce()) {
        let Self {
            mut stops,
            phase,
            drain_timeout,
        } = self;
        event!(
            info,
            "draining: no new connections; the calls in flight have {}",
            humantime::format_duration(drain_timeout)
        );
        phase.send_replace(Phase::Draining);
        let drained = tokio::select! {
            drained = tokio::time::timeout(drain_timeout, phase.closed()) => drained.is_ok(),
            () = next_stop(stops.as_mut()) => {
                crate::telemetry::log("stopping again: the calls in flight are answered now");
                false
            }
        };
        if !drained {
            phase.send_replace(Phase::Expired);
            expired();
            // A third signal exits without waiting for the answers to be
            // written.
            tokio::select! {
                _ = tokio::time::timeout(drain::GRACE, phase.closed()) => {}
                () = next_stop(stops.as_mut()) => {}
            }
        }
    }
}

async fn next_stop(stops: Option<&mut Stops>) {
    match stops {
        Some(stops) => stops.next().await,
        None => std::future::pending().await,
    }
}
