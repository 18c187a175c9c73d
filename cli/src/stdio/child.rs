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
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tower_service::Service;

use crate::jsonrpc::message::{Answer, Withdrawn, cancelled_ids};
use crate::stdio::in_flight::{InFlight, Refused, Ticket};

/// The state shared by the thread reading the client, the thread reading the
/// child, and the runtime.
#[derive(Debug)]
pub(crate) struct Child {
    in_flight: Mutex<InFlight>,
    input: ChildInput,
    /// The wrapper's own cancellations (at a timeout), sent once the
    /// timeout's answer is written: the client hears of the timeout before
    /// anything the child says about it.
    cancellations: Mutex<Vec<u8>>,
    /// Whether a thread is sending the cancellations: one at a time, so that a
    /// child that stops reading its stdin holds one thread of the blocking
    /// pool, not one per timeout.
    sending_cancellations: AtomicBool,
}

impl Child {
    pub(crate) fn new(stdin: File) -> Arc<Self> {
        Arc::new(Self {
            in_flight: Mutex::new(InFlight::default()),
            input: ChildInput::new(stdin),
            cancellations: Mutex::default(),
            sending_cancellations: AtomicBool::new(false),
        })
    }

    /// The child's stdin.
    pub(crate) fn input(&self) -> &ChildInput {
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

    /// Closes the child's stdin, from the runtime.
    pub(crate) fn close_input_from_runtime(self: &Arc<Self>) {
        let child = self.clone();
        tokio::task::spawn_blocking(move || child.input.close());
    }

    /// Gives up the request `ticket` (its timeout expired); the child is
    /// told by [`send_cancellations`](Self::send_cancellations).
    fn cancel(&self, ticket: Ticket) {
        let Some(ids) = self.in_flight().cancel(ticket) else {
            return;
        };
        let mut cancellations = self.cancellations();
        for id in ids {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "The client's tool timeout expired."},
            });
            serde_json::to_writer(&mut *cancellations, &notification)
                .expect("a JSON value serializes");
            cancellations.push(b'\n');
        }
    }

    fn cancellations(&self) -> MutexGuard<'_, Vec<u8>> {
        // Whole lines are appended: a panic cannot leave half of one.
        self.cancellations
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a cancellation of the wrapper's own waits to be sent.
    pub(crate) fn cancels(&self) -> bool {
        !self.cancellations().is_empty()
    }

    /// Sends the wrapper's own cancellations to the child. Blocking, unless
    /// another thread is sending them: that one sends these too.
    pub(crate) fn send_cancellations(&self) {
        while self.cancels() {
            if self.sending_cancellations.swap(true, Ordering::AcqRel) {
                return;
            }
            let lines = std::mem::take(&mut *self.cancellations());
            if !lines.is_empty() {
                self.input.write(&lines);
                self.input.flush();
            }
            // Lines queued while this thread wrote are seen by the loop's test.
            self.sending_cancellations.store(false, Ordering::Release);
        }
    }
}

/// The child's stdin: written by the thread reading the client, which flushes
/// when it has no more complete lines; and, rarely, from the runtime (a
/// cancellation at a timeout, closing it on a second SIGINT), through the
/// blocking pool so that a child that does not read cannot stop the runtime.
#[derive(Debug)]
pub(crate) struct ChildInput {
    /// `None` once closed, or after a write failed.
    stdin: Mutex<Option<BufWriter<File>>>,
}

impl ChildInput {
    fn new(stdin: File) -> Self {
        Self {
            stdin: Mutex::new(Some(BufWriter::with_capacity(64 * 1024, stdin))),
        }
    }

    fn stdin(&self) -> MutexGuard<'_, Option<BufWriter<File>>> {
        // A failed write closes the stdin: nothing is left half-done.
        self.stdin
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes `lines` (newlines included) as they are; a child that is gone
    /// loses them.
    pub(crate) fn write(&self, lines: &[u8]) {
        let mut stdin = self.stdin();
        if let Some(writer) = stdin.as_mut()
            && let Err(error) = writer.write_all(lines)
        {
            closed_by_the_child(&mut stdin, &error);
        }
    }

    /// Writes `lines` and sends them, only if the child's stdin pipe holds
    /// them and as much again besides what it has not read, or holds nothing
    /// (lines longer than that wait for a child that reads): the wrapper's own
    /// lines never fill the pipe of a child that does not read, which would
    /// stop the client's lines (and the end of its stdin) behind them.
    pub(crate) fn write_if_room(&self, lines: &[u8]) -> Offered {
        let mut stdin = self.stdin();
        let Some(writer) = stdin.as_mut() else {
            return Offered::Closed;
        };
        let pipe = writer.get_ref().as_raw_fd();
        let waiting = unread_bytes(pipe) + writer.buffer().len();
        if waiting > 0 && waiting + lines.len() > pipe_capacity(pipe) / 2 {
            return Offered::NoRoom;
        }
        if let Err(error) = writer.write_all(lines).and_then(|()| writer.flush()) {
            closed_by_the_child(&mut stdin, &error);
            return Offered::Closed;
        }
        Offered::Written
    }

    /// Sends what is written so far.
    pub(crate) fn flush(&self) {
        let mut stdin = self.stdin();
        if let Some(writer) = stdin.as_mut()
            && let Err(error) = writer.flush()
        {
            closed_by_the_child(&mut stdin, &error);
        }
    }

    /// Sends what is written so far and closes the child's stdin.
    pub(crate) fn close(&self) {
        if let Some(mut writer) = self.stdin().take() {
            let _ = writer.flush();
        }
    }
}

/// What became of lines offered to [`ChildInput::write_if_room`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offered {
    /// Sent.
    Written,
    /// Not written: the child has not read enough of what it was sent.
    NoRoom,
    /// Not written: the child's stdin is closed.
    Closed,
}

/// The bytes in the pipe `pipe` that its reader has not read; 0 when it
/// cannot be told (not a pipe).
fn unread_bytes(pipe: RawFd) -> usize {
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int to the pointer, which points to one.
    #[allow(unsafe_code)]
    let result = unsafe { libc::ioctl(pipe, libc::FIONREAD, &raw mut unread) };
    if result == 0 {
        usize::try_from(unread).unwrap_or(0)
    } else {
        0
    }
}

/// How many bytes the pipe `pipe` holds; unbounded when it cannot be told
/// (not a pipe).
fn pipe_capacity(pipe: RawFd) -> usize {
    // SAFETY: F_GETPIPE_SZ takes no argument and touches no memory.
    #[allow(unsafe_code)]
    let capacity = unsafe { libc::fcntl(pipe, libc::F_GETPIPE_SZ) };
    usize::try_from(capacity).unwrap_or(usize::MAX)
}

/// The child closed its stdin or exited; its exit is reported elsewhere.
fn closed_by_the_child(stdin: &mut Option<BufWriter<File>>, error: &std::io::Error) {
    crate::log(&format!("the server's stdin is closed: {error}"));
    // Dropping the writer would flush it again: its buffer is lost instead.
    if let Some(writer) = stdin.take() {
        drop(writer.into_parts());
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
