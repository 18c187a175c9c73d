//! What an operator probes of the bridge: `--admin-listen`'s `/livez` and
//! `/readyz`, `/readyz` 503 from the moment a drain starts. The real binary
//! on 127.0.0.1; every wait is bounded.

use std::time::Duration;

use hyper::StatusCode;

use crate::bridge::{Bridge, SLOW_CHILD, answers};
use crate::drain::probe;
use crate::process_support::Server;
use crate::support::{bounded, refused_port, tool_call};

#[tokio::test]
async fn the_bridge_serves_livez_and_readyz_and_readyz_is_503_while_it_drains() {
    let admin = refused_port().await;
    let admin_option = admin.to_string();
    let bridge = Bridge::start(
        &["--drain-timeout", "5s", "--admin-listen", &admin_option],
        &Server::new("python3", &["-c", SLOW_CHILD]),
    )
    .await;
    assert_eq!(probe(admin, "/livez").await, 200);
    assert_eq!(probe(admin, "/readyz").await, 200);
    let session = bridge.open().await;
    let call = session.post(&tool_call(1, "slow")).await;
    assert_eq!(call.status(), StatusCode::OK);
    let mut process = bridge.process;
    process.terminate();
    bounded("/readyz answers 503", async {
        while probe(admin, "/readyz").await != 503 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_eq!(probe(admin, "/livez").await, 200);
    // The call in flight is answered, then the bridge exits.
    let answers = answers(call).await;
    assert_eq!(answers[0]["result"]["content"][0]["text"], "done");
    assert!(process.exited().await.success());
}
