//! What the layer costs in heap allocations behind rmcp and behind tower-mcp,
//! for one successful `tools/call`, counted exactly (the JSON path is counted in
//! `tests/allocations.rs`).
//!
//! Every figure is the layered call minus the bare one, for the same handler or
//! router and the same request, so the allocations of the handler, the router
//! and the messages cancel out. Requests and contexts are made before the
//! count and moved in; only the current thread is counted, and the futures,
//! ready at their first poll, are polled here with a no-op waker, so no runtime
//! runs during a count.

#[path = "support/counting_allocator.rs"]
mod counting_allocator;
mod support;

use counting_allocator::count_allocations;
use support::complete::complete;

/// 24 bytes: the longest tool name kept inline.
const INLINE_TOOL: &str = "list_merge_requests_open";
/// 25 bytes: one past it.
const SPILLED_TOOL: &str = "list_merge_requests_draft";

/// How many more allocations `layered` made than `bare`; both are run once
/// first, since first uses register `tracing` callsites and thread-locals, and
/// that is not what a call costs.
fn extra_allocations<T>(mut bare: impl FnMut() -> T, mut layered: impl FnMut() -> T) -> usize {
    drop(bare());
    drop(layered());
    let (bare_output, bare_count) = count_allocations(&mut bare);
    let (layered_output, layered_count) = count_allocations(&mut layered);
    drop((bare_output, layered_output));
    layered_count
        .checked_sub(bare_count)
        .unwrap_or_else(|| panic!("layered made {layered_count} allocations, bare {bare_count}"))
}

#[test]
fn the_tool_names_straddle_the_inline_capacity() {
    assert_eq!(INLINE_TOOL.len(), 24);
    assert_eq!(SPILLED_TOOL.len(), 25);
}

mod rmcp_path {
    use mcp_tool_errors::rmcp::ServerHandlerExt;
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, RequestId,
        ServerCapabilities, ServerConfig,
    };
    use rmcp::service::{MaybeSendFuture, RequestContext, serve_directly};
    use rmcp::{ErrorData, RoleServer, ServerHandler};

    use super::{INLINE_TOOL, SPILLED_TOOL, complete, extra_allocations};

    /// A handler whose every `tools/call` succeeds with a copy of one result
    /// held in memory, ready at once.
    #[derive(Debug, Clone)]
    struct Answering {
        result: CallToolResult,
    }

    impl ServerHandler for Answering {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        fn call_tool(
            &self,
            _request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_
        {
            std::future::ready(Ok(CallToolResponse::Complete(self.result.clone())))
        }
    }

    /// The extra allocations of `with_tool_errors()` for one successful call of
    /// `tool`.
    fn extra_allocations_of_a_call(tool: &'static str) -> usize {
        let handler = Answering {
            result: CallToolResult::success(vec![ContentBlock::text("3 open merge requests")]),
        };
        let layered = handler.clone().with_tool_errors();

        // The peer of the context comes from a server on a duplex nobody reads:
        // made in a runtime (it spawns its serve loop), which is never driven, so
        // nothing of it runs while counting.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _in_runtime = runtime.enter();
        let (server_io, _client_io) = tokio::io::duplex(64 * 1024);
        let server = serve_directly::<RoleServer, _, _, _, _>(handler.clone(), server_io, None);
        let context = RequestContext::new(RequestId::Number(1), server.peer().clone());
        let params = CallToolRequestParams::new(tool);

        // Both sides clone the request and the context into the call in the
        // same way, so those clones cancel out.
        let succeeded = |answered: Result<CallToolResponse, ErrorData>| {
            let Ok(CallToolResponse::Complete(result)) = answered else {
                panic!("a completed tool result expected, got {answered:?}")
            };
            assert_eq!(
                result, handler.result,
                "the success passes through unchanged"
            );
            result
        };
        extra_allocations(
            || succeeded(complete(handler.call_tool(params.clone(), context.clone()))),
            || succeeded(complete(layered.call_tool(params.clone(), context.clone()))),
        )
    }

    /// What the extra allocation is, read from `src/rmcp/`: `LayeredHandler`
    /// clones its stack for the call (a `ToolErrors` over a `HandlerService`:
    /// reference counts only, no allocation), the layer keeps the tool name
    /// and the integer id inline, and `HandlerService` boxes the future of the
    /// handler's `call_tool` in its `HandlerFuture`: that box is the one.
    #[test]
    fn a_successful_call_through_with_tool_errors_allocates_once_more_the_boxed_handler_future() {
        assert_eq!(extra_allocations_of_a_call(INLINE_TOOL), 1);
    }

    /// The count can fail: a tool name past the inline capacity costs exactly one
    /// more.
    #[test]
    fn a_tool_name_past_inline_capacity_costs_one_more() {
        assert_eq!(extra_allocations_of_a_call(SPILLED_TOOL), 2);
    }
}

mod tower_mcp_path {
    use mcp_tool_errors::ToolErrorLayer;
    use serde_json::json;
    use std::future::poll_fn;
    use tower::{Layer, Service};
    use tower_mcp::{
        CallToolParams, CallToolResult, McpRequest, McpResponse, McpRouter, NoParams, RequestId,
        RouterRequest, RouterResponse, ToolBuilder,
    };

    use super::{INLINE_TOOL, SPILLED_TOOL, complete, extra_allocations};

    /// A router with one tool, `tool`, that succeeds at once, its session
    /// initialized as after the handshake.
    fn router(tool: &str) -> McpRouter {
        let router = McpRouter::new().server_info("tests", "1.0.0").tool(
            ToolBuilder::new(tool)
                .description("Succeeds at once.")
                .handler(|_: NoParams| async { Ok(CallToolResult::text("3 open merge requests")) })
                .build(),
        );
        assert!(router.session().mark_preinitialized());
        router
    }

    /// One request through `service`, made ready first.
    fn respond<S>(service: &mut S, request: RouterRequest) -> S::Response
    where
        S: Service<RouterRequest>,
        S::Error: std::fmt::Debug,
    {
        complete(poll_fn(|cx| service.poll_ready(cx))).unwrap();
        complete(service.call(request)).unwrap()
    }

    /// The extra allocations of `ToolErrorLayer` in front of the router service
    /// for one successful call of `tool`.
    fn extra_allocations_of_a_call(tool: &str) -> usize {
        let mut bare = router(tool);
        let mut layered = ToolErrorLayer::new().layer(bare.clone());
        let params: CallToolParams =
            serde_json::from_value(json!({"name": tool, "arguments": {}})).unwrap();
        let request = RouterRequest::new(RequestId::Number(1), McpRequest::CallTool(params));

        let succeeded = |response: RouterResponse| {
            let Ok(McpResponse::CallTool(result)) = &response.inner else {
                panic!("a tool result expected, got {response:?}")
            };
            assert!(!result.is_error, "{result:?}");
            response
        };
        extra_allocations(
            || succeeded(respond(&mut bare, request.clone())),
            || succeeded(respond(&mut layered, request.clone())),
        )
    }

    /// The layer keeps the integer id and the tool name inline in its future,
    /// and the router's own boxed future is there with or without it.
    #[test]
    fn a_successful_call_through_the_layer_allocates_nothing_extra() {
        assert_eq!(extra_allocations_of_a_call(INLINE_TOOL), 0);
    }

    /// The count can fail: a tool name past the inline capacity costs exactly one
    /// more.
    #[test]
    fn a_tool_name_past_inline_capacity_costs_one_more() {
        assert_eq!(extra_allocations_of_a_call(SPILLED_TOOL), 1);
    }
}
