//! What the layer reads of a client request, in every mode: its id, its
//! method and the tool or task it names, read from its envelope without
//! parsing the rest (`crate::jsonrpc::envelope`) or from the message read
//! whole (`crate::jsonrpc::member`), and given to the layer as a small JSON
//! value; and whether the layer may change the answer to it, which the
//! answer's envelope tells. The methods the command tells apart, and what a
//! request of each names to the layer, are [`Method`]'s; whether the layer
//! may change the answer to each is decided here.

use serde_json::{Map, Value};

use crate::jsonrpc::envelope::Fields;
use crate::jsonrpc::member::{Member, members};
use crate::jsonrpc::method::Method;

/// What the layer reads of a client message.
#[derive(Debug, Clone)]
pub(crate) enum LayerRequest {
    /// One request: its id, its method, and its `params.name` (a
    /// `tools/call`'s tool) or `params.taskId` (a `tasks/get`'s or
    /// `tasks/result`'s task): what the layer reads of a request (its
    /// telemetry reads `params._meta` too, which [`LayerRequest::traced`]
    /// adds when spans are exported).
    Single {
        id: Value,
        method: Method,
        name: Option<Box<str>>,
    },
    /// A batch, read whole; or a request whose span is exported, with what
    /// the span reads of it ([`LayerRequest::traced`]).
    Whole(Value),
}

impl Method {
    /// Whether the layer (or the `-32602` conversion, when `invalid_params`
    /// is on) may change the answer, whose envelope is `answer`, to one
    /// request of this method, or must read it: a `tools/list` answer when
    /// the conversion is on or the layer's metric is recorded
    /// ([`crate::telemetry::metrics_recorded`]), since both learn the tools
    /// it lists (the answer itself is written as the server's bytes unless
    /// the conversion changes it).
    pub(crate) fn may_change_answer(&self, answer: &Fields<'_>, invalid_params: bool) -> bool {
        match self {
            Self::ToolsCall => {
                answer.result.is_error
                    || answer.result.may_be_task
                    || (invalid_params && answer.has_error)
            }
            Self::TasksGet | Self::TasksResult => true,
            Self::ToolsList => invalid_params || crate::telemetry::metrics_recorded(),
            Self::Other(_) => false,
        }
    }
}

impl LayerRequest {
    /// What the layer reads of the request whose envelope is `fields`.
    pub(crate) fn single(fields: Fields<'_>) -> Self {
        Self::read(
            fields.id.unwrap_or_default(),
            fields.method.as_deref().unwrap_or_default(),
            fields.params.name.as_deref(),
            fields.params.task_id.as_deref(),
        )
    }

    /// What the layer reads of each request of `message` (one request, or a
    /// batch), read through [`members`], as [`LayerRequest::single`] reads
    /// one from its envelope.
    pub(crate) fn each_of(message: &Value) -> Vec<Self> {
        members(message)
            .into_iter()
            .filter_map(Member::request)
            .map(|request| {
                Self::read(
                    request.id.clone(),
                    request.method,
                    request.tool,
                    request.task_id,
                )
            })
            .collect()
    }

    /// What the layer reads of the request `id` of `method`, holding `tool`
    /// (`params.name`) and `task` (`params.taskId`).
    fn read(id: Value, method: &str, tool: Option<&str>, task: Option<&str>) -> Self {
        let method = Method::read(method);
        let name = method
            .named()
            .and_then(|named| named.of(tool, task))
            .map(Into::into);
        Self::Single { id, method, name }
    }

    /// The id of one request; `None` for a batch.
    pub(crate) fn id(&self) -> Option<&Value> {
        match self {
            Self::Single { id, .. } => Some(id),
            Self::Whole(_) => None,
        }
    }

    /// The tool of one `tools/call` that names one.
    pub(crate) fn tool(&self) -> Option<&str> {
        match self {
            Self::Single {
                method: Method::ToolsCall,
                name,
                ..
            } => name.as_deref(),
            _ => None,
        }
    }

    /// Whether this is one `tools/call`.
    pub(crate) fn is_tool_call(&self) -> bool {
        matches!(
            self,
            Self::Single {
                method: Method::ToolsCall,
                ..
            }
        )
    }

