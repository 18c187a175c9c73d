//! What the members of a message too long to hold are, found as its bytes
//! pass: of the message, or of each object of a batch, its top-level `id`
//! (wherever it is among the members: the TypeScript SDK writes it last, the
//! Python SDK first) and what its `method` holds, so that [`Kind::of`] says
//! what it is, as it says of a message read whole. A key is read as JSON
//! reads it (`"\u0069d"` is `id`), and a member named twice counts by its
//! last value. Only the ids' own bytes are held, so that a line of any
//! length, or one that never ends, costs nothing but the time to look at it.
//!
//! A member is known at its end, but for one: a member with an id and a
//! `result` or an `error`, and no `method` so far, is taken as the answer it
//! is while its bytes still pass, so that a line that never ends answers its
//! call all the same. What no JSON-RPC peer writes could still follow: a
//! `method` after the `result` makes it a request at its end, which is found
//! then too (the server gets its error), and a second `id` after it is not
//! read. Of the bytes' grammar, only the top is checked: a line that does not
//! open with an object or an array (a log line that quotes a message), or
//! goes on past its end, is not JSON, and nothing is found in it (what was
//! taken as an answer before its end is taken all the same).

use serde_json::Value;

use crate::jsonrpc::member::{Kind, MethodMember};

/// The longest id kept: a longer one is no id the command sent.
const MAX_ID_BYTES: usize = 256;

/// The most members kept of one message.
const MAX_MEMBERS: usize = 1024;

/// The longest key read, as written: `method` with every letter escaped.
const MAX_KEY_BYTES: usize = 36;

/// A scan of one message, fed its bytes in pieces.
#[derive(Debug, Default)]
pub(crate) struct MemberScan {
    /// How deep in objects and arrays the scan is.
    depth: usize,
    /// The depth of the objects that are members: 1 for an object, 2 for
    /// the objects of a batch; `None` before the first byte that counts.
    member_depth: Option<usize>,
    string: Option<StringState>,
    place: Place,
    /// What is seen of the member being read.
    member: Seen,
    /// The members found and not taken yet.
    found: Vec<Scanned>,
    /// Whether the bytes are seen not to be one object or array: nothing is
    /// found in them then.
    not_json: bool,
}

/// A member of a message too long to hold that has an id: a request or a
/// response (a notification has nothing to answer, nor an invalid member).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scanned {
    pub(crate) kind: Kind,
    pub(crate) id: Value,
}

/// What is seen of one member.
#[derive(Debug, Default)]
struct Seen {
    /// Its last id so far, as JSON text; `Some(None)` for one too long to
    /// hold.
    id: Option<Option<Vec<u8>>>,
    /// What its last `method` so far holds.
    method: MethodMember,
    /// Whether it has a `result` or an `error`.
    has_outcome: bool,
    /// Taken as an answer before its end.
    taken: bool,
}

/// Where in a string the scan is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum StringState {
    Plain,
    /// After a backslash.
    Escape,
}

/// A key of a member that the scan reads.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Key {
    Id,
    Method,
    /// `result` or `error`.
    Outcome,
    Other,
}

/// Where in a member's object the scan is.
#[derive(Debug, Default)]
enum Place {
    /// Anywhere else.
    #[default]
    Elsewhere,
    /// Where a key may start.
    Key,
    /// In a key: its bytes as written, up to [`MAX_KEY_BYTES`] and one.
    KeyText(Vec<u8>),
    /// After a key, before its `:`.
    AfterKey(Key),
    /// In the value of `id`: its bytes, `None` once too long.
    Id(Option<Vec<u8>>),
    /// Before the first byte of the value of `method`.
    Method,
    /// In any other value.
    Value,
}

impl MemberScan {
    /// Looks at the next piece of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    /// The members found since the last call: each read to its end, and the
    /// member being read when it is an answer by what is seen of it (an id, a
    /// `result` or an `error`, no `method`), which its end gives no more.
    pub(crate) fn take(&mut self) -> Vec<Scanned> {
        let member = &mut self.member;
        if !member.taken
            && member.has_outcome
            && Kind::of(member.id.is_some(), member.method) == Kind::Response
            && let Some(Some(text)) = &member.id
        {
            member.taken = true;
            if let Ok(id) = serde_json::from_slice(text) {
                self.found.push(Scanned {
                    kind: Kind::Response,
                    id,
                });
            }
        }
        std::mem::take(&mut self.found)
    }

    /// Whether the message is a batch.
    pub(crate) fn is_batch(&self) -> bool {
        self.member_depth == Some(2)
    }

