//! Answers a server compresses although the proxy asked for none: `gzip` and
//! `deflate` (zlib, or raw deflate) decoded before the layer reads them, in a
//! JSON body and in an event stream, and sent on decoded, without
//! `Content-Encoding`; any other encoding passed through untouched, and
//! logged. The client never gets a body its headers do not describe.
//!
//! Each test runs on both paths: a call of `direct` (a direct call) and of
//! `timed` (under `--tool-timeout-for`: an exchange).

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use flate2::Compression;
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_tool_errors::render_error;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::support::{Events, Proxy, Reply, Upstream, body, error_result, event_data, tool_call};

/// The tools of both paths.
const TOOLS: [&str; 2] = ["direct", "timed"];

async fn proxy(upstream: &str) -> Proxy {
    Proxy::start(upstream, &["--tool-timeout-for", "timed=30s"]).await
}

/// The encodings the proxy decodes: the `Content-Encoding` value, and how
/// the server wrote it.
const ENCODINGS: [(&str, &str); 3] = [("gzip", "gzip"), ("deflate", "zlib"), ("deflate", "raw")];

/// `bytes` written as `format` (`gzip`, `zlib` or `raw` deflate), flushed
/// after each of `pieces` as a server flushes each event of a stream.
fn encoded(format: &str, pieces: &[&[u8]]) -> Vec<u8> {
    fn write<W: Write>(mut encoder: W, pieces: &[&[u8]]) -> W {
        for piece in pieces {
            encoder.write_all(piece).unwrap();
            encoder.flush().unwrap();
        }
        encoder
    }
    let level = Compression::default();
    match format {
        "gzip" => write(GzEncoder::new(Vec::new(), level), pieces).finish(),
        "zlib" => write(ZlibEncoder::new(Vec::new(), level), pieces).finish(),
        _ => write(DeflateEncoder::new(Vec::new(), level), pieces).finish(),
    }
    .unwrap()
}

/// `200` with `content_type`, `Content-Encoding: encoding`, and `body`
/// (sent whole, with its `Content-Length`).
fn encoded_reply(content_type: &str, encoding: &str, body: Vec<u8>) -> Reply {
    Reply::Whole(
        StatusCode::OK,
        vec![
            ("content-type", content_type.to_owned()),
            ("content-encoding", encoding.to_owned()),
        ],
        body,
    )
}

/// What the client reads of the headers: no `Content-Encoding`, and a
/// `Content-Length`, if any, that is the body's.
async fn decoded_body(response: Response<Incoming>, what: &str) -> Bytes {
    assert_eq!(response.status(), StatusCode::OK, "{what}");
    assert_eq!(response.headers().get("content-encoding"), None, "{what}");
    let length = response.headers().get("content-length").cloned();
    let bytes = body(response).await;
    if let Some(length) = length {
        assert_eq!(length.to_str().unwrap(), bytes.len().to_string(), "{what}");
    }
    bytes
}

/// The `id` of a request the upstream received.
fn id(request: &crate::support::Received) -> u64 {
    request.json()["id"].as_u64().unwrap_or_default()
}

#[tokio::test]
async fn a_compressed_json_answer_is_decoded_rewrapped_and_sent_without_its_encoding() {
    // Request `id` is answered in encoding `(id - 1) / 2`.
    let upstream = Upstream::start(|request| {
        let id = id(request);
        let (encoding, format) = ENCODINGS[(id as usize - 1) / 2];
        let answer = error_result(id, "boom");
        encoded_reply(
            "application/json",
            encoding,
            encoded(format, &[answer.as_bytes()]),
        )
    })
    .await;
    let proxy = proxy(&upstream.url()).await;

    for (id, tool) in (1..=6).zip(TOOLS.iter().cycle()) {
        let what = format!("{tool} in {:?}", ENCODINGS[(id as usize - 1) / 2]);

        let bytes = decoded_body(proxy.post(&tool_call(id, tool), &[]).await, &what).await;

        let answer: Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            render_error(tool, "boom"),
            "{what}"
        );
    }
}

#[tokio::test]
async fn a_compressed_answer_the_layer_leaves_alone_is_the_servers_bytes_decoded() {
    let success = "{ \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"caf\\u00e9\"}]}, \"id\":ID,\"jsonrpc\":\"2.0\" }";
    let upstream = Upstream::start(move |request| {
        let answer = success.replace("ID", &id(request).to_string());
        encoded_reply(
            "application/json",
            "gzip",
            encoded("gzip", &[answer.as_bytes()]),
        )
    })
    .await;
    let proxy = proxy(&upstream.url()).await;

    for (id, tool) in (1..).zip(TOOLS) {
        let bytes = decoded_body(proxy.post(&tool_call(id, tool), &[]).await, tool).await;

        assert_eq!(bytes, success.replace("ID", &id.to_string()), "{tool}");
    }
}

