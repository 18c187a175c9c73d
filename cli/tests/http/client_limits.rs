//! The limits on clients: a connection that sends no request is closed at the
//! header timeout, one kept alive after a request at the keep-alive timeout,
//! while a request in progress outlives every limit; at the connection cap a
//! new client closes the connection idle longest, never one serving a call;
//! the cap follows the file-descriptor limit, raised to its hard limit.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Command;
use tokio::sync::mpsc;

use crate::support::{
    ListeningProcess, Reply, Upstream, bounded, error_result, event_data, post_to, tool_call,
};

/// The command under test: the executable that `MCP_TOOL_ERRORS_BIN` names
/// when set (as for the stdio tests), else the one cargo built.
fn executable() -> PathBuf {
    std::env::var_os("MCP_TOOL_ERRORS_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_mcp-tool-errors")),
        PathBuf::from,
    )
}

/// Raises this test process's soft file-descriptor limit to its hard one,
/// once (with util-linux's `prlimit`): the tests that run at once here hold
/// a thousand connections and more between them, above the usual 1,024.
fn raise_own_descriptor_limit() {
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        let pid = std::process::id().to_string();
        let hard = std::process::Command::new("prlimit")
            .args(["--pid", &pid, "--nofile", "--raw", "--noheadings"])
            .args(["--output", "HARD"])
            .output()
            .expect("prlimit runs");
        let hard = String::from_utf8_lossy(&hard.stdout).trim().to_owned();
        let raised = std::process::Command::new("prlimit")
            .args(["--pid", &pid, &format!("--nofile={hard}:")])
            .status()
            .expect("prlimit runs");
        assert!(raised.success(), "prlimit --nofile={hard}: {raised}");
    });
}

/// Starts the command in front of `upstream` with `options` on 127.0.0.1,
/// with `descriptors` as its file-descriptor limit (soft and hard, set by
/// util-linux's `prlimit`) when given.
pub(crate) async fn start(
    upstream: &str,
    options: &[&str],
    descriptors: Option<&str>,
) -> ListeningProcess {
    raise_own_descriptor_limit();
    let mut command = match descriptors {
        Some(limit) => {
            let mut prlimit = Command::new("prlimit");
            prlimit.arg(format!("--nofile={limit}")).arg("--");
            prlimit.arg(executable());
            prlimit
        }
        None => Command::new(executable()),
    };
    command
        .args(options)
        .args(["--upstream", upstream, "--listen", "127.0.0.1:0"]);
    ListeningProcess::spawn(command, "mcp-tool-errors: listening on ").await
}

/// An upstream that answers every request with a tool error.
pub(crate) async fn answering_upstream() -> Upstream {
    Upstream::start(|request| {
        Reply::json(&error_result(
            request.json()["id"].as_u64().unwrap_or(0),
            "disk full",
        ))
    })
    .await
}

/// A call through the proxy at `address` on a new connection, answered.
pub(crate) async fn call_answered(address: SocketAddr) {
    let response = post_to(address, &tool_call(1, "deploy"), &[]).await;
    assert_eq!(response.status(), 200);
    let answer = crate::support::json(response).await;
    assert!(answer["result"]["isError"] == true, "{answer}");
}

/// Whether the proxy closed `stream` within `within`: the end of the stream
/// or an error read.
pub(crate) async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buffer = [0; 4096];
    let read = tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    read.await.is_ok()
}

