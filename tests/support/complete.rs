//! Driving a future on this thread, with no runtime behind it (no timer, no
//! reactor).
//!
//! Shared with the benches (`benches/support/mod.rs` includes this file), so it
//! depends on the standard library only.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Polls `future` once, with a no-op waker, and returns its output.
///
/// For the inner services of these tests and benches, which answer at once: a
/// runtime would add allocations and threads of its own to what is counted or
/// timed. Panics if the future is pending, which would mean the layer waited on
/// its own.
pub fn complete<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a future over an inner service that never waits was pending"),
    }
}

/// Polls `future` to completion on this thread with a no-op waker, however many
/// times it is pending: for futures that wait without needing a runtime to wake
/// them (they yield, then are ready).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}
