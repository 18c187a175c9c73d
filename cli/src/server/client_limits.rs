//! The limits on clients, so that no client holds the proxy's connections and
//! file descriptors for longer than a request needs: how long a request's head
//! may take, how long its body may pause, how long an answer may wait for the
//! client to read it, how long a kept-alive connection may wait for its next
//! request, and how many connections are served at once.
//!
//! The timeouts are nginx's defaults (`client_header_timeout`,
//! `client_body_timeout`, `send_timeout`, `keepalive_timeout`). The
//! keep-alive timeout is longer than the idle timeout of the usual load
//! balancer in front (AWS's 60 s by default, nginx's `keepalive_timeout` for
//! upstreams 60 s), so that the balancer, which knows when it sends, closes an
//! idle connection first, and not the proxy under a request on its way;
//! behind one that keeps them longer (Google Cloud's: 600 s), it is set
//! above. The connection cap is what the file-descriptor limit allows: each
//! connection may hold one to the upstream, and a few descriptors serve the
//! process itself.

use std::time::Duration;

/// `--client-header-timeout` when not given: nginx's `client_header_timeout`.
pub(crate) const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(60);

/// `--client-body-timeout` when not given: nginx's `client_body_timeout`.
pub(crate) const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// `--client-send-timeout` when not given: nginx's `send_timeout`.
pub(crate) const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(60);

/// `--keepalive-timeout` when not given: nginx's `keepalive_timeout`.
pub(crate) const DEFAULT_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(75);

/// The descriptors kept for the process itself, besides
/// [`DESCRIPTORS_PER_WORKER`]: the standard streams, the listener, the signal
/// pipe, the sweeps' threads, a margin.
const RESERVED_DESCRIPTORS: u64 = 64;

/// The descriptors of a worker besides its connections: its runtime's epoll
/// and waker, its copy of the listener.
const DESCRIPTORS_PER_WORKER: u64 = 4;

/// The limits on clients, from the command line and the file-descriptor
/// limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientLimits {
    /// From a connection's start to its first request's whole head, and from
    /// a later request's first byte to its whole head.
    pub(crate) header_timeout: Duration,
    /// The longest a request's body may send nothing while it is read.
    pub(crate) body_timeout: Duration,
    /// The longest a write to the client may wait for room (a client that
    /// does not read its answer).
    pub(crate) send_timeout: Duration,
    /// The longest a kept-alive connection may wait for its next request.
    pub(crate) keepalive_timeout: Duration,
    /// The most connections served at once.
    pub(crate) max_connections: usize,
}

impl ClientLimits {
    /// The shortest of the timeouts.
    pub(crate) fn shortest_timeout(&self) -> Duration {
        self.header_timeout
            .min(self.body_timeout)
            .min(self.send_timeout)
            .min(self.keepalive_timeout)
    }
}

/// The connections that `descriptors` file descriptors serve with `workers`
/// workers: half of what the process does not keep for itself, since each
/// connection may hold one to the upstream (a request in progress, or one
/// left idle in the pool by an earlier one).
pub(crate) fn max_connections_within(descriptors: u64, workers: usize) -> usize {
    let workers = u64::try_from(workers).unwrap_or(u64::MAX);
    let reserved =
        RESERVED_DESCRIPTORS.saturating_add(workers.saturating_mul(DESCRIPTORS_PER_WORKER));
    let connections = descriptors.saturating_sub(reserved) / 2;
    usize::try_from(connections).unwrap_or(usize::MAX).max(1)
}

/// The process's file-descriptor limit (`RLIMIT_NOFILE`, its soft limit).
pub(crate) fn descriptor_limit() -> u64 {
    current_descriptor_limit().map_or(1024, |limit| limit.rlim_cur)
}

/// Raises the soft file-descriptor limit to the hard one, as a server that
/// holds a descriptor per connection should (the soft limit's usual 1,024 is
/// there for programs that use `select`, which this one does not); the
/// limit then in force.
pub(crate) fn raise_descriptor_limit() -> u64 {
    let Some(mut limit) = current_descriptor_limit() else {
        return descriptor_limit();
    };
    if limit.rlim_cur < limit.rlim_max {
        let soft = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: setrlimit(2) reads the struct passed by reference, which
        // lives for the call.
        #[allow(unsafe_code)]
        let result = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) };
        if result != 0 {
            crate::telemetry::log(&format!(
                "cannot raise the file-descriptor limit from {soft}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    descriptor_limit()
}

fn current_descriptor_limit() -> Option<libc::rlimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes the struct passed by reference, which
    // lives for the call.
    #[allow(unsafe_code)]
    let result = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) };
    (result == 0).then_some(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_leaves_a_descriptor_to_the_upstream_for_each_connection() {
        // 512 descriptors, 2 workers: 72 kept, 220 connections and as many
        // to the upstream.
        assert_eq!(max_connections_within(512, 2), 220);
        assert_eq!(max_connections_within(1024, 4), 472);
        assert_eq!(max_connections_within(1_048_576, 64), 524_128);
        assert_eq!(max_connections_within(10, 1), 1);
        assert!(max_connections_within(u64::MAX, 1) > 1 << 40);
    }
}
