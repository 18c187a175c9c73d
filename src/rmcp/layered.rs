//! [`LayeredHandler`]: an rmcp [`ServerHandler`] whose `tools/call` goes through a
//! tower stack, and whose every other method is the inner handler's.

use std::borrow::Cow;
use std::future::{Future, poll_fn};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelTaskParams,
    CancelledNotificationParam, ClientRequest, CompleteRequestParams, CompleteResult,
    CustomNotification, CustomRequest, CustomResult, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskRequest,
    GetTaskResult, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
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

/// A [`ServerHandler`] that sends each `tools/call` and `tasks/get` through a
/// tower stack built on [`HandlerService`], and hands every other method
/// straight to the inner handler.
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

// Every method of the trait is written out, including the deprecated ones: a
// method left to its default would answer for the inner handler without asking it.
#[allow(deprecated)]
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

    fn ping(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.handler.ping(context)
    }

    fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<InitializeResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.initialize(request, context)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.handler.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.handler.supported_protocol_versions()
    }

    fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<DiscoverResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.discover(context)
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.complete(request, context)
    }

    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.handler.set_level(request, context)
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.get_prompt(request, context)
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.list_prompts(request, context)
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.list_resources(request, context)
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, ErrorData>> + MaybeSendFuture + '_
    {
        self.handler.list_resource_templates(request, context)
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.read_resource(request, context)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.handler.accepted_subscription_filter(requested)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.handler.listen(context)
    }

    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.handler.subscribe(request, context)
    }

    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.handler.unsubscribe(request, context)
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.list_tools(request, context)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.handler.get_tool(name)
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.on_custom_request(request, context)
    }

    fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_cancelled(notification, context)
    }

    fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_progress(notification, context)
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_initialized(context)
    }

    fn on_roots_list_changed(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_roots_list_changed(context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.handler.on_custom_notification(notification, context)
    }

    fn get_info(&self) -> ServerConfig {
        self.handler.get_info()
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

    fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.handler.update_task(request, context)
    }

    fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        self.handler.cancel_task(request, context)
    }

    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListSkillsResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.list_skills(request, context)
    }

    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetSkillResult, ErrorData>> + MaybeSendFuture + '_ {
        self.handler.get_skill(request, context)
    }

    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceDirectoryResult, ErrorData>> + MaybeSendFuture + '_
    {
        self.handler.read_resource_directory(request, context)
    }
}
