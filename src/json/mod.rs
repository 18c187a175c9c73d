//! The JSON implementation: requests and responses as [`serde_json::Value`].
//!
//! A request is one JSON-RPC message or a batch (an array of them). The inner
//! service answers with a `Value` or an `Option<Value>` (`None` for a
//! notification, or a batch of notifications).
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

mod field;
mod pending;
mod response;
mod tool_result;

pub use pending::JsonPending;
