//! The wrapper's own stdin and stdout, with plain blocking I/O: tokio's stdin
//! and stdout hand every read and write to the blocking pool, which cost more
//! than the rest of the relay together.
//!
//! Stdout is shared: the thread reading the child writes the child's lines
//! there itself (no hand-off to another thread on the way to the client), and
//! so do the thread reading the client (the wrapper's answers to requests it
//! does not send) and the runtime (answers at a timeout or after the child's
//! death, through the blocking pool so that a client that does not read cannot
//! stop the runtime). Each writes whole lines under the lock.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::{Mutex, MutexGuard};

use crate::jsonrpc::message::Answer;

/// The wrapper's stdin, as a file of its own (a duplicate of descriptor 0):
/// read without the standard library's lock and buffer.
pub(crate) fn stdin() -> std::io::Result<File> {
    duplicate(std::io::stdin().as_fd())
}

fn duplicate(fd: BorrowedFd<'_>) -> std::io::Result<File> {
    Ok(File::from(fd.try_clone_to_owned()?))
}

/// The wrapper's stdout, shared by every writer of lines for the client.
#[derive(Debug)]
pub(crate) struct ClientOutput {
    /// `None` after a write failed: the client is gone, and later lines are
    /// dropped.
    stdout: Mutex<Option<BufWriter<File>>>,
}

impl ClientOutput {
    /// The wrapper's own stdout.
    pub(crate) fn stdout() -> std::io::Result<Self> {
        Ok(Self::to(duplicate(std::io::stdout().as_fd())?))
    }

    /// Lines for the client written to `pipe` (the bridge's side of a
    /// session).
    pub(crate) fn to(pipe: File) -> Self {
        Self {
            stdout: Mutex::new(Some(BufWriter::with_capacity(64 * 1024, pipe))),
        }
    }

    fn writer(&self) -> MutexGuard<'_, Option<BufWriter<File>>> {
        // A failed write drops the writer: nothing is left half-done.
        self.stdout
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes `line` (newline included) without flushing: the caller flushes
    /// when it has no more lines ready.
    pub(crate) fn write(&self, line: &[u8]) {
        let mut stdout = self.writer();
        if let Some(writer) = stdout.as_mut()
            && let Err(error) = writer.write_all(line)
        {
            failed(&mut stdout, &error);
        }
    }

    /// Sends what is written so far.
    pub(crate) fn flush(&self) {
        let mut stdout = self.writer();
        if let Some(writer) = stdout.as_mut()
            && let Err(error) = writer.flush()
        {
            failed(&mut stdout, &error);
        }
    }

    /// Writes `answer` and flushes, then tells who waits for it.
    pub(crate) fn write_answer(&self, answer: Answer) {
        let (line, queued) = answer.into_line();
        self.write(&line);
        self.flush();
        if let Some(queued) = queued {
            let _ = queued.send(());
        }
    }
}

fn failed(stdout: &mut Option<BufWriter<File>>, error: &std::io::Error) {
    crate::telemetry::log(&format!("cannot write stdout: {error}"));
    // Dropping the writer would flush it again: its buffer is lost instead.
    if let Some(writer) = stdout.take() {
        drop(writer.into_parts());
    }
}
