//! The texts of a tool error, read from the bytes of the answer that holds it
//! with where each is written: the layer's rewrap of a tool error changes
//! those texts only (`ToolErrorLayer::rewrap_error_texts`), and the ones it
//! changed are written in their place (`crate::jsonrpc::splice`), without the
//! answer built as a `serde_json::Value`, rewrapped, walked and dropped.
//!
//! Read only from an answer of which the layer, reading it whole, would change
//! nothing else, and which the splice would write back as it is but for those
//! texts: one JSON-RPC response with `jsonrpc`, `id` and `result` and nothing
//! more (no `error`, no mark of the layer's); its result an object with
//! `isError: true`, no `resultType` or `task` (a task handle, which the layer
//! remembers), and a `content` list holding at least one text item, whose
//! `text` is a string; no object anywhere names a key twice (the splice writes
//! such an object anew), writes a key with an escape (told from another only
//! once unescaped) or has more than [`MAX_KEYS`] keys; every `text`
//! member a string; every string and number one that serde_json reads into a
//! `Value` (not a lone surrogate, not a number out of range). Any other answer
//! is read whole.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The most keys an object may have for the answer to be read here: the keys
/// seen are compared one by one.
const MAX_KEYS: usize = 16;

/// The texts of a tool error's text items, in their order, and where each is
/// written in the answer.
#[derive(Debug)]
pub(crate) struct ToolErrorTexts {
    /// The text of each text item.
    texts: Vec<String>,
    /// Where each text is written: its JSON string, quotes included.
    written: Vec<Range<usize>>,
}

impl ToolErrorTexts {
    /// The texts of the tool error `answer` (one JSON-RPC response, with any
    /// whitespace around it) holds; `None` when it is to be read whole.
    pub(crate) fn read(answer: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(answer).ok()?;
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let items = Response::deserialize(&mut deserializer).ok()?.0;
        deserializer.end().ok()?;
        if items.is_empty() {
            return None;
        }
        let start = text.as_ptr() as usize;
        let mut read = Self {
            texts: Vec::with_capacity(items.len()),
            written: Vec::with_capacity(items.len()),
        };
        for item in items {
            let written = item.get();
            // Borrowed from `text`: where it starts is its distance from there.
            let at = written.as_ptr() as usize - start;
            read.written.push(at..at + written.len());
            read.texts.push(serde_json::from_str(written).ok()?);
        }
        Some(read)
    }

    /// The texts, for the layer to rewrap.
    pub(crate) fn texts_mut(&mut self) -> &mut Vec<String> {
        &mut self.texts
    }

    /// `answer` with each text that now says otherwise written anew; `None`
    /// when every text says what was written.
    pub(crate) fn written(&self, answer: &[u8]) -> Option<Vec<u8>> {
        // The layer inserts a text only in a result without one: never here.
        debug_assert_eq!(self.texts.len(), self.written.len());
        let texts = self
            .written
            .iter()
            .cloned()
            .zip(self.texts.iter().map(String::as_str));
        crate::jsonrpc::splice::strings_replaced(answer, texts)
    }
}

/// Why an answer is not read here; never shown.
fn refused<E: de::Error>() -> E {
    E::custom("read whole")
}

/// The keys of an object seen so far: one named twice, or one too many, ends
/// the reading.
struct Keys<'de> {
    seen: [&'de str; MAX_KEYS],
    count: usize,
}

impl<'de> Keys<'de> {
    fn new() -> Self {
        Self {
            seen: [""; MAX_KEYS],
            count: 0,
        }
    }

    fn add<E: de::Error>(&mut self, key: &'de str) -> Result<(), E> {
        if self.count == MAX_KEYS || self.seen[..self.count].contains(&key) {
            return Err(refused());
        }
        self.seen[self.count] = key;
        self.count += 1;
        Ok(())
    }
}

/// A member's name, as written: one with an escape ends the reading (rare,
/// and compared with the others only once unescaped).
struct Key<'de>(&'de str);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Checked::deserialize(deserializer)? {
            Checked::String(Cow::Borrowed(name)) => Ok(Key(name)),
            _ => Err(refused()),
        }
    }
}

