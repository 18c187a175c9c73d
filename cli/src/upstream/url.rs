//! The upstream: the `--upstream` URL read into an origin and an MCP endpoint,
//! and what opens connections to it (rustls for `https://`).
//!
//! A request is at the endpoint whenever the upstream's router could send it
//! there: its path, percent-decoded once (as Starlette routes) and compared
//! without regard to ASCII case (as Express routes), is the endpoint's or lies
//! under it (as axum's `nest_service` routes, which serves `/mcp/`, `/mcp/x`
//! and `/mcp/..` at `/mcp`), as it was sent or as a hop in front of the
//! upstream, or its server, may have rewritten it first: each segment's `;`
//! parameters removed (a servlet container maps `/mcp;x` to `/mcp`), runs of
//! `/` merged, dot segments removed, each `\` read as a `/`, or any of these
//! together (nginx forwards `//mcp`, `/./mcp` and `/x/../mcp` to the
//! endpoint, Cloudflare `/x\..\mcp` too). A path that any of
//! these readings puts at the endpoint is read as MCP: the proxy forwards the
//! path as it was sent and cannot tell which the upstream does. An endpoint
//! at the origin's root, `/`, is that path alone: every path lies under it,
//! and the rest of an origin (OAuth metadata, health checks) is not MCP. Why
//! this rule: docs/http.md, "Which requests are at the endpoint".

use std::time::Duration;

use hyper::Uri;
use hyper::header::HeaderValue;
use hyper::http::uri::{Authority, PathAndQuery, Scheme};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;

/// What `--upstream` says: where the server is, and the path of its MCP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UpstreamUrl {
    scheme: Scheme,
    authority: Authority,
    /// The path of the URL, as written: the spelling clients use.
    endpoint: String,
    /// The endpoint as paths are compared with it ([`comparable`]), without
    /// its trailing `/`: empty for the origin's root.
    endpoint_compared: Vec<u8>,
    /// The `Host` header the upstream gets.
    host: HeaderValue,
}

/// Reads `--upstream`: an `http://` or `https://` URL with a host; its path
/// (`/` when it has none) is the MCP endpoint.
pub(crate) fn parse_upstream(text: &str) -> Result<UpstreamUrl, String> {
    let uri: Uri = text
        .parse()
        .map_err(|error| format!("`{text}` is not a URL: {error}"))?;
    let scheme = uri
        .scheme()
        .filter(|scheme| **scheme == Scheme::HTTP || **scheme == Scheme::HTTPS)
        .ok_or_else(|| format!("`{text}`: the URL must start with http:// or https://"))?
        .clone();
    let authority = uri
        .authority()
        .ok_or_else(|| format!("`{text}` has no host"))?
        .clone();
    if uri.query().is_some() {
        return Err(format!(
            "`{text}`: the URL names the MCP endpoint, without a query"
        ));
    }
    let host = HeaderValue::from_str(authority.as_str()).expect("an authority is a header value");
    let mut endpoint_compared: Vec<u8> = comparable(uri.path()).collect();
    if endpoint_compared.last() == Some(&b'/') {
        endpoint_compared.pop();
    }
    Ok(UpstreamUrl {
        scheme,
        authority,
        endpoint: uri.path().to_owned(),
        endpoint_compared,
        host,
    })
}

impl UpstreamUrl {
    pub(crate) fn is_https(&self) -> bool {
        self.scheme == Scheme::HTTPS
    }

    /// Whether a request to `path` is a request to the MCP endpoint, in any
    /// spelling a router could send there, as sent or rewritten by a hop
    /// (the module's docs).
    pub(crate) fn is_endpoint(&self, path: &str) -> bool {
        // The spelling of nearly every request: nothing to decode.
        if path == self.endpoint {
            return true;
        }
        let decoded: Vec<u8> = comparable(path).collect();
        self.lies_under(&decoded)
            || HOP_REWRITES
                .iter()
                .any(|rewrite| self.lies_under(&rewrite.apply(&decoded)))
    }

    /// Whether `path` (decoded by [`comparable`]) is the endpoint or lies
    /// under it; for an endpoint at the root, whether it is `/`.
    fn lies_under(&self, path: &[u8]) -> bool {
        if self.endpoint_compared.is_empty() {
            return path == b"/";
        }
        path.starts_with(&self.endpoint_compared)
            && matches!(path.get(self.endpoint_compared.len()), None | Some(b'/'))
    }

