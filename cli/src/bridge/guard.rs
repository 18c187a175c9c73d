//! Who may use the bridge, checked on every request before anything else:
//!
//! - a request whose `Origin` is neither the listen address's own nor one
//!   `--allow-origin` names is refused `403` (the specification's defence
//!   against DNS rebinding: a web page can make a browser send requests to a
//!   loopback address under a name of its own, but cannot change the
//!   `Origin` the browser writes);
//! - on a loopback listener, a request whose `Host` is not a loopback name
//!   (`localhost`, `127.0.0.1`, `[::1]`), the listen address or the host of
//!   an origin `--allow-origin` names, whatever the port, is refused `403`,
//!   as the TypeScript SDK's servers refuse it: the second defence against
//!   DNS rebinding, which a browser's own requests (no `Origin` on a
//!   same-origin `GET`) would pass otherwise. A request
//!   without `Host` comes from no browser, and is served;
//! - with `--auth-token-file`, a request without `Authorization: Bearer
//!   TOKEN` is refused `401`; the scheme is read in any case and after it
//!   one or more spaces (RFC 7235, RFC 6750), and the token is the file's
//!   ([`TokenFile`], read again when it changes).
//!
//! An `Origin` is the listen address's own when its host is the listen
//! address itself, an address of this machine's (one a socket can be bound
//! to) in a family the listener serves when the bridge listens on every
//! address (`0.0.0.0` serves no IPv6 address), or `localhost` when it
//! listens on loopback; and its port is the listen port. Another machine's
//! address is not the bridge's own: a page served from it, on the same
//! port, is another site. A name other than `localhost` is never the bridge's own: it
//! is what DNS rebinding uses; a reverse proxy's name is given with
//! `--allow-origin`.
//!
//! Listening on an address that is not loopback without a token is refused
//! at start, unless `--allow-unauthenticated` says something in front
//! authenticates.

use std::net::{IpAddr, SocketAddr};

use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

use crate::bridge::token_file::TokenFile;
use crate::http::body::ProxyBody;
use crate::http::own_response::json_error;
use crate::options::Options;

/// The names of loopback a `Host` may hold on a loopback listener, as the
/// TypeScript SDK's `localhostAllowedHostnames` lists them.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The checks on every request.
#[derive(Debug)]
pub(crate) struct Guard {
    listen: SocketAddr,
    /// `--allow-origin`, lowercase.
    allowed_origins: Vec<String>,
    token: Option<TokenFile>,
}

impl Guard {
    /// The checks the options ask for; why the bridge must not start, when it
    /// must not.
    pub(crate) fn new(options: &Options, listen: SocketAddr) -> Result<Self, String> {
        let token = match &options.auth_token_file {
            Some(path) => Some(TokenFile::open(path)?),
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
            allowed_origins: options.allow_origin.clone(),
            token,
        })
    }

    /// The answer refusing a request with `headers`, if it is refused.
    pub(crate) fn refusal(&self, headers: &HeaderMap) -> Option<Response<ProxyBody>> {
        if let Some(origin) = headers.get(header::ORIGIN)
            && !self.is_allowed_origin(origin)
        {
            return Some(json_error(
                StatusCode::FORBIDDEN,
                -32000,
                "Forbidden: the Origin is not this server's",
            ));
        }
        if let Some(host) = headers.get(header::HOST)
            && !self.is_own_host(host)
        {
            // As the TypeScript SDK says it: the host's name, without its port.
            let host = String::from_utf8_lossy(host.as_bytes());
            let message = format!("Invalid Host: {}", without_port(&host));
            return Some(json_error(StatusCode::FORBIDDEN, -32000, &message));
        }
        if let Some(token) = &self.token {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|value| bearer_token(value.as_bytes()));
            if !given.is_some_and(|given| token.matches(given)) {
                let mut response = json_error(
                    StatusCode::UNAUTHORIZED,
                    -32000,
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

    fn is_allowed_origin(&self, origin: &HeaderValue) -> bool {
        self.is_own_origin(origin)
            || origin.to_str().is_ok_and(|origin| {
                self.allowed_origins
                    .iter()
                    .any(|allowed| allowed.eq_ignore_ascii_case(origin))
            })
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
            Ok(ip) => self.serves(ip),
            Err(_) => host.eq_ignore_ascii_case("localhost") && self.listen.ip().is_loopback(),
        }
    }

    /// Whether a connection to `ip` (on the listen port) reaches this
    /// listener: its own address, or, when it listens on every address, an
    /// address of this machine's in a family it serves (IPv4's every address
    /// serves no IPv6 one; IPv6's serves both). An IPv4 address written as
    /// IPv6 (`::ffff:127.0.0.1`) is that IPv4 address.
    fn serves(&self, ip: IpAddr) -> bool {
        let (ip, listen) = (ip.to_canonical(), self.listen.ip().to_canonical());
        if ip == listen {
            return true;
        }
        let family_served = match listen {
            IpAddr::V4(_) => ip.is_ipv4(),
            IpAddr::V6(_) => true,
        };
        listen.is_unspecified() && family_served && is_local(ip)
    }

    /// Whether `host` names this listener: any `Host` when it does not
    /// listen on loopback (the token guards it, and a proxy in front writes
    /// names of its own); else a loopback name, the listen address, or the
    /// host of an origin `--allow-origin` names (a proxy in front that
    /// passes the client's `Host` on), with any port or none.
    fn is_own_host(&self, host: &HeaderValue) -> bool {
        if !self.listen.ip().is_loopback() {
            return true;
        }
        let Ok(host) = host.to_str() else {
            return false;
        };
        let name = without_port(host);
        let allowed_hosts = self.allowed_origins.iter().filter_map(|origin| {
            let authority = origin.split_once("://")?.1;
            Some(without_port(authority))
        });
        LOOPBACK_NAMES
            .into_iter()
            .chain(allowed_hosts)
            .any(|allowed| allowed.eq_ignore_ascii_case(name))
            || name
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|ip| ip == self.listen.ip())
    }
}

