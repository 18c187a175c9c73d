//! [`ResponseFuture`], the future of [`ToolErrors`](crate::ToolErrors): the inner
//! service's future, with the response rewrapped and a panic while polling turned
//! into an answer.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tracing::Span;

use crate::config::Config;
use crate::exchange::Pending;
use crate::panic::CaughtPanic;
use crate::render::ErrorRenderer;
use crate::telemetry::{self, Cause};

pin_project! {
    /// Response future of [`ToolErrors`](crate::ToolErrors).
    ///
    /// Polls the inner future in the caller's task (never spawned, so task-locals
    /// keep working) and catches a panic there as well, inside the request span.
    pub struct ResponseFuture<F, P, R> {
        #[pin]
        state: State<F>,
        pending: P,
        config: Config<R>,
        // Entered at every poll, so the inner future and the layer's own events
        // run inside it; disabled (and free) without a subscriber that records it.
        span: Span,
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

impl<F, P, R> ResponseFuture<F, P, R> {
    pub(crate) fn running(future: F, pending: P, config: Config<R>, span: Span) -> Self {
        Self {
            state: State::Running { future },
            pending,
            config,
            span,
        }
    }

    pub(crate) fn panicked(panic: CaughtPanic, pending: P, config: Config<R>, span: Span) -> Self {
        Self {
            state: State::Panicked { panic },
            pending,
            config,
            span,
        }
    }
}

impl<F, P, R, Response, Error> Future for ResponseFuture<F, P, R>
where
    F: Future<Output = Result<Response, Error>>,
    P: Pending<Response, Error>,
    R: ErrorRenderer,
{
    type Output = Result<Response, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _entered = this.span.enter();
        let panic = match this.state.as_mut().project() {
            StateProj::Running { future } => {
                match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
                    Ok(Poll::Pending) => return Poll::Pending,
                    Ok(Poll::Ready(mut result)) => {
                        drop_inner_future(this.state);
                        if let Ok(response) = &mut result {
                            this.pending.for_each_tool_result(response, |tool, result| {
                                this.config.rewrap(result, tool)
                            });
                        }
                        let pending = &*this.pending;
                        telemetry::record_outcome(this.span, Cause::Service, || {
                            pending.outcome(&result)
                        });
                        return Poll::Ready(result);
                    }
                    Err(payload) => {
                        let panic = CaughtPanic::new(payload);
                        drop_inner_future(this.state);
                        panic
                    }
                }
            }
            StateProj::Panicked { .. } => match this.state.project_replace(State::Done) {
                StateReplace::Panicked { panic } => panic,
                _ => unreachable!("the state was just seen to be Panicked"),
            },
            StateProj::Done => panic!("future polled after completion"),
        };
        let answer = answer_panic(this.pending, &panic, this.config);
        telemetry::record_outcome(this.span, Cause::Panic, || this.pending.outcome(&answer));
        Poll::Ready(answer)
    }
}

/// Drops the inner future as soon as it is finished (or has panicked), so that
/// a panic in its `Drop` cannot cost the answer: that panic is logged and dropped.
fn drop_inner_future<F>(state: Pin<&mut State<F>>) {
    let mut state = state;
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| state.set(State::Done))) {
        CaughtPanic::new(payload).log_in_drop();
    }
}

fn answer_panic<P, R, Response, Error>(
    pending: &P,
    panic: &CaughtPanic,
    config: &Config<R>,
) -> Result<Response, Error>
where
    P: Pending<Response, Error>,
    R: ErrorRenderer,
{
    let mut answered = false;
    let response = pending.panic_response(|call| {
        answered = true;
        panic.answer(call, config)
    });
    if !answered {
        panic.log_unanswered();
    }
    response
}

impl<F, P, R> std::fmt::Debug for ResponseFuture<F, P, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
