//! The tools the MCP conformance suite (`@modelcontextprotocol/conformance`)
//! calls in its `tools-call-*` scenarios, with the names, arguments and results
//! its scenarios describe.
//!
//! Logging, progress, sampling and elicitation go through the request's own
//! `RequestContext` and its peer, so the suite passing through the layer shows
//! that the layer keeps them working.
// Logging, sampling and server-to-client requests are deprecated by the draft
// protocol revision (SEP-2577); the suite tests the 2025-06-18 and 2025-11-25
// revisions, where they are current.
#![allow(deprecated)]

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ClientResult, ContentBlock, CreateMessageRequestParams, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, LoggingLevel, ProgressNotificationParam,
    ResourceContents, SamplingMessage, ServerRequest,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, schemars, tool, tool_router};
use serde::Deserialize;

use super::DemoServer;

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

/// One millisecond of silence: 8 samples of 8-bit mono PCM at 8 kHz, as WAV.
const SILENCE_WAV: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// How long the logging and progress tools wait between two notifications, so
/// that the client receives them while the call is still running.
const STEP: Duration = Duration::from_millis(50);

/// The arguments of `test_sampling`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct SamplingArgs {
    /// The prompt to send to the client's model.
    prompt: String,
}

/// The arguments of `test_elicitation`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

#[tool_router(router = conformance_tools, vis = "pub(crate)")]
impl DemoServer {
    /// Conformance scenario `tools-call-simple-text`.
    #[tool(description = "Returns a simple text response.")]
    fn test_simple_text(&self) -> String {
        "This is a simple text response for testing.".into()
    }

    /// Conformance scenario `tools-call-image`.
    #[tool(description = "Returns a 1x1 red PNG image.")]
    fn test_image_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::image(RED_PIXEL_PNG, "image/png")])
    }

    /// Conformance scenario `tools-call-audio`.
    #[tool(description = "Returns one millisecond of silence as WAV audio.")]
    fn test_audio_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::audio(SILENCE_WAV, "audio/wav")])
    }

    /// Conformance scenario `tools-call-embedded-resource`.
    #[tool(description = "Returns an embedded text resource.")]
    fn test_embedded_resource(&self) -> CallToolResult {
        let resource = ResourceContents::text(
            "This is an embedded resource content.",
            "test://embedded-resource",
        );
        CallToolResult::success(vec![ContentBlock::resource(resource)])
    }

    /// Conformance scenario `tools-call-mixed-content`.
    #[tool(description = "Returns text, an image and an embedded resource.")]
    fn test_multiple_content_types(&self) -> CallToolResult {
        let resource = ResourceContents::text(
            r#"{"test":"data","value":123}"#,
            "test://mixed-content-resource",
        )
        .with_mime_type("application/json");
        CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(RED_PIXEL_PNG, "image/png"),
            ContentBlock::resource(resource),
        ])
    }

    /// Conformance scenario `tools-call-with-logging`.
    #[tool(description = "Sends three log messages while it runs.")]
    async fn test_tool_with_logging(&self, context: RequestContext<RoleServer>) -> String {
        let peer = &context.peer;
        self.log(peer, LoggingLevel::Info, "Tool execution started")
            .await;
        tokio::time::sleep(STEP).await;
        self.log(peer, LoggingLevel::Info, "Tool processing data")
            .await;
        tokio::time::sleep(STEP).await;
        self.log(peer, LoggingLevel::Info, "Tool execution completed")
            .await;
        "Tool with logging executed successfully".into()
    }

    /// Conformance scenario `tools-call-error`: a tool error, which the layer
    /// rewraps as llmxml.
    #[tool(description = "Always returns an error result.")]
    fn test_error_handling(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])
    }

    /// Conformance scenario `tools-call-with-progress`.
    #[tool(description = "Reports progress 0, 50 and 100 out of 100 while it runs.")]
    async fn test_tool_with_progress(&self, context: RequestContext<RoleServer>) -> String {
        let token = context.meta.get_progress_token();
        for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if step > 0 {
                tokio::time::sleep(STEP).await;
            }
            let Some(token) = &token else { continue };
            let notification =
                ProgressNotificationParam::new(token.clone(), progress).with_total(100.0);
            if let Err(error) = context.peer.notify_progress(notification).await {
                tracing::warn!(%error, "could not send a progress notification");
            }
        }
        "Tool with progress executed successfully".into()
    }

    /// Conformance scenario `tools-call-sampling`: asks the client's model.
    #[tool(description = "Sends `prompt` to the client's model and returns its answer.")]
    async fn test_sampling(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(SamplingArgs { prompt }): Parameters<SamplingArgs>,
    ) -> Result<String, String> {
        let supports_sampling = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.sampling.is_some());
        if !supports_sampling {
            return Err("the client does not support sampling".into());
        }
        let request =
            CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
        let answer = context
            .peer
            .create_message(request)
            .await
            .map_err(|error| format!("sampling failed: {error}"))?;
        let text = answer
            .message
            .content
            .first()
            .and_then(|content| content.as_text())
            .map_or("", |content| content.text.as_str());
        Ok(format!("LLM response: {text}"))
    }

    /// Conformance scenario `tools-call-elicitation`: asks the user.
    #[tool(description = "Asks the user for a username and an email address.")]
    async fn test_elicitation(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(ElicitationArgs { message }): Parameters<ElicitationArgs>,
    ) -> Result<String, String> {
        let supports_elicitation = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.elicitation.is_some());
        if !supports_elicitation {
            return Err("the client does not support elicitation".into());
        }
        let schema = ElicitationSchema::builder()
            .required_string_with("username", |s| s.description("User's response"))
            .required_string_with("email", |s| s.description("User's email address"))
            .build()
            .map_err(|error| format!("invalid elicitation schema: {error}"))?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        // Sent as a plain request: the typed helpers need rmcp's `elicitation`
        // feature, which this crate does not enable.
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match context.peer.send_request(request).await {
            Ok(ClientResult::ElicitResult(answer)) => {
                let response = serde_json::json!({
                    "action": answer.action,
                    "content": answer.content,
                });
                Ok(format!("User response: {response}"))
            }
            Ok(other) => Err(format!("unexpected answer to elicitation: {other:?}")),
            Err(error) => Err(format!("elicitation failed: {error}")),
        }
    }
}
