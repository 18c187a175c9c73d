//! The child's stdin, written by the relay's thread and, rarely, with the
//! command's own lines, so that a child that stops reading blocks neither.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Mutex, MutexGuard};

/// The child's stdin: written by the thread reading the client, which flushes
/// when it has no more complete lines; and, rarely, with the wrapper's own
/// lines (`own_lines`), by one thread of the blocking pool at a time, so that
/// a child that does not read cannot stop the runtime nor the thread reading
/// its stdout.
#[derive(Debug)]
pub(crate) struct ChildStdin {
    /// `None` once closed, or after a write failed.
    stdin: Mutex<Option<BufWriter<File>>>,
}

impl ChildStdin {
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

/// What became of lines offered to [`ChildStdin::write_if_room`].
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
    crate::telemetry::log(&format!("the server's stdin is closed: {error}"));
    // Dropping the writer would flush it again: its buffer is lost instead.
    if let Some(writer) = stdin.take() {
        drop(writer.into_parts());
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::OwnedFd;

    use super::*;

    #[test]
    fn lines_offered_without_room_wait_while_the_child_lives_and_are_lost_once_it_is_gone() {
        let (reader, writer) = std::io::pipe().unwrap();
        let input = ChildStdin::new(File::from(OwnedFd::from(writer)));
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
