//! A worker per CPU, each accepting from the one listener: every worker's
//! connections are served, and drained at SIGTERM.

use mcp_tool_errors::render_error;
use serde_json::json;

use crate::support::{
    DRAINED, Proxy, Reply, Upstream, answering, bounded, json, post_to, tool_call,
};

/// Calls in flight at once, each on its own connection: more than workers, so
/// that the connections land on several of them.
const CALLS: u64 = 16;

#[tokio::test]
async fn each_cpu_has_a_worker_and_the_calls_of_all_of_them_are_answered_at_the_drain() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let upstream = Upstream::start(answering(|| Reply::Hang)).await;
    let mut proxy = Proxy::start(&upstream.url(), &["--drain-timeout", "300ms"]).await;
    let workers = proxy
        .thread_names()
        .into_iter()
        .filter(|name| name.starts_with("worker-"))
        .count();
    // The main thread serves too.
    assert_eq!(workers, cpus - 1, "threads: {:?}", proxy.thread_names());

    let address = proxy.address;
    let calls: Vec<_> = (0..CALLS)
        .map(|id| {
            tokio::spawn(async move {
                json(post_to(address, &tool_call(id, "deploy"), &[]).await).await
            })
        })
        .collect();
    bounded("every call reaches the upstream", async {
        while upstream.received().len() < CALLS as usize {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await;

    proxy.terminate();

    for (id, call) in calls.into_iter().enumerate() {
        assert_eq!(
            bounded("an answer", call).await.unwrap(),
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": render_error("deploy", DRAINED)}],
                "isError": true,
            }})
        );
    }
    assert_eq!(proxy.exited().await.code(), Some(0));
}