/// A progress event and the `isError` answer to `id`, each ending with
/// `ending`.
fn event_stream(id: u64, ending: &str) -> [String; 2] {
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
    [
        format!("id: 1{ending}data: {progress}{ending}{ending}"),
        format!(
            "id: 2{ending}data: {}{ending}{ending}",
            error_result(id, "boom")
        ),
    ]
}

#[tokio::test]
async fn a_compressed_event_stream_is_decoded_and_its_answer_rewrapped() {
    let upstream = Upstream::start(|request| {
        let id = id(request);
        let (encoding, format) = ENCODINGS[(id as usize - 1) / 2];
        let [progress, answer] = event_stream(id, "\n");
        let body = encoded(format, &[progress.as_bytes(), answer.as_bytes()]);
        encoded_reply("text/event-stream", encoding, body)
    })
    .await;
    let proxy = proxy(&upstream.url()).await;

    for (id, tool) in (1..=6).zip(TOOLS.iter().cycle()) {
        let what = format!("{tool} in {:?}", ENCODINGS[(id as usize - 1) / 2]);
        let response = proxy.post(&tool_call(id, tool), &[]).await;
        assert_eq!(response.headers().get("content-encoding"), None, "{what}");
        let mut events = Events::new(response);

        let progress = events.next().await.expect("the progress event");
        assert_eq!(progress, event_stream(id, "\n")[0], "{what}");
        let answer = event_data(&events.next().await.expect("the answer"));
        assert_eq!(
            answer["result"]["content"][0]["text"],
            render_error(tool, "boom"),
            "{what}"
        );
        assert_eq!(events.next().await, None, "{what}");
    }
}

/// An upstream on 127.0.0.1 that answers every request with `200`,
/// `Content-Type: text/event-stream`, `Content-Encoding: encoding`, and the
/// chunks that `stream` gives for the request's id as they come.
async fn streaming_upstream(
    encoding: &'static str,
    stream: impl Fn(u64) -> mpsc::UnboundedReceiver<Vec<u8>> + Clone + Send + Sync + 'static,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((connection, _)) = listener.accept().await {
            let stream = stream.clone();
            let service = service_fn(move |request: Request<Incoming>| {
                let stream = stream.clone();
                async move {
                    let bytes = request.into_body().collect().await.unwrap().to_bytes();
                    let message: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                    let chunks = Chunks(stream(message["id"].as_u64().unwrap_or_default()));
                    let response = Response::builder()
                        .header("content-type", "text/event-stream")
                        .header("content-encoding", encoding)
                        .body(chunks)
                        .unwrap();
                    Ok::<_, Infallible>(response)
                }
            });
            let connection =
                http1::Builder::new().serve_connection(TokioIo::new(connection), service);
            tokio::spawn(connection);
        }
    });
    address
}

/// A body written from a channel's chunks, until the channel ends.
struct Chunks(mpsc::UnboundedReceiver<Vec<u8>>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|chunk| Ok(Frame::data(Bytes::from(chunk)))))
    }
}

#[tokio::test]
async fn a_compressed_answer_event_goes_out_as_its_bytes_come_while_the_stream_stays_open() {
    // Each event flushed as it is written, as a server that compresses a
    // stream must; the stream stays open after the answer.
    let (open, mut streams) = mpsc::unbounded_channel();
    let address = streaming_upstream("gzip", move |id| {
        let (chunks, receiver) = mpsc::unbounded_channel();
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        for event in event_stream(id, "\r") {
            encoder.write_all(event.as_bytes()).unwrap();
            encoder.flush().unwrap();
            let _ = chunks.send(std::mem::take(encoder.get_mut()));
        }
        let _ = open.send((chunks, encoder));
        receiver
    })
    .await;
    let proxy = proxy(&format!("http://{address}/mcp")).await;

    for (id, tool) in (1..).zip(TOOLS) {
        let response = proxy.post(&tool_call(id, tool), &[]).await;
        assert_eq!(response.headers().get("content-encoding"), None, "{tool}");
        let mut body = response.into_body();
        let mut stream = Vec::new();
        let answer = tokio::time::timeout(Duration::from_secs(2), async {
            loop {
                let frame = body.frame().await.expect("a frame").expect("no error");
                stream.extend_from_slice(&frame.into_data().unwrap_or_default());
                if let Some(answer) = answer_event(&stream) {
                    return answer;
                }
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{tool}: no answer in {:?}",
                String::from_utf8_lossy(&stream)
            )
        });
        assert_eq!(
            answer["result"]["content"][0]["text"],
            render_error(tool, "boom"),
            "{tool}"
        );
        assert!(streams.recv().await.is_some(), "the stream is still open");
    }
}

