//! Every `ServerHandler` method of a layered handler reaches the inner handler:
//! each one is called and must be seen by a handler that records its calls.
// Logging, sampling and the legacy subscriptions are deprecated in rmcp, and
// still part of the trait the wrapper must forward.
#![allow(deprecated)]

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::future::Future;
use std::sync::{Arc, Mutex};

use mcp_tool_errors::render_error;
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CancelledNotificationParam, ClientCapabilities, ClientNotification, ClientRequest,
    CompleteRequestParams, CompleteResult, ContentBlock, CustomNotification, CustomRequest,
    CustomResult, DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, RequestId, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, Service as _, SubscriptionContext, serve_directly,
};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::servers::{HANG_GUARD, answered};

/// Every method of rmcp 3.11's `ServerHandler`. When a release adds one, the
/// unit test of `src/rmcp/layered.rs`, which reads the trait from rmcp's source,
/// fails until the layered handler forwards it; the new method belongs here too.
const ALL_METHODS: [&str; 32] = [
    "accepted_subscription_filter",
    "call_tool",
    "cancel_task",
    "complete",
    "discover",
    "get_info",
    "get_prompt",
    "get_skill",
    "get_task",
    "get_tool",
    "initialize",
    "list_prompts",
    "list_resource_templates",
    "list_resources",
    "list_skills",
    "list_tools",
    "listen",
    "negotiate_initialize",
    "on_cancelled",
    "on_custom_notification",
    "on_custom_request",
    "on_initialized",
    "on_progress",
    "on_roots_list_changed",
    "ping",
    "read_resource",
    "read_resource_directory",
    "set_level",
    "subscribe",
    "supported_protocol_versions",
    "unsubscribe",
    "update_task",
];

/// A handler that records each method called and refuses every request with an
/// error naming the method, so that an answer shows where it came from.
#[derive(Debug, Clone, Default)]
struct Recorder {
    calls: Arc<Mutex<Vec<&'static str>>>,
}

impl Recorder {
    fn record(&self, method: &'static str) {
        self.calls.lock().unwrap().push(method);
    }

    fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    fn refuse<T>(&self, method: &'static str) -> Result<T, ErrorData> {
        self.record(method);
        Err(refusal(method))
    }
}

fn refusal(method: &str) -> ErrorData {
    ErrorData::internal_error(format!("the inner handler's {method}"), None)
}

impl ServerHandler for Recorder {
    async fn ping(&self, _: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.refuse("ping")
    }

    async fn initialize(
        &self,
        _: InitializeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.refuse("initialize")
    }

    fn negotiate_initialize(
        &self,
        _: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.refuse("negotiate_initialize")
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.record("supported_protocol_versions");
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    async fn discover(&self, _: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.refuse("discover")
    }

    async fn complete(
        &self,
        _: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.refuse("complete")
    }

    async fn set_level(
        &self,
        _: SetLevelRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.refuse("set_level")
    }

    async fn get_prompt(
        &self,
        _: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.refuse("get_prompt")
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.refuse("list_prompts")
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.refuse("list_resources")
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.refuse("list_resource_templates")
    }

    async fn read_resource(
        &self,
        _: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.refuse("read_resource")
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.record("accepted_subscription_filter");
        Some(requested.clone())
    }

    async fn listen(&self, _: SubscriptionContext) -> Result<(), ErrorData> {
        self.refuse("listen")
    }

    async fn subscribe(
        &self,
        _: SubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.refuse("subscribe")
    }

    async fn unsubscribe(
        &self,
        _: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.refuse("unsubscribe")
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.record("call_tool");
        let text = format!("the inner handler's call_tool of {}", request.name);
        Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.refuse("list_tools")
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.record("get_tool");
        (name == "known").then(|| Tool::new("known", "a tool", Arc::new(Default::default())))
    }

    async fn on_custom_request(
        &self,
        _: CustomRequest,
        _: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.refuse("on_custom_request")
    }

    async fn on_cancelled(
        &self,
        _: CancelledNotificationParam,
        _: NotificationContext<RoleServer>,
    ) {
        self.record("on_cancelled");
    }

    async fn on_progress(&self, _: ProgressNotificationParam, _: NotificationContext<RoleServer>) {
        self.record("on_progress");
    }

    async fn on_initialized(&self, _: NotificationContext<RoleServer>) {
        self.record("on_initialized");
    }

    async fn on_roots_list_changed(&self, _: NotificationContext<RoleServer>) {
        self.record("on_roots_list_changed");
    }

    async fn on_custom_notification(
        &self,
        _: CustomNotification,
        _: NotificationContext<RoleServer>,
    ) {
        self.record("on_custom_notification");
    }

    fn get_info(&self) -> ServerConfig {
        self.record("get_info");
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.instructions = Some("the inner handler's info".to_owned());
        info
    }

    async fn get_task(
        &self,
        _: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.refuse("get_task")
    }

    async fn update_task(
        &self,
        _: UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.refuse("update_task")
    }

    async fn cancel_task(
        &self,
        _: CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.refuse("cancel_task")
    }

    async fn list_skills(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.refuse("list_skills")
    }

    async fn get_skill(
        &self,
        _: GetSkillRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.refuse("get_skill")
    }

    async fn read_resource_directory(
        &self,
        _: ReadResourceDirectoryRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.refuse("read_resource_directory")
    }
}

/// Parameters from their JSON form: most of rmcp's are `#[non_exhaustive]`.
fn params<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

/// Checks that each method reaches the recorder, and keeps the list of those checked.
struct Probe {
    recorder: Recorder,
    peer: Peer<RoleServer>,
    reached: BTreeSet<&'static str>,
}

impl Probe {
    fn context(&self) -> RequestContext<RoleServer> {
        RequestContext::new(RequestId::Number(1), self.peer.clone())
    }

