//! The service stack over one client request (`ToolErrorLayer` over
//! `WithChildAnswer` over the `-32602` conversion over the child's answer),
//! and when a request and its answer go through it.
//!
//! A request to which a timeout applies (a `tools/call` of a tool with a
//! timeout) and a batch go through the layer when they are sent: the layer's
//! future, polled by a task of the runtime, holds the timer and gets the
//! child's answer from the thread reading the child, which waits until the
//! answer is written before it reads on, so that the client sees the child's
//! lines in the child's order.
//!
//! Any other request is sent without the layer: its future would only wait.
//! Its answer goes through the layer in the thread that reads it when the
//! layer may change it, which the answer's envelope says (a `tools/call`
//! result whose `isError` is `true` or that may be a task handle, any answer
//! to `tasks/get` or `tasks/result`; with `--invalid-params-as-tool-errors`,
//! an answer to `tools/list` and an error answering a `tools/call`); every
//! other answer is written as the child's bytes, unparsed, as the layer would
//! have left it. The layer over an answer at hand is ready at its first poll.
//!
//! When request spans are exported (`telemetry`), every request goes through
//! the layer when it is sent and its answer is read, so that each has its
//! span, its duration and the client's trace context. The future of a request
//! no timeout applies to is held with the request, not given to a task: the
//! thread reading the child resolves it with the answer and writes it, as it
//! writes an answer at hand, and the runtime is never woken for it.

use std::future::poll_fn;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mcp_tool_errors::ToolErrorLayer;
use serde_json::Value;
use tokio::sync::{Notify, oneshot};
use tower_layer::Layer;
use tower_service::Service;

use crate::jsonrpc::envelope::Fields;
use crate::jsonrpc::invalid_params::InvalidParamsAsToolErrors;
use crate::jsonrpc::layer_call::LayerCall;
use crate::jsonrpc::layer_over_answer::{layer_over_answer, resolved};
use crate::jsonrpc::layer_request::LayerRequest;
use crate::jsonrpc::message::{self, Answer, ChildAnswer, WithChildAnswer};
use crate::jsonrpc::method::Method;
use crate::jsonrpc::nested;
use crate::jsonrpc::timed_tools::TimedTools;
use crate::options::Options;
use crate::stdio::child::{Awaited, Child};
use crate::stdio::client_io::ClientOutput;
use crate::stdio::in_flight::{Awaiting, Refused, Waiting};

/// The stack's parts, shared by the thread reading the client, the thread
/// reading the child and the runtime.
#[derive(Debug)]
pub(crate) struct Stack {
    layer: ToolErrorLayer,
    invalid_params: InvalidParamsAsToolErrors<()>,
    timed_tools: TimedTools,
    runtime: tokio::runtime::Handle,
    child: Arc<Child>,
    output: Arc<ClientOutput>,
    answering: Arc<Answering>,
    /// Whether request spans are exported: then every request goes through
    /// the layer when it is sent ([`LayerRequest::traced`]).
    traced: bool,
}

impl Stack {
    pub(crate) fn new(
        options: &Options,
        runtime: tokio::runtime::Handle,
        child: Arc<Child>,
        output: Arc<ClientOutput>,
        traced: bool,
    ) -> Self {
        Self {
            // Spans say what carries the session: the child's stdio pipes.
            layer: options.layer().network_transport("pipe"),
            invalid_params: InvalidParamsAsToolErrors::new(options.invalid_params_as_tool_errors),
            timed_tools: options.timed_tools(),
            runtime,
            child,
            output,
            answering: Arc::default(),
            traced,
        }
    }

    pub(crate) fn child(&self) -> &Arc<Child> {
        &self.child
    }

    pub(crate) fn output(&self) -> &ClientOutput {
        &self.output
    }

    /// Whether the layer's future holds a timer for `request`, or it is a
    /// batch or a request whose span is exported: it goes through the layer
    /// when it is sent.
    fn through_the_layer_when_sent(&self, request: &LayerRequest) -> bool {
        match request {
            LayerRequest::Single { method, name, .. } => {
                *method == Method::ToolsCall
                    && name
                        .as_deref()
                        .is_some_and(|name| self.timed_tools.includes(name))
            }
            LayerRequest::Whole(_) => true,
        }
    }

