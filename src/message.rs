//! [`McpRequest`] and [`McpResponse`]: the message types the layer reads,
//! listed in one place.

use crate::model;

/// A request type that [`ToolErrors`](crate::ToolErrors) serves: the layer
/// reads its calls (their ids, tools and tasks) before the inner service takes
/// it.
///
/// Implemented for:
///
/// - [`serde_json::Value`]: one JSON-RPC message or a batch;
/// - `rmcp::model::ClientRequest` and
///   `mcp_tool_errors::rmcp::RequestWithContext` (feature `rmcp`);
/// - `tower_mcp::RouterRequest` (feature `tower-mcp`).
///
/// Sealed: the layer's reading of a message type is its own, so no other type
/// can implement it.
pub trait McpRequest: model::Request {}

/// A response type that [`ToolErrors`](crate::ToolErrors) reads and, in place
/// of the inner service's, builds; `Error` is the inner service's error type.
///
/// Implemented for:
///
/// - [`serde_json::Value`] and `Option<Value>` (`None`: no response, for a
///   notification), answering a [`Value`](serde_json::Value) request, with any
///   error type;
/// - `rmcp::model::ServerResult` (feature `rmcp`), with an error type that
///   rmcp's `ErrorData` converts into (`ErrorData` itself, or a
///   `tower::BoxError`);
/// - `tower_mcp::RouterResponse` (feature `tower-mcp`), with any error type.
///
/// Sealed, like [`McpRequest`].
pub trait McpResponse<Error>: model::Response<Error> {}

impl McpRequest for serde_json::Value {}
impl<E> McpResponse<E> for serde_json::Value {}
impl<E> McpResponse<E> for Option<serde_json::Value> {}

#[cfg(feature = "rmcp")]
impl McpRequest for rmcp::model::ClientRequest {}
#[cfg(feature = "rmcp")]
impl McpRequest for crate::rmcp::RequestWithContext {}
#[cfg(feature = "rmcp")]
impl<E: From<rmcp::ErrorData> + 'static> McpResponse<E> for rmcp::model::ServerResult {}

#[cfg(feature = "tower-mcp")]
impl McpRequest for tower_mcp::RouterRequest {}
#[cfg(feature = "tower-mcp")]
impl<E> McpResponse<E> for tower_mcp::RouterResponse {}
