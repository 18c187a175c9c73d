//! A listener's workers: one per CPU, as reverse proxies such as nginx run
//! theirs. Each is a thread with a runtime of its own that accepts from the
//! shared listener and serves its connections to the end with a site of its
//! own: a connection, what it serves, and whatever that uses per worker (the
//! HTTP mode's connections to the upstream) stay on one thread, with no
//! hand-off between threads on the way of a request (a runtime that moves
//! tasks between threads costs more per request at low load). What the sites
//! share is theirs to share. The main thread is a worker too, and handles the
//! signals and the drain.

use std::net::TcpListener as StdListener;
use std::num::NonZero;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::server::listener::accept;
use crate::server::site::Site;

/// The workers started besides the main thread.
#[derive(Debug)]
pub(crate) struct Workers {
    /// Set to `true` when the workers are to stop accepting.
    stop: watch::Sender<bool>,
    /// Closed once every worker has closed its copy of the listener.
    stopped: mpsc::Receiver<()>,
}

/// How many workers serve, the main thread included: one per CPU the process
/// may run on.
pub(crate) fn count() -> usize {
    std::thread::available_parallelism().map_or(1, NonZero::get)
}

impl Workers {
    /// Starts a worker per CPU but one, each accepting from a copy of
    /// `listener` and serving a site of its own, made by `new_site` on this
    /// thread; returns once each accepts. A worker that cannot start is
    /// logged, and the others serve.
    pub(crate) fn start<S: Site>(listener: &StdListener, mut new_site: impl FnMut() -> S) -> Self {
        let (stop, stopping) = watch::channel(false);
        let (closed, stopped) = mpsc::channel(1);
        // Each worker drops its sender once it accepts (or could not start).
        let (starting, started) = std::sync::mpsc::channel::<()>();
        for index in 1..count() {
            let listener = match listener.try_clone() {
                Ok(listener) => listener,
                Err(error) => {
                    crate::telemetry::log(&format!("cannot start worker {index}: {error}"));
                    break;
                }
            };
            let site = new_site();
            let (mut stopping, closed) = (stopping.clone(), closed.clone());
            let starting = starting.clone();
            let started = std::thread::Builder::new()
                .name(format!("worker-{index}"))
                .spawn(move || {
                    let runtime = match tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    {
                        Ok(runtime) => runtime,
                        Err(error) => {
                            crate::telemetry::log(&format!("cannot start worker {index}: {error}"));
                            return;
                        }
                    };
                    runtime.block_on(async move {
                        let listener = match TcpListener::from_std(listener) {
                            Ok(listener) => listener,
                            Err(error) => {
                                crate::telemetry::log(&format!(
                                    "cannot start worker {index}: {error}"
                                ));
                                return;
                            }
                        };
                        let site = Arc::new(site);
                        drop(starting);
                        accept(&listener, &site, stopping.wait_for(|stop| *stop)).await;
                        drop((listener, closed, site));
                        // The connections it serves run until the process exits.
                        std::future::pending::<()>().await;
                    });
                });
            if let Err(error) = started {
                crate::telemetry::log(&format!("cannot start worker {index}: {error}"));
            }
        }
        drop(starting);
        // Disconnected once every worker has started or given up.
        let _ = started.recv();
        Self { stop, stopped }
    }

    /// Stops every worker accepting; resolves once each has closed its copy of
    /// the listener, so that closing the main thread's closes the socket.
    pub(crate) async fn stop(mut self) {
        self.stop.send_replace(true);
        while self.stopped.recv().await.is_some() {}
    }
}
