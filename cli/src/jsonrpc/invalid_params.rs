//! `--invalid-params-as-tool-errors`: a `-32602` answer to a `tools/call` of a
//! tool that the server listed becomes an `isError` result, which the layer in
//! front then renders like any tool error, so the model reads what was wrong
//! with its arguments and can try again.
//!
//! A `-32602` for a tool the server never listed (an unknown name) stays as it is:
//! the model has nothing to correct in its arguments then.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use serde_json::{Value, json};
use tower_service::Service;

use crate::jsonrpc::message::Answer;
use crate::jsonrpc::method::Method;

/// The JSON-RPC code of invalid params.
const INVALID_PARAMS: i64 = -32602;

/// The tool names of every `tools/list` answer seen, across pages.
type Listed = Arc<Mutex<HashSet<String>>>;

/// Wraps the service of the child; does nothing when off.
#[derive(Debug, Clone)]
pub(crate) struct InvalidParamsAsToolErrors<S> {
    inner: S,
    /// `None` when the option is off.
    listed: Option<Listed>,
}

impl InvalidParamsAsToolErrors<()> {
    /// The conversion, on or off, over no service yet: [`over`](Self::over)
    /// gives it the service of each message, all sharing the tools listed.
    pub(crate) fn new(on: bool) -> Self {
        Self {
            inner: (),
            listed: on.then(Listed::default),
        }
    }

    /// Whether the option is on: the answers to `tools/list`, and the errors
    /// answering a `tools/call`, are then read.
    pub(crate) fn is_on(&self) -> bool {
        self.listed.is_some()
    }

    /// The conversion over `inner`, sharing the tools listed so far.
    pub(crate) fn over<S>(&self, inner: S) -> InvalidParamsAsToolErrors<S> {
        InvalidParamsAsToolErrors {
            inner,
            listed: self.listed.clone(),
        }
    }
}

/// What the answer to a request is looked at for.
#[derive(Debug)]
enum Watch {
    Nothing,
    ToolsList(Listed),
    ToolsCall(Listed, String),
}

impl<S> Service<Value> for InvalidParamsAsToolErrors<S>
where
    S: Service<Value, Response = Answer>,
{
    type Response = Answer;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Value) -> Self::Future {
        let watch = match &self.listed {
            None => Watch::Nothing,
            Some(listed) => match request["method"].as_str().and_then(Method::known) {
                Some(Method::ToolsList) => Watch::ToolsList(listed.clone()),
                Some(Method::ToolsCall) => match request["params"]["name"].as_str() {
                    Some(tool) => Watch::ToolsCall(listed.clone(), tool.to_owned()),
                    None => Watch::Nothing,
                },
                _ => Watch::Nothing,
            },
        };
        ResponseFuture {
            inner: self.inner.call(request),
            watch,
        }
    }
}

pin_project! {
    /// The future of [`InvalidParamsAsToolErrors`].
    #[derive(Debug)]
    pub(crate) struct ResponseFuture<F> {
        #[pin]
        inner: F,
        watch: Watch,
    }
}

impl<F, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Answer, E>>,
{
    type Output = Result<Answer, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut answer = match this.inner.poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(answer)) => answer,
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
        };
        match this.watch {
            Watch::Nothing => {}
            Watch::ToolsList(listed) => remember_tools(listed, &answer.value),
            Watch::ToolsCall(listed, tool) => {
                let is_listed = lock(listed).contains(tool.as_str());
                if is_listed && let Some(text) = invalid_params_text(&answer.value) {
                    let queued = answer.queued.take();
                    // Keys in sorted order, as `own_answer` writes them.
                    answer = Answer::made(json!({
                        "id": answer.value["id"],
                        "jsonrpc": "2.0",
                        "result": {"content": [{"text": text, "type": "text"}], "isError": true},
                    }));
                    answer.queued = queued;
                }
            }
        }
        Poll::Ready(Ok(answer))
    }
}

fn lock(listed: &Listed) -> std::sync::MutexGuard<'_, HashSet<String>> {
    // A set of names cannot be left half-changed by a panic.
    listed
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn remember_tools(listed: &Listed, answer: &Value) {
    let Some(tools) = answer["result"]["tools"].as_array() else {
        return;
    };
    let mut listed = lock(listed);
    for name in tools.iter().filter_map(|tool| tool["name"].as_str()) {
        listed.insert(name.to_owned());
    }
}

/// The text for the model when `answer` is a `-32602` error: its message, then
/// its `data` when that is a string.
fn invalid_params_text(answer: &Value) -> Option<String> {
    let error = answer.get("error")?;
    if error["code"].as_i64() != Some(INVALID_PARAMS) {
        return None;
    }
    let message = error["message"].as_str().unwrap_or_default();
    Some(match error["data"].as_str() {
        Some(data) => format!("{message}\n{data}"),
        None => message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_the_message_then_string_data() {
        let answer =
            json!({"id": 1, "error": {"code": -32602, "message": "bad", "data": "x: required"}});
        assert_eq!(
            invalid_params_text(&answer).as_deref(),
            Some("bad\nx: required")
        );
        let answer =
            json!({"id": 1, "error": {"code": -32602, "message": "bad", "data": {"x": 1}}});
        assert_eq!(invalid_params_text(&answer).as_deref(), Some("bad"));
        let answer = json!({"id": 1, "error": {"code": -32601, "message": "no such method"}});
        assert_eq!(invalid_params_text(&answer), None);
    }
}