/// Whether `ip` is an address of this machine's: one a socket can be bound
/// to (the unspecified and multicast addresses are no one's).
fn is_local(ip: IpAddr) -> bool {
    !ip.is_unspecified()
        && !ip.is_multicast()
        && std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// The host of a `Host` header, its port (if any) taken off: `[::1]` of
/// `[::1]:8080`, `localhost` of `localhost:8080`.
fn without_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port))
            if port.bytes().all(|byte| byte.is_ascii_digit())
                && (!name.contains(':') || name.ends_with(']')) =>
        {
            name
        }
        _ => host,
    }
}

/// The token of `Authorization: Bearer TOKEN`: the scheme in any case, then
/// one or more spaces (RFC 7235 section 2.1, RFC 6750 section 2.1).
fn bearer_token(authorization: &[u8]) -> Option<&[u8]> {
    let space = authorization.iter().position(|byte| *byte == b' ')?;
    let (scheme, rest) = authorization.split_at(space);
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let token = rest.trim_ascii_start();
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(listen: &str) -> Guard {
        Guard {
            listen: listen.parse().unwrap(),
            allowed_origins: vec!["https://mcp.example".to_owned()],
            token: None,
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
    fn every_address_owns_the_machines_own_addresses_and_no_name() {
        let guard = guard("0.0.0.0:80");
        assert!(own(&guard, "http://127.0.0.1"));
        assert!(own(&guard, "http://127.0.0.1:80"));
        assert!(!own(&guard, "http://127.0.0.1:81"));
        // Another machine's address (TEST-NET-1, assigned to no one), as a
        // page served from it on the same port writes it.
        assert!(!own(&guard, "http://192.0.2.1"));
        assert!(!own(&guard, "http://192.0.2.1:80"));
        assert!(!own(&guard, "http://224.0.0.1"));
        assert!(!own(&guard, "http://localhost"));
        assert!(!own(&guard, "http://mcp.example"));
    }

    #[test]
    fn an_address_is_the_listeners_own_only_in_a_family_it_serves() {
        // IPv4's every address serves no IPv6 one: a page from [::1] on the
        // same port is another server's.
        let guard = guard("0.0.0.0:80");
        assert!(!own(&guard, "http://[::1]"));
        // An IPv4 address written as IPv6 reaches the IPv4 listener.
        assert!(own(&guard, "http://[::ffff:127.0.0.1]"));
        let guard = super::tests::guard("[::]:80");
        assert!(own(&guard, "http://[::1]"));
        assert!(own(&guard, "http://127.0.0.1"));
        let guard = super::tests::guard("127.0.0.1:8080");
        assert!(own(&guard, "http://[::ffff:127.0.0.1]:8080"));
        assert!(!own(&guard, "http://[::ffff:127.0.0.2]:8080"));
    }

    fn own_host(guard: &Guard, host: &str) -> bool {
        guard.is_own_host(&HeaderValue::from_str(host).unwrap())
    }

    #[test]
    fn an_allowed_origin_is_served_as_the_listeners_own() {
        let guard = guard("127.0.0.1:8080");
        let allowed = |origin| guard.is_allowed_origin(&HeaderValue::from_static(origin));
        assert!(allowed("https://mcp.example"));
        assert!(allowed("https://MCP.example"));
        assert!(allowed("http://localhost:8080"));
        assert!(!allowed("http://mcp.example"));
        assert!(!allowed("https://mcp.example:8443"));
        assert!(!allowed("https://mcp.example.evil"));
    }

    #[test]
    fn a_loopback_listener_owns_the_loopback_names_and_its_address_on_any_port() {
        let guard = guard("127.0.0.2:8080");
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1:9",
            "127.0.0.1",
            "[::1]",
            "[::1]:8080",
            "127.0.0.2:8080",
        ] {
            assert!(own_host(&guard, host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.3:8080",
            "::1",
            "[::2]:8080",
            "",
        ] {
            assert!(!own_host(&guard, host), "{host}");
        }
        assert!(own_host(&guard, "mcp.example"), "--allow-origin's host");
        assert!(own_host(&guard, "MCP.example:443"), "--allow-origin's host");
        assert!(own_host(&super::tests::guard("[::1]:80"), "[::1]:80"));
        assert!(own_host(&super::tests::guard("0.0.0.0:80"), "evil.example"));
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case_after_one_or_more_spaces() {
        for (header, token) in [
            ("Bearer abc", Some("abc")),
            ("bearer abc", Some("abc")),
            ("BEARER  abc", Some("abc")),
            ("Bearer", None),
            ("Bearer ", None),
            ("Basic abc", None),
            ("Bearerabc", None),
            ("Bearers abc", None),
        ] {
            assert_eq!(
                bearer_token(header.as_bytes()),
                token.map(str::as_bytes),
                "{header}"
            );
        }
    }
}