    /// Registers the client's request (or batch) `line` and writes it to the
    /// child's stdin, unflushed; a request the wrapper answers itself (an id in
    /// use, a child gone) is answered at once.
    pub(crate) fn send(
        &self,
        line: &[u8],
        request: LayerRequest,
        requests: Vec<(Value, bool)>,
        batch: bool,
    ) {
        let timed = self.through_the_layer_when_sent(&request);
        let request = if self.traced {
            request.traced(line)
        } else {
            request
        };
        let (answer, awaited) = if timed {
            let (sender, receiver) = oneshot::channel();
            let settled = Arc::new(AtomicBool::new(false));
            let awaiting = Awaiting {
                answer: sender,
                settled: settled.clone(),
                held: None,
            };
            let layer_future = (receiver, request.clone(), settled, self.answering.begin());
            (Some(awaiting), Some(layer_future))
        } else if self.traced {
            (Some(self.held(&request)), None)
        } else {
            (None, None)
        };
        let waiting = Waiting {
            requests,
            batch,
            request,
            answer,
        };
        // Registered before it is sent, so that the answer always finds it.
        let registered = self.child.in_flight().register(waiting);
        match registered {
            Ok(ticket) => {
                self.child.input().write(line);
                if let Some((receiver, request, settled, answering)) = awaited {
                    let awaited = Awaited::new(receiver, ticket, self.child.clone());
                    self.start(request, awaited, settled, answering);
                }
            }
            Err(refused) => self.answer_left(*refused),
        }
    }

    /// Calls the layer for a request whose span is exported and to which no
    /// timeout applies: its future, which waits for the answer without a
    /// timer, is held with the request and resolved by whoever has the
    /// answer, in that thread ([`Stack::resolve_held`]): no task, no wake-up
    /// of the runtime. The span and the duration start here.
    fn held(&self, request: &LayerRequest) -> Awaiting {
        let (sender, held) = LayerCall::call(
            &self.layer,
            &self.invalid_params,
            request.clone().into_value(),
        );
        Awaiting {
            answer: sender,
            settled: Arc::default(),
            held: Some(held),
        }
    }

    /// Writes `answer` through the layer's `held` future, which `sender`
    /// feeds.
    fn resolve_held(&self, sender: oneshot::Sender<Answer>, held: LayerCall, answer: Answer) {
        if let Some(answer) = held.resolve(sender, answer) {
            self.output.write_answer(answer);
        }
    }

    /// Answers a request the wrapper answers itself (an id in use, a child
    /// gone): through its held future when it has one, else through the layer
    /// at once.
    fn answer_left(&self, left: Refused) {
        let Refused {
            answer,
            request,
            awaiting,
        } = left;
        match awaiting {
            Some(Awaiting {
                answer: sender,
                held: Some(held),
                ..
            }) => self.resolve_held(sender, held, answer),
            _ => {
                if let Some(answer) = self.answer_now(request, answer) {
                    self.output.write_answer(answer);
                }
            }
        }
    }

    /// Answers `waiting` with an answer of the wrapper's own in place of the
    /// child's (one too large to read): as a dead child's requests are.
    pub(crate) fn answer_instead(&self, waiting: Waiting, answer: Answer) {
        if let Some(left) = waiting.answered_with(answer) {
            self.answer_left(left);
        }
    }

    /// Calls the layer for a request sent, in a task of the runtime that
    /// writes its answer.
    fn start(
        &self,
        request: LayerRequest,
        awaited: Awaited,
        settled: Arc<AtomicBool>,
        answering: AnsweringOne,
    ) {
        // The layer's timer is made in the call.
        let _runtime = self.runtime.enter();
        let child_answer = ChildAnswer::default();
        let mut service = self.layer.layer(WithChildAnswer::new(
            self.invalid_params.over(awaited),
            child_answer.clone(),
        ));
        if resolved(poll_fn(|cx| service.poll_ready(cx))).is_err() {
            return;
        }
        let answer = service.call(request.into_value());
        let (output, child) = (self.output.clone(), self.child.clone());
        self.runtime.spawn(async move {
            // A request the client cancelled gets no answer.
            let value = answer.await.ok().flatten();
            let answer = message::answered(value, &child_answer)
                .filter(|_| !settled.swap(true, Ordering::AcqRel));
            if answer.is_some() || child.has_own_lines() {
                // Neither pipe may stop the runtime: written in the blocking
                // pool, the answer first.
                tokio::task::spawn_blocking(move || {
                    if let Some(answer) = answer {
                        output.write_answer(answer);
                    }
                    child.send_own_lines();
                    drop(answering);
                });
            }
        });
    }