    /// `call` must be answered with the inner handler's refusal, after exactly one call of `method`.
    async fn refused<T: Debug, F: Future<Output = Result<T, ErrorData>>>(
        &mut self,
        method: &'static str,
        call: impl FnOnce(&Self) -> F,
    ) {
        self.recorder.take();
        let answer = answered(method, call(self)).await;
        assert_eq!(answer.unwrap_err(), refusal(method), "{method}");
        self.seen_only(method);
    }

    fn seen_only(&mut self, method: &'static str) {
        assert_eq!(
            self.recorder.take(),
            [method],
            "{method} did not reach the inner handler alone"
        );
        self.reached.insert(method);
    }

    /// Waits until `method` has been seen among others (rmcp's own dispatch also
    /// asks for the server's info, for one).
    async fn eventually_seen(&mut self, method: &'static str) {
        let deadline = tokio::time::Instant::now() + HANG_GUARD;
        while !self.recorder.calls.lock().unwrap().contains(&method) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{method} never reached the inner handler"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        self.recorder.take();
        self.reached.insert(method);
    }
}

#[tokio::test]
async fn every_server_handler_method_reaches_the_inner_handler() {
    let recorder = Recorder::default();
    let layered = recorder.clone().with_tool_errors();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let mut client_info: rmcp::model::ClientConfig = Default::default();
    client_info.protocol_version = ProtocolVersion::V_2025_11_25;
    let server =
        serve_directly::<RoleServer, _, _, _, _>(layered.clone(), server_io, Some(client_info));
    let client = serve_directly::<RoleClient, _, _, _, _>(
        (),
        client_io,
        Some(InitializeResult::default().into()),
    );
    let mut probe = Probe {
        recorder,
        peer: server.peer().clone(),
        reached: BTreeSet::new(),
    };
    let layered = &layered;

    // Requests, called on the layered handler as rmcp's dispatch calls them.
    let initialize: InitializeRequestParams = params(json!({
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"},
    }));
    probe
        .refused("initialize", |p| {
            layered.initialize(initialize.clone(), p.context())
        })
        .await;
    probe.refused("ping", |p| layered.ping(p.context())).await;
    probe
        .refused("discover", |p| layered.discover(p.context()))
        .await;
    let complete = params(
        json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"}}),
    );
    probe
        .refused("complete", |p| layered.complete(complete, p.context()))
        .await;
    probe
        .refused("set_level", |p| {
            layered.set_level(params(json!({"level": "info"})), p.context())
        })
        .await;
    probe
        .refused("get_prompt", |p| {
            layered.get_prompt(params(json!({"name": "p"})), p.context())
        })
        .await;
    probe
        .refused("list_prompts", |p| layered.list_prompts(None, p.context()))
        .await;
    probe
        .refused("list_resources", |p| {
            layered.list_resources(None, p.context())
        })
        .await;
    probe
        .refused("list_resource_templates", |p| {
            layered.list_resource_templates(None, p.context())
        })
        .await;
    let uri = json!({"uri": "file:///a"});
    probe
        .refused("read_resource", |p| {
            layered.read_resource(params(uri.clone()), p.context())
        })
        .await;
    probe
        .refused("subscribe", |p| {
            layered.subscribe(params(uri.clone()), p.context())
        })
        .await;
    probe
        .refused("unsubscribe", |p| {
            layered.unsubscribe(params(uri.clone()), p.context())
        })
        .await;
    probe
        .refused("list_tools", |p| layered.list_tools(None, p.context()))
        .await;
    let custom = CustomRequest::new("custom/probe", None);
    probe
        .refused("on_custom_request", |p| {
            layered.on_custom_request(custom, p.context())
        })
        .await;
    let task = json!({"taskId": "t"});
    probe
        .refused("get_task", |p| {
            layered.get_task(params(task.clone()), p.context())
        })
        .await;
    let update = json!({"taskId": "t", "inputResponses": {}});
    probe
        .refused("update_task", |p| {
            layered.update_task(params(update), p.context())
        })
        .await;
    probe
        .refused("cancel_task", |p| {
            layered.cancel_task(params(task.clone()), p.context())
        })
        .await;
    probe
        .refused("list_skills", |p| layered.list_skills(None, p.context()))
        .await;
    let skill = json!({"uri": "skill://probe/SKILL.md"});
    probe
        .refused("get_skill", |p| {
            layered.get_skill(params(skill), p.context())
        })
        .await;
    let directory = json!({"uri": "file:///d/"});
    probe
        .refused("read_resource_directory", |p| {
            layered.read_resource_directory(params(directory), p.context())
        })
        .await;

    // tools/call reaches the inner handler through the layer.
    probe.recorder.take();
    let answer = answered(
        "call_tool",
        layered.call_tool(CallToolRequestParams::new("deploy"), probe.context()),
    )
    .await;
    let Ok(CallToolResponse::Complete(result)) = answer else {
        panic!("a complete tool result expected: {answer:?}")
    };
    let text = &result.content[0].as_text().unwrap().text;
    assert_eq!(
        *text,
        render_error("deploy", "the inner handler's call_tool of deploy")
    );
    probe.seen_only("call_tool");

    // The methods without a future.
    assert_eq!(
        layered.negotiate_initialize(&initialize).unwrap_err(),
        refusal("negotiate_initialize")
    );
    probe.seen_only("negotiate_initialize");
    assert_eq!(
        ServerHandler::supported_protocol_versions(layered),
        ProtocolVersion::KNOWN_VERSIONS
    );
    probe.seen_only("supported_protocol_versions");
    assert_eq!(
        layered.get_tool("known").map(|tool| tool.name),
        Some("known".into())
    );
    probe.seen_only("get_tool");
    assert_eq!(
        ServerHandler::get_info(layered).instructions.as_deref(),
        Some("the inner handler's info")
    );
    probe.seen_only("get_info");
    let filter = SubscriptionFilter::default();
    assert_eq!(layered.accepted_subscription_filter(&filter), Some(filter));
    probe.seen_only("accepted_subscription_filter");

    // listen takes a subscription only rmcp's dispatch can open: a 2026-07-28
    // subscriptions/listen, through the layered handler as rmcp runs it.
    let listen: ClientRequest =
        params(json!({"method": "subscriptions/listen", "params": {"notifications": {}}}));
    let mut context = probe.context();
    context
        .meta
        .set_protocol_version(ProtocolVersion::V_2026_07_28);
    context
        .meta
        .set_client_info(Implementation::new("probe", "1"));
    context
        .meta
        .set_client_capabilities(ClientCapabilities::default());
    probe.recorder.take();
    let answer = answered(
        "subscriptions/listen",
        layered.handle_request(listen, context),
    )
    .await;
    assert_eq!(answer.unwrap_err(), refusal("listen"));
    assert!(
        probe
            .recorder
            .calls
            .lock()
            .unwrap()
            .contains(&"accepted_subscription_filter")
    );
    probe.eventually_seen("listen").await;

    // Notifications, sent by a real client: NotificationContext is rmcp's to make.
    let cancelled = CancelledNotificationParam::new(Some(RequestId::Number(99)), None);
    client.notify_cancelled(cancelled).await.unwrap();
    probe.eventually_seen("on_cancelled").await;
    client
        .notify_progress(params(json!({"progressToken": 7, "progress": 1.0})))
        .await
        .unwrap();
    probe.eventually_seen("on_progress").await;
    client.notify_initialized().await.unwrap();
    probe.eventually_seen("on_initialized").await;
    client.notify_roots_list_changed().await.unwrap();
    probe.eventually_seen("on_roots_list_changed").await;
    let custom = ClientNotification::CustomNotification(CustomNotification::new(
        "notifications/probe",
        None,
    ));
    client.send_notification(custom).await.unwrap();
    probe.eventually_seen("on_custom_notification").await;

    let missing: Vec<_> = ALL_METHODS
        .iter()
        .filter(|method| !probe.reached.contains(*method))
        .collect();
    assert!(missing.is_empty(), "not checked: {missing:?}");
    drop(client);
    drop(server);
}
