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
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tower_service::Service;

use crate::jsonrpc::message::{Answer, Withdrawn, cancelled_ids};
use crate::stdio::in_flight::{InFlight, Refused, Ticket};
use crate::stdio::own_lines::OwnLines;

/// The state shared by the thread reading the client, the thread reading the
/// child, and the runtime.
#[derive(Debug)]
pub(crate) struct Child {
    in_flight: Mutex<InFlight>,
    input: ChildInput,
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
            input: ChildInput::new(stdin),
            own_lines: OwnLines::default(),
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

/// The child's stdin: written by the thread reading the client, which flushes
/// when it has no more complete lines; and, rarely, with the wrapper's own
/// lines (`own_lines`), by one thread of the blocking pool at a time, so that
/// a child that does not read cannot stop the runtime nor the thread reading
/// its stdout.
#[derive(Debug)]
pub(crate) struct ChildInput {
    /// `None` once closed, or after a write failed.
    stdin: Mutex<Option<BufWriter<File>>>,
}

impl ChildInput {
    pub(super) fn new(stdin: File) -> Self {
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
            if reader_gone(pipe) {
                let error = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
                closed_by_the_child(&mut stdin, &error);
                return Offered::Closed;
            }
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

/// Whether nothing reads the pipe `pipe` any more (the child exited, or
/// closed its stdin): what it has not read stays counted in it, so there is
/// never room again, and the lines offered are lost as a write's would be.
fn reader_gone(pipe: RawFd) -> bool {
    let mut poll = libc::pollfd {
        fd: pipe,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: poll reads and writes the one pollfd the pointer points to.
    #[allow(unsafe_code)]
    let result = unsafe { libc::poll(&raw mut poll, 1, 0) };
    result > 0 && poll.revents & libc::POLLERR != 0
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

#[cfg(test)]
mod tests {
    use std::os::fd::OwnedFd;

    use super::*;

    #[test]
    fn lines_offered_without_room_wait_while_the_child_lives_and_are_lost_once_it_is_gone() {
        let (reader, writer) = std::io::pipe().unwrap();
        let input = ChildInput::new(File::from(OwnedFd::from(writer)));
        let lines = vec![b'x'; 40 * 1024];
        assert_eq!(
            input.write_if_room(&lines),
            Offered::Written,
            "an empty pipe"
        );
        assert_eq!(input.write_if_room(&lines), Offered::NoRoom);
        drop(reader);
        assert_eq!(input.write_if_room(&lines), Offered::Closed);
        assert_eq!(input.write_if_room(b"{}\n"), Offered::Closed);
    }
}
