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
//! Install a `tracing` subscriber (`tracing_subscriber::fmt().init()`, say): the
//! layer logs every caught panic, payload included, with `tracing::error!`, and
//! that log is where "the details are in the server log" points.
//!
//! # Message types
//!
//! [`McpRequest`] and [`McpResponse`] list every message type the layer reads:
//!
//! - any `tower::Service` over [`serde_json::Value`] (one JSON-RPC message or a
//!   batch in, a `Value` or `Option<Value>` out): [`ToolErrorLayer`] or
//!   [`ServiceBuilderExt::tool_errors`];
//! - rmcp servers (feature `rmcp`): `ServerHandlerExt::with_tool_errors()`, see
//!   the `rmcp` module;
//! - tower-mcp transports (feature `tower-mcp`): `.layer(ToolErrorLayer::new())`,
//!   see [tower-mcp](#tower-mcp-feature-tower-mcp) below.
//! - a `tools/call` result already at hand, outside any service (a gateway's
//!   hook after each tool call): [`ToolErrorLayer::rewrap_result`]; a caller
//!   that runs the call itself (a language binding) times it with
//!   [`ToolErrorLayer::tool_timeout_of`] and answers its failures with
//!   [`ToolErrorLayer::timed_out_result`] and [`ToolErrorLayer::crashed_result`],
//!   logging what [`ToolErrorLayer::scrub_log_text`] leaves of a panic's message,
//!   and cancels a call it timed out in the server with
//!   [`TIMEOUT_CANCELLATION_REASON`]; a proxy refuses a request whose id is in
//!   use with [`JsonRpcId::in_use_message`].
//!
//! # No response on the `Value` path
//!
//! Where the layer answers in place of the inner service (a panic, a timeout)
//! and nothing in the message expects an answer (a notification, or a batch of
//! only notifications), there is no response to send. A `Service<Value>` whose
//! inner service answers a bare `Value` returns `Value::Null` then: a transport
//! must write nothing for it, never the line `null`.
//!
//! ```
//! use mcp_tool_errors::ToolErrors;
//! use serde_json::{Value, json};
//! use tower::{ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = service_fn(|_request: Value| async move {
//!     panic!("the handler failed");
//!     #[allow(unreachable_code)]
//!     Ok::<Value, std::convert::Infallible>(Value::Null)
//! });
//! let notification = json!({"jsonrpc": "2.0", "method": "tools/call",
//!                           "params": {"name": "deploy", "arguments": {}}});
//! # let hook = std::panic::take_hook();
//! # std::panic::set_hook(Box::new(|_| {}));
//! let response = ToolErrors::new(server).oneshot(notification).await.unwrap();
//! # std::panic::set_hook(hook);
//! assert_eq!(response, Value::Null); // no response: write nothing
//! # }
//! ```
//!
//! A transport does better with an inner service that answers
//! `Option<Value>` (`None` for no response): the layered service is then a
//! `Service<Value, Response = Option<Value>>` too, and says `None` itself.
//!
//! ```
//! use mcp_tool_errors::ToolErrors;
//! use serde_json::{Value, json};
//! use tower::{Service, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A server whose handler of `notifications/initialized` panics.
//! let server = service_fn(|request: Value| async move {
//!     if request.get("id").is_none() {
//!         panic!("the handler failed");
//!     }
//!     Ok::<Option<Value>, std::convert::Infallible>(Some(json!({
//!         "jsonrpc": "2.0", "id": request["id"], "result": {},
//!     })))
//! });
//! let mut service = ToolErrors::new(server);
//! let mut written = Vec::new();
//! # let hook = std::panic::take_hook();
//! # std::panic::set_hook(Box::new(|_| {}));
//! for line in [
//!     r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
//!     r#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#,
//! ] {
//!     let request: Value = serde_json::from_str(line).unwrap();
//!     let response = service.ready().await.unwrap().call(request).await.unwrap();
//!     // The transport writes a line only for `Some`.
//!     if let Some(response) = response {
//!         written.push(response);
//!     }
//! }
//! # std::panic::set_hook(hook);
//! assert_eq!(written, [json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
//! # }
//! ```
//!
//! # The contract
//!
//! **llmxml.** The text the model reads is one element, the error dialect of
//! [go-gerrit-mcp](https://github.com/GaijinEntertainment/go-gerrit-mcp):
//! `render_error(tool, message)` is `<error tool=` + Q(tool) + `>`, a newline,
//! G(message), a newline and `</error>`, with no trailing newline.
//!
//! - Q is Go's `strconv.Quote`, byte for byte: `"` and `\` escaped;
//!   `\a \b \f \n \r \t \v`; other control bytes as `\x1b`; non-printable
//!   characters as `\u00ad` / `\U0010ffff` (lowercase hex); printable Unicode kept
//!   as it is, judged with the Unicode 15.0.0 tables Go uses.
//! - G is the message verbatim, except that the `<` of every `<error` and
//!   `</error` (ASCII case-insensitive) becomes `&lt;`: no message can close the
//!   element early or forge another one.
//!
//! **Rewrapping**, for the response to a `tools/call` request only (matched by id):
//!
//! - a JSON-RPC `error` response is untouched;
//! - a result whose `isError` is absent or not `true` is untouched;
//! - a result with `isError: true` has the `text` of every `"type": "text"`
//!   content item replaced by `render_error(tool, text)`, in place: every other
//!   field keeps its value and its position (the key order is the inner server's,
//!   whichever map serde_json uses in the build), while an object the layer
//!   creates itself (an answer of its own, a text item it adds) has its keys
//!   sorted, the same bytes under either map;
//! - a text that is already exactly `render_error`'s output is left alone, so
//!   stacking the layer, or a handler that renders its own llmxml, never wraps
//!   twice, while a forged look-alike is still wrapped;
//! - an error result with no text item at all gets one, first, with a fixed
//!   message, so the model always gets a reason;
//! - anything malformed (content not an array, a text item whose `text` is not a
//!   string) leaves the whole response untouched; the layer never panics;
//! - in a batch, each response is matched to its request by id.
//!
//! **Panics** are caught both while calling the inner service and while polling
//! its future, in the caller's task (never spawned: task-locals keep working):
//!
//! - a panicked `tools/call` is answered with an `isError` result holding
//!   `render_error(tool, M)` and the request's id; M is a fixed sentence, since a
//!   payload may hold secrets, unless
//!   [`expose_panic_messages(true)`](ToolErrorLayer::expose_panic_messages);
//! - any other request gets a JSON-RPC error `-32603` with its id; a notification
//!   gets no response (`None`, or `Value::Null` on a bare `Value` path: see
//!   [No response on the `Value` path](#no-response-on-the-value-path));
//! - every caught panic is logged with `tracing::error!` (tool, id, payload).
//!
//! **Timeouts** (opt-in, [`ToolErrorLayer::tool_timeout`],
//! [`ToolErrorLayer::tool_timeout_for`]): a `tools/call` not answered in time is
//! answered with an `isError` result, `The tool did not finish within D and was
//! cancelled.`, and the handler's future is dropped. Only `tools/call` is timed.
//!
//! **Tasks.** A `tools/call` answered with a task handle is remembered (at most
//! [`ToolErrorLayer::max_remembered_tasks`], 1024 by default), and the task's
//! `isError` result is rewrapped wherever it is delivered (`tasks/get` under
//! `completed` or `failed`, and `tasks/result` on the JSON path), alike on
//! every delivery, in any order after any poll, until its TTL passes or newer
//! tasks push it out, least recently used first. No status and no JSON-RPC
//! error answering a poll forgets a task. One memory per layer value, shared by
//! every service it builds: build the layer once and apply it to each session.
//!
//! **Sanitizing** (opt-in, `ToolErrorLayer::redact_secrets` with the feature
//! `redact`,
//! [`ToolErrorLayer::redact_with`], [`ToolErrorLayer::max_error_bytes`],
//! [`install_panic_hook`]): credentials in error texts become `[REDACTED]`, error
//! bodies are capped, and caught panic payloads stay off stderr. With every
//! option off, the output is the go-gerrit-mcp element of the tool's own text.
//! A renderer or scrubber that panics never takes a request down: the
//! `tools/call` is answered with `render_error(tool, "The tool failed and its
//! error could not be rendered. The details are in the server log.")`.
//!
//! # Cargo features
//!
//! - `redact`: `ToolErrorLayer::redact_secrets` and the regex engine behind
//!   its patterns; off by default, so that a default build compiles no regex.
//! - `rmcp`, `tower-mcp`: the layer for their message types (see above).
//! - `opentelemetry`: the request span continues the client's trace.
//!
//! The `mcp-tool-errors` command is not a feature: it is a package of its own,
//! `mcp-tool-errors-cli` in `cli/`, built on this crate with `redact`.
//!
//! **Errors.** `Error = S::Error`: an error of the inner service passes through as
//! it is. The layer makes an error of its own only where the message type cannot
//! carry an answer otherwise, each listed on [`ToolErrors`].
//!
//! # Panics and `panic = "abort"`
//!
//! Panics are caught with `catch_unwind`. A build with `panic = "abort"` cannot
//! catch anything, and the default panic hook still prints each panic to stderr.
#![doc = include_str!("docs/telemetry.md")]
#![cfg_attr(feature = "tower-mcp", doc = include_str!("docs/tower_mcp.md"))]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod answers;
mod builder;
mod config;
pub mod future;
mod json;
mod json_rpc_id;
mod layer;
mod matching;
mod message;
mod model;
mod panic;
mod render;
mod result_at_hand;
mod rewrap;
#[cfg(feature = "rmcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
pub mod rmcp;
mod sanitize;
mod service;
mod tasks;
mod telemetry;
mod timeout;
#[cfg(feature = "tower-mcp")]
mod tower_mcp;
mod unanswered;

pub use builder::ServiceBuilderExt;
pub use json_rpc_id::JsonRpcId;
pub use layer::ToolErrorLayer;
pub use message::{McpRequest, McpResponse};
pub use render::{ErrorRenderer, Llmxml, is_rendered, render_error};
pub use result_at_hand::TIMEOUT_CANCELLATION_REASON;
pub use sanitize::install_panic_hook;
pub use service::ToolErrors;
pub use telemetry::NoAnswer;

/// The traits message types implement are crate-private, and sealed: no user
/// names them.
///
/// ```compile_fail,E0432
/// use mcp_tool_errors::model::{Request, Response};
/// ```
///
/// ```compile_fail,E0432
/// use mcp_tool_errors::{Calls, Request, Response};
/// ```
#[cfg(doctest)]
struct AdapterTraitsArePrivate;

// The README's examples use rmcp, tower-mcp and `redact_secrets`, so they are
// compiled and run with those features on, as the test command
// (`cargo test --all-features`) does.
#[cfg(all(doctest, feature = "rmcp", feature = "tower-mcp", feature = "redact"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
