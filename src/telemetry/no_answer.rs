//! [`NoAnswer`]: why the server gave no answer to a request that the inner
//! service then answered itself, as the request span's `error.type` says it.

use serde_json::Value;

/// The member of a JSON-RPC response that carries its mark: no JSON-RPC
/// response has it, and the layer removes it from every response it reads.
const MEMBER: &str = "mcp_tool_errors.no_answer";

/// Why the server gave no answer to a request, when the inner service answers
/// in its place: a transport or proxy whose server crashed, could not be
/// reached, or was cut off.
///
/// [`NoAnswer::mark`] puts it on the answer the inner service makes; the
/// layer's request span then records [`NoAnswer::error_type`] as `error.type`
/// and `mcp_tool_errors.cause`, and so does the metric's data point, in place of
/// what the answer alone would say (`tool_error` for an `isError` result,
/// `-32603` for an internal error). The answer itself reaches the client as it
/// would unmarked: the layer removes the mark, and rewraps an `isError`
/// result's text as any other.
///
/// The values are stable, snake case, and few, as OpenTelemetry asks of
/// `error.type`.
///
/// # Example
///
/// ```
/// use mcp_tool_errors::{NoAnswer, ToolErrors};
/// use serde_json::{Value, json};
/// use tower::{ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // A proxy whose upstream refused the connection answers the call itself.
/// let proxy = service_fn(|request: Value| async move {
///     let mut answer = json!({
///         "jsonrpc": "2.0", "id": request["id"],
///         "result": {"content": [{"type": "text", "text": "The server could not be reached."}],
///                    "isError": true},
///     });
///     NoAnswer::UpstreamUnreachable.mark(&mut answer);
///     Ok::<Value, std::convert::Infallible>(answer)
/// });
/// let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
///                   "params": {"name": "deploy", "arguments": {}}});
/// let answer = ToolErrors::new(proxy).oneshot(call).await.unwrap();
/// // The span says `error.type` = `upstream_unreachable`; the client reads
/// // the rewrapped error, and no mark.
/// let text = answer["result"]["content"][0]["text"].as_str().unwrap();
/// assert!(text.starts_with("<error tool=\"deploy\">\n"));
/// assert_eq!(answer.as_object().unwrap().len(), 3);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NoAnswer {
    /// `server_exited`: the server's process exited (or was killed) before
    /// answering.
    ServerExited,
    /// `upstream_unreachable`: no connection to the server: refused, no such
    /// host, a TLS handshake that failed.
    UpstreamUnreachable,
    /// `upstream_closed`: the connection to the server, or its event stream,
    /// ended before the answer.
    UpstreamClosed,
    /// `upstream_5xx`: the server answered an HTTP 5xx that carries no
    /// JSON-RPC answer (a gateway's 502, 503 or 504 page).
    Upstream5xx,
    /// `upstream_timeout`: the server sent no response within the time the
    /// transport waits for one (not the layer's
    /// [`tool_timeout`](crate::ToolErrorLayer::tool_timeout), whose answer
    /// says `timeout`).
    UpstreamTimeout,
    /// `upstream_too_large`: the server's answer was larger than the
    /// transport reads.
    UpstreamTooLarge,
    /// `drained`: the transport shut down, and its drain ended before the
    /// server answered.
    Drained,
}

impl NoAnswer {
    /// Every value, in the order of [`NoAnswer::error_type`]'s table.
    const ALL: [Self; 7] = [
        Self::ServerExited,
        Self::UpstreamUnreachable,
        Self::UpstreamClosed,
        Self::Upstream5xx,
        Self::UpstreamTimeout,
        Self::UpstreamTooLarge,
        Self::Drained,
    ];

    /// The value of `error.type` (and `mcp_tool_errors.cause`) for a request
    /// answered so: `server_exited`, `upstream_unreachable`, `upstream_closed`,
    /// `upstream_5xx`, `upstream_timeout`, `upstream_too_large` or `drained`.
    pub const fn error_type(self) -> &'static str {
        match self {
            Self::ServerExited => "server_exited",
            Self::UpstreamUnreachable => "upstream_unreachable",
            Self::UpstreamClosed => "upstream_closed",
            Self::Upstream5xx => "upstream_5xx",
            Self::UpstreamTimeout => "upstream_timeout",
            Self::UpstreamTooLarge => "upstream_too_large",
            Self::Drained => "drained",
        }
    }

    /// Marks `answer`, a JSON-RPC response (`jsonrpc`, `id`, and `result` or
    /// `error`) or a batch of them that the inner service made itself, as made
    /// for this reason. The mark is the member `mcp_tool_errors.no_answer`,
    /// which the layer removes from every response before it leaves the
    /// layer: a transport serializes the answer exactly as it would unmarked.
    /// Anything else than an object or an array of them is left as it is.
    pub fn mark(self, answer: &mut Value) {
        match answer {
            Value::Array(batch) => batch.iter_mut().for_each(|answer| self.mark(answer)),
            Value::Object(answer) => {
                answer.insert(MEMBER.to_owned(), Value::from(self.error_type()));
            }
            _ => {}
        }
    }

    /// Removes the mark from `response` (a JSON-RPC response or a batch of
    /// them) and returns the first, if any. A response with the members of
    /// JSON-RPC alone (three) is not searched: it costs a length check, inline.
    #[inline]
    pub(crate) fn take(response: &mut Value) -> Option<Self> {
        match response {
            Value::Object(answer) if answer.len() <= 3 => None,
            Value::Object(_) | Value::Array(_) => Self::search(response),
            _ => None,
        }
    }

    /// [`NoAnswer::take`] past its length check.
    #[inline(never)]
    fn search(response: &mut Value) -> Option<Self> {
        match response {
            // Removed in place, not swapped with the last member (serde_json's
            // `remove` under `preserve_order`): a server may have written the
            // member anywhere, and its other members keep their order.
            Value::Object(answer) => {
                if !answer.contains_key(MEMBER) {
                    return None;
                }
                let mut mark = None;
                answer.retain(|key, value| {
                    let is_mark = key == MEMBER;
                    if is_mark {
                        mark = Some(value.take());
                    }
                    !is_mark
                });
                Self::read(mark?)
            }
            Value::Array(batch) => batch
                .iter_mut()
                .fold(None, |first, answer| first.or(Self::take(answer))),
            _ => None,
        }
    }

    /// The reason `mark` wrote; `None` for a value it cannot have written.
    fn read(mark: Value) -> Option<Self> {
        let mark = mark.as_str()?;
        Self::ALL
            .into_iter()
            .find(|reason| reason.error_type() == mark)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_mark_is_read_back_and_removed_from_every_answer_of_a_batch() {
        let unmarked = json!([
            {"jsonrpc": "2.0", "id": 1, "result": {"isError": true}},
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "gone"}},
        ]);
        for reason in NoAnswer::ALL {
            let mut marked = unmarked.clone();
            reason.mark(&mut marked);
            assert_eq!(marked[1][MEMBER], reason.error_type());
            assert_eq!(NoAnswer::take(&mut marked), Some(reason));
            assert_eq!(marked, unmarked);
        }
    }

    #[test]
    fn a_mark_no_value_names_is_removed_and_says_nothing() {
        let mut answer = json!({"jsonrpc": "2.0", "id": 1, "result": {}, MEMBER: "made_up"});
        assert_eq!(NoAnswer::take(&mut answer), None);
        assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    }
}
