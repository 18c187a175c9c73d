//! The tools (and the one prompt) the MCP conformance suite's
//! `input-required-result-*` scenarios call (2026-07-28, SEP-2322): a first
//! call is answered with an `InputRequiredResult` asking the client for input,
//! and the retry that carries the client's `inputResponses` (and the echoed
//! `requestState`) completes.
//!
//! An input-required answer is not a tool result: the layer passes it through
//! untouched, and rewraps only what the final round answers.

use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, InputRequests, InputRequiredResult, Prompt, PromptMessage,
    Role,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use serde_json::{Value, json};

use super::DemoServer;

/// The prompt of scenario `input-required-result-non-tool-request`.
pub(crate) const INPUT_REQUIRED_PROMPT: &str = "test_input_required_result_prompt";

/// What `test_input_required_result_tampered_state` seals in its state.
const SEALED_STATE: &str = "awaiting-confirmation";

/// `payload` with a check value, so that a modified state is recognised. A
/// fixture's check, not a signature: a real server signs its state with a
/// secret key (rmcp's `RequestStateCodec`, behind its `request-state` feature).
fn seal(payload: &str) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    ("rmcp_http requestState", payload).hash(&mut hasher);
    format!("{payload}.{:016x}", hasher.finish())
}

/// The payload of a sealed state, if it was not modified.
fn open(state: &str) -> Option<&str> {
    let (payload, _) = state.rsplit_once('.')?;
    (seal(payload) == state).then_some(payload)
}

fn elicitation(message: &str, property: &str, kind: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {property: {"type": kind}},
                "required": [property],
            },
        },
    })
}

fn sampling(text: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens,
        },
    })
}

fn list_roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// The input requests a JSON object describes, keyed as the scenario names them.
fn input_requests(requests: Value) -> InputRequests {
    serde_json::from_value(requests).expect("the fixture's input requests are well formed")
}

fn ask(requests: Value, state: Option<&str>) -> CallToolResponse {
    let result = InputRequiredResult::new(Some(input_requests(requests)), state.map(Into::into));
    CallToolResponse::InputRequired(result)
}

fn done(text: String) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// The accepted content of an elicitation response, or the response itself.
fn elicited<'a>(responses: &'a rmcp::model::InputResponses, key: &str, field: &str) -> &'a Value {
    let response = &responses[key];
    response
        .get("content")
        .and_then(|content| content.get(field))
        .unwrap_or(response)
}

#[tool_router(router = conformance_input_tools, vis = "pub(crate)")]
impl DemoServer {
    /// Scenarios `input-required-result-basic-elicitation` and `-result-type`.
    #[tool(description = "Asks the client for the user's name, then greets them.")]
    fn test_input_required_result_elicitation(
        &self,
        InputResponses(responses): InputResponses,
    ) -> CallToolResponse {
        match responses.filter(|r| r.contains_key("user_name")) {
            None => ask(
                json!({"user_name": elicitation("What is your name?", "name", "string")}),
                None,
            ),
            Some(responses) => done(format!(
                "Hello, {}!",
                text_of(elicited(&responses, "user_name", "name"))
            )),
        }
    }

    /// Scenario `input-required-result-basic-sampling`.
    #[tool(description = "Asks the client's model a question, then returns its answer.")]
    fn test_input_required_result_sampling(
        &self,
        InputResponses(responses): InputResponses,
    ) -> CallToolResponse {
        match responses.filter(|r| r.contains_key("capital_question")) {
            None => ask(
                json!({"capital_question": sampling("What is the capital of France?", 100)}),
                None,
            ),
            Some(responses) => {
                let answer = &responses["capital_question"];
                let text = answer.pointer("/content/text").unwrap_or(answer);
                done(format!("The model answered: {}", text_of(text)))
            }
        }
    }

    /// Scenario `input-required-result-basic-list-roots`.
    #[tool(description = "Asks the client for its roots, then lists them.")]
    fn test_input_required_result_list_roots(
        &self,
        InputResponses(responses): InputResponses,
    ) -> CallToolResponse {
        match responses.filter(|r| r.contains_key("client_roots")) {
            None => ask(json!({"client_roots": list_roots()}), None),
            Some(responses) => {
                let roots = responses["client_roots"]["roots"].as_array().cloned();
                let uris: Vec<String> = roots
                    .unwrap_or_default()
                    .iter()
                    .map(|root| text_of(&root["uri"]))
                    .collect();
                done(format!("The client's roots: {}", uris.join(", ")))
            }
        }
    }

    /// Scenario `input-required-result-request-state`.
    #[tool(description = "Asks for a confirmation, with a requestState to echo back.")]
    fn test_input_required_result_request_state(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
    ) -> Result<CallToolResponse, ErrorData> {
        const STATE: &str = "request-state-round-1";
        match (responses, state.as_deref()) {
            (None, _) => Ok(ask(
                json!({"confirm": elicitation("Please confirm", "ok", "boolean")}),
                Some(STATE),
            )),
            (Some(_), Some(STATE)) => Ok(done("state-ok: the requestState came back".into())),
            (Some(_), _) => Err(invalid_state()),
        }
    }