/// The message of the answer event in `stream` (events ending with `\r\r`).
fn answer_event(stream: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(stream).ok()?;
    text.split("\r\r")
        .filter_map(|event| {
            event
                .split('\r')
                .find_map(|line| line.strip_prefix("data: "))
        })
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|message| message.get("result").is_some())
}

#[tokio::test]
async fn an_answer_in_another_encoding_passes_through_untouched_and_is_logged() {
    let not_decoded = b"\x1b\x00\xf8\xa5 (brotli, or anything)".to_vec();
    let sent = not_decoded.clone();
    let upstream = Upstream::start(move |request| {
        let content_type = match id(request) % 2 {
            1 => "application/json",
            _ => "text/event-stream",
        };
        encoded_reply(content_type, "br", sent.clone())
    })
    .await;
    let proxy = proxy(&upstream.url()).await;

    for (id, tool) in (1..=4).zip(TOOLS.iter().cycle()) {
        let response = proxy.post(&tool_call(id, tool), &[]).await;

        assert_eq!(response.headers()["content-encoding"], "br", "{tool} {id}");
        assert_eq!(
            response.headers()["content-length"],
            not_decoded.len().to_string().as_str(),
            "{tool} {id}"
        );
        assert_eq!(body(response).await, not_decoded, "{tool} {id}");
    }
    let log = proxy.log();
    let logged = "an answer in a Content-Encoding the proxy does not decode (br)";
    // Four within a second: one line.
    assert_eq!(log.matches(logged).count(), 1, "{log}");
}

#[tokio::test]
async fn a_small_compressed_answer_that_decodes_past_the_cap_is_too_large() {
    let too_large = "The server sent a message larger than 16 MiB, the most the proxy reads.";
    let upstream = Upstream::start(|request| {
        let id = id(request);
        let text = "a".repeat(17 * 1024 * 1024);
        let answer = error_result(id, &text);
        match id % 2 {
            1 => encoded_reply(
                "application/json",
                "gzip",
                encoded("gzip", &[answer.as_bytes()]),
            ),
            _ => {
                let event = format!("data: {answer}\n\n");
                encoded_reply(
                    "text/event-stream",
                    "gzip",
                    encoded("gzip", &[event.as_bytes()]),
                )
            }
        }
    })
    .await;
    let proxy = proxy(&upstream.url()).await;

    for (id, tool) in (1..=4).zip(TOOLS.iter().cycle()) {
        let bytes = decoded_body(proxy.post(&tool_call(id, tool), &[]).await, tool).await;

        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
        assert!(bytes.len() < 4096, "{tool} {id}: {shown}");
        assert!(shown.contains(too_large), "{tool} {id}: {shown}");
    }
}

#[tokio::test]
async fn a_body_that_is_not_what_its_encoding_says_is_a_body_cut_short() {
    let closed = "The server closed the connection before answering.";
    let upstream = Upstream::start(|request| {
        let id = id(request);
        let content_type = match id % 2 {
            1 => "application/json",
            _ => "text/event-stream",
        };
        // Plain text where gzip is announced.
        let answer = format!("data: {}\n\n", error_result(id, "boom"));
        encoded_reply(content_type, "gzip", answer.into_bytes())
    })
    .await;
    let proxy = proxy(&upstream.url()).await;

    for (id, tool) in (1..=4).zip(TOOLS.iter().cycle()) {
        let bytes = decoded_body(proxy.post(&tool_call(id, tool), &[]).await, tool).await;

        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains(closed), "{tool} {id}: {text}");
        assert!(!text.contains("boom"), "{tool} {id}: {text}");
    }
}

#[tokio::test]
async fn a_compressed_get_stream_is_decoded_and_an_answer_on_it_rewritten() {
    let upstream = Upstream::start(|request| match request.method.as_str() {
        "POST" => Reply::json(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#),
        _ => {
            let event = format!("id: e2\ndata: {}\n\n", error_result(7, "exit status 2"));
            encoded_reply(
                "text/event-stream",
                "gzip",
                encoded("gzip", &[event.as_bytes()]),
            )
        }
    })
    .await;
    let proxy = proxy(&upstream.url()).await;
    let session = [("mcp-session-id", "s-1")];
    body(proxy.post(&tool_call(7, "build"), &session).await).await;

    let get = Request::get("/mcp")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", "s-1")
        .header("accept-encoding", "gzip")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = proxy.send(get).await;

    assert_eq!(response.headers().get("content-encoding"), None);
    let event = Events::new(response).next().await.expect("the event");
    assert_eq!(
        event_data(&event)["result"]["content"][0]["text"],
        render_error("build", "exit status 2")
    );
}
