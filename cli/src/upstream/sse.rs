//! A `text/event-stream` body cut into events as its bytes arrive, and the one
//! change the proxy makes to an event: its data replaced by a rewritten message.
//!
//! An event is kept as the bytes the server sent (every field, comment and line
//! ending), so that an event the proxy does not change reaches the client byte
//! for byte, and a changed one keeps its `id`, `event` and `retry` lines where
//! they were.

/// Cuts a stream of bytes into whole events, each ending with its blank line.
///
/// A line ends with `\r\n`, `\n` or `\r`, as the event-stream grammar allows:
/// a `\r` ends its line as soon as it arrives (an event whose blank line is a
/// lone `\r` goes out then, not with the stream's next byte), and a `\n` that
/// comes next, in the next chunk, is the rest of that line ending, not an empty
/// line: it starts the next event's bytes. A byte-order mark that starts the
/// stream is skipped, as the grammar says; every other byte is kept.
#[derive(Debug)]
pub(crate) struct EventSplitter {
    buffer: Vec<u8>,
    /// Where the first line not yet scanned starts in `buffer`.
    scanned: usize,
    /// How far that line has been searched for its end: a long line arriving
    /// in many chunks is searched once, not from its start at every chunk.
    searched: usize,
    /// The last line ended with a `\r` that was last in the buffer: a `\n`
    /// next belongs to that line ending.
    after_cr: bool,
    /// Nothing of the stream has been looked at for a byte-order mark yet.
    at_start: bool,
}

/// U+FEFF in UTF-8, which the grammar skips at the start of a stream.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

impl Default for EventSplitter {
    fn default() -> Self {
        Self {
            buffer: Vec::new(),
            scanned: 0,
            searched: 0,
            after_cr: false,
            at_start: true,
        }
    }
}

impl EventSplitter {
    /// Adds bytes read from the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        if self.at_start {
            self.skip_byte_order_mark();
        }
    }

    /// Drops a byte-order mark that starts the stream, once enough bytes have
    /// come to tell.
    fn skip_byte_order_mark(&mut self) {
        if self.buffer.len() < BYTE_ORDER_MARK.len() && BYTE_ORDER_MARK.starts_with(&self.buffer) {
            return;
        }
        if self.buffer.starts_with(BYTE_ORDER_MARK) {
            self.buffer.drain(..BYTE_ORDER_MARK.len());
        }
        self.at_start = false;
    }

    /// The next whole event, blank line included, when the bytes pushed hold one.
    pub(crate) fn next_event(&mut self) -> Option<Vec<u8>> {
        if self.at_start {
            return None;
        }
        loop {
            if self.after_cr {
                match self.buffer.get(self.scanned) {
                    None => return None,
                    Some(b'\n') => self.scanned += 1,
                    Some(_) => {}
                }
                self.after_cr = false;
            }
            let from = self.searched.max(self.scanned);
            let Some(found) = memchr::memchr2(b'\n', b'\r', &self.buffer[from..]) else {
                self.searched = self.buffer.len();
                return None;
            };
            let end = from + found;
            let line_end = match (self.buffer[end], self.buffer.get(end + 1)) {
                (b'\r', Some(b'\n')) => end + 2,
                (b'\r', None) => {
                    self.after_cr = true;
                    end + 1
                }
                _ => end + 1,
            };
            if end == self.scanned {
                self.scanned = 0;
                self.searched = 0;
                return Some(self.buffer.drain(..line_end).collect());
            }
            self.scanned = line_end;
        }
    }

    /// How many bytes are held: the event being read, and any whole events not
    /// taken yet.
    pub(crate) fn held(&self) -> usize {
        self.buffer.len()
    }

    /// What the stream left after its last whole event (an event cut short).
    pub(crate) fn into_rest(self) -> Vec<u8> {
        self.buffer
    }
}

/// The lines of an event: each line's bytes and its line ending.
fn lines(event: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut rest = event;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let ending = match (rest.get(end), rest.get(end + 1)) {
            (Some(b'\r'), Some(b'\n')) => 2,
            (Some(_), _) => 1,
            (None, _) => 0,
        };
        let (line, after) = rest.split_at(end);
        let (line_ending, after) = after.split_at(ending);
        rest = after;
        Some((line, line_ending))
    })
}

/// A line's field name and value (one leading space of the value dropped).
fn field(line: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b':', line) {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[]),
    }
}

