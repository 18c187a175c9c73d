//! What an exchange sends its requests through: the worker's client of the
//! upstream, and the server's drain, which the process waits on until every
//! holder of it is done. An exchange holds it until its answer is written,
//! and so does a cancellation sent after the answer (at a timeout, at the end
//! of the drain): the process does not exit before the server is told.

use crate::server::drain::Drain;
use crate::upstream::client::UpstreamClient;

/// The way to the upstream of a worker's exchanges; a clone is a handle to
/// the same.
#[derive(Debug, Clone)]
pub(crate) struct Outbound {
    /// The worker's connections to the upstream.
    pub(crate) client: UpstreamClient,
    /// Where the process is in its life: serving, draining, or past the drain
    /// timeout.
    pub(crate) drain: Drain,
}
