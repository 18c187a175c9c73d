//! At the edge and behind a balancer: `--forwarded replace` drops the
//! forwarding headers a client wrote (`append`, the default, keeps them), a
//! `CONNECT` is answered `405` and never forwarded, and the listen queue is
//! as long as the system allows.

use hyper::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::client_limits::{answering_upstream, call_answered, start};
use crate::support::{bounded, post_to, tool_call};

#[tokio::test]
async fn forwarded_headers_are_appended_to_by_default_and_replaced_at_the_edge() {
    let upstream = answering_upstream().await;
    let spoofed = [
        ("x-forwarded-for", "198.51.100.66"),
        ("forwarded", "for=198.51.100.66"),
    ];
    for (options, earlier) in [
        (&[][..], "198.51.100.66, "),
        (&["--forwarded", "append"][..], "198.51.100.66, "),
        (&["--forwarded", "replace"][..], ""),
    ] {
        let proxy = start(&upstream.url(), options, None).await;
        let response = post_to(proxy.address, &tool_call(1, "deploy"), &spoofed).await;
        assert_eq!(response.status(), StatusCode::OK);
        let received = upstream.received().pop().expect("the call");
        assert_eq!(
            received.header("x-forwarded-for"),
            Some(format!("{earlier}127.0.0.1").as_str()),
            "{options:?}"
        );
        let host = proxy.address;
        let earlier = earlier.replace("198", "for=198");
        assert_eq!(
            received.header("forwarded"),
            Some(format!("{earlier}for=127.0.0.1;host=\"{host}\";proto=http").as_str()),
            "{options:?}"
        );
    }
}

#[tokio::test]
async fn connect_is_answered_405_and_never_forwarded() {
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &[], None).await;
    let mut stream = TcpStream::connect(proxy.address).await.unwrap();
    stream
        .write_all(b"CONNECT mcp.example:443 HTTP/1.1\r\nhost: mcp.example:443\r\n\r\n")
        .await
        .unwrap();

    let mut head = Vec::new();
    let mut buffer = [0; 1024];
    bounded("the answer's head", async {
        while !head.windows(4).any(|window| window == b"\r\n\r\n") {
            let read = stream.read(&mut buffer).await.unwrap();
            assert!(read > 0, "closed: {}", String::from_utf8_lossy(&head));
            head.extend_from_slice(&buffer[..read]);
        }
    })
    .await;
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 405"), "{head}");
    assert!(head.contains("\r\nallow: get, head, post"), "{head}");
    assert!(upstream.received().is_empty());
    call_answered(proxy.address).await;
}

#[tokio::test]
async fn the_listen_queue_is_as_long_as_the_system_allows() {
    let Ok(somaxconn) = std::fs::read_to_string("/proc/sys/net/core/somaxconn") else {
        eprintln!("no /proc/sys/net/core/somaxconn: nothing to compare with");
        return;
    };
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &[], None).await;
    // `ss` (iproute2) shows a listener's queue length as its Send-Q.
    let port = proxy.address.port().to_string();
    let Ok(output) = tokio::process::Command::new("ss")
        .args(["-Hltn", "sport", "=", &format!(":{port}")])
        .output()
        .await
    else {
        eprintln!("no ss: the listen queue cannot be read");
        return;
    };
    let listing = String::from_utf8_lossy(&output.stdout);
    let send_q = listing
        .split_whitespace()
        .nth(2)
        .unwrap_or_else(|| panic!("no listener in {listing:?}"));
    assert_eq!(send_q, somaxconn.trim(), "{listing}");
}
