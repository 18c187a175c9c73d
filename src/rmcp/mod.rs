//! The layer for rmcp servers (feature `rmcp`).
//!
//! Two ways in:
//!
//! - [`ServerHandlerExt`] on any rmcp [`ServerHandler`](rmcp::ServerHandler):
//!   `.with_tool_errors()` (or `.layer(...)` for a configured layer or a whole
//!   `tower::ServiceBuilder` stack) returns a [`LayeredHandler`], itself a
//!   `ServerHandler`, so it serves over stdio or from a `StreamableHttpService`.
//!   Only `tools/call` (and `tasks/get`, see [Tasks](#tasks), and
//!   `tools/list`, whose tools the metric names) goes through the tower
//!   stack, with the real [`RequestContext`](rmcp::service::RequestContext)
//!   (peer, cancellation token, `_meta` and progress token, transport
//!   extensions) passed down to the handler's `call_tool`. Every other method
//!   is the inner handler's own.
//! - [`ToolErrors`](crate::ToolErrors) directly, as a
//!   `tower::Service<`[`ClientRequest`](rmcp::model::ClientRequest)`>` with
//!   `Response = `[`ServerResult`](rmcp::model::ServerResult) and
//!   `Error = `[`ErrorData`](rmcp::ErrorData), for a service served with rmcp's
//!   `TowerHandler`, or over a [`RequestWithContext`].
//!
//! # Example
//!
//! ```
//! use mcp_tool_errors::rmcp::ServerHandlerExt;
//! use rmcp::handler::server::router::tool::ToolRouter;
//! use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
//! use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
//!
//! #[derive(Clone)]
//! struct Deployer {
//!     tool_router: ToolRouter<Self>,
//! }
//!
//! #[tool_router]
//! impl Deployer {
//!     #[tool(description = "Deploys the service")]
//!     fn deploy(&self) -> String {
//!         panic!("token=hunter2 leaked into a panic message");
//!     }
//! }
//!
//! #[tool_handler(router = self.tool_router)]
//! impl ServerHandler for Deployer {
//!     fn get_info(&self) -> ServerConfig {
//!         ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # std::panic::set_hook(Box::new(|_| {}));
//! let server = Deployer { tool_router: Deployer::tool_router() }.with_tool_errors();
//! // In a real server: server.serve(rmcp::transport::stdio()).await?.waiting().await?;
//! let (server_io, client_io) = tokio::io::duplex(64 * 1024);
//! let (server, client) = tokio::join!(server.serve(server_io), ().serve(client_io));
//! let (_server, client) = (server?, client?);
//!
//! let result = client.call_tool(CallToolRequestParams::new("deploy")).await?;
//! assert_eq!(result.is_error, Some(true));
//! let text = &result.content[0].as_text().unwrap().text;
//! assert!(text.starts_with("<error tool=\"deploy\">\n"));
//! assert!(!text.contains("hunter2")); // the payload is logged, not sent
//! client.cancel().await?;
//! # Ok(())
//! # }
//! ```
//!
//! # One layer for every session
//!
//! A server that makes a handler per session (the factory of rmcp's
//! `StreamableHttpService`) builds the layer once and applies a clone of it to
//! each session's handler: the clones share one memory of tasks, so a task
//! created in one session has its result rewrapped, and the panic of its
//! operation answered, when another session (or a stateless request) polls it.
//! `.with_tool_errors()` in the factory would make a new layer, with its own
//! memory, per session.
//!
//! ```no_run
//! # use mcp_tool_errors::rmcp::ServerHandlerExt;
//! # use rmcp::model::{ServerCapabilities, ServerConfig};
//! # #[derive(Clone)]
//! # struct Deployer;
//! # impl rmcp::ServerHandler for Deployer {
//! #     fn get_info(&self) -> ServerConfig {
//! #         ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
//! #     }
//! # }
//! use mcp_tool_errors::ToolErrorLayer;
//! use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
//! use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
//!
//! let layer = ToolErrorLayer::new();
//! let service = StreamableHttpService::new(
//!     move || Ok(Deployer.layer(layer.clone())),
//!     std::sync::Arc::new(LocalSessionManager::default()),
//!     StreamableHttpServerConfig::default(),
//! );
//! # let _ = service;
//! ```
//!
//! # Errors after a panic
//!
//! A panicking `tools/call` is answered with an `isError` result. Any other
//! request that panics inside a [`ToolErrors`](crate::ToolErrors) over
//! `ClientRequest` is answered with `Err(ErrorData)`, code -32603: rmcp cannot
//! put an error in a `ServerResult`, its `ErrorData` *is* the JSON-RPC error
//! response. That is the one case where the layer returns an error of its own.
//!
//! Behind [`ServerHandlerExt`] only `tools/call`, `tasks/get` and `tools/list`
//! go through the stack, so only their panics are caught (a panicking
//! `tools/list` is answered with -32603); a panic in another method of the
//! handler is rmcp's to handle, as without the layer.
//!
//! The `isError` result is made with rmcp's `CallToolResult::error`, so it carries
//! `resultType: "complete"` like every result rmcp builds; rmcp's server strips it
//! for clients that negotiated a protocol version older than 2026-07-28.
//! `TowerHandler` does no such shaping.
//!
//! # Tasks
//!
//! A tool that answers with a task handle (`CallToolResponse::Task`) delivers
//! its result in `tasks/get`, which [`LayeredHandler`] also sends through the
//! stack: an `isError` result of a completed task is rewrapped there, on every
//! `tasks/get` that delivers it, until the layer forgets the task. Wrap the
//! operation given to rmcp's `TaskManager::spawn` in [`catch_task_panics`], so
//! that a panic completes the task with the direct call's answer instead of
//! leaving it `working`: the panic is kept by the layer in front of the
//! handler that spawned the task, for that layer's clones to answer.
//!
//! rmcp 3.11 runs a tool as a task for a client that declared the extension in
//! `capabilities.extensions["io.modelcontextprotocol/tasks"]` (its
//! `supports_tasks`), whatever protocol version the client negotiated, and
//! answers with the extension's own shapes: a client of 2025-11-25 gets the
//! flat handle (`resultType: "task"`) and the result inline in `tasks/get`.
//! rmcp 3.11 has no `tasks/result` request (its `ClientRequest` has no such
//! variant): it answers that method with -32601, so `tasks/get` is the only
//! way a result is delivered. For a client older than 2026-07-28, rmcp strips
//! `resultType: "complete"` from ordinary results only
//! (`ServerResult::strip_result_type_for_legacy_peer`): a `tasks/get` answer,
//! and the task's result inside it, keep theirs.
//!
//! # Timeouts
//!
//! With [`tool_timeout`](crate::ToolErrorLayer::tool_timeout), a `tools/call`
//! that runs out of time is answered with an `isError` result; the handler's
//! future is dropped and, over a [`RequestWithContext`], the request's
//! cancellation token (`context.ct`) is cancelled, so work the tool spawned with
//! it stops too. When the client cancels a call (`notifications/cancelled`),
//! rmcp 3.11 cancels that token and discards whatever answer comes later, but
//! keeps polling the handler; a timeout still bounds how long it runs, and its
//! answer is discarded like any other.
//!
//! # rmcp version
//!
//! The crate depends on rmcp `3.11` (a caret requirement), so a server on any
//! later 3.x release builds one copy of rmcp, and `.with_tool_errors()` applies
//! to its handler. [`LayeredHandler`] writes out every method of
//! `ServerHandler`, including the deprecated ones, since a method left to the
//! trait's default would answer without asking the inner handler. Clippy's
//! `missing_trait_methods` lint, on that impl, names any method it does not
//! write; CI runs it against the locked rmcp and the newest 3.x. Should a later
//! release add a method before this crate forwards it, that one method is
//! answered by the trait's default, as for a handler that does not implement it.

mod ext;
mod handler_service;
mod layered;
mod request;
mod response;
mod task_panics;

pub use ext::ServerHandlerExt;
pub use handler_service::{HandlerFuture, HandlerService};
pub use layered::LayeredHandler;
pub use request::RequestWithContext;
pub use task_panics::catch_task_panics;