    /// The upstream's URL for a request to `path_and_query` at the proxy.
    pub(crate) fn uri_for(&self, path_and_query: Option<&PathAndQuery>) -> Uri {
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path_and_query.map_or("/", PathAndQuery::as_str))
            .build()
            .expect("a scheme, an authority and a path make a URI")
    }

    /// What follows the origin in `url` (its path, query and fragment, maybe
    /// none) when `url` is an absolute URL at the upstream's origin: its
    /// scheme, and its host whatever its case, with the port the scheme
    /// implies written or not.
    pub(crate) fn after_origin<'a>(&self, url: &'a str) -> Option<&'a str> {
        let (scheme, rest) = url.split_once("://")?;
        if !scheme.eq_ignore_ascii_case(self.scheme.as_str()) {
            return None;
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, after) = rest.split_at(end);
        let authority: Authority = authority.parse().ok()?;
        let same_host = authority.host().eq_ignore_ascii_case(self.authority.host());
        let same_port = self.port_of(&authority) == self.port_of(&self.authority);
        (same_host && same_port).then_some(after)
    }

    /// The port `authority` names, or the one the upstream's scheme implies.
    fn port_of(&self, authority: &Authority) -> u16 {
        let implied = if self.is_https() { 443 } else { 80 };
        authority.port_u16().unwrap_or(implied)
    }

    /// The `Host` header the upstream gets.
    pub(crate) fn host(&self) -> &HeaderValue {
        &self.host
    }

    /// The endpoint's URL, for the log and for `notifications/cancelled`.
    pub(crate) fn endpoint_uri(&self) -> Uri {
        let path = PathAndQuery::try_from(self.endpoint.as_str()).ok();
        self.uri_for(path.as_ref())
    }
}

/// The bytes of `path` as the endpoint is compared with it: every
/// percent-escape decoded once, as uvicorn decodes a path before Starlette
/// routes it (`/%6dcp` is `/mcp`, `/v1%2fmcp` is `/v1/mcp`), and ASCII letters
/// in lower case, as Express routes (`/MCP` is `/mcp`).
fn comparable(path: &str) -> impl Iterator<Item = u8> + '_ {
    let mut rest = path.as_bytes();
    std::iter::from_fn(move || {
        let (&first, after) = rest.split_first()?;
        let escaped = match after {
            [high, low, ..] if first == b'%' => hex_value(*high).zip(hex_value(*low)),
            _ => None,
        };
        let byte = match escaped {
            Some((high, low)) => {
                rest = &after[2..];
                (high << 4) | low
            }
            None => {
                rest = after;
                first
            }
        };
        Some(byte.to_ascii_lowercase())
    })
}

/// How a hop in front of the upstream, or the upstream's server before its
/// router, may rewrite a path.
#[derive(Debug, Clone, Copy)]
struct HopRewrite {
    /// Each segment's parameters (from a `;`) removed, as a servlet
    /// container (Tomcat, Jetty) maps `/mcp;x` and `/x/..;/mcp` to `/mcp`.
    remove_parameters: bool,
    /// Runs of `/` merged into one: nginx's `merge_slashes`, Envoy's
    /// `merge_slashes`.
    merge_slashes: bool,
    /// The dot segments removed (RFC 3986, 5.2.4): nginx before a
    /// `proxy_pass` with a URI, Envoy's `normalize_path`.
    remove_dots: bool,
    /// Each `\` read as a `/`, as the WHATWG URL parser reads an `http`
    /// URL: Cloudflare's URL normalization (its default type), which also
    /// merges slashes and removes dot segments, so that `/x\..\mcp`
    /// reaches a Worker or an origin as `/mcp`.
    backslashes_as_slashes: bool,
}

/// Every rewrite a hop may make, each option alone and with the others: a
/// path is at the endpoint when any of them, or none, puts it there.
const HOP_REWRITES: [HopRewrite; 15] = {
    let mut rewrites = [HopRewrite {
        remove_parameters: false,
        merge_slashes: false,
        remove_dots: false,
        backslashes_as_slashes: false,
    }; 15];
    let mut options = 1;
    while options < 16 {
        rewrites[options - 1] = HopRewrite {
            remove_parameters: options & 1 != 0,
            merge_slashes: options & 2 != 0,
            remove_dots: options & 4 != 0,
            backslashes_as_slashes: options & 8 != 0,
        };
        options += 1;
    }
    rewrites
};

