//! A request body at the MCP endpoint is read whole in either HTTP mode, by
//! one rule: past 16 MiB it is refused `413` with the log line `refused a
//! request of more than 16777216 bytes`, and a body that breaks off is
//! answered `400` with no body; neither reaches the server. The real binary
//! on 127.0.0.1, its requests written byte by byte; every wait is bounded.

use std::net::SocketAddr;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::bridge::{Bridge, child};
use crate::support::{Proxy, Reply, Upstream, bounded, tool_call};

/// The bound on a request body, in bytes.
const BOUND: usize = 16 * 1024 * 1024;

/// The log line of a body past the bound.
const REFUSED: &str = "refused a request of more than 16777216 bytes";

/// `head` (its lines, without the blank line that ends it) and `body` written
/// to `address` as one `POST /mcp`, the writing side then shut when `shut`;
/// what the client reads back, to the end of the connection, or, while its
/// writing side is open, to the end of the answer's head (an answer here has
/// no body but the one `status_and_body` reads after it).
async fn exchange(address: SocketAddr, head: &[String], body: &[u8], shut: bool) -> String {
    bounded("the answer", async {
        let mut stream = TcpStream::connect(address).await.expect("a connection");
        let (mut reading, mut writing) = stream.split();
        let mut request = head.join("\r\n").into_bytes();
        request.extend_from_slice(b"\r\n\r\n");
        request.extend_from_slice(body);
        let write = async {
            // The server may end its side once it has answered: what it
            // no longer reads is not this test's concern.
            let _ = writing.write_all(&request).await;
            if shut {
                let _ = writing.shutdown().await;
            }
        };
        let mut answer = Vec::new();
        let read = async {
            let mut buffer = [0; 4096];
            loop {
                match reading.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(read) => answer.extend_from_slice(&buffer[..read]),
                }
                if !shut && answer.windows(4).any(|window| window == b"\r\n\r\n") {
                    break;
                }
            }
        };
        // The answer read, what is left of the body is not sent.
        tokio::select! {
            () = async { write.await; std::future::pending::<()>().await } => {}
            () = read => {}
        }
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
}

/// The head of a `POST /mcp` to `address` whose body has `length` bytes.
fn post_head(address: SocketAddr, length: usize) -> Vec<String> {
    vec![
        "POST /mcp HTTP/1.1".to_owned(),
        format!("Host: {address}"),
        "Content-Type: application/json".to_owned(),
        "Accept: application/json, text/event-stream".to_owned(),
        format!("Content-Length: {length}"),
    ]
}

/// A `tools/call` that is valid JSON, padded with spaces to `length` bytes.
fn padded_call(length: usize) -> Vec<u8> {
    let mut call = tool_call(1, "write").into_bytes();
    call.resize(length, b' ');
    call
}

/// The status line and the body of `answer`, its `date` left out; `None`
/// when it holds no whole head.
fn status_and_body(answer: &str) -> Option<(&str, &str)> {
    let (head, body) = answer.split_once("\r\n\r\n")?;
    Some((head.lines().next()?, body))
}

#[tokio::test]
async fn a_body_past_the_bound_is_refused_413_and_logged_in_either_mode() {
    let upstream = Upstream::start(|_| Reply::json("{}")).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let bridge = Bridge::start(&[], &child(json!({}))).await;
    for (mode, address) in [
        ("the reverse proxy", proxy.address),
        ("the bridge", bridge.process.address),
    ] {
        // Its writing side kept open: a client that shuts it once its body
        // is sent may see the connection closed before the answer (hyper's
        // connections do not serve half-closed ones).
        let answer = exchange(
            address,
            &post_head(address, BOUND + 1),
            &padded_call(BOUND + 1),
            false,
        )
        .await;
        assert_eq!(
            status_and_body(&answer),
            Some(("HTTP/1.1 413 Payload Too Large", "")),
            "{mode}: {answer:?}"
        );
    }
    bounded("the proxy logs the refusal", async {
        while !proxy.log().contains(REFUSED) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    bridge.process.log_shows(REFUSED).await;
    assert!(
        upstream.received().is_empty(),
        "nothing reached the upstream"
    );
    assert!(bridge.children().is_empty(), "no child was started");
}

#[tokio::test]
async fn a_body_that_breaks_off_is_answered_400_with_no_body_in_either_mode() {
    let upstream = Upstream::start(|_| Reply::json("{}")).await;
    let proxy = Proxy::start(&upstream.url(), &[]).await;
    let bridge = Bridge::start(&[], &child(json!({}))).await;
    for (mode, address) in [
        ("the reverse proxy", proxy.address),
        ("the bridge", bridge.process.address),
    ] {
        // A length of 100, and the connection's writing side shut after 10.
        let answer = exchange(address, &post_head(address, 100), br#"{"jsonrpc""#, true).await;
        assert_eq!(
            status_and_body(&answer),
            Some(("HTTP/1.1 400 Bad Request", "")),
            "{mode}: {answer:?}"
        );
        assert!(!answer.contains("content-type"), "{mode}: {answer:?}");
    }
    assert!(
        upstream.received().is_empty(),
        "nothing reached the upstream"
    );
    assert!(bridge.children().is_empty(), "no child was started");
    assert!(!proxy.log().contains(REFUSED), "{}", proxy.log());
}
