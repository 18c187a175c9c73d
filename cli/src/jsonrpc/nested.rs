//! JSON of any depth read as a [`Value`] no deeper than serde_json reads one:
//! a container nested [`LEVELS`] deep is kept as its text, in a string only
//! this module writes ([`kept_text`]), and is written back as that text
//! ([`to_vec`], and `crate::jsonrpc::splice`).
//!
//! serde_json stops at 128 levels, so that reading does not overflow the
//! stack; turning the limit off (its `unbounded_depth`, with serde_stacker to
//! grow the stack) reads a message of any depth, but leaves a `Value` as deep
//! to drop, clone, compare and serialize, each by recursion (serde_json's docs
//! say so): a body of 16 MiB holds 8 million levels. Here no `Value` is deeper
//! than [`LEVELS`], so every recursion over one, the layer's included, is
//! bounded. A message that serde_json reads is read by serde_json, at no
//! cost more; only one nested past its limit is read again, its containers
//! at level [`LEVELS`] kept (none that the layer reads: a result's texts are
//! four levels down). What is kept is skipped by
//! serde_json's `IgnoredAny`, which walks nested values with a loop, not
//! recursion; its text is found by a second pass over the bytes, made only
//! when something was kept.
//!
//! The kept string starts with a NUL, a marker and a number drawn when the
//! process starts: a string the peer wrote cannot pass for one.

use std::cell::Cell;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::LazyLock;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The level of the containers kept as their text: those that serde_json
/// would read as the last level it reads (the top value is level 1).
pub(crate) const LEVELS: usize = 127;

/// What starts every kept string.
static MARKER: LazyLock<String> = LazyLock::new(|| {
    let drawn = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
    format!("\0mcp-tool-errors kept {drawn:016x}:")
});

/// The JSON value `bytes` hold (whitespace around it allowed), read to any
/// depth: read by serde_json when it can (every message but those nested
/// past its limit, which cost nothing more), else with containers at level
/// [`LEVELS`] kept as their text.
#[inline]
pub(crate) fn from_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    match serde_json::from_slice(bytes) {
        Err(error) if is_too_deep(&error) => read_with_kept(bytes),
        read => read,
    }
}

/// Whether serde_json stopped at its limit of depth.
#[cold]
pub(crate) fn is_too_deep(error: &serde_json::Error) -> bool {
    error.is_syntax() && error.to_string().starts_with("recursion limit exceeded")
}

/// [`from_slice`] with containers at level [`LEVELS`] kept as their text.
#[cold]
#[inline(never)]
fn read_with_kept(bytes: &[u8]) -> serde_json::Result<Value> {
    let kept = Cell::new(0);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = AtLevel {
        level: 1,
        kept: &kept,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    if kept.get() == 0 {
        return Ok(value);
    }
    let texts = kept_texts(bytes);
    if texts.len() != kept.get() {
        return Err(de::Error::custom("the kept values were not found again"));
    }
    let mut value = value;
    fill(&mut value, &texts);
    Ok(value)
}

/// The text of a value kept as such.
#[inline]
pub(crate) fn kept_text(value: &Value) -> Option<&str> {
    let text = value.as_str()?;
    // Nearly every string fails at its first byte.
    if !text.starts_with('\0') {
        return None;
    }
    text.strip_prefix(MARKER.as_str())
}

/// `value` as compact JSON, as serde_json writes it, kept values written as
/// their text.
pub(crate) fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value);
    out
}

/// Appends `value` to `out` as [`to_vec`] writes it.
pub(crate) fn to_writer(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                to_writer(out, item);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (index, (key, member)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("a string serializes");
                out.push(b':');
                to_writer(out, member);
            }
            out.push(b'}');
        }
        scalar => match kept_text(scalar) {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            None => serde_json::to_writer(&mut *out, scalar).expect("a scalar serializes"),
        },
    }
}

/// The seed of a value at `level`; `kept` counts the containers kept.
struct AtLevel<'a> {
    level: usize,
    kept: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for AtLevel<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AtLevel<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.level >= LEVELS {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(self.keep());
        }
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self.inner())? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.level >= LEVELS {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(self.keep());
        }
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let member = map.next_value_seed(self.inner())?;
            members.insert(key, member);
        }
        Ok(Value::Object(members))
    }
}

impl AtLevel<'_> {
    fn inner(&self) -> Self {
        Self {
            level: self.level + 1,
            kept: self.kept,
        }
    }

    /// A container at [`LEVELS`], skipped: its place, numbered in the order
    /// of the text, until [`fill`] puts its text there.
    fn keep(&self) -> Value {
        let number = self.kept.get();
        self.kept.set(number + 1);
        Value::String(format!("{}{number}", MARKER.as_str()))
    }
}

