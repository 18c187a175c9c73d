//! The client at the other end of a connection, as the headers that name it
//! (`Forwarded`, `X-Forwarded-For`) write it: made once per connection by
//! the server, read by each request that names it upstream.

use std::net::{IpAddr, SocketAddr};

use hyper::header::HeaderValue;

/// The client of a connection, as `Forwarded` and `X-Forwarded-For` name it:
/// written once per connection, not for each request.
#[derive(Debug)]
pub(crate) struct Peer {
    /// `for=` and the address, as RFC 7239 writes it.
    forwarded_for: String,
    /// The address, as `X-Forwarded-For` lists it.
    address: HeaderValue,
}

impl Peer {
    pub(crate) fn new(address: SocketAddr) -> Self {
        let ip = address.ip();
        let forwarded_for = match ip {
            IpAddr::V4(ip) => format!("for={ip}"),
            // An IPv6 address in brackets and quotes.
            IpAddr::V6(ip) => format!("for=\"[{ip}]\""),
        };
        Self {
            forwarded_for,
            address: HeaderValue::from_str(&ip.to_string()).expect("an address is a header value"),
        }
    }

    /// `for=` and the address, as RFC 7239 writes it.
    pub(crate) fn forwarded_for(&self) -> &str {
        &self.forwarded_for
    }

    /// The address, as `X-Forwarded-For` lists it.
    pub(crate) fn address(&self) -> &HeaderValue {
        &self.address
    }
}