impl HopRewrite {
    /// `path` (decoded by [`comparable`]) as this rewrite forwards it:
    /// `/mcp;x` without parameters is `/mcp`; `//mcp` merged is `/mcp`;
    /// `/./mcp` and `/x/../mcp` without their dot segments are `/mcp`, a
    /// `..` at the root staying at the root; a `..` after `//` takes away the
    /// empty segment between them unless the slashes are merged first;
    /// `/x\..\mcp` with backslashes read as slashes is `/x/../mcp`.
    fn apply(self, path: &[u8]) -> Vec<u8> {
        let is_slash = |byte: &u8| *byte == b'/' || (self.backslashes_as_slashes && *byte == b'\\');
        let relative = match path.split_first() {
            Some((first, rest)) if is_slash(first) => rest,
            _ => path,
        };
        let mut segments: Vec<&[u8]> = Vec::new();
        let mut ends_in_a_directory = false;
        for segment in relative.split(is_slash) {
            let segment = match segment.iter().position(|byte| *byte == b';') {
                Some(parameters) if self.remove_parameters => &segment[..parameters],
                _ => segment,
            };
            let is_dot = self.remove_dots && matches!(segment, b"." | b"..");
            ends_in_a_directory = is_dot;
            match segment {
                b"." if self.remove_dots => {}
                b".." if self.remove_dots => drop(segments.pop()),
                b"" if self.merge_slashes => {}
                segment => segments.push(segment),
            }
        }
        ends_in_a_directory |= self.merge_slashes && path.last().is_some_and(is_slash);
        let mut rewritten = Vec::with_capacity(path.len() + 1);
        for segment in &segments {
            rewritten.push(b'/');
            rewritten.extend_from_slice(segment);
        }
        if rewritten.is_empty() || (ends_in_a_directory && !rewritten.ends_with(b"/")) {
            rewritten.push(b'/');
        }
        rewritten
    }
}

/// The value of hex digit `digit`, in either case.
fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .map(|value| u8::try_from(value).expect("a hex digit is below 16"))
}

/// What opens connections to the upstream: TCP, and TLS for `https://`.
pub(crate) type Connector = HttpsConnector<HttpConnector>;