/// The text of each container at level [`LEVELS`] in `bytes` (which serde_json
/// read as one JSON value), in order: a loop, not recursion.
fn kept_texts(bytes: &[u8]) -> Vec<&str> {
    let (mut texts, mut level, mut start, mut at) = (Vec::new(), 0, 0, 0);
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                // To the closing quote, over escapes.
                at += 1;
                while let Some(found) = memchr::memchr2(b'"', b'\\', &bytes[at..]) {
                    at += found;
                    if bytes[at] == b'"' {
                        break;
                    }
                    at += 2;
                }
            }
            b'[' | b'{' => {
                level += 1;
                if level == LEVELS {
                    start = at;
                }
            }
            b']' | b'}' => {
                if level == LEVELS {
                    // Read as UTF-8 by serde_json already.
                    texts.extend(std::str::from_utf8(&bytes[start..=at]).ok());
                }
                level -= 1;
            }
            _ => {}
        }
        at += 1;
    }
    texts
}

/// Puts the text of each kept container in its place in `value`.
fn fill(value: &mut Value, texts: &[&str]) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| fill(item, texts)),
        Value::Object(members) => members.values_mut().for_each(|member| fill(member, texts)),
        Value::String(text) => {
            let number = text
                .strip_prefix(MARKER.as_str())
                .and_then(|number| number.parse::<usize>().ok());
            if let Some(kept) = number.and_then(|number| texts.get(number)) {
                text.truncate(MARKER.len());
                text.push_str(kept);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value `levels` deep: arrays and objects in turn around `1`, with
    /// `space` after each opening.
    fn nested(levels: usize, space: &str) -> String {
        let mut text = String::new();
        for level in 0..levels {
            text.push_str(if level % 2 == 0 { "[" } else { "{\"a\":" });
            text.push_str(space);
        }
        text.push('1');
        for level in (0..levels).rev() {
            text.push(if level % 2 == 0 { ']' } else { '}' });
        }
        text
    }

    #[test]
    fn a_value_serde_json_reads_is_read_and_written_alike() {
        let text = r#" {"b":[1.5,-2,"\u00e9\"",null,true,{}],"a":{"k":[[]]},"a":0} "#;
        let ours = from_slice(text.as_bytes()).unwrap();
        assert_eq!(ours, serde_json::from_str::<Value>(text).unwrap());
        assert_eq!(to_vec(&ours), serde_json::to_vec(&ours).unwrap());
        let deepest = nested(LEVELS - 1, " ");
        assert_eq!(
            from_slice(deepest.as_bytes()).unwrap(),
            serde_json::from_str::<Value>(&deepest).unwrap()
        );
        for not_json in [&b"{\"a\":1"[..], b"[1,]", b"{} {}", b"\"\xff\"", b""] {
            assert!(from_slice(not_json).is_err(), "{not_json:?}");
        }
    }

    #[test]
    fn a_container_at_the_last_level_is_kept_as_its_text_and_written_back() {
        let message = format!(
            r#"{{"id":1,"result":{{"deep":{},"text":"[not kept]"}}}}"#,
            nested(100_000, " ")
        );
        let value = from_slice(message.as_bytes()).unwrap();
        assert_eq!(value["id"], 1);
        assert_eq!(value["result"]["text"], "[not kept]");
        // `deep` is level 3: the kept container is its 124th below.
        let mut kept = &value["result"]["deep"];
        for level in 0..LEVELS - 3 {
            kept = if level % 2 == 0 { &kept[0] } else { &kept["a"] };
        }
        let expected = nested(100_000 - (LEVELS - 3), " ");
        assert_eq!(kept_text(kept), Some(expected.as_str()));
        assert_eq!(kept_text(&value["result"]["text"]), None);
        // Written back: compact above the kept container, its text as it was.
        let compact = message.replace(' ', "");
        let value = from_slice(compact.as_bytes()).unwrap();
        assert!(to_vec(&value) == compact.as_bytes());
    }

    #[test]
    fn only_a_value_past_serde_jsons_limit_is_read_with_kept_containers() {
        let limit = nested(LEVELS, "");
        let read = from_slice(limit.as_bytes()).unwrap();
        assert_eq!(read, serde_json::from_str::<Value>(&limit).unwrap());
        let past = nested(LEVELS + 1, "");
        let error = serde_json::from_str::<Value>(&past).unwrap_err();
        assert!(is_too_deep(&error), "{error}");
        assert!(to_vec(&from_slice(past.as_bytes()).unwrap()) == past.as_bytes());
        assert!(!is_too_deep(
            &serde_json::from_str::<Value>("[1,").unwrap_err()
        ));
    }

    #[test]
    fn a_string_that_looks_kept_is_a_string() {
        let forged = format!("\"\\u0000mcp-tool-errors kept {:016x}:0\"", 0);
        let value = from_slice(forged.as_bytes()).unwrap();
        assert_eq!(kept_text(&value), None);
        assert_eq!(to_vec(&value), serde_json::to_vec(&value).unwrap());
    }
}