    /// The request as the layer reads it. Made member by member: `json!`
    /// serializes each value it is given, a cost on every answer the layer
    /// reads.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Self::Single { id, method, name } => {
                let mut params = Map::new();
                if let (Some(named), Some(name)) = (method.named(), name) {
                    params.insert(named.param().to_owned(), Value::String(name.into()));
                }
                let mut request = Map::new();
                request.insert("jsonrpc".to_owned(), Value::from("2.0"));
                request.insert("id".to_owned(), id);
                request.insert("method".to_owned(), Value::from(method.as_str()));
                request.insert("params".to_owned(), Value::Object(params));
                Value::Object(request)
            }
            Self::Whole(batch) => batch,
        }
    }

    /// The request as the layer reads it when its span is exported: through
    /// the layer when it is sent, its answer read whatever it holds, so that
    /// every request has its span and its duration; with the trace context of
    /// its `line` (`params._meta.traceparent` and `tracestate`), which the
    /// span continues.
    pub(crate) fn traced(self, line: &[u8]) -> Self {
        match self {
            Self::Single { .. } => {
                let mut value = self.into_value();
                if let Some(context) = trace_context(line) {
                    value["params"]["_meta"] = context;
                }
                Self::Whole(value)
            }
            batch @ Self::Whole(_) => batch,
        }
    }

    /// Whether the layer (or the `-32602` conversion, when `invalid_params`
    /// is on) may change the answer whose envelope is `answer`.
    pub(crate) fn may_change(&self, answer: &Fields<'_>, invalid_params: bool) -> bool {
        match self {
            Self::Single { method, .. } => method.may_change_answer(answer, invalid_params),
            Self::Whole(_) => true,
        }
    }
}

/// The W3C trace context in a request's `params._meta`, when it has one: the
/// line is read whole only when it names a `traceparent`.
fn trace_context(line: &[u8]) -> Option<Value> {
    memchr::memmem::find(line, b"traceparent")?;
    let request: Value = serde_json::from_slice(line).ok()?;
    let meta = request.get("params")?.get("_meta")?.as_object()?;
    let context: serde_json::Map<String, Value> = ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|key| Some((key.to_owned(), meta.get(key)?.clone())))
        .collect();
    (!context.is_empty()).then_some(Value::Object(context))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::jsonrpc::envelope::{self, Envelope};

    fn fields(line: &str) -> Fields<'_> {
        match envelope::read(line.as_bytes()) {
            Ok(Envelope::Single(fields)) => fields,
            other => panic!("not a single message: {other:?}"),
        }
    }

    fn request(method: &str) -> LayerRequest {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"name":"t","taskId":"x"}}}}"#
        );
        LayerRequest::single(fields(&line))
    }

    #[test]
    fn only_answers_the_layer_may_change_are_read() {
        let success = fields(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#);
        let tool_error =
            fields(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#);
        let task =
            fields(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"x"}}"#);
        let error = fields(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#);
        let call = request("tools/call");
        assert!(!call.may_change(&success, true));
        assert!(call.may_change(&tool_error, false));
        assert!(call.may_change(&task, false));
        assert!(!call.may_change(&error, false));
        assert!(
            call.may_change(&error, true),
            "the -32602 conversion reads it"
        );
        for method in ["tasks/get", "tasks/result"] {
            assert!(request(method).may_change(&success, false), "{method}");
        }
        assert!(
            request("tools/list").may_change(&success, true),
            "the -32602 conversion learns the tools listed"
        );
        assert!(!request("ping").may_change(&tool_error, true));
        assert!(LayerRequest::Whole(Value::Null).may_change(&success, false));
    }

    #[test]
    fn without_a_metrics_exporter_a_tools_list_answer_is_not_read() {
        // No test of this binary installs a metrics exporter.
        assert!(!crate::telemetry::metrics_recorded());
        let listed = fields(
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{}}]}}"#,
        );
        assert!(!request("tools/list").may_change(&listed, false));
    }

    #[test]
    fn a_traced_request_carries_its_trace_context_and_is_read_whole() {
        let line = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","#,
            r#""arguments":{},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","progressToken":3}}}"#
        );
        let LayerRequest::Whole(value) = LayerRequest::single(fields(line)).traced(line.as_bytes())
        else {
            panic!("a traced request is read whole");
        };
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "t",
                "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
            }})
        );
        let plain = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        let LayerRequest::Whole(value) =
            LayerRequest::single(fields(plain)).traced(plain.as_bytes())
        else {
            panic!("a traced request is read whole");
        };
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {}})
        );
        let success = fields(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
        assert!(LayerRequest::Whole(value).may_change(&success, false));
    }

    #[test]
    fn the_layer_reads_the_requests_id_method_and_tool_or_task() {
        assert_eq!(
            request("tools/call").into_value(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}})
        );
        assert_eq!(
            request("tasks/get").into_value(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": "x"}})
        );
        assert_eq!(
            request("resources/read").into_value(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {}})
        );
    }
}
