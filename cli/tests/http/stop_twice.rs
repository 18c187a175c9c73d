//! A second SIGTERM or SIGINT during a drain ends it at once: the calls in
//! flight are answered with the drain's sentence and cancelled at the server,
//! and the command exits 0, long before the drain timeout.

use mcp_tool_errors::render_error;

use crate::client_limits::start;
use crate::drain::InFlight;
use crate::support::{
    DRAINED, ListeningProcess, Upstream, answering, bounded, json, post_to, tool_call,
};

/// Sends `first`, waits for the drain to start, then sends `second`.
async fn stop_twice(proxy: &ListeningProcess, first: &str, second: &str) {
    proxy.signal(first);
    proxy.log_shows("draining").await;
    proxy.signal(second);
}

#[tokio::test]
async fn a_second_sigterm_answers_the_calls_in_flight_at_once_and_cancels_them() {
    let upstream = Upstream::start(answering(|| crate::support::Reply::Hang)).await;
    let mut proxy = start(&upstream.url(), &["--drain-timeout", "1h"], None).await;
    let in_flight = InFlight::send(proxy.address, &upstream).await;

    stop_twice(&proxy, "TERM", "TERM").await;

    in_flight
        .assert_answered_by_the_drain_and_cancelled(&upstream)
        .await;
    assert_eq!(proxy.exited().await.code(), Some(0));
}

#[tokio::test]
async fn a_sigint_after_a_sigterm_ends_the_drain_too() {
    let upstream = Upstream::start(answering(|| crate::support::Reply::Hang)).await;
    let mut proxy = start(&upstream.url(), &["--drain-timeout", "1h"], None).await;
    let address = proxy.address;
    let call =
        tokio::spawn(
            async move { json(post_to(address, &tool_call(8, "deploy"), &[]).await).await },
        );
    upstream
        .wait_for(|request| request.json()["method"] == "tools/call")
        .await;

    stop_twice(&proxy, "TERM", "INT").await;

    let answer = bounded("the tool call's answer", call).await.unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        render_error("deploy", DRAINED)
    );
    upstream
        .wait_for(|request| request.json()["method"] == "notifications/cancelled")
        .await;
    assert_eq!(proxy.exited().await.code(), Some(0));
}
