//! [`LayeredHandler`]: an rmcp [`ServerHandler`] whose `tools/call`,
//! `tasks/get` and `tools/list` go through a tower stack, and whose every
//! other method is the inner handler's.

use std::borrow::Cow;
use std::future::{Future, poll_fn};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelTaskParams,
    CancelledNotificationParam, ClientRequest, CompleteRequestParams, CompleteResult,
    CustomNotification, CustomRequest, CustomResult, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskRequest,
    GetTaskResult, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsRequest,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, ServerResult, SubscribeRequestParams, SubscriptionFilter,
    Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
// Logging is deprecated in rmcp, yet the inner handler may still implement it.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tower::BoxError;
use tower_layer::Layer;
use tower_service::Service;

use super::handler_service::HandlerService;
use super::request::RequestWithContext;

/// A [`ServerHandler`] that sends each `tools/call`, `tasks/get` and
/// `tools/list` through a tower stack built on [`HandlerService`], and hands
/// every other method straight to the inner handler.
///
/// Made by [`ServerHandlerExt`](super::ServerHandlerExt). Serve it like any
/// handler: `serve(stdio())`, or from the factory of a `StreamableHttpService`.
///
/// The stack is cloned for each call, then driven to readiness and called: the
/// clone that is called is always the one that was made ready. A stack error that
/// is not an [`ErrorData`] (a timeout's, say) becomes a -32603 error whose
/// message is the error's `Display`.
#[derive(Debug)]
pub struct LayeredHandler<H, S> {
    handler: Arc<H>,
    stack: S,
}

impl<H, S> LayeredHandler<H, S> {
    /// Serves `handler`, its `tools/call` through `layer`.
    pub fn new<L>(handler: H, layer: L) -> Self
    where
        L: Layer<HandlerService<H>, Service = S>,
    {
        let handler = Arc::new(handler);
        let stack = layer.layer(HandlerService::new(Arc::clone(&handler)));
        Self { handler, stack }
    }

    /// The inner handler.
    pub fn get_ref(&self) -> &H {
        &self.handler
    }

    /// The tower stack `tools/call` goes through.
    pub fn stack(&self) -> &S {
        &self.stack
    }
}

impl<H, S: Clone> Clone for LayeredHandler<H, S> {
    fn clone(&self) -> Self {
        Self {
            handler: Arc::clone(&self.handler),
            stack: self.stack.clone(),
        }
    }
}

/// Sends `request` through a clone of `stack`, made ready first.
async fn through_stack<S>(
    mut stack: S,
    request: ClientRequest,
    context: RequestContext<RoleServer>,
) -> Result<ServerResult, ErrorData>
where
    S: Service<RequestWithContext, Response = ServerResult>,
    S::Error: Into<BoxError>,
{
    let request = RequestWithContext::new(request, context);
    poll_fn(|cx| stack.poll_ready(cx))
        .await
        .map_err(into_error_data)?;
    stack.call(request).await.map_err(into_error_data)
}

/// The answer of the stack as the answer of `get_task`.
fn into_get_task_result(result: ServerResult) -> Result<GetTaskResult, ErrorData> {
    match result {
        ServerResult::GetTaskResult(result) => Ok(result),
        _ => Err(ErrorData::internal_error(
            "a layer answered tasks/get with a result that is not a tasks/get result",
            None,
        )),
    }
}

/// The answer of the stack as the answer of `list_tools`.
fn into_list_tools_result(result: ServerResult) -> Result<ListToolsResult, ErrorData> {
    match result {
        ServerResult::ListToolsResult(result) => Ok(result),
        _ => Err(ErrorData::internal_error(
            "a layer answered tools/list with a result that is not a tools/list result",
            None,
        )),
    }
}

/// The answer of the stack as the answer of `call_tool`.
fn into_call_tool_response(result: ServerResult) -> Result<CallToolResponse, ErrorData> {
    match result {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
        _ => Err(ErrorData::internal_error(
            "a layer answered tools/call with a result that is not a tools/call result",
            None,
        )),
    }
}

/// An error of the stack as a JSON-RPC error: rmcp's own errors stay as they are.
fn into_error_data(error: impl Into<BoxError>) -> ErrorData {
    match error.into().downcast::<ErrorData>() {
        Ok(error) => *error,
        Err(other) => ErrorData::internal_error(other.to_string(), None),
    }
}

