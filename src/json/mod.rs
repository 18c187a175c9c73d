//! The JSON implementation: requests and responses as [`serde_json::Value`].
//!
//! A request is one JSON-RPC message or a batch (an array of them). The inner
//! service answers with a `Value` or an `Option<Value>` (`None` for a
//! notification, or a batch of notifications).
//!
//! No response, where the layer answers in place of the inner service (a
//! panic, a timeout) and nothing in the message expects an answer (a
//! notification, a batch of only notifications), is `None` on the
//! `Option<Value>` path and `Value::Null` on the bare `Value` path: part of the
//! contract (the crate docs, "No response on the `Value` path"), pinned by
//! `tests/json/layer.rs`. A transport must write nothing for either.
//!
//! ```
//! use mcp_tool_errors::ToolErrorLayer;
//! use serde_json::{Value, json};
//! use std::time::Duration;
//! use tower::{Layer, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let hanging = || service_fn(|_: Value| std::future::pending::<Result<Value, std::convert::Infallible>>());
//! let layer = ToolErrorLayer::new().tool_timeout(Duration::from_secs(1));
//! let notification = json!({"jsonrpc": "2.0", "method": "tools/call",
//!                           "params": {"name": "search", "arguments": {}}});
//! // Timed out, and nothing to answer.
//! let bare = layer.layer(hanging()).oneshot(notification.clone()).await.unwrap();
//! assert_eq!(bare, Value::Null);
//! let optional = layer.layer(hanging().map_response(Some)).oneshot(notification).await.unwrap();
//! assert_eq!(optional, None);
//! # }
//! ```
//!
//!
//! ```
//! use mcp_tool_errors::ToolErrorLayer;
//! use serde_json::{Value, json};
//! use tower::{Layer, Service, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = service_fn(|request: Value| async move {
//!     Ok::<_, std::convert::Infallible>(json!({
//!         "jsonrpc": "2.0",
//!         "id": request["id"],
//!         "result": {"content": [{"type": "text", "text": "no such change"}], "isError": true},
//!     }))
//! });
//! let mut service = ToolErrorLayer::new().layer(server);
//! let request = json!({
//!     "jsonrpc": "2.0", "id": 1, "method": "tools/call",
//!     "params": {"name": "get_change", "arguments": {}},
//! });
//! let response = service.ready().await.unwrap().call(request).await.unwrap();
//! assert_eq!(
//!     response["result"]["content"][0]["text"],
//!     "<error tool=\"get_change\">\nno such change\n</error>",
//! );
//! # }
//! ```

mod created;
mod field;
mod request;
mod response;
mod result;

pub(crate) use response::tool_error_result;
