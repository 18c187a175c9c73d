//! Who may use the bridge: a request whose `Origin` is not the listen
//! address's own is refused `403` (the specification's defence against DNS
//! rebinding: a web page can make a browser send requests to a loopback
//! address under a name of its own, but cannot change the `Origin` the
//! browser writes), and with `--auth-token-file` a request without
//! `Authorization: Bearer TOKEN` is refused `401`.
//!
//! An `Origin` is the listen address's own when its host is the listen
//! address itself, any address literal when the bridge listens on every
//! address, or `localhost` when it listens on loopback; and its port is the
//! listen port. A name other than `localhost` is never the bridge's own: it
//! is what DNS rebinding uses.
//!
//! Listening on an address that is not loopback without a token is refused
//! at start, unless `--allow-unauthenticated` says something in front
//! authenticates.

use std::net::{IpAddr, SocketAddr};

use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

use crate::http::body::{ProxyBody, whole};
use crate::options::Options;

/// The checks on every request.
#[derive(Debug)]
pub(crate) struct Guard {
    listen: SocketAddr,
    /// `Bearer TOKEN`, as the header must hold it.
    authorization: Option<Vec<u8>>,
}

impl Guard {
    /// The checks the options ask for; why the bridge must not start, when
    /// it must not.
    pub(crate) fn new(options: &Options, listen: SocketAddr) -> Result<Self, String> {
        let authorization = match &options.auth_token_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|error| {
                    format!(
                        "cannot read the token (--auth-token-file {}): {error}",
                        path.display()
                    )
                })?;
                let token = text.lines().next().unwrap_or_default().trim();
                if token.is_empty() {
                    return Err(format!(
                        "the token file {} is empty (--auth-token-file)",
                        path.display()
                    ));
                }
                Some(format!("Bearer {token}").into_bytes())
            }
            None if !listen.ip().is_loopback() && !options.allow_unauthenticated => {
                return Err(format!(
                    "refusing to serve the server to every client that can reach {listen} \
                     without a token: give --auth-token-file PATH (clients send \
                     `Authorization: Bearer TOKEN`), or --allow-unauthenticated when \
                     something in front authenticates"
                ));
            }
            None => None,
        };
        Ok(Self {
            listen,
            authorization,
        })
    }

    /// The answer refusing a request with `headers`, if it is refused.
    pub(crate) fn refusal(&self, headers: &HeaderMap) -> Option<Response<ProxyBody>> {
        if let Some(origin) = headers.get(header::ORIGIN)
            && !self.is_own_origin(origin)
        {
            return Some(refused(
                StatusCode::FORBIDDEN,
                "Forbidden: the Origin is not this server's",
            ));
        }
        if let Some(expected) = &self.authorization {
            let given = headers
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes)
                .unwrap_or_default();
            if !same_bytes(given, expected) {
                let mut response = refused(
                    StatusCode::UNAUTHORIZED,
                    "Unauthorized: a bearer token is required",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"mcp\""),
                );
                return Some(response);
            }
        }
        None
    }

    fn is_own_origin(&self, origin: &HeaderValue) -> bool {
        let Some(rest) = origin
            .to_str()
            .ok()
            .and_then(|origin| origin.strip_prefix("http://"))
        else {
            return false;
        };
        let (host, port) = match rest.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host, port.parse::<u16>().ok()),
            _ => (rest, Some(80)),
        };
        if port != Some(self.listen.port()) {
            return false;
        }
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        match literal.parse::<IpAddr>() {
            Ok(ip) => ip == self.listen.ip() || self.listen.ip().is_unspecified(),
            Err(_) => host.eq_ignore_ascii_case("localhost") && self.listen.ip().is_loopback(),
        }
    }
}

/// Whether `given` and `expected` are equal, in a time that depends on their
/// lengths only.
fn same_bytes(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

fn refused(status: StatusCode, message: &str) -> Response<ProxyBody> {
    let mut response = Response::new(whole(format!("{message}\n")));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(listen: &str) -> Guard {
        Guard {
            listen: listen.parse().unwrap(),
            authorization: None,
        }
    }

    fn own(guard: &Guard, origin: &str) -> bool {
        guard.is_own_origin(&HeaderValue::from_str(origin).unwrap())
    }

    #[test]
    fn a_loopback_listener_owns_its_address_and_localhost_on_its_port_only() {
        let guard = guard("127.0.0.1:8080");
        assert!(own(&guard, "http://127.0.0.1:8080"));
        assert!(own(&guard, "http://localhost:8080"));
        assert!(!own(&guard, "http://localhost:8081"));
        assert!(!own(&guard, "http://evil.example:8080"));
        assert!(!own(&guard, "http://127.0.0.1"));
        assert!(!own(&guard, "https://127.0.0.1:8080"));
        assert!(!own(&guard, "null"));
        let guard = super::tests::guard("[::1]:9000");
        assert!(own(&guard, "http://[::1]:9000"));
        assert!(!own(&guard, "http://[::2]:9000"));
    }

    #[test]
    fn every_address_owns_any_address_literal_and_no_name() {
        let guard = guard("0.0.0.0:80");
        assert!(own(&guard, "http://10.1.2.3"));
        assert!(!own(&guard, "http://localhost"));
        assert!(!own(&guard, "http://mcp.example"));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_bytes(b"Bearer abc", b"Bearer abc"));
        assert!(!same_bytes(b"Bearer abd", b"Bearer abc"));
        assert!(!same_bytes(b"Bearer ab", b"Bearer abc"));
        assert!(!same_bytes(b"", b"Bearer abc"));
    }
}
