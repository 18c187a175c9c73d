//! One Tower layer in front of any MCP server that makes every tool failure
//! readable by the model.
//!
//! An MCP server reports a failed tool call as a normal `tools/call` result with
//! `"isError": true`, and the model reads its text to recover. [`ToolErrorLayer`]
//! puts every such text into one shape, the llmxml element of [`render_error`]:
//!
//! ```text
//! <error tool="search_changes">
//! validating "arguments": validating root: required: missing properties: ["query"]
//! </error>
//! ```
//!
//! It also answers a request whose handler panicked (with an `isError` result for
//! a `tools/call`, a JSON-RPC internal error otherwise) instead of leaving the
//! client waiting, and passes protocol errors and everything else through
//! untouched.
//!
//! # Example
//!
//! ```
//! use mcp_tool_errors::ServiceBuilderExt;
//! use serde_json::{Value, json};
//! use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // Any tower::Service over JSON-RPC messages: here, a tool that always panics.
//! let server = service_fn(|_request: Value| async move {
//!     panic!("token=hunter2 leaked into a panic message");
//!     #[allow(unreachable_code)]
//!     Ok::<Value, std::convert::Infallible>(Value::Null)
//! });
//! let mut service = ServiceBuilder::new().tool_errors().service(server);
//!
//! let request = json!({
//!     "jsonrpc": "2.0", "id": 7, "method": "tools/call",
//!     "params": {"name": "deploy", "arguments": {}},
//! });
//! # let hook = std::panic::take_hook();
//! # std::panic::set_hook(Box::new(|_| {}));
//! let response = service.ready().await.unwrap().call(request).await.unwrap();
//! # std::panic::set_hook(hook);
//! assert_eq!(response["id"], 7);
//! assert_eq!(response["result"]["isError"], true);
//! let text = response["result"]["content"][0]["text"].as_str().unwrap();
//! assert!(text.starts_with("<error tool=\"deploy\">\n"));
//! assert!(!text.contains("hunter2")); // the payload is logged, not sent
//! # }
//! ```
//!
//! # Message types
//!
//! The layer works on any message type that implements the small traits of
//! [`exchange`]: [`serde_json::Value`] always, rmcp's typed messages with the
//! `rmcp` feature, tower-mcp's router messages with the `tower-mcp` feature.
//!
//! # Panics and `panic = "abort"`
//!
//! Panics are caught with `catch_unwind`, both in `call` and while polling the
//! response future, in the caller's task. A build with `panic = "abort"` cannot
//! catch anything, and the default panic hook still prints each panic to stderr.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod builder;
mod config;
pub mod exchange;
pub mod future;
mod json;
mod layer;
mod panic;
mod render;
#[cfg(feature = "rmcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
pub mod rmcp;
mod sanitize;
mod service;
#[cfg(feature = "tower-mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower-mcp")))]
pub mod tower_mcp;

pub use builder::ServiceBuilderExt;
pub use layer::ToolErrorLayer;
pub use render::{ErrorRenderer, Llmxml, is_rendered, render_error};
pub use sanitize::install_panic_hook;
pub use service::ToolErrors;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