/// One method of the impl per line, each handing its arguments to the same
/// method of the inner handler: `async` for a method whose answer is a future,
/// `fn` for one that answers at once.
macro_rules! forwarding_fns {
    ($($kind:tt $name:ident($($arg:ident: $type:ty),*) -> $answer:ty;)*) => {
        $(forwarding_fns!(@one $kind $name($($arg: $type),*) -> $answer);)*
    };
    (@one async $name:ident($($arg:ident: $type:ty),*) -> $answer:ty) => {
        fn $name(&self, $($arg: $type),*) -> impl Future<Output = $answer> + MaybeSendFuture + '_ {
            self.handler.$name($($arg),*)
        }
    };
    (@one fn $name:ident($($arg:ident: $type:ty),*) -> $answer:ty) => {
        fn $name(&self, $($arg: $type),*) -> $answer {
            self.handler.$name($($arg),*)
        }
    };
}

#[allow(deprecated)]
#[warn(clippy::missing_trait_methods)]
impl<H, S> ServerHandler for LayeredHandler<H, S>
where
    H: ServerHandler,
    S: Service<RequestWithContext, Response = ServerResult> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
{
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        let answer = through_stack(self.stack.clone(), request, context);
        async move { into_call_tool_response(answer.await?) }
    }

    fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetTaskResult, ErrorData>> + MaybeSendFuture + '_ {
        // Through the stack: a completed task's result is the result of a
        // `tools/call`, rewrapped like one.
        let request = ClientRequest::GetTaskRequest(GetTaskRequest::new(request));
        let answer = through_stack(self.stack.clone(), request, context);
        async move { into_get_task_result(answer.await?) }
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        // Through the stack: the tools it lists are the names the metric
        // records (`tools/call` failures included).
        let request = ClientRequest::ListToolsRequest(match request {
            Some(params) => ListToolsRequest::with_param(params),
            None => ListToolsRequest::default(),
        });
        let answer = through_stack(self.stack.clone(), request, context);
        async move { into_list_tools_result(answer.await?) }
    }

    // Every other method of the trait, handed to the inner handler as it is,
    // including the deprecated ones: a method left to its default would answer
    // for the inner handler without asking it. Clippy's `missing_trait_methods`
    // (on the impl) names any method missing here; CI lints against the newest
    // rmcp 3.x too (scripts/ci/rmcp_newest.sh).
    forwarding_fns! {
        async ping(context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        async initialize(request: InitializeRequestParams, context: RequestContext<RoleServer>) -> Result<InitializeResult, ErrorData>;
        fn negotiate_initialize(request: &InitializeRequestParams) -> Result<InitializeResult, ErrorData>;
        fn supported_protocol_versions() -> Cow<'static, [ProtocolVersion]>;
        async discover(context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData>;
        async complete(request: CompleteRequestParams, context: RequestContext<RoleServer>) -> Result<CompleteResult, ErrorData>;
        async set_level(request: SetLevelRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        async get_prompt(request: GetPromptRequestParams, context: RequestContext<RoleServer>) -> Result<GetPromptResponse, ErrorData>;
        async list_prompts(request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListPromptsResult, ErrorData>;
        async list_resources(request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData>;
        async list_resource_templates(request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListResourceTemplatesResult, ErrorData>;
        async read_resource(request: ReadResourceRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData>;
        fn accepted_subscription_filter(requested: &SubscriptionFilter) -> Option<SubscriptionFilter>;
        async listen(context: SubscriptionContext) -> Result<(), ErrorData>;
        async subscribe(request: SubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        async unsubscribe(request: UnsubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        fn get_tool(name: &str) -> Option<Tool>;
        async on_custom_request(request: CustomRequest, context: RequestContext<RoleServer>) -> Result<CustomResult, ErrorData>;
        async on_cancelled(notification: CancelledNotificationParam, context: NotificationContext<RoleServer>) -> ();
        async on_progress(notification: ProgressNotificationParam, context: NotificationContext<RoleServer>) -> ();
        async on_initialized(context: NotificationContext<RoleServer>) -> ();
        async on_roots_list_changed(context: NotificationContext<RoleServer>) -> ();
        async on_custom_notification(notification: CustomNotification, context: NotificationContext<RoleServer>) -> ();
        fn get_info() -> ServerConfig;
        async update_task(request: UpdateTaskParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        async cancel_task(request: CancelTaskParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        async list_skills(request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListSkillsResult, ErrorData>;
        async get_skill(request: GetSkillRequestParams, context: RequestContext<RoleServer>) -> Result<GetSkillResult, ErrorData>;
        async read_resource_directory(request: ReadResourceDirectoryRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceDirectoryResult, ErrorData>;
    }
}
