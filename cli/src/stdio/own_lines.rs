//! The command's own lines to the child's stdin: its cancellations at a
//! timeout, its errors to the server's requests too long to read, and the
//! closing of the stdin from the runtime. One queue, bounded, written by one
//! thread of the runtime's blocking pool at a time: no thread relaying a
//! pipe waits on the child's stdin for them, and a child that stops reading
//! holds that one thread, and no more of the command's lines than the bound;
//! they are written only while its pipe has room, so that they never stop
//! the client's lines.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::stdio::child_stdin::{ChildStdin, Offered};

/// The most bytes of the command's own lines that wait for the child's
/// stdin, those the writer holds included (one line longer than this is
/// taken when nothing waits before it): a child that does not read them gets
/// no more.
pub(crate) const MAX_QUEUED_BYTES: usize = 64 * 1024;

/// How long the writer waits before it looks again for room in the pipe of
/// a child that has not read what it was sent.
const ROOM_POLL: Duration = Duration::from_millis(50);

/// The command's own lines on their way to the child.
#[derive(Debug, Default)]
pub(crate) struct OwnLines {
    queue: Mutex<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    /// The lines no writer holds yet.
    lines: Vec<u8>,
    /// The bytes the writer holds, until they are written.
    writing: usize,
    /// Whether a thread is writing.
    writer: bool,
    /// Whether the stdin is to be closed once the lines are written.
    close: bool,
}

impl Queue {
    fn waiting(&self) -> usize {
        self.lines.len() + self.writing
    }
}

impl OwnLines {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // Whole lines are appended, and the counts set after: a panic leaves
        // nothing half-changed.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `line` (its newline included), unless the child has not read
    /// enough of the lines before it: it is dropped then. Returns whether it
    /// is queued.
    pub(crate) fn push(&self, line: &[u8]) -> bool {
        let mut queue = self.queue();
        let waiting = queue.waiting();
        if waiting > 0 && waiting + line.len() > MAX_QUEUED_BYTES {
            return false;
        }
        queue.lines.extend_from_slice(line);
        true
    }

    /// The stdin is to be closed once the queued lines are written.
    pub(crate) fn close_after(&self) {
        self.queue().close = true;
    }

    /// Whether there is anything for a writer to do.
    pub(crate) fn has_work(&self) -> bool {
        let queue = self.queue();
        !queue.writer && (!queue.lines.is_empty() || queue.close)
    }

    /// Writes the queued lines to `input`, and closes it when asked, until
    /// nothing is left. Blocking; returns at once when another thread is
    /// writing: that one writes these too. Lines are written only while the
    /// child's pipe has room for them ([`ChildStdin::write_if_room`]), else
    /// held and offered again: they never fill the pipe so far that the
    /// client's lines would wait behind them.
    pub(crate) fn write_to(&self, input: &ChildStdin) {
        let mut queue = self.queue();
        if queue.writer {
            return;
        }
        queue.writer = true;
        loop {
            let lines = std::mem::take(&mut queue.lines);
            if lines.is_empty() {
                let close = std::mem::take(&mut queue.close);
                if close {
                    drop(queue);
                    input.close();
                    queue = self.queue();
                    if !queue.lines.is_empty() {
                        continue;
                    }
                }
                queue.writer = false;
                return;
            }
            queue.writing = lines.len();
            drop(queue);
            while input.write_if_room(&lines) == Offered::NoRoom {
                std::thread::sleep(ROOM_POLL);
            }
            queue = self.queue();
            queue.writing = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Read;

    use super::*;

    #[test]
    fn the_bound_counts_the_lines_the_writer_holds_and_one_longer_line_passes_alone() {
        let lines = OwnLines::default();
        let long = vec![b'x'; MAX_QUEUED_BYTES + 1];
        assert!(lines.push(&long), "a long line passes when nothing waits");
        assert!(!lines.push(b"{}\n"));
        // The writer holds it, unwritten: it still counts.
        {
            let mut queue = lines.queue();
            queue.writing = std::mem::take(&mut queue.lines).len();
        }
        assert!(!lines.push(b"{}\n"));
        lines.queue().writing = 0;
        let line = vec![b'x'; 1000];
        let queued = std::iter::repeat_with(|| lines.push(&line))
            .take(100)
            .filter(|queued| *queued)
            .count();
        assert_eq!(queued, MAX_QUEUED_BYTES / 1000);
    }

    #[test]
    fn the_writer_writes_every_line_then_closes_the_stdin() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let input = ChildStdin::new(File::from(std::os::fd::OwnedFd::from(writer)));
        let lines = OwnLines::default();
        assert!(lines.push(b"{\"a\":1}\n"));
        assert!(lines.push(b"{\"b\":2}\n"));
        lines.close_after();
        assert!(lines.has_work());
        lines.write_to(&input);
        assert!(!lines.has_work());
        let mut read = String::new();
        reader.read_to_string(&mut read).unwrap();
        assert_eq!(read, "{\"a\":1}\n{\"b\":2}\n");
    }
}
