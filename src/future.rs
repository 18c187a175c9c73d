//! [`ResponseFuture`], the future of [`ToolErrors`](crate::ToolErrors): the inner
//! service's future, with the response rewrapped, and a panic while polling or a
//! timeout turned into an answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tracing::Span;

use crate::answers;
use crate::config::Config;
use crate::message::{McpRequest, McpResponse};
use crate::model::Calls;
use crate::panic::{self, CaughtPanic};
use crate::render::ErrorRenderer;
use crate::tasks::TaskMemory;
use crate::tasks::panics::Current;
use crate::telemetry::{self, OperationDuration, ToolNames};
use crate::timeout::Timer;
use crate::unanswered::Unanswered;

/// What every response future of a service reads: the layer's settings, its
/// memory of tasks and the tool names its metric records, behind one reference
/// count, so that a request costs one increment and a future holds one pointer.
#[derive(Debug)]
pub(crate) struct Shared<R> {
    pub(crate) config: Config<R>,
    pub(crate) tasks: TaskMemory,
    pub(crate) tool_names: ToolNames,
}

pin_project! {
    /// Response future of [`ToolErrors`](crate::ToolErrors).
    ///
    /// Polls the inner future in the caller's task (never spawned, so task-locals
    /// keep working) and catches a panic there as well, inside the request span.
    /// With a timeout, it also holds the timer, and drops the inner future when
    /// the timer fires first.
    ///
    /// `F` is the inner service's future, `Req` the request type (`Value`, say)
    /// and `R` the renderer.
    pub struct ResponseFuture<F, Req, R>
    where
        Req: McpRequest,
    {
        #[pin]
        state: State<F>,
        // `Some` only when a timeout applies to the request.
        #[pin]
        timer: Option<Timer>,
        // The request's calls, to read the answer or make the layer's own.
        calls: Calls,
        // `Some` only when a timeout applies and the request has a way to stop
        // the work its handler started.
        cancellation: Option<Req::Cancellation>,
        // The layer's settings and memory of tasks.
        shared: Arc<Shared<R>>,
        // Entered at every poll, so the inner future and the layer's own events
        // run inside it; disabled (and free) without a subscriber that records it.
        span: Span,
        // The request's timing for the metric `mcp.server.operation.duration`;
        // empty when no meter provider records it.
        duration: OperationDuration,
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateReplace]
    enum State<F> {
        Running { #[pin] future: F },
        /// `call` panicked: the answer is made at the first poll.
        Panicked { panic: CaughtPanic },
        Done,
    }
}

impl<F, Req: McpRequest, R> ResponseFuture<F, Req, R> {
    pub(crate) fn running(
        future: F,
        timer: Option<(Timer, Option<Req::Cancellation>)>,
        calls: Calls,
        shared: Arc<Shared<R>>,
        span: Span,
        duration: OperationDuration,
    ) -> Self {
        let (timer, cancellation) = timer.map_or((None, None), |(timer, cancellation)| {
            (Some(timer), cancellation)
        });
        Self {
            state: State::Running { future },
            timer,
            calls,
            cancellation,
            shared,
            span,
            duration,
        }
    }

    pub(crate) fn panicked(
        panic: CaughtPanic,
        calls: Calls,
        shared: Arc<Shared<R>>,
        span: Span,
        duration: OperationDuration,
    ) -> Self {
        Self {
            state: State::Panicked { panic },
            timer: None,
            calls,
            cancellation: None,
            shared,
            span,
            duration,
        }
    }
}

impl<F, Req, R, Resp, Error> Future for ResponseFuture<F, Req, R>
where
    F: Future<Output = Result<Resp, Error>>,
    Req: McpRequest,
    Resp: McpResponse<Error>,
    R: ErrorRenderer,
{
    type Output = Result<Resp, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _entered = this.span.enter();
        let unanswered = match this.state.as_mut().project() {
            StateProj::Running { future } => match panic::catch(|| {
                let _current = Current::enter_if(Req::SPAWNS_TASKS, &this.shared.tasks);
                future.poll(cx)
            }) {
                // The inner future first: an answer that is ready wins over a
                // timer that fired in the same instant.
                Ok(Poll::Pending) => {
                    let Some(timer) = this.timer.as_pin_mut() else {
                        return Poll::Pending;
                    };
                    let Poll::Ready(timed_out) = timer.poll_expired(cx) else {
                        return Poll::Pending;
                    };
                    drop_inner_future(this.state, &this.shared.config);
                    if let Some(cancellation) = this.cancellation {
                        Req::cancel(cancellation);
                    }
                    Unanswered::TimedOut(timed_out)
                }
                Ok(Poll::Ready(mut result)) => {
                    drop_inner_future(this.state, &this.shared.config);
                    // Taken whether or not anything records it: the mark is
                    // the layer's, never the client's.
                    let no_answer = Resp::take_no_answer(&mut result);
                    let recording = telemetry::is_recording(this.span, this.duration);
                    let read = answers::read(
                        this.calls,
                        &mut result,
                        &this.shared.config,
                        &this.shared.tasks,
                        &this.shared.tool_names,
                        recording,
                    );
                    telemetry::record_answer(
                        this.span,
                        this.duration,
                        &this.shared.tool_names,
                        read.delivered,
                        no_answer,
                        || read.outcome,
                    );
                    return Poll::Ready(result);
                }
                Err(panic) => {
                    drop_inner_future(this.state, &this.shared.config);
                    Unanswered::Panicked(panic)
                }
            },
            StateProj::Panicked { .. } => match this.state.project_replace(State::Done) {
                StateReplace::Panicked { panic } => Unanswered::Panicked(panic),
                _ => unreachable!("the state was just seen to be Panicked"),
            },
            StateProj::Done => panic!("future polled after completion"),
        };
        let (answer, outcome) = unanswered.respond(this.calls, &this.shared.config);
        let tool_names = &this.shared.tool_names;
        telemetry::record_outcome(
            this.span,
            this.duration,
            tool_names,
            unanswered.cause(),
            || outcome,
        );
        Poll::Ready(answer)
    }
}

/// Drops the inner future as soon as it is finished (or has panicked, or timed
/// out), so that a panic in its `Drop` cannot cost the answer: that panic is
/// logged and dropped.
fn drop_inner_future<F, R>(state: Pin<&mut State<F>>, config: &Config<R>) {
    let mut state = state;
    if let Err(panic) = panic::catch(|| state.set(State::Done)) {
        panic.log_in_drop(config);
    }
}

impl<F, Req: McpRequest, R> std::fmt::Debug for ResponseFuture<F, Req, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
