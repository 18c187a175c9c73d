//! What a listener serves: the HTTP mode's proxy, or the bridge's sessions.
//! Both take connections the same way ([`accept`](crate::http::accept): the
//! limits on clients, the drain); each answers a request its own way.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response};

use crate::http::activity::{Activity, ResponseBody};
use crate::http::connections::Connections;
use crate::http::drain::Drain;
use crate::http::headers;
use crate::http::proxy::Proxy;
use crate::http::route;

/// What a listener serves.
pub(crate) trait Site: Send + Sync + 'static {
    /// The clients' connections, under the limits on clients.
    fn connections(&self) -> &Arc<Connections>;

    /// The drain every connection follows.
    fn drain(&self) -> &Drain;

    /// Answers one request of `client`, on a connection whose `activity`
    /// learns when the request's body waits and when its answer ends.
    fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        client: Arc<headers::Client>,
        activity: Arc<Activity>,
    ) -> impl Future<Output = Result<Response<ResponseBody>, Infallible>> + Send + 'static;
}

impl Site for Proxy {
    fn connections(&self) -> &Arc<Connections> {
        Proxy::connections(self)
    }

    fn drain(&self) -> &Drain {
        Proxy::drain(self)
    }

    fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        client: Arc<headers::Client>,
        activity: Arc<Activity>,
    ) -> impl Future<Output = Result<Response<ResponseBody>, Infallible>> + Send + 'static {
        route::handle(self, request, client, activity)
    }
}
