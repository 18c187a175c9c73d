//! The headers of a forwarded exchange: hop-by-hop headers stay on their hop,
//! the upstream gets its own `Host`, and learns the client's address and the
//! host it asked for through `Forwarded` and `X-Forwarded-For`: after what
//! earlier proxies wrote there, or, at the edge (`--forwarded replace`), in
//! place of what the client wrote. A `Location` or `Content-Location` the
//! upstream points at its own origin points the client at the proxy.

use std::net::{IpAddr, SocketAddr};

use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{HeaderMap, Response};

use crate::http::body::{ProxyBody, streamed};
use crate::http::client::UpstreamBody;
use crate::http::upstream::UpstreamUrl;

/// The headers that belong to one connection (RFC 9110 section 7.6.1), besides
/// those that `Connection` names.
/// Names, not strings: a name given as a string is parsed again at every
/// lookup.
const HOP_BY_HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    HeaderName::from_static("proxy-connection"),
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
];

/// Removes the hop-by-hop headers, and `Upgrade`: the proxy upgrades nothing.
pub(crate) fn remove_hop_by_hop(headers: &mut HeaderMap) {
    // Most messages hold none: the few names there are compared first.
    let is_hop_by_hop = |name: &HeaderName| HOP_BY_HOP.contains(name) || name == header::UPGRADE;
    if !headers.keys().any(is_hop_by_hop) {
        return;
    }
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
    headers.remove(header::UPGRADE);
}

/// The client of a connection, as `Forwarded` and `X-Forwarded-For` name it:
/// written once per connection, not for each request.
#[derive(Debug)]
pub(crate) struct Client {
    /// `for=` and the address, as RFC 7239 writes it.
    forwarded_for: String,
    /// The address, as `X-Forwarded-For` lists it.
    address: HeaderValue,
}

impl Client {
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
}

/// What becomes of the `Forwarded` and `X-Forwarded-For` headers a client
/// sent (`--forwarded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ForwardedHeaders {
    /// The client's address goes after them: behind a load balancer, which
    /// wrote them.
    #[default]
    Append,
    /// They are dropped, and the client's address is all they say: at the
    /// edge, where any client could write them.
    Replace,
}

/// The headers of a request as the upstream gets them: hop-by-hop ones removed,
/// `Host` the upstream's, the `client`'s address added to `Forwarded` and
/// `X-Forwarded-For` (after what earlier proxies wrote there, or in place of
/// it, as `forwarded` says). Returns the `Host` the client sent, for
/// [`locations_to_client`].
pub(crate) fn for_upstream(
    headers: &mut HeaderMap,
    client: &Client,
    upstream_host: &HeaderValue,
    forwarded_headers: ForwardedHeaders,
) -> Option<HeaderValue> {
    remove_hop_by_hop(headers);
    if forwarded_headers == ForwardedHeaders::Replace {
        headers.remove(header::FORWARDED);
        headers.remove(X_FORWARDED_FOR);
    }
    let mut forwarded = String::with_capacity(64);
    forwarded.push_str(&client.forwarded_for);
    if let Some(host) = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
    {
        // Quoted: a host with a port holds `:`, which a token cannot.
        forwarded.push_str(";host=\"");
        forwarded.extend(host.chars().filter(|c| !matches!(c, '"' | '\\')));
        forwarded.push('"');
    }
    forwarded.push_str(";proto=http");
    append(headers, header::FORWARDED, &forwarded);
    let address = client.address.to_str().expect("written from an address");
    append(headers, X_FORWARDED_FOR, address);
    headers.insert(header::HOST, upstream_host.clone())
}

