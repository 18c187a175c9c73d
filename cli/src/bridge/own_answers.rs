//! The answers the bridge makes itself for a session's calls, in place of
//! the server's, each through the layer: when the drain ends before the
//! server answered, when the server is gone before a call reached it, and
//! when the server is not reading its input.

use hyper::body::Bytes;
use mcp_tool_errors::{JsonRpcId, NoAnswer, ToolErrorLayer};
use serde_json::Value;

use crate::bridge::routes::{Call, event};
use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
use crate::jsonrpc::layer_over_answer::layer_over_answer;
use crate::jsonrpc::member::Member;
use crate::jsonrpc::message::Answer;
use crate::jsonrpc::own_answer;
use crate::options::Options;

/// What a call still in flight when the drain ends is answered.
pub(crate) const STOPPING: &str = "The bridge is stopping: the server did not answer within the drain (--drain-timeout); the request was cancelled.";

/// What a request is answered when the server does not read what the
/// session holds for it already (see `child_input`).
const NOT_READING: &str = "The server is not reading its input: the bridge holds as much as it may for it already; the request was not sent.";

/// The layer, and the `-32602` conversion under it, that the bridge's own
/// answers go through.
#[derive(Debug, Clone)]
pub(crate) struct OwnAnswers {
    layer: ToolErrorLayer,
    invalid_params: InvalidParamsAsToolErrors<()>,
}

/// Why the bridge answers a call itself.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Unanswered<'a> {
    /// The drain ended first.
    Stopping,
    /// The server exited, with this status, before the call reached it.
    Exited(&'a str),
    /// The server does not read what the session queued for it.
    NotReading,
}

impl OwnAnswers {
    pub(crate) fn new(options: &Options) -> Self {
        Self {
            layer: options.layer(),
            invalid_params: InvalidParamsAsToolErrors::new(options.invalid_params_as_tool_errors),
        }
    }

    /// The answer to `request` (as the layer reads it: the client's id, its
    /// method, its tool) for `why`, as an event; `None` when the layer
    /// leaves nothing to write.
    pub(crate) fn event(&self, request: Value, why: Unanswered<'_>) -> Option<Bytes> {
        self.line(request, why).map(|line| event(&line))
    }

    /// The answer to a message's `requests` for `why`, as one event: a batch
    /// of their answers for a `batch`.
    pub(crate) fn message_event(
        &self,
        requests: Vec<Value>,
        batch: bool,
        why: Unanswered<'_>,
    ) -> Option<Bytes> {
        let mut lines = requests
            .into_iter()
            .filter_map(|request| self.line(request, why));
        if !batch {
            return lines.next().map(|line| event(&line));
        }
        let mut answers = b"[".to_vec();
        for (index, line) in lines.enumerate() {
            if index > 0 {
                answers.push(b',');
            }
            answers.extend_from_slice(&line);
        }
        answers.push(b']');
        (answers.len() > 2).then(|| event(&answers))
    }

    /// The answer's line, through the layer.
    fn line(&self, request: Value, why: Unanswered<'_>) -> Option<Vec<u8>> {
        let client_id = request["id"].clone();
        let is_tool_call = Member::of(&request)
            .request()
            .is_some_and(|request| request.is_tool_call());
        let (sentence, reason) = why.said();
        let answer = own_answer::unanswered(&client_id, is_tool_call, &sentence, reason);
        let answer = layer_over_answer(
            &self.layer,
            &self.invalid_params,
            request,
            Answer::made(answer),
        )?;
        let (mut line, _) = answer.into_line();
        line.truncate(line.trim_ascii_end().len());
        Some(line)
    }

    /// Answers each of `calls` on its stream, for `why`.
    pub(crate) fn answer(&self, calls: Vec<(JsonRpcId, Call)>, why: Unanswered<'_>) {
        for (_, call) in calls {
            let Some(event) = self.event(call.request, why) else {
                continue;
            };
            let events = call.events;
            tokio::spawn(async move {
                let _ = events.send(event).await;
            });
        }
    }
}

impl Unanswered<'_> {
    /// The sentence of the answer, and the reason the layer's span records.
    fn said(self) -> (String, NoAnswer) {
        match self {
            Self::Stopping => (STOPPING.to_owned(), NoAnswer::Drained),
            Self::Exited(status) => (
                crate::stdio::exit_status::exited_message(status),
                NoAnswer::ServerExited,
            ),
            Self::NotReading => (NOT_READING.to_owned(), NoAnswer::UpstreamTimeout),
        }
    }
}