    fn byte(&mut self, byte: u8) {
        if self.not_json {
            return;
        }
        if let Some(state) = self.string {
            self.string = match (state, byte) {
                (StringState::Escape, _) => Some(StringState::Plain),
                (StringState::Plain, b'\\') => Some(StringState::Escape),
                (StringState::Plain, b'"') => None,
                (StringState::Plain, _) => Some(StringState::Plain),
            };
            match &mut self.place {
                Place::KeyText(key) if self.string.is_none() => {
                    self.place = Place::AfterKey(read_key(key));
                }
                Place::KeyText(key) if key.len() <= MAX_KEY_BYTES => key.push(byte),
                place @ Place::Id(Some(_)) => push_id(place, byte),
                _ => {}
            }
            return;
        }
        let at_member = self.member_depth == Some(self.depth);
        let is_space = matches!(byte, b' ' | b'\t' | b'\r' | b'\n');
        let opens_the_message = self.member_depth.is_none() && matches!(byte, b'{' | b'[');
        if self.depth == 0 && !is_space && !opens_the_message {
            return self.is_not_json();
        }
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
                    self.member = Seen::default();
                }
            }
            b'}' | b']' => {
                if at_member {
                    self.end_value();
                    self.end_member();
                    self.place = Place::Elsewhere;
                } else {
                    self.value_byte(byte);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if at_member => {
                if let Place::AfterKey(key) = self.place {
                    self.place = match key {
                        Key::Id => Place::Id(Some(Vec::new())),
                        Key::Method => Place::Method,
                        Key::Outcome => {
                            self.member.has_outcome = true;
                            Place::Value
                        }
                        Key::Other => Place::Value,
                    };
                }
            }
            b',' if at_member => {
                self.end_value();
                self.place = Place::Key;
            }
            _ => self.value_byte(byte),
        }
    }

    /// The bytes are not one object or array: what was found in them is
    /// not.
    fn is_not_json(&mut self) {
        self.not_json = true;
        self.found.clear();
        self.member = Seen::default();
        self.place = Place::Elsewhere;
    }

    /// A byte of a value outside a string, or a string's opening quote.
    fn value_byte(&mut self, byte: u8) {
        match self.place {
            Place::Id(_) => push_id(&mut self.place, byte),
            Place::Method => {
                self.member.method = if byte == b'"' {
                    MethodMember::Name
                } else {
                    MethodMember::NotAName
                };
                self.place = Place::Value;
            }
            _ => {}
        }
    }

    /// The end of a member's value: an id read is the member's.
    fn end_value(&mut self) {
        if let Place::Id(id) = &mut self.place {
            self.member.id = Some(id.take());
        }
    }

    /// The end of a member: kept, when it is a request or a response whose
    /// id is held, unless it is the answer taken already.
    fn end_member(&mut self) {
        let member = std::mem::take(&mut self.member);
        let kind = match Kind::of(member.id.is_some(), member.method) {
            Kind::Response if member.taken => return,
            kind @ (Kind::Request | Kind::Response) => kind,
            Kind::Notification | Kind::Invalid => return,
        };
        if self.found.len() >= MAX_MEMBERS {
            return;
        }
        if let Some(Some(text)) = member.id
            && let Ok(id) = serde_json::from_slice(&text)
        {
            self.found.push(Scanned { kind, id });
        }
    }
}

/// Adds `byte` to the id being read, if one is, or gives the id up when it
/// grows too long.
fn push_id(place: &mut Place, byte: u8) {
    if let Place::Id(read) = place
        && let Some(value) = read
    {
        if value.len() < MAX_ID_BYTES {
            value.push(byte);
        } else {
            *read = None;
        }
    }
}

