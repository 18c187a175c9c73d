//! What a listener serves: the HTTP mode's reverse proxy, or the bridge's
//! sessions. Both take connections the same way
//! ([`accept`](crate::server::listener::accept): the limits on clients, the
//! drain); each answers a request its own way, implementing [`Site`].

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response};

use crate::http::peer::Peer;
use crate::server::activity::{Activity, ResponseBody};
use crate::server::connections::Connections;
use crate::server::drain::Drain;

/// What a listener serves.
pub(crate) trait Site: Send + Sync + 'static {
    /// The clients' connections, under the limits on clients.
    fn connections(&self) -> &Arc<Connections>;

    /// The drain every connection follows.
    fn drain(&self) -> &Drain;

    /// Answers one request of `peer`, on a connection whose `activity`
    /// learns when the request's body waits and when its answer ends.
    fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        peer: Arc<Peer>,
        activity: Arc<Activity>,
    ) -> impl Future<Output = Result<Response<ResponseBody>, Infallible>> + Send + 'static;
}
