//! [`Idle`]: a worker's connections to the upstream that wait for a request,
//! and the sweep that closes those idle too long.
//!
//! A connection waits here between two responses, the last given back first
//! (the likeliest still open). At most [`MAX_IDLE`] wait; one given back
//! beyond is closed (the oldest stay, as they are the next to be closed). One
//! idle for [`IDLE_TIMEOUT`] is closed by the sweep, a thread of the process
//! that looks at every worker's connections a few times per timeout, so that
//! none stays open with no request to find it (a burst's connections, once the
//! traffic stops), and gives their memory back to the system when it closed
//! many (`memory`); a checkout closes those past it too. One the server closed
//! is dropped when a request finds it so.
//!
//! The sweep is a thread, not a task of each worker: a timer pending in a
//! worker's runtime makes each of its turns dearer (tokio's time driver then
//! looks for the next expiry at every park), about 1,800 instructions a call
//! through the HTTP mode, where a thread that wakes every 10 s costs nothing
//! per call.

use std::collections::VecDeque;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError, Weak};
use std::task::Poll;
use std::time::Duration;

use hyper::client::conn::http1::SendRequest;
use tokio::time::Instant;

use crate::http::body::ProxyBody;
use crate::memory;

/// How long a connection may wait for its next request: half of nginx's
/// upstream `keepalive_timeout` (60 s), so that a burst's connections (some
/// 23 KB each, up to [`MAX_IDLE`] per worker) are closed, and their memory
/// given back, within 34 s of its end (hyper-util's pooled client keeps them
/// 90 s). Servers commonly keep theirs for less (uvicorn's is 5 s: its
/// connections are closed by the server first, and found so at the next
/// checkout).
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How many connections a worker keeps waiting for a request: what a burst
/// of calls opened beyond it is closed once the burst is over, as nginx's
/// `keepalive` bounds its idle upstream connections.
pub(crate) const MAX_IDLE: usize = 256;

/// How many times per idle timeout the sweep looks: a connection is closed at
/// most a ninth of its timeout late (3.3 s for the 30 s of [`IDLE_TIMEOUT`]).
const SWEEPS_PER_TIMEOUT: u32 = 9;

/// The connections of one worker waiting for a request.
#[derive(Debug)]
pub(crate) struct Idle {
    waiting: Mutex<VecDeque<(SendRequest<ProxyBody>, Instant)>>,
    timeout: Duration,
}

impl Idle {
    /// An empty pool whose connections are closed once idle for `timeout`,
    /// and swept for that.
    pub(crate) fn new(timeout: Duration) -> Arc<Self> {
        let idle = Arc::new(Self {
            waiting: Mutex::default(),
            timeout,
        });
        sweep(&idle);
        idle
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<(SendRequest<ProxyBody>, Instant)>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An idle connection ready for a request, when one is open.
    pub(crate) async fn take(&self) -> Option<SendRequest<ProxyBody>> {
        loop {
            let mut sender = {
                let mut waiting = self.lock();
                self.close_expired(&mut waiting);
                waiting.pop_back()?.0
            };
            if ready_soon(&mut sender).await {
                return Some(sender);
            }
        }
    }

    /// Puts `sender` with those waiting, unless it is closed or enough wait.
    pub(crate) fn give_back(&self, sender: SendRequest<ProxyBody>) {
        if !sender.is_closed() {
            let mut waiting = self.lock();
            if waiting.len() < MAX_IDLE {
                waiting.push_back((sender, Instant::now()));
            }
        }
    }

    /// Closes the connections idle for the timeout or longer, the oldest
    /// being first; how many.
    fn close_expired(&self, waiting: &mut VecDeque<(SendRequest<ProxyBody>, Instant)>) -> usize {
        let now = Instant::now();
        let mut closed = 0;
        while waiting
            .front()
            .is_some_and(|(_, since)| now.duration_since(*since) >= self.timeout)
        {
            waiting.pop_front();
            closed += 1;
        }
        closed
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

/// Whether `sender` is ready for a request now or on the runtime's next turn
/// (its task may have yet to see the last response's end); a connection the
/// server closed, or one still busy (a request body still being sent after
/// its response), is not, and is closed.
async fn ready_soon(sender: &mut SendRequest<ProxyBody>) -> bool {
    for _ in 0..2 {
        match std::future::poll_fn(|cx| Poll::Ready(sender.poll_ready(cx))).await {
            Poll::Ready(result) => return result.is_ok(),
            Poll::Pending => tokio::task::yield_now().await,
        }
    }
    false
}

/// The pools the sweep looks at (one dropped is forgotten at the next sweep),
/// and the sweep's thread, if it could be started.
struct Swept {
    pools: Mutex<Vec<Weak<Idle>>>,
    thread: Option<std::thread::Thread>,
}

static SWEPT: LazyLock<Swept> = LazyLock::new(|| {
    let started = std::thread::Builder::new()
        .name("idle-sweep".to_owned())
        .spawn(sweep_forever);
    let thread = match started {
        Ok(handle) => Some(handle.thread().clone()),
        Err(error) => {
            // Then a checkout still closes what expired.
            crate::telemetry::log(&format!(
                "cannot start the idle connections' sweep: {error}"
            ));
            None
        }
    };
    Swept {
        pools: Mutex::default(),
        thread,
    }
});

fn pools() -> MutexGuard<'static, Vec<Weak<Idle>>> {
    SWEPT.pools.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Has the sweep look at `idle`, and wakes it to reckon with its timeout.
fn sweep(idle: &Arc<Idle>) {
    pools().push(Arc::downgrade(idle));
    if let Some(thread) = &SWEPT.thread {
        thread.unpark();
    }
}

/// Closes, in every pool, the connections idle past its timeout (and gives
/// their memory back when they were a burst's), and waits a ninth of the
/// shortest timeout (or a new pool); for the life of the process.
fn sweep_forever() {
    let mut closed_many = false;
    loop {
        // A sweep after the closing: the connections' tasks, on their
        // workers, have freed their memory by then.
        if closed_many {
            memory::give_back();
        }
        let (next_sweep, closed) = {
            let mut pools = pools();
            pools.retain(|pool| pool.strong_count() > 0);
            let mut shortest = IDLE_TIMEOUT;
            let mut closed = 0;
            for pool in pools.iter().filter_map(Weak::upgrade) {
                closed += pool.close_expired(&mut pool.lock());
                shortest = shortest.min(pool.timeout);
            }
            (shortest / SWEEPS_PER_TIMEOUT, closed)
        };
        closed_many = closed >= memory::MIN_DROP;
        std::thread::park_timeout(next_sweep);
    }
}