/// Which key the key written `raw` (without its quotes) is, its escapes read.
fn read_key(raw: &[u8]) -> Key {
    if raw.len() > MAX_KEY_BYTES {
        return Key::Other;
    }
    let unescaped;
    let name = if raw.contains(&b'\\') {
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        match serde_json::from_slice::<String>(&quoted) {
            Ok(name) => {
                unescaped = name;
                unescaped.as_bytes()
            }
            Err(_) => return Key::Other,
        }
    } else {
        raw
    };
    match name {
        b"id" => Key::Id,
        b"method" => Key::Method,
        b"result" | b"error" => Key::Outcome,
        _ => Key::Other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::jsonrpc::member::Member;

    /// The members of `text`, fed in pieces of `piece` bytes, taken at its
    /// end.
    fn scanned(text: &str, piece: usize) -> Vec<Scanned> {
        let mut scan = MemberScan::default();
        for chunk in text.as_bytes().chunks(piece) {
            scan.feed(chunk);
        }
        scan.take()
    }

    fn response(id: Value) -> Scanned {
        Scanned {
            kind: Kind::Response,
            id,
        }
    }

    fn request(id: Value) -> Scanned {
        Scanned {
            kind: Kind::Request,
            id,
        }
    }

    #[test]
    fn the_top_level_id_is_found_first_or_last_in_any_pieces() {
        let first = r#"{"jsonrpc":"2.0","id":9.0,"result":{"id":"inner","text":"a \"id\":1 }"}}"#;
        let last =
            r#"{"result":{"content":[{"id":2,"text":"\\"}]},"jsonrpc":"2.0", "id" : "x\"y"}"#;
        for piece in [1, 3, 1000] {
            assert_eq!(scanned(first, piece), [response(json!(9.0))]);
            assert_eq!(scanned(last, piece), [response(json!("x\"y"))]);
        }
    }

    #[test]
    fn each_member_of_a_batch_is_found() {
        let batch = r#"[{"id":1,"result":{}}, {"result":[{"id":5}],"id":"b"}, {"method":"x"}, {"id":3,"method":"y"}, 7]"#;
        assert_eq!(
            scanned(batch, 7),
            [response(json!(1)), response(json!("b")), request(json!(3))]
        );
    }

    #[test]
    fn a_message_with_no_id_or_an_id_too_long_gives_none() {
        assert!(scanned(r#"{"method":"notifications/message","params":{"id":1}}"#, 4).is_empty());
        let long = format!(r#"{{"id":"{}","result":{{}}}}"#, "x".repeat(MAX_ID_BYTES));
        assert!(scanned(&long, 64).is_empty());
    }

    /// Every message here is scanned as it is read whole: the same kind,
    /// the same id.
    #[test]
    fn a_member_is_what_it_is_when_read_whole_whatever_its_spelling() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"id":2}}"#,
            r#"{"params":{"messages":[]},"method":"roots/list","id":"s-1","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","\u0069d":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","\u0069\u0064":1,"\u006d\u0065\u0074\u0068\u006f\u0064":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}"#,
            r#"{"id":1,"method":5}"#,
            r#"{"id":1,"method":"ping","method":null}"#,
            r#"{"id":1,"method":null,"method":"ping"}"#,
            r#"{"id":1,"id":2,"error":{"code":-1,"message":""}}"#,
            r#"{"id":null,"error":{"code":-1,"message":""}}"#,
            r#"{"id":1}"#,
            r#"{"method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"id\u0000":1,"result":{}}"#,
            r#"{"ids":1,"result":{}}"#,
        ] {
            let message: Value = serde_json::from_str(text).unwrap();
            let member = Member::of(&message);
            let whole: Vec<Scanned> = match member {
                Member::Request(read) => vec![request(read.id.clone())],
                Member::Response { id } => vec![response(id.clone())],
                Member::Notification(_) | Member::Invalid => Vec::new(),
            };
            for piece in [1, 5, 1000] {
                assert_eq!(scanned(text, piece), whole, "{text}");
            }
        }
    }

    #[test]
    fn an_answer_is_taken_while_its_result_passes_and_only_once() {
        let mut scan = MemberScan::default();
        scan.feed(br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"xx"#);
        assert_eq!(scan.take(), [response(json!(3))]);
        scan.feed(br#"xx"}]}}"#);
        assert!(scan.take().is_empty());
        // A method after the result makes it a request, which its end finds.
        let mut scan = MemberScan::default();
        scan.feed(br#"{"id":5,"result":{"x":"#);
        assert_eq!(scan.take(), [response(json!(5))]);
        scan.feed(br#"1},"method":"ping"}"#);
        assert_eq!(scan.take(), [request(json!(5))]);
        // A request, or an id not read to its end, is not taken before its
        // end.
        let mut scan = MemberScan::default();
        scan.feed(br#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"x":"#);
        assert!(scan.take().is_empty());
        scan.feed(br#"1}}"#);
        assert_eq!(scan.take(), [request(json!(4))]);
        let mut scan = MemberScan::default();
        scan.feed(br#"{"error":{},"id":12"#);
        assert!(scan.take().is_empty());
        scan.feed(br#"34}"#);
        assert_eq!(scan.take(), [response(json!(1234))]);
    }

    /// A line that is not JSON at its top, which a line read whole would
    /// drop, answers nothing either: a log line quoting an answer, a second
    /// value after the first, a string, a closing brace too many.
    #[test]
    fn a_line_that_is_not_one_object_or_array_gives_none() {
        for text in [
            r#"DEBUG sent {"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"n"} {"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"[{"id":2,"method":"x"}] [{"id":1,"result":{}}]"#,
            r#""{\"id\":1,\"result\":{}}""#,
            r#"{"id":1,"result":{}}}"#,
            r#"1 {"id":1,"result":{}}"#,
        ] {
            for piece in [1, 5, 1000] {
                assert!(scanned(text, piece).is_empty(), "{text}");
            }
        }
        assert_eq!(
            scanned(" \t{\"id\":1,\"result\":{}}\r\n", 3),
            [response(json!(1))]
        );
    }

    #[test]
    fn a_batch_is_told_from_a_single_message() {
        let mut scan = MemberScan::default();
        scan.feed(b" [{\"id\":1,\"method\":\"x\"}]");
        assert!(scan.is_batch());
        let mut scan = MemberScan::default();
        scan.feed(b"{\"id\":[1],\"method\":\"x\"}");
        assert!(!scan.is_batch());
    }
}
