//! What the layer does, in one command: `cargo run --example demo`.
//!
//! An in-process MCP server (a plain `tower::Service` over JSON-RPC messages)
//! receives eight `tools/call` requests. For each one the demo prints the response
//! without the layer and with it; the last one hangs, and the layer answers it
//! with a timeout. Logs (where panic payloads go) are on stderr.

use std::convert::Infallible;
use std::time::Duration;

use mcp_tool_errors::{ServiceBuilderExt, ToolErrorLayer};
use serde_json::{Value, json};
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

/// The demo server: a handful of tools behaving the way real handlers do.
async fn server(request: Value) -> Result<Value, Infallible> {
    let id = request["id"].clone();
    let tool = request["params"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let args = &request["params"]["arguments"];
    let result = |content: Value, is_error: bool| json!({"jsonrpc": "2.0", "id": id, "result": {"content": content, "isError": is_error}});
    let text = |s: &str| json!([{"type": "text", "text": s}]);
    Ok(match tool.as_str() {
        "echo" => result(text(args["text"].as_str().unwrap_or_default()), false),
        "get_change" => result(text("change 4711 not found (did_you_mean=4717)"), true),
        "search_changes" => result(
            text(
                r#"validating "arguments": validating root: required: missing properties: ["query"]"#,
            ),
            true,
        ),
        "render_page" => result(
            text("template error: unexpected </error> in <error-page> at line 3"),
            true,
        ),
        "deploy" => panic!("deploy failed: credentials token=sk-demo-not-a-real-secret"),
        "deploy_async" => {
            tokio::time::sleep(Duration::from_millis(1)).await;
            panic!("async deploy failed at /srv/secret/config.toml")
        }
        "wait_for_lock" => std::future::pending().await,
        _ => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": format!("Unknown tool: {tool}")}})
        }
    })
}

fn tool_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

/// How long the demo waits for an answer before calling the request hung.
const CLIENT_PATIENCE: Duration = Duration::from_secs(2);

/// Sends `request` to `service` in its own task, as MCP servers do, and describes
/// what the client would receive.
async fn send<S>(service: S, request: Value) -> String
where
    S: Service<Value, Response = Value, Error = Infallible> + Send + 'static,
    S::Future: Send,
{
    let task = tokio::spawn(async move { service.oneshot(request).await });
    match tokio::time::timeout(CLIENT_PATIENCE, task).await {
        Ok(Ok(Ok(response))) => serde_json::to_string_pretty(&response).unwrap(),
        Ok(Ok(Err(never))) => match never {},
        Ok(Err(_)) => {
            "(no response: the handler panicked and its task died; the client waits forever)"
                .to_owned()
        }
        Err(_) => format!(
            "(no response after {CLIENT_PATIENCE:?}: the handler hangs; the client waits forever)"
        ),
    }
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
    // Keep stderr readable: the layer logs each panic with `tracing` already.
    std::panic::set_hook(Box::new(|_| {}));

    let calls = [
        (
            "a successful call passes through unchanged",
            tool_call(1, "echo", json!({"text": "hello"})),
        ),
        (
            "a tool error is rewrapped for the model",
            tool_call(2, "get_change", json!({"change": 4711})),
        ),
        (
            "an SDK-style validation error is rewrapped",
            tool_call(3, "search_changes", json!({})),
        ),
        (
            "a message holding </error> cannot break out",
            tool_call(4, "render_page", json!({})),
        ),
        (
            "a panic is answered (its payload is logged, not sent)",
            tool_call(5, "deploy", json!({})),
        ),
        (
            "a panic after an .await is answered too",
            tool_call(6, "deploy_async", json!({})),
        ),
        (
            "a protocol error (unknown tool) passes through",
            tool_call(7, "no_such_tool", json!({})),
        ),
    ];
    for (what, request) in calls {
        let tool = request["params"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        println!("=== {what}: tools/call {tool}");
        println!("--- without the layer");
        println!("{}", send(service_fn(server), request.clone()).await);
        println!("--- with ServiceBuilder::new().tool_errors()");
        let layered = ServiceBuilder::new()
            .tool_errors()
            .service(service_fn(server));
        println!("{}\n", send(layered, request).await);
    }

    let request = tool_call(8, "wait_for_lock", json!({}));
    println!(
        "=== a hung tool is answered when its timeout passes, and cancelled: tools/call wait_for_lock"
    );
    println!("--- without the layer");
    println!("{}", send(service_fn(server), request.clone()).await);
    let timeout = Duration::from_millis(250);
    println!("--- with ToolErrorLayer::new().tool_timeout({timeout:?})");
    let layered = ServiceBuilder::new()
        .layer(ToolErrorLayer::new().tool_timeout(timeout))
        .service(service_fn(server));
    println!("{}", send(layered, request).await);
}
