//! The clients' connections, every worker's together: how many are open, and
//! which to close. A connection past a limit on clients
//! ([`ClientLimits`]: a head that takes too long, a body that pauses too long,
//! an answer the client does not read, a kept-alive connection idle too long)
//! is closed by the sweep; at
//! `--max-connections`, or when the process runs out of file descriptors,
//! connections with no request in progress are closed to make room, the one
//! idle longest first, as nginx reuses its idle connections when it runs out.
//! A request in progress is closed only when its client keeps it waiting (its
//! body, or room for its answer): the upstream's bounds and the layer's
//! timeouts are its other limits.
//!
//! No timer per connection: a timer pending in a worker's runtime makes each
//! of its turns dearer (see `idle`, where the same choice was measured). Each
//! connection writes down what it does and since when
//! ([`crate::server::activity::Activity`]), and a thread of the
//! process, the sweep, reads them ten times per shortest limit (at most a
//! second apart), so that a connection is closed within a tenth of its limit
//! of it, early or late (the time a connection writes is the sweep's last).
//! A connection is closed by shutting its socket down: its task, on its
//! own worker, then reads the end and drops it, as when the client closes.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::net::TcpStream;

use crate::memory::{self, Bursts};
use crate::server::activity::{self, Activity};
use crate::server::client_limits::ClientLimits;

/// How many times per shortest limit the sweep looks.
const SWEEPS_PER_LIMIT: u32 = 10;

/// The longest time between two looks of the sweep, which keeps the clock
/// the connections read.
const LONGEST_SWEEP_PERIOD: Duration = Duration::from_secs(1);

/// How many connections are closed at once when the process runs out of
/// file descriptors: nginx closes up to 32 of its idle ones when it runs out
/// of connections.
pub(crate) const CLOSED_FOR_DESCRIPTORS: usize = 32;

/// The clients' connections of every worker.
#[derive(Debug)]
pub(crate) struct Connections {
    limits: ClientLimits,
    registry: Mutex<Registry>,
    /// The connections open and not being closed: what the cap counts, read
    /// by the accept loops without the lock.
    open: AtomicUsize,
    /// The most connections open at once since the sweep last looked.
    peak: AtomicUsize,
    /// The connections shut down and not closed yet: each holds its
    /// descriptor until its task, on its worker, drops it.
    closing: AtomicUsize,
    /// The most connections served at once: `--max-connections`, or less once
    /// the process ran out of descriptors below it.
    cap: AtomicUsize,
}

/// The open connections, in slots that closed ones leave for new ones.
#[derive(Debug, Default)]
struct Registry {
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// The number of the next connection registered: what tells apart two
    /// connections idle since the same tick of the clock.
    next: u64,
}

impl Registry {
    /// Forgets the free slots past the last one taken, and the room kept
    /// for more: what a burst left.
    fn shrink(&mut self) {
        while matches!(self.slots.last(), Some(None)) {
            self.slots.pop();
        }
        let len = self.slots.len();
        self.free.retain(|index| *index < len);
        self.slots.shrink_to_fit();
        self.free.shrink_to_fit();
    }
}

#[derive(Debug)]
struct Slot {
    activity: Arc<Activity>,
    /// The socket's descriptor: open as long as the slot is taken (the
    /// stream forgets its slot before it closes the socket).
    fd: RawFd,
    number: u64,
    /// Shut down already; no longer counted as open.
    closing: bool,
}

