//! Memory given back after a burst: the proxy's resident set (`VmRSS` in
//! `/proc/PID/status`) idle, during a burst and after it, back within twice
//! the idle figure once the burst is over.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::client_limits::{answering_upstream, call_answered, start};
use crate::support::{ListeningProcess, Upstream, bounded, post_to, tool_call};

/// The resident set of process `pid`, in kB.
fn resident_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in kB")
}

/// Waits up to `within` for the resident set of `pid` to be at most
/// `most` kB; the last figure read, and when.
async fn resident_falls_to(pid: u32, most: u64, within: Duration) -> (u64, Duration) {
    let started = Instant::now();
    loop {
        let resident = resident_kb(pid);
        if resident <= most || started.elapsed() >= within {
            return (resident, started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `count` connections to `address`, each with half a request's head sent:
/// the proxy reads each into a buffer of its own.
async fn half_heads(address: SocketAddr, count: usize) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        let mut stream = bounded("connect", TcpStream::connect(address))
            .await
            .expect("connected");
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nhost: proxy\r\ncontent-type: application/json\r\n")
            .await
            .expect("half a head sent");
        streams.push(stream);
    }
    streams
}

/// A proxy in front of an answering upstream, having served one call, and
/// its resident set then, in kB.
async fn idle_proxy() -> (Upstream, ListeningProcess, u64) {
    let upstream = answering_upstream().await;
    let proxy = start(&upstream.url(), &[], None).await;
    call_answered(proxy.address).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = resident_kb(proxy.pid());
    (upstream, proxy, idle)
}

#[tokio::test]
async fn memory_of_a_burst_of_connections_is_given_back_once_they_close() {
    let (_upstream, proxy, idle) = idle_proxy().await;
    let pid = proxy.pid();

    let burst = half_heads(proxy.address, 2_000).await;
    // Every connection's head read into its buffer.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = resident_kb(pid);
    drop(burst);

    // The sweep sees the burst over within a second, and trims a look later.
    let (after, took) = resident_falls_to(pid, idle * 2, Duration::from_secs(10)).await;
    eprintln!(
        "resident set: {idle} kB idle, {during} kB with 2,000 connections, {after} kB {:.1} s \
         after they closed",
        took.as_secs_f64()
    );
    assert!(
        during > idle * 2,
        "the burst took little: {idle} kB, {during} kB"
    );
    assert!(
        after <= idle * 2,
        "{after} kB 10 s after the burst, {idle} kB idle"
    );
    // The proxy still serves.
    call_answered(proxy.address).await;
}

/// Heavy for CI (2,000 calls at once), and slow where the upstream
/// connections a burst leaves idle in the pool weigh more than the idle
/// figure (a release build: about 35 s, until the pool's 30 s idle timeout
/// closes them; 5 s in a debug build, whose idle figure is larger): run it
/// with `cargo test -p mcp-tool-errors-cli --test http -- --ignored memory`.
#[tokio::test]
#[ignore = "2,000 calls at once, up to 35 s: waits for the upstream pool's idle timeout"]
async fn memory_of_a_burst_of_calls_is_given_back_within_60_s() {
    let (_upstream, proxy, idle) = idle_proxy().await;
    let pid = proxy.pid();

    let address = proxy.address;
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let calls: Vec<_> = (0..2_000_u64)
        .map(|id| {
            let peak = peak.clone();
            tokio::spawn(async move {
                let response = post_to(address, &tool_call(id, "deploy"), &[]).await;
                peak.fetch_max(resident_kb(pid), std::sync::atomic::Ordering::Relaxed);
                crate::support::json(response).await
            })
        })
        .collect();
    for call in calls {
        let answer = bounded("a call", call).await.unwrap();
        assert_eq!(answer["result"]["isError"], true, "{answer}");
    }
    let during = peak.load(std::sync::atomic::Ordering::Relaxed);
    let right_after = resident_kb(pid);

    let (after, took) = resident_falls_to(pid, idle * 2, Duration::from_secs(60)).await;
    eprintln!(
        "resident set: {idle} kB idle, {during} kB during 2,000 calls at once, {right_after} kB \
         as they ended, {after} kB {:.1} s later",
        took.as_secs_f64()
    );
    assert!(
        after <= idle * 2,
        "{after} kB 60 s after the burst, {idle} kB idle"
    );
}