/// The event's data: its `data` lines joined with `\n`; `None` without any.
pub(crate) fn data(event: &[u8]) -> Option<Vec<u8>> {
    let mut data: Option<Vec<u8>> = None;
    for (line, _) in lines(event) {
        let (name, value) = field(line);
        if name != b"data" {
            continue;
        }
        match &mut data {
            Some(data) => {
                data.push(b'\n');
                data.extend_from_slice(value);
            }
            None => data = Some(value.to_vec()),
        }
    }
    data
}

/// The event's id: the value of its last `id` line (empty when the event resets
/// the stream's last event id); `None` when it has none. As the SSE standard
/// says, an `id` holding a NUL is ignored.
pub(crate) fn id(event: &[u8]) -> Option<&[u8]> {
    lines(event)
        .map(|(line, _)| field(line))
        .filter(|(name, value)| *name == b"id" && !value.contains(&0))
        .map(|(_, value)| value)
        .last()
}

/// The event with its data replaced by `message`, where its first `data` line
/// was; every other line kept as it is. A newline in `message` (whitespace
/// between JSON tokens, kept from data the upstream wrote on several lines)
/// starts a new `data` line, so that the event's data is `message` exactly.
pub(crate) fn with_data(event: &[u8], message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.len() + message.len());
    let mut data_written = false;
    for (line, ending) in lines(event) {
        if field(line).0 != b"data" {
            out.extend_from_slice(line);
            out.extend_from_slice(ending);
        } else if !data_written {
            let ending = if ending.is_empty() { b"\n" } else { ending };
            for piece in message.split(|byte| *byte == b'\n') {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(piece);
                out.extend_from_slice(ending);
            }
            data_written = true;
        }
    }
    out
}

