//! Lines read from a pipe with plain blocking reads, as many as one read
//! returns, and whether another complete line is read already: a thread that
//! relays lines writes them as they come and flushes once none is left, so a
//! burst costs one write, and a lone line is not held back.

use std::fs::File;
use std::io::{BufRead, BufReader};

/// The reads of a relay thread: large enough for a burst of lines.
const READ_SIZE: usize = 64 * 1024;

/// The lines of one pipe.
#[derive(Debug)]
pub(crate) struct Lines {
    reader: BufReader<File>,
    line: Vec<u8>,
}

impl Lines {
    pub(crate) fn new(pipe: File) -> Self {
        Self {
            reader: BufReader::with_capacity(READ_SIZE, pipe),
            line: Vec::new(),
        }
    }

    /// The next line, newline included (added to a last line without one);
    /// `None` at the end of the pipe. A read error ends the pipe too, and is
    /// returned.
    pub(crate) fn next(&mut self) -> Result<Option<&[u8]>, std::io::Error> {
        self.line.clear();
        if self.reader.read_until(b'\n', &mut self.line)? == 0 {
            return Ok(None);
        }
        if !self.line.ends_with(b"\n") {
            self.line.push(b'\n');
        }
        Ok(Some(&self.line))
    }

    /// Whether a complete line is read already: the writer flushes when not.
    pub(crate) fn has_another(&self) -> bool {
        self.reader.buffer().contains(&b'\n')
    }
}
