//! What a session writes to its child: a bounded queue of lines, and the task
//! that writes them to the relay's pipe (the child's stdin behind it). No one
//! who sends a line, and nothing that ends the session, waits on that pipe: a
//! child that stops reading fills the queue, and a line past its bound is
//! refused at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hyper::body::Bytes;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe as async_pipe;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::task::AbortHandle;

/// The most bytes a session queues for a child that has not read them (one
/// line longer than this is taken when nothing waits before it): past it, the
/// child is not reading, and a line is refused.
pub(crate) const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;

/// The most lines a session queues for its child.
const MAX_QUEUED_LINES: usize = 1024;

/// The lines on their way to a session's child.
#[derive(Debug)]
pub(crate) struct ChildInput {
    /// `None` once closed: the writer writes what is queued, then closes the
    /// pipe.
    queue: Mutex<Option<mpsc::Sender<Bytes>>>,
    /// The bytes queued and not yet written.
    queued: Arc<AtomicUsize>,
    writer: AbortHandle,
}

/// What became of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queued {
    /// It is on its way.
    Yes,
    /// The child has not read what was queued before it: refused.
    Full,
    /// The session's input is closed, or the relay is gone.
    Closed,
}

impl ChildInput {
    /// Starts the task that writes to `pipe`.
    pub(crate) fn start(pipe: async_pipe::Sender) -> Self {
        let (queue, lines) = mpsc::channel(MAX_QUEUED_LINES);
        let queued = Arc::new(AtomicUsize::new(0));
        let writer = tokio::spawn(write(pipe, lines, queued.clone())).abort_handle();
        Self {
            queue: Mutex::new(Some(queue)),
            queued,
            writer,
        }
    }

    fn queue(&self) -> MutexGuard<'_, Option<mpsc::Sender<Bytes>>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `line` (one message, without its newline) for the child.
    pub(crate) fn send(&self, line: &[u8]) -> Queued {
        let Some(queue) = self.queue().clone() else {
            return Queued::Closed;
        };
        let mut whole = Vec::with_capacity(line.len() + 1);
        whole.extend_from_slice(line);
        whole.push(b'\n');
        let length = whole.len();
        let before = self.queued.fetch_add(length, Ordering::AcqRel);
        if before > 0 && before + length > MAX_QUEUED_BYTES {
            self.queued.fetch_sub(length, Ordering::AcqRel);
            return Queued::Full;
        }
        match queue.try_send(Bytes::from(whole)) {
            Ok(()) => Queued::Yes,
            Err(refused) => {
                self.queued.fetch_sub(length, Ordering::AcqRel);
                match refused {
                    TrySendError::Full(_) => Queued::Full,
                    TrySendError::Closed(_) => Queued::Closed,
                }
            }
        }
    }

    /// Takes no line from now on: what is queued is written, then the pipe
    /// closes (the end of the child's stdin, once the relay has written it).
    pub(crate) fn close(&self) {
        self.queue().take();
    }

    /// Closes the pipe now, whatever is queued or half written: the child is
    /// being stopped.
    pub(crate) fn abandon(&self) {
        self.close();
        self.writer.abort();
    }
}

impl Drop for ChildInput {
    fn drop(&mut self) {
        self.writer.abort();
    }
}

/// Writes the queued lines to `pipe` until the queue is closed and empty, or
/// the pipe is.
async fn write(
    mut pipe: async_pipe::Sender,
    mut lines: mpsc::Receiver<Bytes>,
    queued: Arc<AtomicUsize>,
) {
    while let Some(line) = lines.recv().await {
        // One write: the relay's thread wakes once, for a whole line.
        let written = pipe.write_all(&line).await;
        queued.fetch_sub(line.len(), Ordering::AcqRel);
        if written.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::fd::OwnedFd;

    use super::*;

    /// A queue to a pipe that no one reads yet, and the pipe's other end.
    fn unread() -> (ChildInput, std::io::PipeReader) {
        let (reader, writer) = std::io::pipe().unwrap();
        let writer = async_pipe::Sender::from_owned_fd(OwnedFd::from(writer)).unwrap();
        (ChildInput::start(writer), reader)
    }

    #[tokio::test]
    async fn a_child_that_does_not_read_fills_the_queue_and_a_line_past_it_is_refused_at_once() {
        let (input, reader) = unread();
        let line = vec![b'x'; 4 << 20];
        let mut queued = 0;
        while input.send(&line) == Queued::Yes {
            queued += 1;
            tokio::task::yield_now().await;
            assert!(queued < 8, "the queue is unbounded");
        }
        // The line the writer holds counts until it is written.
        assert_eq!(queued, MAX_QUEUED_BYTES / (line.len() + 1));
        assert_eq!(input.send(b"{}"), Queued::Yes, "a short line fits still");
        // Closing and abandoning never wait on the pipe.
        input.close();
        assert_eq!(input.send(b"{}"), Queued::Closed);
        input.abandon();
        tokio::task::yield_now().await;
        let mut reader = reader;
        let mut read = Vec::new();
        tokio::task::spawn_blocking(move || reader.read_to_end(&mut read).map(|_| read.len()))
            .await
            .unwrap()
            .expect("the pipe ends once the writer is abandoned");
    }

    #[tokio::test]
    async fn lines_past_the_count_bound_are_refused() {
        let (input, _reader) = unread();
        // The first line fills the pipe; the writer waits on it.
        assert_eq!(input.send(&vec![b'x'; 1 << 20]), Queued::Yes);
        tokio::task::yield_now().await;
        let queued = std::iter::repeat_with(|| input.send(b"{}"))
            .take(MAX_QUEUED_LINES + 10)
            .filter(|queued| *queued == Queued::Yes)
            .count();
        assert_eq!(queued, MAX_QUEUED_LINES);
    }
}