    /// The child's `line` answers `waiting`; `fields` is its envelope (`None`
    /// for a batch). Written as the child's bytes when the layer would leave
    /// it alone; else through the layer, here or in the task of the layer's
    /// future, this thread waiting until it is written.
    pub(crate) fn answer(&self, waiting: Waiting, line: &[u8], fields: Option<&Fields<'_>>) {
        let may_change = fields.is_none_or(|fields| {
            waiting
                .request
                .may_change(fields, self.invalid_params.is_on())
        });
        let (mut answer, awaiting) = match (may_change, waiting.answer) {
            (false, None) => {
                self.output.write(line);
                return;
            }
            (false, Some(awaiting)) => {
                // Written here, unless the layer answered first (its timeout
                // fired in the same instant); the layer's future is told, so
                // that it ends (with its timer) and writes nothing.
                if !awaiting.settled.swap(true, Ordering::AcqRel) {
                    self.output.write(line);
                }
                let _ = awaiting.answer.send(Answer::as_is(Vec::new()));
                return;
            }
            (
                true,
                Some(Awaiting {
                    answer: sender,
                    held: Some(held),
                    ..
                }),
            ) => {
                let answer = match nested::from_slice(line) {
                    Ok(value) => Answer::from_child(line.to_vec(), value),
                    Err(_) => Answer::as_is(line.to_vec()),
                };
                return self.resolve_held(sender, held, answer);
            }
            (true, awaiting) => {
                let answer = match nested::from_slice(line) {
                    Ok(value) => Answer::from_child(line.to_vec(), value),
                    // Not JSON: passed on as it is.
                    Err(_) => Answer::as_is(line.to_vec()),
                };
                (answer, awaiting)
            }
        };
        match awaiting {
            Some(awaiting) => {
                let (queued, is_queued) = oneshot::channel();
                answer.queued = Some(queued);
                // A receiver dropped since (a timeout) takes no answer.
                if awaiting.answer.send(answer).is_ok() {
                    let _ = is_queued.blocking_recv();
                }
            }
            None => {
                if let Some(answer) = self.answer_now(waiting.request, answer) {
                    self.output.write_answer(answer);
                }
            }
        }
    }

    /// `answer` through the layer for `request`, at once: the answer to write.
    pub(crate) fn answer_now(&self, request: LayerRequest, answer: Answer) -> Option<Answer> {
        // A timeout may apply (to a request refused, or left by a dead
        // child): the layer's timer is made in the runtime's context.
        let _runtime = self.runtime.enter();
        layer_over_answer(
            &self.layer,
            &self.invalid_params,
            request.into_value(),
            answer,
        )
    }

    /// The child is gone: every request in flight is answered with its
    /// `status`, and later ones at once. Called last, from the runtime.
    pub(crate) fn child_gone(&self, status: String) {
        for left in self.child.gone(status) {
            self.answer_left(left);
        }
    }

    /// Waits until every answer the layer's futures make is written.
    pub(crate) async fn all_answered(&self) {
        self.answering.none_left().await;
    }
}

/// The layer's futures not finished yet, with the writing of their answers.
#[derive(Debug, Default)]
struct Answering {
    count: Mutex<usize>,
    finished: Notify,
}

impl Answering {
    fn begin(self: &Arc<Self>) -> AnsweringOne {
        *self.count.lock().expect("never poisoned") += 1;
        AnsweringOne(self.clone())
    }

    async fn none_left(&self) {
        loop {
            let mut finished = pin!(self.finished.notified());
            finished.as_mut().enable();
            if *self.count.lock().expect("never poisoned") == 0 {
                return;
            }
            finished.await;
        }
    }
}

/// One future of the layer, until its answer is written or it has none.
#[derive(Debug)]
struct AnsweringOne(Arc<Answering>);

impl Drop for AnsweringOne {
    fn drop(&mut self) {
        let mut count = self.0.count.lock().expect("never poisoned");
        *count -= 1;
        if *count == 0 {
            self.0.finished.notify_waiters();
        }
    }
}