    /// Scenario `input-required-result-multiple-input-requests`.
    #[tool(description = "Asks for a name, a model's greeting and the roots at once.")]
    fn test_input_required_result_multiple_inputs(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
    ) -> Result<CallToolResponse, ErrorData> {
        const STATE: &str = "multiple-inputs-round-1";
        const KEYS: [&str; 3] = ["user_name", "greeting", "client_roots"];
        let Some(responses) = responses else {
            return Ok(ask(
                json!({
                    "user_name": elicitation("What is your name?", "name", "string"),
                    "greeting": sampling("Generate a greeting", 50),
                    "client_roots": list_roots(),
                }),
                Some(STATE),
            ));
        };
        if state.as_deref() != Some(STATE) {
            return Err(invalid_state());
        }
        match KEYS.iter().find(|key| !responses.contains_key(**key)) {
            Some(missing) => Err(ErrorData::invalid_params(
                format!("inputResponses lacks {missing}"),
                None,
            )),
            None => Ok(done(format!(
                "Received all three inputs for {}",
                text_of(elicited(&responses, "user_name", "name"))
            ))),
        }
    }

    /// Scenario `input-required-result-multi-round`.
    #[tool(description = "Asks for a name, then for a colour, then completes.")]
    fn test_input_required_result_multi_round(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
    ) -> Result<CallToolResponse, ErrorData> {
        let responses = responses.unwrap_or_default();
        match state.as_deref() {
            None => Ok(ask(
                json!({"step1": elicitation("Step 1: What is your name?", "name", "string")}),
                Some("multi-round-1"),
            )),
            Some("multi-round-1") if responses.contains_key("step1") => {
                let name = text_of(elicited(&responses, "step1", "name"));
                Ok(ask(
                    json!({"step2": elicitation("Step 2: What is your favorite color?", "color", "string")}),
                    Some(&format!("multi-round-2:{name}")),
                ))
            }
            Some(state)
                if state.starts_with("multi-round-2:") && responses.contains_key("step2") =>
            {
                let name = &state["multi-round-2:".len()..];
                let color = text_of(elicited(&responses, "step2", "color"));
                Ok(done(format!("{name} likes {color}")))
            }
            Some(_) => Err(invalid_state()),
        }
    }

    /// Scenario `input-required-result-tampered-state`: the state carries a
    /// check value, so a modified one is refused.
    #[tool(
        description = "Asks for a confirmation with a signed requestState; refuses a tampered one."
    )]
    fn test_input_required_result_tampered_state(
        &self,
        InputResponses(responses): InputResponses,
        RequestState(state): RequestState,
    ) -> Result<CallToolResponse, ErrorData> {
        match (responses, state) {
            (None, _) => Ok(ask(
                json!({"confirm": elicitation("Please confirm", "ok", "boolean")}),
                Some(&seal(SEALED_STATE)),
            )),
            (Some(_), Some(state)) if open(&state) == Some(SEALED_STATE) => {
                Ok(done("confirmed".into()))
            }
            (Some(_), _) => Err(invalid_state()),
        }
    }

    /// Scenario `input-required-result-capability-check`: asks only for what the
    /// client said it can answer.
    #[tool(
        description = "Asks the client for input it declared it can give (sampling, elicitation)."
    )]
    fn test_input_required_result_capabilities(
        &self,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if responses.is_some() {
            return done("Received the input the client can give".into());
        }
        let capabilities = context.client_capabilities().unwrap_or_default();
        let mut requests = serde_json::Map::new();
        if capabilities.sampling.is_some() {
            requests.insert("question".into(), sampling("Say hello", 20));
        }
        if capabilities.elicitation.is_some() {
            requests.insert(
                "name".into(),
                elicitation("What is your name?", "name", "string"),
            );
        }
        if capabilities.roots.is_some() {
            requests.insert("roots".into(), list_roots());
        }
        if requests.is_empty() {
            return done("The client declared no capability to ask with".into());
        }
        ask(Value::Object(requests), None)
    }
}

impl DemoServer {
    /// The prompts the server lists: the one the suite asks input for.
    pub(crate) fn prompts() -> Vec<Prompt> {
        vec![Prompt::new(
            INPUT_REQUIRED_PROMPT,
            Some("A prompt that asks the client for its context first"),
            None,
        )]
    }

    /// Scenario `input-required-result-non-tool-request`: `prompts/get` asks
    /// for input too.
    pub(crate) fn input_required_prompt(
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != INPUT_REQUIRED_PROMPT {
            return Err(ErrorData::invalid_params(
                format!("no prompt named {}", request.name),
                None,
            ));
        }
        let Some(responses) = request.input_responses else {
            let requests = json!({"user_context": elicitation(
                "What context should the prompt use?",
                "context",
                "string",
            )});
            let result = InputRequiredResult::from_input_requests(input_requests(requests));
            return Ok(GetPromptResponse::InputRequired(result));
        };
        let context = text_of(elicited(&responses, "user_context", "context"));
        let message = PromptMessage::new_text(Role::User, format!("Use this context: {context}"));
        let result = GetPromptResult::new(vec![message])
            .with_description("A prompt built from the client's context");
        Ok(GetPromptResponse::Complete(result))
    }
}

/// A JSON value as text: a string as it is, anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn invalid_state() -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        "requestState failed its integrity check",
        None,
    )
}
