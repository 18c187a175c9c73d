//! Memory given back once a burst is over, so that a memory limit or an
//! autoscaler sees what the process holds, not its peak.
//!
//! glibc's allocator keeps what was freed for the next allocation: each
//! thread's arena returns memory to the system only from its top, and a burst
//! (thousands of connections, each with its buffers and its task) leaves its
//! arenas full of free chunks pinned by the few live ones among them. Idle
//! after a burst of 2,000 calls the process held 74 MB, as at the peak; after
//! bursts of idle connections, 442 MB; 5.0 MB before. `malloc_trim(0)` gives
//! back every free page of every arena (5.6 MB then).
//!
//! The trim runs on the sweeps' threads, never on a worker: once the clients'
//! connections have fallen to half their peak since the last trim, by
//! [`MIN_DROP`] or more ([`Bursts`], looked at by the clients' sweep), and
//! once the upstream connections of a burst, idle, are closed (the idle
//! sweep); at most once per [`MIN_INTERVAL`]. A steady load, whose
//! connections come and go by fewer than [`MIN_DROP`], never trims: what it
//! frees it allocates again, and a trim would only have the system fault the
//! pages in again. Other allocators, and other C libraries, have no trim: the
//! call is glibc's alone.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// How many connections fewer than at the peak make a burst worth giving
/// back (a few tens of kilobytes each): more than a load balancer's
/// kept-alive connections come and go by.
pub(crate) const MIN_DROP: usize = 64;

/// The least time between two trims, milliseconds: each walks every arena
/// under its lock.
const MIN_INTERVAL: u64 = 1_000;

/// What the clients' connections did since the last trim.
#[derive(Debug, Default)]
pub(crate) struct Bursts {
    /// The most connections open at once since the last trim.
    peak: usize,
}

impl Bursts {
    /// Takes in that at most `peak` connections were open at once since the
    /// last look, `open` now; whether a burst is over, and memory is to be
    /// given back.
    pub(crate) fn over(&mut self, peak: usize, open: usize) -> bool {
        self.peak = self.peak.max(peak).max(open);
        let over = self.peak >= open.saturating_mul(2) && self.peak - open >= MIN_DROP;
        if over {
            self.peak = open;
        }
        over
    }
}

/// When the process started: the trims' clock.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// The time of the last trim, in milliseconds since [`EPOCH`], plus
/// [`MIN_INTERVAL`]: when the next may run.
static NEXT_TRIM: AtomicU64 = AtomicU64::new(0);

/// Gives the memory freed back to the system, unless a trim ran less than
/// [`MIN_INTERVAL`] ago; whether it ran.
pub(crate) fn give_back() -> bool {
    let now = u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX - MIN_INTERVAL);
    let next = NEXT_TRIM.load(Ordering::Relaxed);
    if now < next
        || NEXT_TRIM
            .compare_exchange(
                next,
                now + MIN_INTERVAL,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_err()
    {
        return false;
    }
    trim();
    true
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim(3) takes an integer and works under the
    // allocator's own locks, as malloc and free do.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_over_once_its_connections_fell_to_half_by_min_drop_or_more() {
        let mut bursts = Bursts::default();
        // A steady load: its connections come and go by fewer.
        for (peak, open) in [(16, 3), (40, 0), (63, 0), (10, 10)] {
            assert!(!bursts.over(peak, open), "{peak} {open}");
        }
        // 2,000 at once, then half of them, then none.
        assert!(!bursts.over(2_000, 1_900));
        assert!(!bursts.over(1_900, 1_001));
        assert!(bursts.over(1_001, 1_000));
        assert!(!bursts.over(1_000, 600));
        assert!(bursts.over(600, 0));
        // The peak starts again from what was open at the trim.
        assert!(!bursts.over(0, 0));
        assert!(!bursts.over(100, 37));
        assert!(bursts.over(0, 36));
    }

    #[test]
    fn trims_are_a_second_apart_at_least() {
        give_back();
        assert!(!give_back());
    }
}