/// How long a connection to the upstream may take to open (TCP, and not the
/// TLS handshake): Envoy's default. A server that takes longer is answered as
/// unreachable; a shorter `--tool-timeout` answers a `tools/call` first.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The connector for `upstream`: for `https://`, rustls with the platform's
/// root certificates (an error when none can be loaded); for `http://`, plain
/// TCP.
pub(crate) fn connector(upstream: &UpstreamUrl) -> std::io::Result<Connector> {
    let mut tcp = HttpConnector::new();
    // The TLS connector in front says which schemes go through.
    tcp.enforce_http(false);
    tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
    // A request or an event written in pieces on a kept-alive connection
    // would otherwise wait for the server's delayed ACK (40 ms on Linux)
    // before its last piece leaves.
    tcp.set_nodelay(true);
    let connector = if upstream.is_https() {
        HttpsConnectorBuilder::new()
            .with_native_roots()?
            .https_only()
            .enable_http1()
            .wrap_connector(tcp)
    } else {
        // No certificate is ever checked: no roots to load, which a container
        // without a certificate bundle could not do.
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp)
    };
    Ok(connector)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_of_the_url_is_the_endpoint_and_requests_keep_theirs() {
        let upstream = parse_upstream("https://mcp.example:8443/v1/mcp").unwrap();
        assert!(upstream.is_https());
        assert!(upstream.is_endpoint("/v1/mcp"));
        let path = PathAndQuery::from_static("/.well-known/oauth?x=1");
        assert_eq!(
            upstream.uri_for(Some(&path)),
            "https://mcp.example:8443/.well-known/oauth?x=1"
        );
        assert_eq!(upstream.host(), "mcp.example:8443");
        assert!(parse_upstream("http://h").unwrap().is_endpoint("/"));
    }

    #[test]
    fn the_endpoint_is_any_spelling_a_router_sends_there_and_nothing_beside_it() {
        let upstream = parse_upstream("http://h/v1/mcp").unwrap();
        // axum's nest_service, Express, Starlette (uvicorn decodes the path).
        let routed = [
            "/v1/mcp/",
            "/v1/mcp/x",
            "/v1/mcp//",
            "/V1/MCP",
            "/v1/Mcp/",
            "/v1/%6dcp",
            "/v1/%4DCP",
            "/v1%2fmcp",
            "/%76%31/mcp",
            // Under the endpoint as sent, which a router by prefix serves,
            // whatever a hop would make of the dots.
            "/v1/mcp/..",
            "/v1/mcp/../x",
            "/v1/mcp/%2e%2e",
            "/v1/mcp/%2E%2E/",
            "/v1/mcp/x/../..",
            // As a hop that merges slashes, removes dot segments, or both,
            // forwards them.
            "/v1//mcp",
            "//v1/mcp",
            "//v1/mcp/..",
            "/./v1/mcp",
            "/v1/./mcp",
            "/x/../v1/mcp",
            "/../v1/mcp",
            "/v1/%2e/mcp",
            "/v1/x/%2E%2E/mcp",
            "/v1/mcp/.",
            "/v1/x//../../mcp",
            // As a servlet container maps them, its path parameters removed.
            "/v1/mcp;x",
            "/v1/mcp;jsessionid=1/x",
            "/v1;a/mcp",
            "/v1/x/..;/mcp",
            // As Cloudflare's normalization forwards them, a `\\` read as a
            // `/` (the WHATWG URL parser's reading).
            "/x\\..\\v1\\mcp",
            "/v1/x/..\\mcp",
            "/v1\\mcp",
            "/v1\\\\mcp",
            "/v1/mcp\\x",
            "\\v1/mcp",
        ];
        for path in routed {
            assert!(upstream.is_endpoint(path), "{path} is not the endpoint");
        }
        let beside = [
            "/v1/mcpx",
            "/v1/mc",
            "/v1/mcp%2",
            "/v1/mcpx;x",
            "/v1/mcp.",
            "/v1/mc%2570",
            "/v1/mcpx/..",
            "/v1/x/../mcpx",
            "/v1",
            "/",
            "/mcp",
            "/x/v1/mcp",
            "/x//v1/mcp",
            "/x\\v1\\mcp",
            "/v1\\mcpx",
        ];
        for path in beside {
            assert!(!upstream.is_endpoint(path), "{path} is the endpoint");
        }
        let with_slash = parse_upstream("http://h/mcp/").unwrap();
        assert!(with_slash.is_endpoint("/mcp") && with_slash.is_endpoint("/MCP/x"));
        assert!(!with_slash.is_endpoint("/mcpx"));
        // Everything lies under the root: only `/` is it.
        let root = parse_upstream("http://h").unwrap();
        assert!(root.is_endpoint("/"));
        assert!(root.is_endpoint("//") && root.is_endpoint("/x/.."));
        assert!(!root.is_endpoint("/x") && !root.is_endpoint("/x/"));
    }

    /// A rule that changes must keep every spelling the rules before it
    /// caught: the prefix rule (the path decoded, in lower case, is the
    /// endpoint or lies under it) and the rule of the normalized path (the
    /// same after merging slashes and removing dot segments), which let
    /// `/mcp/..` out.
    #[test]
    fn every_spelling_an_earlier_rule_caught_is_still_the_endpoint() {
        let caught_by_the_prefix_rule = [
            "/mcp/",
            "/MCP",
            "/Mcp/",
            "/%6dcp",
            "/m%63p",
            "/mcp//",
            "/mcp/x",
            "/mcp/.",
            "/mcp/..",
            "/mcp/../x",
            "/mcp/%2e%2e",
            "/mcp/%2E%2E/",
            "/mcp/x/../..",
            "/mcp%2f",
            "/mcp%2f..",
        ];
        let caught_by_the_normalized_path = [
            "/mcp/",
            "/MCP",
            "/%6dcp",
            "/mcp//",
            "/mcp/x",
            "/mcp/.",
            "//mcp",
            "/./mcp",
            "/x/../mcp",
            "/x/%2e%2e/mcp",
            "/../mcp",
            "/x/..%2fmcp",
        ];
        let upstream = parse_upstream("http://h/mcp").unwrap();
        for path in caught_by_the_prefix_rule
            .iter()
            .chain(&caught_by_the_normalized_path)
        {
            assert!(upstream.is_endpoint(path), "{path} is not the endpoint");
        }
        let nested = parse_upstream("http://h/v1/mcp").unwrap();
        for path in ["/v1/mcp/..", "/v1/mcp/../x", "/v1//mcp", "/v1/x/../mcp"] {
            assert!(nested.is_endpoint(path), "{path} is not the endpoint");
        }
    }

    #[test]
    fn urls_at_the_upstreams_origin_are_told_from_others() {
        let upstream = parse_upstream("http://Upstream.example/mcp").unwrap();
        for (url, after) in [
            ("http://upstream.example/mcp", Some("/mcp")),
            ("HTTP://UPSTREAM.EXAMPLE:80/a?b#c", Some("/a?b#c")),
            ("http://upstream.example", Some("")),
            ("http://upstream.example?x", Some("?x")),
            ("https://upstream.example/mcp", None),
            ("http://upstream.example:8080/mcp", None),
            ("http://upstream.example.evil/mcp", None),
            ("http://other.example/mcp", None),
            ("/mcp", None),
            ("//upstream.example/mcp", None),
        ] {
            assert_eq!(upstream.after_origin(url), after, "{url}");
        }
        let tls = parse_upstream("https://127.0.0.1:8443/mcp").unwrap();
        assert_eq!(tls.after_origin("https://127.0.0.1:8443/x"), Some("/x"));
        assert_eq!(tls.after_origin("https://127.0.0.1/x"), None);
    }

    #[test]
    fn urls_without_an_http_scheme_or_a_host_are_refused() {
        for wrong in [
            "ftp://h/mcp",
            "/mcp",
            "h:80",
            "http://h/mcp?x=1",
            "not a url",
        ] {
            assert!(parse_upstream(wrong).is_err(), "{wrong:?} was accepted");
        }
    }
}