/// Points a response's `Location` and `Content-Location` at the origin the
/// client asked for (`http://`, the scheme the proxy serves, and the `Host`
/// it sent) where they point at the `upstream`'s, as nginx's
/// `proxy_redirect default` does: a client sent to the upstream itself would
/// skip the proxy, or not reach it at all (the Python SDK answers `/mcp/`
/// with a `307` to `http://<its own address>/mcp`). Relative ones, and those
/// at other origins, are kept; so are all when the `Host` is no authority.
pub(crate) fn locations_to_client(
    headers: &mut HeaderMap,
    upstream: &UpstreamUrl,
    client_host: &HeaderValue,
) {
    for name in [header::LOCATION, header::CONTENT_LOCATION] {
        let header::Entry::Occupied(mut entry) = headers.entry(name) else {
            continue;
        };
        for value in entry.iter_mut() {
            if let Some(at_client) = at_client_origin(value, upstream, client_host) {
                *value = at_client;
            }
        }
    }
}

/// The URL in `value` at the client's origin, if it is at the upstream's.
fn at_client_origin(
    value: &HeaderValue,
    upstream: &UpstreamUrl,
    client_host: &HeaderValue,
) -> Option<HeaderValue> {
    let after_origin = upstream.after_origin(value.to_str().ok()?)?;
    let client_host = client_host.to_str().ok()?;
    let is_authority = client_host.parse::<hyper::http::uri::Authority>().is_ok();
    if !is_authority || client_host.contains('@') {
        return None;
    }
    HeaderValue::from_str(&format!("http://{client_host}{after_origin}")).ok()
}

/// `X-Forwarded-For`.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// Adds `value` to the list in header `name`, after the values already there.
fn append(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    let earlier: Vec<&str> = headers
        .get_all(&name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    let list = if earlier.is_empty() {
        HeaderValue::from_str(value)
    } else {
        HeaderValue::from_str(&format!("{}, {value}", earlier.join(", ")))
    };
    if let Ok(list) = list {
        headers.insert(name, list);
    }
}

/// What a response's `Content-Type` says its body is, as far as the proxy
/// tells bodies apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MediaType {
    /// `text/event-stream`.
    EventStream,
    /// `application/json`.
    Json,
    /// Anything else, or no `Content-Type`.
    Other,
}

