//! What the upstream learns of the client, and the client of the upstream's
//! origin: the upstream gets its own `Host`, and learns the client's address and the
//! host it asked for through `Forwarded` and `X-Forwarded-For`: after what
//! earlier proxies wrote there, or, at the edge (`--forwarded replace`), in
//! place of what the client wrote. A `Location` or `Content-Location` the
//! upstream points at its own origin points the client at the proxy.

use hyper::HeaderMap;
use hyper::header::{self, HeaderName, HeaderValue};

use crate::http::headers::remove_hop_by_hop;
use crate::http::peer::Peer;
use crate::upstream::url::UpstreamUrl;

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
/// `Host` the upstream's, the `peer`'s address added to `Forwarded` and
/// `X-Forwarded-For` (after what earlier proxies wrote there, or in place of
/// it, as `forwarded` says). Returns the `Host` the client sent, for
/// [`locations_to_client`].
pub(crate) fn for_upstream(
    headers: &mut HeaderMap,
    peer: &Peer,
    upstream_host: &HeaderValue,
    forwarded_headers: ForwardedHeaders,
) -> Option<HeaderValue> {
    remove_hop_by_hop(headers);
    if forwarded_headers == ForwardedHeaders::Replace {
        headers.remove(header::FORWARDED);
        headers.remove(X_FORWARDED_FOR);
    }
    let mut forwarded = String::with_capacity(64);
    forwarded.push_str(peer.forwarded_for());
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
    let address = peer.address().to_str().expect("written from an address");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_added_after_earlier_proxies_and_host_becomes_the_upstreams() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("proxy.example:8080"));
        headers.insert("x-forwarded-for", HeaderValue::from_static("203.0.113.9"));
        let client = Peer::new("[::1]:5000".parse().unwrap());
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
        let client = Peer::new("192.0.2.7:5000".parse().unwrap());
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
        let client = Peer::new("192.0.2.7:5000".parse().unwrap());
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
        let upstream = crate::upstream::url::parse_upstream("http://10.0.0.5:9000/mcp").unwrap();
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
}
