//! Lines read from a pipe with plain blocking reads, as many as one read
//! returns, and whether another complete line is read already: a thread that
//! relays lines writes them as they come and flushes once none is left, so a
//! burst costs one write, and a lone line is not held back.
//!
//! A line longer than the bound (`--max-message-bytes`) is never held whole:
//! past the bound its bytes are looked at for what the message's members are
//! ([`MemberScan`]) and dropped as they come, so that a line of any length,
//! or one that never ends, holds no more than the bound.

use std::fs::File;
use std::io::{BufRead, BufReader};

use crate::jsonrpc::member_scan::{MemberScan, Scanned};

/// The reads of a relay thread: large enough for a burst of lines.
const READ_SIZE: usize = 64 * 1024;

/// The lines of one pipe.
#[derive(Debug)]
pub(crate) struct Lines {
    reader: BufReader<File>,
    line: Vec<u8>,
    /// The most bytes of a line held, its newline not counted.
    max: usize,
    /// The scan of a line past the bound, while its end has not come.
    too_long: Option<MemberScan>,
}

/// What [`Lines::next`] read.
#[derive(Debug)]
pub(crate) enum Line<'a> {
    /// A line, newline included.
    Whole(&'a [u8]),
    /// Part of a line longer than the bound, dropped: the requests and the
    /// responses of the message found in it, and whether it is a batch.
    /// `first` for the part that passed the bound, which comes as soon as it
    /// does (a line that never ends answers its call all the same); the rest
    /// of the line follows as one more part at its end.
    TooLong {
        members: Vec<Scanned>,
        batch: bool,
        first: bool,
    },
}

impl Lines {
    /// The lines of `pipe`, each held up to `max` bytes.
    pub(crate) fn new(pipe: File, max: usize) -> Self {
        Self {
            reader: BufReader::with_capacity(READ_SIZE, pipe),
            line: Vec::new(),
            max,
            too_long: None,
        }
    }

    /// The next line, newline included (added to a last line without one);
    /// `None` at the end of the pipe. A read error ends the pipe too, and is
    /// returned.
    pub(crate) fn next(&mut self) -> Result<Option<Line<'_>>, std::io::Error> {
        self.line.clear();
        loop {
            let read = self.reader.fill_buf()?;
            if read.is_empty() {
                return Ok(match self.too_long.take() {
                    Some(scan) => Some(rest_too_long(scan)),
                    None if self.line.is_empty() => None,
                    None => {
                        self.line.push(b'\n');
                        Some(Line::Whole(&self.line))
                    }
                });
            }
            let newline = memchr::memchr(b'\n', read);
            let part = newline.map_or(read.len(), |at| at + 1);
            if let Some(scan) = self.too_long.as_mut() {
                scan.feed(&read[..part]);
                self.reader.consume(part);
                if newline.is_some() {
                    let scan = self.too_long.take().expect("a line too long");
                    return Ok(Some(rest_too_long(scan)));
                }
                continue;
            }
            // The newline does not count against the bound.
            let length = self.line.len() + part - usize::from(newline.is_some());
            if length > self.max {
                let mut scan = MemberScan::default();
                scan.feed(&self.line);
                scan.feed(&read[..part]);
                self.reader.consume(part);
                self.line = Vec::new();
                let members = scan.take();
                let batch = scan.is_batch();
                if newline.is_none() {
                    self.too_long = Some(scan);
                }
                return Ok(Some(Line::TooLong {
                    members,
                    batch,
                    first: true,
                }));
            }
            self.line.extend_from_slice(&read[..part]);
            self.reader.consume(part);
            if newline.is_some() {
                return Ok(Some(Line::Whole(&self.line)));
            }
        }
    }

    /// Whether a complete line is read already: the writer flushes when not.
    pub(crate) fn has_another(&self) -> bool {
        self.too_long.is_none() && self.reader.buffer().contains(&b'\n')
    }
}

/// The rest of a line too long, whose `scan` has seen it all.
fn rest_too_long(mut scan: MemberScan) -> Line<'static> {
    Line::TooLong {
        members: scan.take(),
        batch: scan.is_batch(),
        first: false,
    }
}
