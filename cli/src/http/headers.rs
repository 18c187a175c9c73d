//! What every HTTP part reads or strips of a message's headers: the
//! hop-by-hop ones, which stay on their hop, and the media type of a body.

use hyper::body::Bytes;
use hyper::header::{self, HeaderName};
use hyper::{HeaderMap, Response};

use crate::http::body::{ProxyBody, streamed};

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

/// A response from the upstream as the client gets it: without hop-by-hop headers,
/// its body streamed.
pub(crate) fn passed_through<B>(response: Response<B>) -> Response<ProxyBody>
where
    B: hyper::body::Body<Data = Bytes, Error = hyper::Error> + Send + 'static,
{
    let (mut parts, body) = response.into_parts();
    remove_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, streamed(body))
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

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