impl Connections {
    /// No connection yet, with these limits; the sweep starts.
    pub(crate) fn new(limits: ClientLimits) -> Arc<Self> {
        activity::tick();
        let connections = Arc::new(Self {
            limits,
            registry: Mutex::default(),
            open: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            closing: AtomicUsize::new(0),
            cap: AtomicUsize::new(limits.max_connections),
        });
        let period = (limits.shortest_timeout() / SWEEPS_PER_LIMIT)
            .clamp(Duration::from_millis(1), LONGEST_SWEEP_PERIOD);
        let swept = Arc::downgrade(&connections);
        let started = std::thread::Builder::new()
            .name("client-sweep".to_owned())
            .spawn(move || sweep_forever(&swept, period));
        if let Err(error) = started {
            // Then connections are closed at the cap only.
            crate::telemetry::log(&format!(
                "cannot start the client connections' sweep: {error}"
            ));
        }
        connections
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers an accepted connection, `stream`, for as long as what is
    /// returned is held (by the stream, watched).
    pub(crate) fn register(self: &Arc<Self>, stream: &TcpStream) -> Registered {
        let activity = Arc::new(Activity::new(activity::coarse_now()));
        let fd = stream.as_raw_fd();
        let slot = {
            let mut registry = self.lock();
            let number = registry.next;
            registry.next += 1;
            let slot = Slot {
                activity: activity.clone(),
                fd,
                number,
                closing: false,
            };
            match registry.free.pop() {
                Some(index) => {
                    registry.slots[index] = Some(slot);
                    index
                }
                None => {
                    registry.slots.push(Some(slot));
                    registry.slots.len() - 1
                }
            }
        };
        let open = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(open, Ordering::Relaxed);
        Registered {
            connections: self.clone(),
            activity,
            slot,
        }
    }

    /// Whether as many connections are open as may be.
    pub(crate) fn is_full(&self) -> bool {
        self.open.load(Ordering::Relaxed) >= self.cap.load(Ordering::Relaxed)
    }

    /// Whether enough connections were shut down and are not closed yet
    /// that accepting more before they are could run out of descriptors (a
    /// burst at the cap shuts one down for each it accepts, faster than their
    /// tasks run).
    pub(crate) fn many_closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed) >= CLOSED_FOR_DESCRIPTORS
    }

    /// The most connections served at once now.
    pub(crate) fn cap(&self) -> usize {
        self.cap.load(Ordering::Relaxed)
    }

    /// Whether a connection has no request in progress, and could make room.
    pub(crate) fn any_unused(&self) -> bool {
        self.lock()
            .slots
            .iter()
            .flatten()
            .any(|slot| !slot.closing && slot.activity.unused_since().is_some())
    }

    /// Closes up to `count` connections with no request in progress, the one
    /// idle longest first; how many.
    pub(crate) fn make_room(&self, count: usize) -> usize {
        let mut registry = self.lock();
        let mut unused: Vec<(u64, u64, usize, u64)> = registry
            .slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| {
                let slot = slot.as_ref().filter(|slot| !slot.closing)?;
                let (since, read) = slot.activity.unused_since()?;
                Some((since, slot.number, index, read))
            })
            .collect();
        if unused.len() > count {
            unused.select_nth_unstable(count);
            unused.truncate(count);
        }
        let mut closed = 0;
        for (_, _, index, read) in unused {
            if let Some(slot) = registry.slots[index].as_mut()
                && slot.activity.claim_unused(read)
            {
                self.close(slot);
                closed += 1;
            }
        }
        closed
    }

    /// The process has run out of file descriptors: the cap becomes what it
    /// holds less [`CLOSED_FOR_DESCRIPTORS`], which are closed (those with no
    /// request in progress, idle longest first), so that a new client and its
    /// upstream connection find descriptors; how many were closed.
    pub(crate) fn out_of_descriptors(&self) -> usize {
        let open = self.open.load(Ordering::Relaxed);
        let cap = open.saturating_sub(CLOSED_FOR_DESCRIPTORS).max(1);
        self.cap.fetch_min(cap, Ordering::Relaxed);
        self.make_room(CLOSED_FOR_DESCRIPTORS)
    }

    /// Closes the connections past a limit at `now`.
    fn sweep(&self, now: u64) {
        let mut registry = self.lock();
        for slot in registry.slots.iter_mut().flatten() {
            if slot.closing {
                continue;
            }
            if let Some(overdue) = slot.activity.overdue(&self.limits, now)
                && slot.activity.claim(overdue)
            {
                self.close(slot);
            }
        }
    }

    /// Shuts the socket of `slot` down; its task drops it on its next turn.
    fn close(&self, slot: &mut Slot) {
        slot.closing = true;
        self.open.fetch_sub(1, Ordering::Relaxed);
        self.closing.fetch_add(1, Ordering::Relaxed);
        // SAFETY: shutdown(2) takes two integers and touches no memory of
        // this process. The descriptor is the socket of a live connection:
        // the registry's lock, held by the caller, is taken by `Registered`'s
        // drop before its stream closes the socket, so the number cannot name
        // another file meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            libc::shutdown(slot.fd, libc::SHUT_RDWR);
        }
    }

    /// Forgets the connection in `slot`, whose socket is about to close.
    fn remove(&self, slot: usize) {
        let mut registry = self.lock();
        if let Some(removed) = registry.slots[slot].take() {
            if removed.closing {
                self.closing.fetch_sub(1, Ordering::Relaxed);
            } else {
                self.open.fetch_sub(1, Ordering::Relaxed);
            }
            registry.free.push(slot);
        }
    }

    /// How many connections are registered (closing ones included).
    #[cfg(test)]
    fn registered(&self) -> usize {
        self.lock().slots.iter().flatten().count()
    }
}

/// A connection's place among the connections: forgotten when dropped.
#[derive(Debug)]
pub(crate) struct Registered {
    connections: Arc<Connections>,
    activity: Arc<Activity>,
    slot: usize,
}

impl Registered {
    pub(crate) fn activity(&self) -> &Arc<Activity> {
        &self.activity
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.connections.remove(self.slot);
    }
}

