//! The upstream: the `--upstream` URL read into an origin and an MCP endpoint,
//! and what opens connections to it (rustls for `https://`).

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
    /// The path of the URL: requests to it are read as MCP.
    endpoint: String,
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
    Ok(UpstreamUrl {
        scheme,
        authority,
        endpoint: uri.path().to_owned(),
        host,
    })
}

impl UpstreamUrl {
    pub(crate) fn is_https(&self) -> bool {
        self.scheme == Scheme::HTTPS
    }

    /// Whether a request to `path` is a request to the MCP endpoint.
    pub(crate) fn is_endpoint(&self, path: &str) -> bool {
        path == self.endpoint
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
        assert!(!upstream.is_endpoint("/v1/mcp/"));
        let path = PathAndQuery::from_static("/.well-known/oauth?x=1");
        assert_eq!(
            upstream.uri_for(Some(&path)),
            "https://mcp.example:8443/.well-known/oauth?x=1"
        );
        assert_eq!(upstream.host(), "mcp.example:8443");
        assert!(parse_upstream("http://h").unwrap().is_endpoint("/"));
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
