//! tower-mcp support (feature `tower-mcp`): the layer over tower-mcp's router.
//!
//! Every tower-mcp transport takes a Tower layer over its router service, a
//! `Service<RouterRequest, Response = RouterResponse, Error = Infallible>`:
//! `StdioTransport::layer`, `HttpTransport::layer`, `ChannelTransport::layer`
//! and the others. Give it a [`ToolErrorLayer`](crate::ToolErrorLayer) and
//! nothing else changes in the server:
//!
//! - the `CallToolResult` of a `tools/call` with `is_error` has its text items
//!   rewrapped as llmxml (see [`render_error`](crate::render_error));
//! - a JSON-RPC error, which tower-mcp carries inside the response
//!   (`RouterResponse::inner` is `Err`), passes through untouched, as does every
//!   other response;
//! - a handler that panics still gets its request answered, with the request's
//!   id: an `isError` `CallToolResult` for a `tools/call`, a `-32603`
//!   `JsonRpcError` for any other request.
//!
//! Only the typed `McpResponse::CallTool` is rewrapped, which is how tower-mcp's
//! router answers every tool call that is not task-augmented. A `Raw` answer
//! passes through as it is.
//!
//! # Task-augmented calls
//!
//! A `tools/call` that tower-mcp's router makes a task is answered with a task
//! handle (`CreateTask` before protocol 2026-07-28, `FinalCreateTask` from it),
//! which passes untouched; the layer remembers which tool the task belongs to.
//! The task's result reaches the client in the answer to a `tasks/get`
//! (`GetTaskInfo`, whose `result` is a `CallToolResult`, or `FinalGetTask`,
//! whose `completed` result is a JSON object): an `isError` result there is
//! rewrapped exactly as the result of a direct call, on every delivery alike,
//! until the task is forgotten (its time to live passed, or newer tasks pushed
//! it out past [`max_remembered_tasks`](crate::ToolErrorLayer::max_remembered_tasks),
//! least recently used first). A `FinalGetTask` that `failed` carries a
//! JSON-RPC error, not a tool result, and passes as it is; no status and no
//! error answering a `tasks/get` forgets the task.
//!
//! Build the layer once and give a clone to every connection's transport (a
//! server that makes a router per connection, say): its clones share one
//! memory of tasks, so a task created on one connection is rewrapped when it is
//! delivered on another.
//!
//! What is not covered: a task handler that panics. tower-mcp runs it on a
//! tokio task of its own, where no layer can see it; without a catch of
//! tower-mcp's, the panic ends that tokio task before anything is recorded, so
//! the task stays `working` until its time to live runs out and the client
//! never gets an answer. The remedy is tower-mcp's own catch,
//! `catch_panics_with(PanicPolicy::redacted(..))`: the task then completes with
//! an `isError` result holding the policy's fixed text, which the layer rewraps
//! like any other (see below). The layer cannot answer it with the payload, so
//! [`expose_panic_messages`](crate::ToolErrorLayer::expose_panic_messages) does
//! not apply to tasks over tower-mcp.
//!
//! tower-mcp has no `tasks/result` request; its router delivers a task's result
//! in `tasks/get` for both protocol versions.
//!
//! # Example
//!
//! ```
//! use mcp_tool_errors::ToolErrorLayer;
//! use serde_json::json;
//! use tower_mcp::client::{ChannelTransport, McpClient};
//! use tower_mcp::{CallToolResult, McpRouter, NoParams, StdioTransport, ToolBuilder};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), tower_mcp::BoxError> {
//! let deploy = ToolBuilder::new("deploy")
//!     .description("Deploys the current build")
//!     .handler(|_: NoParams| async move { Ok(CallToolResult::error("no environment named prod")) })
//!     .build();
//! let router = McpRouter::new().server_info("deployer", "1.0.0").tool(deploy);
//!
//! // A server hands the layer to its transport...
//! let _server = StdioTransport::new(router.clone()).layer(ToolErrorLayer::new());
//!
//! // ...here the in-process transport, driven by tower-mcp's own client.
//! let transport = ChannelTransport::layer(router, ToolErrorLayer::new());
//! let client = McpClient::connect(transport).await?;
//! client.initialize("example", "1.0.0").await?;
//! let result = client.call_tool("deploy", json!({})).await?;
//! assert!(result.is_error);
//! assert_eq!(result.all_text(), "<error tool=\"deploy\">\nno environment named prod\n</error>");
//! # Ok(())
//! # }
//! ```
//!
//! # tower-mcp's own `catch_panics`
//!
//! `McpRouter::catch_panics` (off by default) catches a panicking tool handler
//! inside the router, before the layer can see the panic, and answers with an
//! `isError` result whose text is `tool 'NAME' panicked: PAYLOAD`. With both on,
//! the router answers and the layer only rewraps that text, payload included.
//! Leave `catch_panics` off and let the layer answer: it catches the panics of
//! every request, not only of tool handlers, and keeps the payload in the log
//! unless [`expose_panic_messages`](crate::ToolErrorLayer::expose_panic_messages)
//! says otherwise. `catch_panics_with(PanicPolicy::redacted(..))` is safe next to
//! the layer (its fixed text is wrapped like any tool error), and it is the only
//! catch for a task-augmented call, whose handler runs on a tokio task of its
//! own where no layer can see it.
//!
//! # Timeouts
//!
//! With [`tool_timeout`](crate::ToolErrorLayer::tool_timeout), a `tools/call`
//! that runs out of time is answered with an `isError` `CallToolResult` and the
//! router's future for it is dropped, which stops the handler at its next
//! `.await`. tower-mcp has no other cancellation the layer can reach: its router
//! gives each handler a child of the connection's cancellation token, made with
//! a constructor private to tower-mcp. Only a per-request `CancellationToken`
//! that a transport put in the request's extensions (tower-mcp's HTTP transport
//! does, for a stateless request) is cancelled as well. A task-augmented call is
//! bounded only until its task handle.
//!
//! # tower-mcp version
//!
//! The crate is built and tested against tower-mcp `~0.25`. A 0.x minor release
//! may change `RouterRequest`, `RouterResponse` or `CallToolResult`, so moving to
//! a newer tower-mcp is a deliberate change of this crate.

mod id;
mod request;
mod response;
mod tool_result;