/// A raw request to `/mcp` whose body is `body`, kept alive.
fn raw_call(address: SocketAddr, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Reads one response whose body holds `text`, on a kept-alive `stream`.
async fn read_answer(stream: &mut TcpStream, text: &str) {
    let mut response = Vec::new();
    let mut buffer = [0; 4096];
    bounded("the answer", async {
        while !String::from_utf8_lossy(&response).contains(text) {
            let read = stream.read(&mut buffer).await.expect("the answer");
            assert!(read > 0, "closed before the answer");
            response.extend_from_slice(&buffer[..read]);
        }
    })
    .await;
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_at_the_header_timeout() {
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &["--client-header-timeout", "500ms"], None).await;
    let mut silent = TcpStream::connect(proxy.address).await.unwrap();

    assert!(
        closed_within(&mut silent, Duration::from_secs(5)).await,
        "the silent connection is still open"
    );
    call_answered(proxy.address).await;
    assert!(upstream.received().len() == 1);
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_once_idle_for_the_keepalive_timeout() {
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &["--keepalive-timeout", "500ms"], None).await;
    let mut stream = TcpStream::connect(proxy.address).await.unwrap();
    let call = raw_call(proxy.address, &tool_call(1, "deploy"));
    // Two calls 300 ms apart: the idle time between them is under the limit.
    for _ in 0..2 {
        stream.write_all(call.as_bytes()).await.unwrap();
        read_answer(&mut stream, "disk full").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    assert!(
        closed_within(&mut stream, Duration::from_secs(5)).await,
        "the idle connection is still open"
    );
    assert_eq!(upstream.received().len(), 2);
}

#[tokio::test]
async fn a_call_in_progress_outlives_every_limit_and_a_body_may_pause_under_its_own() {
    let (answer, events) = mpsc::unbounded_channel();
    let events = std::sync::Mutex::new(Some(events));
    let upstream =
        Upstream::start(move |_| Reply::Events(events.lock().unwrap().take().expect("one call")))
            .await;
    let limits = [
        "--client-header-timeout",
        "500ms",
        "--client-body-timeout",
        "500ms",
        "--keepalive-timeout",
        "500ms",
    ];
    let proxy = start(&upstream.url(), &limits, None).await;
    let mut stream = TcpStream::connect(proxy.address).await.unwrap();
    // The body comes in 4 pieces 250 ms apart: a second in all, each pause
    // under the body timeout.
    let call = raw_call(proxy.address, &tool_call(3, "deploy"));
    let (head, body) = call.split_at(call.find("\r\n\r\n").unwrap() + 4);
    stream.write_all(head.as_bytes()).await.unwrap();
    for piece in body.as_bytes().chunks(body.len().div_ceil(4)) {
        tokio::time::sleep(Duration::from_millis(250)).await;
        stream.write_all(piece).await.unwrap();
    }
    upstream
        .wait_for(|request| request.json()["method"] == "tools/call")
        .await;

    // The server answers after three times every limit.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    answer
        .send(Ok(
            format!("data: {}\n\n", error_result(3, "disk full")).into_bytes()
        ))
        .unwrap();
    drop(answer);

    read_answer(&mut stream, "disk full").await;
}

#[tokio::test]
async fn at_the_cap_a_new_client_closes_the_connection_idle_longest_never_a_call_in_progress() {
    let (answer, events) = mpsc::unbounded_channel();
    let events = std::sync::Mutex::new(Some(events));
    let upstream = Upstream::start(move |request| match request.json()["id"].as_u64() {
        Some(9) => Reply::Events(events.lock().unwrap().take().expect("one call")),
        id => Reply::json(&error_result(id.unwrap_or(0), "disk full")),
    })
    .await;
    let proxy = start(&upstream.url(), &["--max-connections", "3"], None).await;
    // Two connections idle after a call each, the first idle longest.
    let mut idle = Vec::new();
    for id in 1..=2 {
        let mut stream = TcpStream::connect(proxy.address).await.unwrap();
        let call = raw_call(proxy.address, &tool_call(id, "deploy"));
        stream.write_all(call.as_bytes()).await.unwrap();
        read_answer(&mut stream, "disk full").await;
        idle.push(stream);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A third with a call in progress.
    let address = proxy.address;
    let in_progress = tokio::spawn(async move {
        let response = post_to(address, &tool_call(9, "build"), &[]).await;
        crate::support::Events::new(response).next().await
    });
    upstream.wait_for(|request| request.json()["id"] == 9).await;

    // A fourth client is served, and stays: the connection idle longest made
    // room.
    let mut fourth = TcpStream::connect(proxy.address).await.unwrap();
    let call = raw_call(proxy.address, &tool_call(4, "deploy"));
    fourth.write_all(call.as_bytes()).await.unwrap();
    read_answer(&mut fourth, "disk full").await;
    assert!(closed_within(&mut idle[0], Duration::from_secs(5)).await);
    assert!(!closed_within(&mut idle[1], Duration::from_millis(200)).await);
    // A fifth: the other one idle since before the fourth makes room, and the
    // call goes on.
    call_answered(proxy.address).await;
    assert!(closed_within(&mut idle[1], Duration::from_secs(5)).await);
    assert!(!closed_within(&mut fourth, Duration::from_millis(200)).await);
    answer
        .send(Ok(
            format!("data: {}\n\n", error_result(9, "disk full")).into_bytes()
        ))
        .unwrap();
    drop(answer);
    let event = bounded("the call in progress", in_progress)
        .await
        .unwrap()
        .expect("its answer");
    assert_eq!(event_data(&event)["id"], 9);
}

#[tokio::test]
async fn the_connection_cap_follows_the_hard_descriptor_limit() {
    let upstream = answering_upstream().await;
    // 300 connections: more than a soft limit of 200 lets the process open,
    // and more than the 64 it would cap them at; the hard limit of 1,024
    // lets 476 in.
    let proxy = start(&upstream.url(), &[], Some("200:1024")).await;
    let mut held = Vec::new();
    for _ in 0..300 {
        held.push(TcpStream::connect(proxy.address).await.unwrap());
    }
    // Served after the 300: every one of them was accepted by then.
    call_answered(proxy.address).await;

    assert!(!closed_within(&mut held[0], Duration::from_millis(300)).await);
    assert!(
        !proxy.log().contains("cannot accept"),
        "the proxy said: {}",
        proxy.log()
    );
}