/// The media type of a response, whatever its case and parameters.
pub(crate) fn media_type(headers: &HeaderMap) -> MediaType {
    let Some(content_type) = headers.get(header::CONTENT_TYPE) else {
        return MediaType::Other;
    };
    let essence = content_type
        .as_bytes()
        .split(|byte| *byte == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if essence.eq_ignore_ascii_case(b"text/event-stream") {
        MediaType::EventStream
    } else if essence.eq_ignore_ascii_case(b"application/json") {
        MediaType::Json
    } else {
        MediaType::Other
    }
}

/// The upstream's response as the client gets it: without hop-by-hop headers,
/// its body streamed.
pub(crate) fn passed_through(response: Response<UpstreamBody>) -> Response<ProxyBody> {
    let (mut parts, body) = response.into_parts();
    remove_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, streamed(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_removed() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "connection",
            HeaderValue::from_static("keep-alive, X-Private"),
        );
        headers.insert("x-private", HeaderValue::from_static("1"));
        headers.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        headers.insert("authorization", HeaderValue::from_static("Bearer t"));
        headers.insert("mcp-session-id", HeaderValue::from_static("s"));
        remove_hop_by_hop(&mut headers);
        let mut names: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["authorization", "mcp-session-id"]);
    }

    #[test]
    fn the_client_is_added_after_earlier_proxies_and_host_becomes_the_upstreams() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("proxy.example:8080"));
        headers.insert("x-forwarded-for", HeaderValue::from_static("203.0.113.9"));
        let client = Client::new("[::1]:5000".parse().unwrap());
        for_upstream(
            &mut headers,
            &client,
            &HeaderValue::from_static("upstream:9000"),
            ForwardedHeaders::Append,
        );
        assert_eq!(headers["host"], "upstream:9000");
        assert_eq!(headers["x-forwarded-for"], "203.0.113.9, ::1");
        assert_eq!(
            headers["forwarded"],
            "for=\"[::1]\";host=\"proxy.example:8080\";proto=http"
        );
        let mut first_proxy = HeaderMap::new();
        let client = Client::new("192.0.2.7:5000".parse().unwrap());
        for_upstream(
            &mut first_proxy,
            &client,
            &HeaderValue::from_static("u"),
            ForwardedHeaders::Append,
        );
        assert_eq!(first_proxy["x-forwarded-for"], "192.0.2.7");
        assert_eq!(first_proxy["forwarded"], "for=192.0.2.7;proto=http");
    }

    #[test]
    fn at_the_edge_what_the_client_wrote_is_replaced_by_its_address() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("proxy.example"));
        headers.append("x-forwarded-for", HeaderValue::from_static("10.0.0.1"));
        headers.append("x-forwarded-for", HeaderValue::from_static("10.0.0.2"));
        headers.insert("forwarded", HeaderValue::from_static("for=10.0.0.1"));
        let client = Client::new("192.0.2.7:5000".parse().unwrap());
        for_upstream(
            &mut headers,
            &client,
            &HeaderValue::from_static("u"),
            ForwardedHeaders::Replace,
        );
        let all = |name: &str| -> Vec<&str> {
            headers
                .get_all(name)
                .iter()
                .map(|value| value.to_str().unwrap())
                .collect()
        };
        assert_eq!(all("x-forwarded-for"), ["192.0.2.7"]);
        assert_eq!(
            all("forwarded"),
            ["for=192.0.2.7;host=\"proxy.example\";proto=http"]
        );
    }

    #[test]
    fn locations_at_the_upstreams_origin_point_at_the_clients_and_others_are_kept() {
        let upstream = crate::http::upstream::parse_upstream("http://10.0.0.5:9000/mcp").unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            "location",
            HeaderValue::from_static("http://10.0.0.5:9000/mcp?a#b"),
        );
        headers.append(
            "content-location",
            HeaderValue::from_static("http://10.0.0.5:9000"),
        );
        headers.append("content-location", HeaderValue::from_static("/mcp/x"));
        headers.append(
            "content-location",
            HeaderValue::from_static("http://auth.example/mcp"),
        );
        locations_to_client(
            &mut headers,
            &upstream,
            &HeaderValue::from_static("proxy.example:8080"),
        );
        assert_eq!(headers["location"], "http://proxy.example:8080/mcp?a#b");
        let content_locations: Vec<&HeaderValue> =
            headers.get_all("content-location").iter().collect();
        assert_eq!(
            content_locations,
            [
                "http://proxy.example:8080",
                "/mcp/x",
                "http://auth.example/mcp"
            ]
        );

        for not_an_authority in ["user@proxy.example", "proxy.example/x", "proxy example"] {
            let mut headers = HeaderMap::new();
            headers.insert(
                "location",
                HeaderValue::from_static("http://10.0.0.5:9000/mcp"),
            );
            let host = HeaderValue::from_static(not_an_authority);
            locations_to_client(&mut headers, &upstream, &host);
            assert_eq!(
                headers["location"], "http://10.0.0.5:9000/mcp",
                "{not_an_authority}"
            );
        }
    }

    #[test]
    fn the_media_type_is_read_whatever_its_case_spaces_and_parameters() {
        let of = |content_type: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            media_type(&headers)
        };
        assert_eq!(of("text/event-stream"), MediaType::EventStream);
        assert_eq!(
            of(" Text/Event-Stream ; charset=utf-8"),
            MediaType::EventStream
        );
        assert_eq!(of("application/json"), MediaType::Json);
        assert_eq!(of("APPLICATION/JSON;charset=UTF-8"), MediaType::Json);
        assert_eq!(of("application/json-seq"), MediaType::Other);
        assert_eq!(of("text/html"), MediaType::Other);
        assert_eq!(media_type(&HeaderMap::new()), MediaType::Other);
    }
}
