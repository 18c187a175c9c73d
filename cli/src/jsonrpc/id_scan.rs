//! The ids of a message too large to read, found as its bytes pass: the
//! top-level `"id"` of an object, or of each object of a batch, wherever it
//! is among the members (the TypeScript SDK writes it last, the Python SDK
//! first). Only the ids' own bytes are held, so that a line of any length,
//! or one that never ends, costs nothing but the time to look at it.

use serde_json::Value;

/// The longest id kept: a longer one is no id the command sent.
const MAX_ID_BYTES: usize = 256;

/// The most ids kept of one message.
const MAX_IDS: usize = 1024;

/// A scan of one message, fed its bytes in pieces.
#[derive(Debug, Default)]
pub(crate) struct IdScan {
    /// How deep in objects and arrays the scan is.
    depth: usize,
    /// The depth of the members whose `"id"` counts: 1 for an object, 2 for
    /// the objects of a batch; `None` before the first byte that counts.
    member_depth: Option<usize>,
    string: Option<StringState>,
    place: Place,
    /// The ids found and not taken yet, as JSON text.
    found: Vec<Vec<u8>>,
}

/// Where in a string the scan is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum StringState {
    Plain,
    /// After a backslash.
    Escape,
}

/// Where in a member's object the scan is.
#[derive(Debug, Default)]
enum Place {
    /// Anywhere else.
    #[default]
    Elsewhere,
    /// Where a key may start.
    Key,
    /// In a key: its first bytes.
    KeyText(Vec<u8>),
    /// After a key, before its `:`: whether the key is `id`.
    AfterKey(bool),
    /// In a value: the bytes of the `id`'s value, else `None`.
    Value(Option<Vec<u8>>),
}

impl IdScan {
    /// Looks at the next piece of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    /// The ids found since the last call.
    pub(crate) fn take(&mut self) -> Vec<Value> {
        self.found
            .drain(..)
            .filter_map(|text| serde_json::from_slice(&text).ok())
            .collect()
    }

    fn byte(&mut self, byte: u8) {
        if let Some(state) = self.string {
            self.string = match (state, byte) {
                (StringState::Escape, _) => Some(StringState::Plain),
                (StringState::Plain, b'\\') => Some(StringState::Escape),
                (StringState::Plain, b'"') => None,
                (StringState::Plain, _) => Some(StringState::Plain),
            };
            match &mut self.place {
                Place::KeyText(key) if self.string.is_none() => {
                    self.place = Place::AfterKey(key.as_slice() == b"id");
                }
                Place::KeyText(key) if key.len() <= 2 => key.push(byte),
                Place::Value(Some(_)) => push(&mut self.place, byte),
                _ => {}
            }
            return;
        }
        let at_member = self.member_depth == Some(self.depth);
        match byte {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' => {
                self.string = Some(StringState::Plain);
                if at_member && matches!(self.place, Place::Key) {
                    self.place = Place::KeyText(Vec::new());
                } else {
                    self.value_byte(byte);
                }
            }
            b'{' | b'[' => {
                let member_depth =
                    *self
                        .member_depth
                        .get_or_insert(if byte == b'{' { 1 } else { 2 });
                self.value_byte(byte);
                self.depth += 1;
                if self.depth == member_depth && byte == b'{' {
                    self.place = Place::Key;
                }
            }
            b'}' | b']' => {
                if at_member {
                    self.end_value();
                    self.place = Place::Elsewhere;
                } else {
                    self.value_byte(byte);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if at_member => {
                if let Place::AfterKey(is_id) = self.place {
                    self.place = Place::Value(is_id.then(Vec::new));
                }
            }
            b',' if at_member => {
                self.end_value();
                self.place = Place::Key;
            }
            _ => self.value_byte(byte),
        }
    }

    /// A byte of a value, kept if it is the id's.
    fn value_byte(&mut self, byte: u8) {
        push(&mut self.place, byte);
    }

    fn end_value(&mut self) {
        if let Place::Value(value) = &mut self.place
            && let Some(value) = value.take()
            && self.found.len() < MAX_IDS
        {
            self.found.push(value);
        }
    }
}

/// Adds `byte` to the id being read, if one is, or gives the id up when it
/// grows too long.
fn push(place: &mut Place, byte: u8) {
    if let Place::Value(read) = place
        && let Some(value) = read
    {
        if value.len() < MAX_ID_BYTES {
            value.push(byte);
        } else {
            *read = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The ids of `text`, fed in pieces of `piece` bytes.
    fn ids(text: &str, piece: usize) -> Vec<Value> {
        let mut scan = IdScan::default();
        for chunk in text.as_bytes().chunks(piece) {
            scan.feed(chunk);
        }
        scan.take()
    }

    #[test]
    fn the_top_level_id_is_found_first_or_last_in_any_pieces() {
        let first = r#"{"jsonrpc":"2.0","id":9.0,"result":{"id":"inner","text":"a \"id\":1 }"}}"#;
        let last =
            r#"{"result":{"content":[{"id":2,"text":"\\"}]},"jsonrpc":"2.0", "id" : "x\"y"}"#;
        for piece in [1, 3, 1000] {
            assert_eq!(ids(first, piece), [json!(9.0)]);
            assert_eq!(ids(last, piece), [json!("x\"y")]);
        }
    }

    #[test]
    fn each_member_of_a_batch_gives_its_id() {
        let batch = r#"[{"id":1,"result":{}}, {"result":[{"id":5}],"id":"b"}, {"method":"x"}]"#;
        assert_eq!(ids(batch, 7), [json!(1), json!("b")]);
    }

    #[test]
    fn a_message_with_no_id_or_an_id_too_long_gives_none() {
        assert!(ids(r#"{"method":"notifications/message","params":{"id":1}}"#, 4).is_empty());
        let long = format!(r#"{{"id":"{}","result":{{}}}}"#, "x".repeat(MAX_ID_BYTES));
        assert!(ids(&long, 64).is_empty());
    }
}