/// Keeps the clock and closes the connections past their limits, `period`
/// apart, while the connections are there; gives memory back once a burst of
/// them is over.
fn sweep_forever(connections: &Weak<Connections>, period: Duration) {
    let mut bursts = Bursts::default();
    let mut burst_over = false;
    loop {
        let now = activity::tick();
        // A look after the burst's end was seen: the connections' tasks, on
        // their workers, have freed their memory by then.
        if burst_over {
            memory::give_back();
        }
        match connections.upgrade() {
            Some(connections) => {
                connections.sweep(now);
                let peak = connections.peak.swap(0, Ordering::Relaxed);
                burst_over = bursts.over(peak, connections.open.load(Ordering::Relaxed));
                if burst_over {
                    connections.lock().shrink();
                }
            }
            None => return,
        }
        std::thread::park_timeout(period);
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    fn limits(max_connections: usize) -> ClientLimits {
        ClientLimits {
            header_timeout: Duration::from_secs(3600),
            body_timeout: Duration::from_secs(3600),
            send_timeout: Duration::from_secs(3600),
            keepalive_timeout: Duration::from_secs(3600),
            max_connections,
        }
    }

    /// The proxy's side of a connection: registered, and its socket.
    struct Watched {
        // Dropped first, as a watched stream's.
        registered: Registered,
        stream: TcpStream,
    }

    impl Watched {
        fn activity(&self) -> &Arc<Activity> {
            self.registered.activity()
        }
    }

    /// `count` connections to a listener of the test, as the proxy's side
    /// (watched) and the client's.
    async fn connected(connections: &Arc<Connections>, count: usize) -> Vec<(Watched, TcpStream)> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut pairs = Vec::new();
        for _ in 0..count {
            let client = TcpStream::connect(address).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            let registered = connections.register(&server);
            let watched = Watched {
                registered,
                stream: server,
            };
            pairs.push((watched, client));
        }
        pairs
    }

    /// Whether the client's side reads the end of the stream.
    async fn closed(client: &mut TcpStream) -> bool {
        let mut byte = [0];
        matches!(
            tokio::time::timeout(Duration::from_secs(5), client.read(&mut byte)).await,
            Ok(Ok(0))
        )
    }

    #[tokio::test]
    async fn after_a_burst_the_registry_keeps_the_slots_up_to_the_last_taken() {
        let connections = Connections::new(limits(10));
        let mut pairs = connected(&connections, 5).await;
        let second = pairs.remove(1);
        drop(pairs);
        connections.lock().shrink();
        {
            let registry = connections.lock();
            assert_eq!(registry.slots.len(), 2);
            assert_eq!(registry.free, [0]);
        }
        let again = connected(&connections, 2).await;
        assert_eq!(connections.registered(), 3);
        assert_eq!(connections.lock().slots.len(), 3);
        drop((second, again));
        assert_eq!(connections.registered(), 0);
    }

    #[tokio::test]
    async fn room_is_made_by_closing_the_connections_idle_longest_never_one_in_progress() {
        let connections = Connections::new(limits(3));
        let mut pairs = connected(&connections, 3).await;
        assert!(connections.is_full());
        // The first serves a request; the second and third are older than a
        // fourth, which idles since later.
        pairs[0].0.activity().request_started();
        let mut fourth = connected(&connections, 1).await;

        assert_eq!(connections.make_room(2), 2);

        assert!(closed(&mut pairs[1].1).await);
        assert!(closed(&mut pairs[2].1).await);
        // The one in progress and the newest still talk.
        for (_, client) in [&mut pairs[0], &mut fourth[0]] {
            client.write_all(b"x").await.unwrap();
        }
        let mut byte = [0];
        pairs[0].0.stream.read_exact(&mut byte).await.unwrap();
        fourth[0].0.stream.read_exact(&mut byte).await.unwrap();
        assert!(!connections.is_full());
        assert_eq!(connections.registered(), 4);
        drop(pairs);
        drop(fourth);
        assert_eq!(connections.registered(), 0);
        assert_eq!(connections.open.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn with_every_connection_serving_a_request_no_room_is_made() {
        let connections = Connections::new(limits(2));
        let pairs = connected(&connections, 2).await;
        for (server, _) in &pairs {
            server.activity().request_started();
        }
        assert_eq!(connections.make_room(1), 0);
        assert!(connections.is_full());
    }

    #[tokio::test]
    async fn out_of_descriptors_the_cap_drops_below_what_is_open() {
        let connections = Connections::new(limits(10_000));
        let pairs = connected(&connections, 40).await;
        assert_eq!(connections.out_of_descriptors(), 32);
        // The 32 closed are left free: each new connection makes room.
        assert_eq!(connections.cap(), 8);
        assert!(connections.is_full() && connections.any_unused());
        // Until their tasks drop them, they hold their descriptors.
        assert!(connections.many_closing());
        drop(pairs);
        assert!(!connections.many_closing());
    }

    #[tokio::test]
    async fn the_sweep_closes_a_connection_past_its_limit() {
        let connections = Connections::new(limits(10));
        let mut pairs = connected(&connections, 2).await;
        pairs[1].0.activity().request_started();
        let now = activity::coarse_now() + 3_600_000;

        connections.sweep(now);

        assert!(closed(&mut pairs[0].1).await);
        pairs[1].1.write_all(b"x").await.unwrap();
        let mut byte = [0];
        pairs[1].0.stream.read_exact(&mut byte).await.unwrap();
    }
}