/// An event the proxy makes itself, carrying `message`.
pub(crate) fn event(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut splitter = EventSplitter::default();
        let mut events = Vec::new();
        for chunk in chunks {
            splitter.push(chunk);
            while let Some(event) = splitter.next_event() {
                events.push(event);
            }
        }
        (events, splitter.into_rest())
    }

    #[test]
    fn events_end_at_a_blank_line_with_any_line_ending() {
        let stream: &[u8] =
            b"id: 1\ndata: a\n\nid: 2\r\ndata: b\r\n\r\ndata: c\rretry: 5\r\rdata: cut";
        let (events, rest) = split(&[stream]);
        assert_eq!(
            events,
            [
                b"id: 1\ndata: a\n\n".to_vec(),
                b"id: 2\r\ndata: b\r\n\r\n".to_vec(),
                b"data: c\rretry: 5\r\r".to_vec(),
            ]
        );
        assert_eq!(rest, b"data: cut");
    }

    #[test]
    fn an_event_split_anywhere_comes_out_whole() {
        let stream: &[u8] = b": comment\r\nid: 7\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 8\r\n\r\n";
        for cut in 0..stream.len() {
            for cut2 in cut..stream.len() {
                let (events, rest) = split(&[&stream[..cut], &stream[cut..cut2], &stream[cut2..]]);
                assert_eq!(events.len(), 2, "cut at {cut} and {cut2}");
                // Cut after the last `\r`, the stream's last `\n` is the
                // rest of a line ending that begins no event.
                assert!(rest.is_empty() || rest == b"\n", "cut at {cut} and {cut2}");
                assert_eq!([events.concat(), rest].concat(), stream);
            }
        }
    }

    /// The data of each event of `stream`, as the grammar reads it: lines
    /// end with `\r\n`, `\n` or `\r`, a blank line ends an event, and a
    /// byte-order mark that starts the stream is skipped.
    fn events_by_the_grammar(stream: &[u8]) -> Vec<Option<Vec<u8>>> {
        let mut rest = stream.strip_prefix(BYTE_ORDER_MARK).unwrap_or(stream);
        let (mut events, mut event) = (Vec::new(), Vec::new());
        while let Some(end) = rest.iter().position(|byte| matches!(byte, b'\r' | b'\n')) {
            let ending = if rest[end..].starts_with(b"\r\n") {
                2
            } else {
                1
            };
            if end == 0 {
                events.push(data(&event));
                event.clear();
            } else {
                event.extend_from_slice(&rest[..end]);
                event.push(b'\n');
            }
            rest = &rest[end + ending..];
        }
        events
    }

    #[test]
    fn a_blank_line_that_is_a_lone_cr_ends_its_event_as_it_arrives() {
        let mut splitter = EventSplitter::default();
        splitter.push(b"data: a\r\r");
        assert_eq!(splitter.next_event().as_deref(), Some(&b"data: a\r\r"[..]));
        // The `\n` of a `\r\n` cut after its `\r` ends no line of its own.
        splitter.push(b"\ndata: b\r");
        assert_eq!(splitter.next_event(), None);
        splitter.push(b"\n\r\n");
        assert_eq!(
            splitter.next_event().as_deref(),
            Some(&b"\ndata: b\r\n\r\n"[..])
        );
        assert_eq!(splitter.next_event(), None);
        assert!(splitter.into_rest().is_empty());
    }

    #[test]
    fn a_stream_with_every_line_ending_cut_anywhere_gives_the_grammars_events() {
        let stream: &[u8] =
            b"\xEF\xBB\xBFid: 1\rdata: a\r\r: c\r\ndata: {\"b\":\r\ndata: 1}\r\n\r\n\
            data: c\n\ndata: d\r\r\ndata: e\n\r\r\nid: 9\r\n\r\r\n\n";
        let expected = events_by_the_grammar(stream);
        assert_eq!(
            expected,
            [
                Some(b"a".to_vec()),
                Some(b"{\"b\":\n1}".to_vec()),
                Some(b"c".to_vec()),
                Some(b"d".to_vec()),
                Some(b"e".to_vec()),
                None,
                None,
                None,
                None,
            ]
        );
        let without_mark = &stream[BYTE_ORDER_MARK.len()..];
        for cut in 0..=stream.len() {
            for cut2 in cut..=stream.len() {
                let (events, rest) = split(&[&stream[..cut], &stream[cut..cut2], &stream[cut2..]]);
                assert_eq!(events.concat(), without_mark, "cut at {cut} and {cut2}");
                let read: Vec<_> = events.iter().map(|event| data(event)).collect();
                assert_eq!(read, expected, "cut at {cut} and {cut2}");
                assert!(rest.is_empty(), "cut at {cut} and {cut2}");
            }
        }
    }

    #[test]
    fn only_a_byte_order_mark_that_starts_the_stream_is_skipped() {
        let stream: &[u8] = b"\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n";
        for cut in 0..=stream.len() {
            let (events, _) = split(&[&stream[..cut], &stream[cut..]]);
            assert_eq!(
                events,
                [b"data: a\n\n".to_vec(), b"\xEF\xBB\xBFdata: b\n\n".to_vec()],
                "cut at {cut}"
            );
        }
        // A stream that ends inside what could be a mark keeps its bytes.
        assert_eq!(split(&[&b"\xEF\xBB"[..]]).1, b"\xEF\xBB");
        assert_eq!(
            split(&[&b"\xEF"[..], &b"x\n\n"[..]]).0,
            [b"\xEFx\n\n".to_vec()]
        );
    }

    #[test]
    fn an_events_id_is_its_last_id_line_and_a_nul_is_ignored() {
        assert_eq!(id(b"id: e1\ndata: x\n\n"), Some(&b"e1"[..]));
        assert_eq!(id(b"id: e1\nid\n\n"), Some(&b""[..]));
        assert_eq!(id(b"id: e2\r\nid: a\0b\r\n\r\n"), Some(&b"e2"[..]));
        assert_eq!(id(b"data: x\n\n"), None);
    }

    #[test]
    fn data_lines_join_with_newlines_and_lose_one_leading_space() {
        assert_eq!(
            data(b"id: 1\ndata: {\"a\":\ndata:1}\ndata:  x\n\n").as_deref(),
            Some(&b"{\"a\":\n1}\n x"[..])
        );
        assert_eq!(data(b"id: 1\nretry: 10\n\n"), None);
        assert_eq!(data(b": data: no\n\n"), None);
    }

    #[test]
    fn new_data_takes_the_place_of_the_first_data_line_and_keeps_the_rest() {
        let event = b"event: message\r\nid: 42\r\ndata: {\"a\":\r\ndata: 1}\r\nretry: 3000\r\n\r\n";
        assert_eq!(
            with_data(event, b"{\"b\":2}"),
            b"event: message\r\nid: 42\r\ndata: {\"b\":2}\r\nretry: 3000\r\n\r\n"
        );
    }

    #[test]
    fn data_with_a_newline_is_written_on_as_many_data_lines() {
        let event = b"id: 3\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n";
        let message = b"{\"a\":\n\"x\"}";
        let rewritten = with_data(event, message);
        assert_eq!(rewritten, b"id: 3\r\ndata: {\"a\":\r\ndata: \"x\"}\r\n\r\n");
        assert_eq!(data(&rewritten).unwrap(), message);
    }
}
