//! Signals: passed to the child, a second SIGINT or SIGTERM to stop a child
//! that ignores the first, the child's own process group, and a child that
//! does not outlive the command.

use std::time::Duration;

use mcp_tool_errors::render_error;
use serde_json::{Value, json};

use crate::support::{
    PATIENCE, Server, Session, children_of, is_zombie, process_group, result_text,
    running_in_group, runs, send, signal, tool_call,
};

/// A shell child that ignores SIGINT and SIGTERM, says so on stderr, then runs
/// `rest`.
fn ignoring_child(rest: &str) -> Server {
    let script = format!("trap '' INT TERM; echo ready >&2; {rest}");
    Server::new("sh", &["-c", &script])
}

/// Sends a call that the child never answers, once the child runs.
async fn call_pending(session: &mut Session) {
    session.stderr_shows("ready").await;
    session
        .send(&tool_call(1, "slow", json!({})).to_string())
        .await;
}

/// The answer to the pending call once the child is gone, and the end of
/// stdout after it.
async fn answer_at_the_end(session: &mut Session) -> String {
    let text = result_text(&session.line().await);
    assert_eq!(session.line_or_eof().await, None);
    text
}

#[tokio::test]
async fn a_second_sigint_closes_the_stdin_of_a_child_that_ignores_the_first() {
    let mut session = Session::wrapped(&[], &ignoring_child("cat > /dev/null; exit 7"));
    call_pending(&mut session).await;
    signal(session.pid(), "INT");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !session.has_exited(),
        "the first SIGINT is the child's to act on"
    );
    signal(session.pid(), "INT");
    let message = "The server process exited (exit code 7) before answering.";
    assert_eq!(
        answer_at_the_end(&mut session).await,
        render_error("slow", message)
    );
    assert_eq!(session.wait().await.code(), Some(7));
}

#[tokio::test]
async fn a_second_sigterm_kills_a_child_that_ignores_sigterm_and_its_stdin_after_5_s() {
    let mut session = Session::wrapped(&[], &ignoring_child("exec sleep 1000"));
    call_pending(&mut session).await;
    signal(session.pid(), "TERM");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!session.has_exited());
    signal(session.pid(), "TERM");
    let message = "The server process exited (signal SIGKILL) before answering.";
    assert_eq!(
        answer_at_the_end(&mut session).await,
        render_error("slow", message)
    );
    assert_eq!(session.wait().await.code(), Some(128 + 9));
}

#[tokio::test]
async fn sighup_and_sigquit_are_passed_to_the_child() {
    for (name, number) in [("HUP", 1), ("QUIT", 3)] {
        // The child says it got the call, which is then in flight.
        let got = r#"{"jsonrpc":"2.0","method":"test/got"}"#;
        let server = Server::scripted(json!({"on": {"tools/call slow": [send(got)]}}));
        let mut session = Session::wrapped(&[], &server);
        let call = tool_call(1, "slow", json!({}));
        assert_eq!(session.line_after(&call).await, got);
        signal(session.pid(), name);
        let message = format!("The server process exited (signal SIG{name}) before answering.");
        let answer: Value = serde_json::from_str(&session.line().await).expect("JSON");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            render_error("slow", &message),
            "{name}"
        );
        assert_eq!(session.wait().await.code(), Some(128 + number), "{name}");
    }
}

#[tokio::test]
async fn the_child_has_its_own_process_group_and_dies_with_the_command() {
    let server = Server::scripted(
        json!({"on": {"ping": [send(r#"{"jsonrpc":"2.0","id":$ID,"result":{}}"#)]}}),
    );
    let mut session = Session::wrapped(&[], &server);
    session
        .exchange(&json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}))
        .await;
    let command = session.pid();
    let children = children_of(command);
    assert_eq!(children.len(), 1, "{children:?}");
    let child = children[0];
    // A terminal's Ctrl-C goes to the command's group only; the child hears of
    // it once, from the command.
    assert_eq!(process_group(child), child);
    assert_ne!(process_group(child), process_group(command));
    if cfg!(not(target_os = "linux")) {
        return;
    }
    signal(command, "KILL");
    session.wait().await;
    let gone = tokio::time::timeout(PATIENCE, async {
        while runs(child) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    if gone.await.is_err() {
        signal(child, "KILL");
        panic!("the child outlived the command killed with SIGKILL");
    }
}

#[tokio::test]
async fn a_helper_that_ignores_sigterm_in_the_childs_group_does_not_outlive_the_command() {
    // The child starts a helper of its own, which ignores SIGTERM, and exits
    // at the end of its stdin.
    let server = Server::new(
        "sh",
        &[
            "-c",
            "(trap '' TERM; exec sleep 300) >/dev/null & echo ready >&2; exec cat >/dev/null",
        ],
    );
    let mut session = Session::wrapped(&[], &server);
    session.stderr_shows("ready").await;
    let children = children_of(session.pid());
    assert_eq!(children.len(), 1, "{children:?}");
    let group = process_group(children[0]);
    assert_eq!(running_in_group(group).len(), 2);
    session.close_stdin();
    // While its group is ended, the child is not reaped: its id, the
    // group's, names no other process.
    let unreaped = tokio::time::timeout(PATIENCE, async {
        while !is_zombie(group) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let held = is_zombie(group) && running_in_group(group).len() == 1;
    session.wait().await;
    let left = running_in_group(group);
    for pid in &left {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert_eq!(left, Vec::<u32>::new(), "the helper outlived the command");
    assert!(
        unreaped.is_ok() && held,
        "the child was reaped while its helper ran"
    );
}

#[tokio::test]
async fn a_helper_that_left_the_childs_group_and_holds_its_stdout_does_not_outlive_the_command() {
    // The helper starts a session of its own (setsid: a group the command
    // cannot name), ignores SIGTERM and keeps the child's stdout open; it
    // says its pid on stderr. The child exits at the end of its stdin.
    let script = r#"
import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write("helper %d\n" % os.getpid())
    sys.stderr.flush()
    time.sleep(300)
    os._exit(0)
sys.stdin.read()
"#;
    let server = Server::new("python3", &["-c", script]);
    let mut session = Session::wrapped(&[], &server);
    session.stderr_shows("helper ").await;
    let stderr = session.stderr();
    let helper: u32 = stderr
        .split("helper ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .expect("the helper's pid");
    assert!(runs(helper));
    assert_ne!(process_group(helper), process_group(session.pid()));
    session.close_stdin();
    assert_eq!(session.line_or_eof().await, None);
    session.wait().await;
    let gone = tokio::time::timeout(Duration::from_secs(2), async {
        while runs(helper) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .is_ok();
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &helper.to_string()])
            .status();
    }
    assert!(gone, "the helper outlived the command");
}
