//! The child: the requests in flight to it, its stdin, and the service the
//! layer waits on for a request's answer when a timeout applies.
//!
//! That service's future, dropped before its answer came (the layer's tool
//! timeout expired), tells the child with `notifications/cancelled`, and the
//! child's late answer is dropped. A request the client cancels ends with
//! [`Withdrawn`]: the client's own cancellation goes to the child, and nothing
//! answers it.

use std::fs::File;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tower_service::Service;

use crate::jsonrpc::message::{Answer, Withdrawn, cancelled_ids};
use crate::stdio::child_stdin::ChildStdin;
use crate::stdio::in_flight::{InFlight, Refused, Ticket};
use crate::stdio::own_lines::OwnLines;

/// The state shared by the thread reading the client, the thread reading the
/// child, and the runtime.
#[derive(Debug)]
pub(crate) struct Child {
    in_flight: Mutex<InFlight>,
    input: ChildStdin,
    /// The wrapper's own lines for the child: its cancellations (at a
    /// timeout), sent once the timeout's answer is written, so that the
    /// client hears of the timeout before anything the child says about it;
    /// its errors to the server's requests too long to read; the closing of
    /// the stdin from the runtime.
    own_lines: OwnLines,
}

impl Child {
    pub(crate) fn new(stdin: File) -> Arc<Self> {
        Arc::new(Self {
            in_flight: Mutex::new(InFlight::default()),
            input: ChildStdin::new(stdin),
            own_lines: OwnLines::default(),
        })
    }

    /// The child's stdin.
    pub(crate) fn input(&self) -> &ChildStdin {
        &self.input
    }

    /// The child is gone: every request in flight, and every later one, is
    /// answered with its `status`. Returns the answers no future of the layer
    /// waits for.
    pub(crate) fn gone(&self, status: String) -> Vec<Refused> {
        self.in_flight().child_gone(status)
    }

    /// Withdraws the requests that the cancellations in the client's `batch`
    /// cancel (the batch goes to the child whole).
    pub(crate) fn withdraw_cancelled_in(&self, batch: &Value) {
        let mut in_flight = self.in_flight();
        for id in cancelled_ids(batch) {
            in_flight.withdraw(id);
        }
    }

    /// Withdraws the request `id` that the client cancelled; returns whether
    /// the cancellation is to be sent to the child: not when it was told
    /// already.
    pub(crate) fn withdraw(&self, id: &Value) -> bool {
        self.in_flight().withdraw(id)
    }

    pub(crate) fn in_flight(&self) -> MutexGuard<'_, InFlight> {
        // A panic while the lock was held left the table consistent: every
        // method of InFlight finishes its changes before it can panic.
        self.in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Closes the child's stdin, from the runtime, once the wrapper's own
    /// lines queued before are written.
    pub(crate) fn close_input_from_runtime(self: &Arc<Self>) {
        self.own_lines.close_after();
        self.send_own_lines_from(&Handle::current());
    }

    /// Gives up the request `ticket` (its timeout expired); the child is
    /// told by [`send_own_lines`](Self::send_own_lines).
    fn cancel(&self, ticket: Ticket) {
        let Some(ids) = self.in_flight().cancel(ticket) else {
            return;
        };
        for id in ids {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": mcp_tool_errors::TIMEOUT_CANCELLATION_REASON},
            });
            let mut line = serde_json::to_vec(&notification).expect("a JSON value serializes");
            line.push(b'\n');
            // Past the bound the child is not reading: it would not read this.
            self.own_lines.push(&line);
        }
    }

    /// Whether a line of the wrapper's own waits for a writer.
    pub(crate) fn has_own_lines(&self) -> bool {
        self.own_lines.has_work()
    }

    /// Sends `line` (newline included), the wrapper's own, to the child
    /// from `runtime`'s blocking pool, unless the child has not read enough
    /// of those before it (it is dropped then); returns whether it is queued.
    pub(crate) fn send_from_runtime(self: &Arc<Self>, line: &[u8], runtime: &Handle) -> bool {
        let queued = self.own_lines.push(line);
        if queued {
            self.send_own_lines_from(runtime);
        }
        queued
    }

    /// Starts a writer of the wrapper's own lines in `runtime`'s blocking
    /// pool, unless one is writing.
    fn send_own_lines_from(self: &Arc<Self>, runtime: &Handle) {
        if self.has_own_lines() {
            let child = self.clone();
            runtime.spawn_blocking(move || child.send_own_lines());
        }
    }

    /// Sends the wrapper's own lines to the child. Blocking, unless another
    /// thread is sending them: that one sends these too.
    pub(crate) fn send_own_lines(&self) {
        self.own_lines.write_to(&self.input);
    }
}

/// The service the layer calls for a request already registered and sent,
/// when a timeout applies: its future waits for the child's answer.
#[derive(Debug)]
pub(crate) struct Awaited {
    future: Option<ResponseFuture>,
}

impl Awaited {
    /// The request `ticket`, whose answer comes on `receiver`.
    pub(crate) fn new(
        receiver: oneshot::Receiver<Answer>,
        ticket: Ticket,
        child: Arc<Child>,
    ) -> Self {
        Self {
            future: Some(ResponseFuture {
                receiver,
                ticket,
                child,
                done: false,
            }),
        }
    }
}

impl Service<Value> for Awaited {
    type Response = Answer;
    type Error = Withdrawn;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Withdrawn>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: Value) -> ResponseFuture {
        self.future.take().expect("one call per request")
    }
}

/// The future of [`Awaited`].
#[derive(Debug)]
pub(crate) struct ResponseFuture {
    receiver: oneshot::Receiver<Answer>,
    ticket: Ticket,
    child: Arc<Child>,
    done: bool,
}

impl Future for ResponseFuture {
    type Output = Result<Answer, Withdrawn>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        assert!(!self.done, "future polled after completion");
        let received = match Pin::new(&mut self.receiver).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(received) => received,
        };
        self.done = true;
        // The table drops a request unanswered only when the client cancelled
        // it.
        Poll::Ready(received.map_err(|_| Withdrawn))
    }
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        if !self.done {
            self.child.cancel(self.ticket);
        }
    }
}
