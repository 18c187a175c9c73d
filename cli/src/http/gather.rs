//! Gathering what the upstream sent together, so that it reaches the client
//! in one write: hyper's client hands a response body on one frame per turn of
//! the runtime (its connection's task runs between them), so an event stream's
//! head, its events and its end, read from the upstream in one read, come to
//! the proxy over several turns. Sent as they come, each would be a write of
//! its own, and a wake-up of the client waiting for the rest.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// How many turns of the runtime the proxy waits for what the upstream sent
/// together: before an event stream's head is sent, for the events that came
/// with it; after its answer, for its end (a server ends the stream after the
/// answer). A stream that sends nothing meanwhile is not waited for longer.
pub(crate) const GATHER_TURNS: usize = 4;

/// Runs `relay` (the rest of an event stream) for [`GATHER_TURNS`] turns
/// before the stream's head is sent, so that the events the upstream sent
/// with its head go to the client in the head's write; returns it unfinished
/// when it waits longer, for instance for the upstream's next bytes.
pub(crate) async fn gather<F: Future<Output = ()> + Unpin>(mut relay: F) -> Option<F> {
    for _ in 0..GATHER_TURNS {
        let step = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut relay).poll(cx))).await;
        if step.is_ready() {
            return None;
        }
        tokio::task::yield_now().await;
    }
    Some(relay)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_relay_is_given_its_turns_and_no_more() {
        let polls = Arc::new(AtomicUsize::new(0));
        let counted = polls.clone();
        let relay = Box::pin(std::future::poll_fn(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            Poll::<()>::Pending
        }));
        assert!(gather(relay).await.is_some());
        assert_eq!(polls.load(Ordering::SeqCst), GATHER_TURNS);
        let done = Box::pin(std::future::ready(()));
        assert!(gather(done).await.is_none());
    }
}