/// A value read as serde_json reads it into a `Value`, and kept no further
/// than what the layer reads of it: a string or number serde_json would not
/// read, or an object the splice would not write back as it was, ends the
/// reading.
enum Checked<'de> {
    String(Cow<'de, str>),
    True,
    Other,
}

impl<'de> Deserialize<'de> for Checked<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Checked::String(Cow::Borrowed(text)))
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Checked::String(Cow::Owned(text.to_owned())))
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
        Ok(if value { Checked::True } else { Checked::Other })
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Checked::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Checked::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Checked::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Checked::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<Checked<'de>>()?.is_some() {}
        Ok(Checked::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = Keys::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            keys.add(key.0)?;
            map.next_value::<Checked<'de>>()?;
        }
        Ok(Checked::Other)
    }
}

/// The response: the text of each text item of its result, as written.
struct Response<'de>(Vec<&'de RawValue>);

impl<'de> Deserialize<'de> for Response<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ResponseVisitor)
    }
}

struct ResponseVisitor;

impl<'de> Visitor<'de> for ResponseVisitor {
    type Value = Response<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON-RPC response")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = Keys::new();
        let mut texts = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.0 {
                "jsonrpc" | "id" => drop(map.next_value::<Checked<'de>>()?),
                "result" => texts = Some(map.next_value::<ToolError<'de>>()?.0),
                _ => return Err(refused()),
            }
            keys.add(key.0)?;
        }
        texts.map(Response).ok_or_else(refused)
    }
}

/// A result that is a tool error: the text of each text item, as written.
struct ToolError<'de>(Vec<&'de RawValue>);

impl<'de> Deserialize<'de> for ToolError<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ToolErrorVisitor)
    }
}

struct ToolErrorVisitor;

impl<'de> Visitor<'de> for ToolErrorVisitor {
    type Value = ToolError<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a tool's result")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = Keys::new();
        let (mut texts, mut is_error) = (None, false);
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.0 {
                "content" => texts = Some(map.next_value_seed(Content)?),
                "isError" => is_error = matches!(map.next_value()?, Checked::True),
                "resultType" | "task" => return Err(refused()),
                _ => drop(map.next_value::<Checked<'de>>()?),
            }
            keys.add(key.0)?;
        }
        match texts {
            Some(texts) if is_error => Ok(ToolError(texts)),
            _ => Err(refused()),
        }
    }
}

/// A result's `content`: the text of each text item, as written.
struct Content;

impl<'de> DeserializeSeed<'de> for Content {
    type Value = Vec<&'de RawValue>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a list of content items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut texts = Vec::new();
        while let Some(item) = seq.next_element::<Item<'de>>()? {
            texts.extend(item.0);
        }
        Ok(texts)
    }
}

/// A content item: the text of a text item, as written.
struct Item<'de>(Option<&'de RawValue>);

impl<'de> Deserialize<'de> for Item<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a content item")
    }

    // Anything but an object is no text item: read as `Checked` reads it.
    fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
        Ok(Item(None))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Item(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Item(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Item(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Item(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Item(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Item(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        CheckedVisitor.visit_seq(seq).map(|_| Item(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = Keys::new();
        let (mut is_text, mut text) = (false, None);
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.0 {
                "type" => {
                    is_text = matches!(map.next_value()?, Checked::String(kind) if kind == "text");
                }
                // Every `text` a string: a text item with another is
                // malformed, and left as it is.
                "text" => match map.next_value::<&'de RawValue>()? {
                    written if written.get().starts_with('"') => text = Some(written),
                    _ => return Err(refused()),
                },
                _ => drop(map.next_value::<Checked<'de>>()?),
            }
            keys.add(key.0)?;
        }
        match (is_text, text) {
            (true, Some(text)) => Ok(Item(Some(text))),
            // A text item without a text: malformed, left as it is.
            (true, None) => Err(refused()),
            (false, None) => Ok(Item(None)),
            // Read as serde_json reads it into a `Value`: a text item's is
            // read by `ToolErrorTexts::read`.
            (false, Some(written)) => match serde_json::from_str::<Checked<'_>>(written.get()) {
                Ok(_) => Ok(Item(None)),
                Err(_) => Err(refused()),
            },
        }
    }
}
