//! An answer the layer changed, written as the upstream's bytes with only the
//! values that changed replaced: key order, spacing, number spellings and
//! escapes of everything else stay the upstream's.
//!
//! The bytes are walked beside the value after the layer's changes, nothing
//! else: a string, number or literal that reads as the value's is copied as
//! it was written; an object with the same keys, or an array of the same
//! length, is walked into; anything else (a rewritten text, a content list the
//! layer added an item to) is replaced by its serialization. An object that
//! names a key twice is replaced whole, since the value kept only one of them.
//! Nothing is cloned to tell what changed: the walk tells.

use std::borrow::Cow;
use std::ops::Range;

use serde_json::{Map, Value};

/// What [`splice`] made of the bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Spliced {
    /// The bytes already say the value.
    Same,
    /// The bytes with what differs written anew.
    Changed(Vec<u8>),
}

/// `bytes` (one JSON value, with any whitespace around it) with `new` written
/// in place of what they say differently; `None` when they do not hold one
/// JSON value.
pub(crate) fn splice(bytes: &[u8], new: &Value) -> Option<Spliced> {
    let mut walk = Walk {
        bytes,
        at: 0,
        out: Vec::with_capacity(bytes.len() + bytes.len() / 4),
        changed: false,
    };
    walk.copy_whitespace();
    walk.value(new)?;
    walk.copy_whitespace();
    if walk.at != bytes.len() {
        return None;
    }
    Some(match walk.changed {
        false => Spliced::Same,
        true => Spliced::Changed(walk.out),
    })
}

/// `new`, what the layer made of the message `bytes` hold, as bytes: `None`
/// when `bytes` already say it; else `bytes` with only what changed written
/// anew, so that key order, spacing, number spellings and escapes stay the
/// writer's whatever serde_json's map (`new` serialized when `bytes` do not
/// hold one JSON value).
pub(crate) fn rewritten(bytes: &[u8], new: &Value) -> Option<Vec<u8>> {
    match splice(bytes, new) {
        Some(Spliced::Same) => None,
        Some(Spliced::Changed(spliced)) => Some(spliced),
        None => Some(crate::jsonrpc::nested::to_vec(new)),
    }
}

/// `bytes` with each string at a range of `strings` (in order, apart)
/// written as its text where it reads otherwise, as [`splice`] writes a
/// string that changed; `None` when every one already reads as its text.
pub(crate) fn strings_replaced<'a>(
    bytes: &[u8],
    strings: impl IntoIterator<Item = (Range<usize>, &'a str)>,
) -> Option<Vec<u8>> {
    let (mut out, mut copied, mut changed) = (Vec::new(), 0, false);
    for (at, text) in strings {
        let written = bytes.get(at.clone())?;
        if says_text(written, text) == Some(true) {
            continue;
        }
        if !changed {
            out.reserve(bytes.len() + bytes.len() / 4);
            changed = true;
        }
        out.extend_from_slice(bytes.get(copied..at.start)?);
        serde_json::to_writer(&mut out, text).expect("a string serializes");
        copied = at.end;
    }
    if !changed {
        return None;
    }
    out.extend_from_slice(&bytes[copied..]);
    Some(out)
}

/// A position in the upstream's bytes and the bytes written so far.
struct Walk<'a> {
    bytes: &'a [u8],
    at: usize,
    out: Vec<u8>,
    /// Whether anything was written anew.
    changed: bool,
}

impl Walk<'_> {
    fn value(&mut self, new: &Value) -> Option<()> {
        let (start, mark) = (self.at, self.out.len());
        if let Some(kept) = crate::jsonrpc::nested::kept_text(new) {
            // A value read as its text: copied as long as it is the same.
            self.skip_value()?;
            let written = &self.bytes[start..self.at];
            if written == kept.as_bytes() {
                self.out.extend_from_slice(written);
            } else {
                self.out.extend_from_slice(kept.as_bytes());
                self.changed = true;
            }
            return Some(());
        }
        let walked = match (self.peek()?, new) {
            (b'{', Value::Object(new)) => self.object(new)?,
            (b'[', Value::Array(new)) => self.array(new)?,
            (b'{' | b'[', _) => false,
            _ => {
                self.skip_value()?;
                let written = &self.bytes[start..self.at];
                let same = says(written, new)?;
                if same {
                    self.out.extend_from_slice(written);
                }
                same
            }
        };
        if !walked {
            self.at = start;
            self.skip_value()?;
            self.out.truncate(mark);
            crate::jsonrpc::nested::to_writer(&mut self.out, new);
            self.changed = true;
        }
        Some(())
    }

    /// Walks an object member by member; `false` if its keys are not `new`'s
    /// or it names a key twice.
    fn object(&mut self, new: &Map<String, Value>) -> Option<bool> {
        self.copy_byte(b'{')?;
        let mut seen: Vec<Cow<'_, str>> = Vec::with_capacity(new.len());
        loop {
            self.copy_whitespace();
            if self.peek()? == b'}' {
                break;
            }
            let key_start = self.at;
            self.skip_string()?;
            let written = &self.bytes[key_start..self.at];
            // A key without an escape is its bytes between the quotes.
            let key: Cow<'_, str> = match written.contains(&b'\\') {
                false => Cow::Borrowed(std::str::from_utf8(&written[1..written.len() - 1]).ok()?),
                true => Cow::Owned(serde_json::from_slice(written).ok()?),
            };
            self.out.extend_from_slice(written);
            let Some(member) = new.get(key.as_ref()) else {
                return Some(false);
            };
            if seen.contains(&key) {
                return Some(false);
            }
            self.copy_whitespace();
            self.copy_byte(b':')?;
            self.copy_whitespace();
            self.value(member)?;
            seen.push(key);
            self.copy_whitespace();
            if self.peek()? != b',' {
                break;
            }
            self.copy_byte(b',')?;
        }
        self.copy_byte(b'}')?;
        Some(seen.len() == new.len())
    }

    /// Walks an array item by item; `false` if its length is not `new`'s.
    fn array(&mut self, new: &[Value]) -> Option<bool> {
        self.copy_byte(b'[')?;
        self.copy_whitespace();
        let mut count = 0;
        if self.peek()? != b']' {
            loop {
                let Some(item) = new.get(count) else {
                    return Some(false);
                };
                self.value(item)?;
                count += 1;
                self.copy_whitespace();
                if self.peek()? != b',' {
                    break;
                }
                self.copy_byte(b',')?;
                self.copy_whitespace();
            }
        }
        self.copy_byte(b']')?;
        Some(count == new.len())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn copy_byte(&mut self, expected: u8) -> Option<()> {
        (self.peek()? == expected).then(|| {
            self.out.push(expected);
            self.at += 1;
        })
    }

    fn copy_whitespace(&mut self) {
        while let Some(byte @ (b' ' | b'\t' | b'\n' | b'\r')) = self.peek() {
            self.out.push(byte);
            self.at += 1;
        }
    }

    /// Moves past one value, which the upstream wrote and serde_json accepted.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => self.skip_nested(),
            _ => {
                // A number or a literal: up to the next delimiter.
                let rest = &self.bytes[self.at..];
                let end = rest
                    .iter()
                    .position(|byte| b",]} \t\n\r".contains(byte))
                    .unwrap_or(rest.len());
                (end > 0).then(|| self.at += end)
            }
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        (self.peek()? == b'"').then_some(())?;
        let mut at = self.at + 1;
        loop {
            at += memchr::memchr2(b'"', b'\\', self.bytes.get(at..)?)?;
            match self.bytes[at] {
                b'"' => break,
                _ => at += 2,
            }
        }
        self.at = at + 1;
        Some(())
    }

    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.skip_string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
            self.at += 1;
            if depth == 0 {
                return Some(());
            }
        }
    }
}

/// Whether `written` (a string, number or literal as the upstream wrote it)
/// reads as `value`; `None` when it reads as nothing.
fn says(written: &[u8], value: &Value) -> Option<bool> {
    Some(match (written, value) {
        (b"null", Value::Null) | (b"true", Value::Bool(true)) | (b"false", Value::Bool(false)) => {
            true
        }
        ([b'"', ..], Value::String(text)) => says_text(written, text)?,
        ([b'-' | b'0'..=b'9', ..], Value::Number(number)) => {
            serde_json::from_slice::<serde_json::Number>(written).ok()? == *number
        }
        _ => false,
    })
}

/// Whether `written` (a string as the upstream wrote it) reads as `text`;
/// `None` when it reads as nothing.
fn says_text(written: &[u8], text: &str) -> Option<bool> {
    match written {
        // A string without an escape is its bytes between the quotes.
        [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => Some(inner == text.as_bytes()),
        _ => Some(serde_json::from_slice::<Cow<'_, str>>(written).ok()? == text),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spliced(line: &str, change: impl FnOnce(&mut Value)) -> String {
        let old: Value = serde_json::from_str(line).expect("JSON");
        let mut new = old.clone();
        change(&mut new);
        let bytes = match splice(line.as_bytes(), &new).expect("spliced") {
            Spliced::Same => {
                assert_eq!(new, old, "a change was not seen");
                line.as_bytes().to_vec()
            }
            Spliced::Changed(bytes) => bytes,
        };
        let text = String::from_utf8(bytes).expect("UTF-8");
        assert_eq!(serde_json::from_str::<Value>(&text).expect("JSON"), new);
        text
    }

    #[test]
    fn only_the_changed_text_is_replaced() {
        let line =
            "{\"b\" : [1.50, \"\\u00e9\", {\"t\":\"x\"}], \"a\":{\"t\":\"old\",\"z\":null}}\n";
        let text = spliced(line, |value| value["a"]["t"] = json!("new \"one\""));
        assert_eq!(
            text,
            "{\"b\" : [1.50, \"\\u00e9\", {\"t\":\"x\"}], \"a\":{\"t\":\"new \\\"one\\\"\",\"z\":null}}\n"
        );
    }

    #[test]
    fn an_item_added_replaces_its_list_and_a_key_named_twice_its_object() {
        let line = r#"{"z":1,"content":[],"a":{"k":1,"k":2,"m":"x"}}"#;
        let text = spliced(line, |value| {
            value["content"] = json!([{"text": "t"}]);
            value["a"]["m"] = json!("y");
        });
        assert_eq!(
            text,
            r#"{"z":1,"content":[{"text":"t"}],"a":{"k":2,"m":"y"}}"#
        );
    }

    #[test]
    fn a_key_written_with_an_escape_is_read_as_its_name() {
        let line = r#"{"\u0074ext":"old","k":1,"\u006b":2}"#;
        let text = spliced(line, |value| value["text"] = json!("new"));
        // The object names `k` twice: written anew whole (`spliced` checks
        // that it reads as the new value), in the map's order.
        assert!(!text.contains("u00"), "{text}");
        let line = r#"{"\u0074ext":"old","k":1}"#;
        let text = spliced(line, |value| value["text"] = json!("new"));
        assert_eq!(text, r#"{"\u0074ext":"new","k":1}"#);
    }

    mod properties {
        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::super::{Spliced, splice};

        fn text() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop_oneof![
                    Just('"'),
                    Just('\\'),
                    Just('\n'),
                    Just('é'),
                    Just('\u{1F600}'),
                    Just('\u{0}'),
                    prop::char::range('a', 'e'),
                ],
                0..6,
            )
            .prop_map(|chars| chars.into_iter().collect())
        }

        fn value() -> impl Strategy<Value = Value> {
            let scalar = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_filter_map("finite", |f| {
                    serde_json::Number::from_f64(f).map(Value::Number)
                }),
                text().prop_map(Value::from),
            ];
            scalar.prop_recursive(4, 48, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::vec((text(), inner), 0..6)
                        .prop_map(|entries| Value::Object(entries.into_iter().collect())),
                ]
            })
        }

        /// `value` with every string that `changes` picks rewritten; the
        /// bytes the rewriting adds to the serialized value.
        fn rewritten(value: &Value, changes: &mut impl Iterator<Item = bool>) -> (Value, isize) {
            match value {
                Value::String(old) if changes.next().unwrap_or(false) => {
                    let new = format!("<error>{old}\"</error>");
                    let size = |text: &str| json!(text).to_string().len() as isize;
                    (Value::from(new.as_str()), size(&new) - size(old))
                }
                Value::Array(items) => {
                    let mut added = 0;
                    let items = items
                        .iter()
                        .map(|item| {
                            let (item, more) = rewritten(item, changes);
                            added += more;
                            item
                        })
                        .collect();
                    (Value::Array(items), added)
                }
                Value::Object(members) => {
                    let mut added = 0;
                    let members = members
                        .iter()
                        .map(|(key, member)| {
                            let (member, more) = rewritten(member, changes);
                            added += more;
                            (key.clone(), member)
                        })
                        .collect();
                    (Value::Object(members), added)
                }
                other => (other.clone(), 0),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// Whatever the layout and whichever strings change, the result
            /// says the new value, and its only new bytes are the new strings.
            #[test]
            fn only_changed_strings_change(
                generated in value(),
                pretty in any::<bool>(),
                changes in prop::collection::vec(any::<bool>(), 0..32),
            ) {
                let mut line = if pretty {
                    serde_json::to_string_pretty(&generated).unwrap()
                } else {
                    serde_json::to_string(&generated).unwrap()
                };
                line.push('\n');
                // As the command has it: the value parsed from the line (a
                // float may read back a hair off the generated one).
                let old: Value = serde_json::from_str(&line).unwrap();
                let (new, added) = rewritten(&old, &mut changes.into_iter());
                let spliced = splice(line.as_bytes(), &new).expect("spliced");
                let text = match spliced {
                    Spliced::Same => {
                        prop_assert_eq!(&new, &old);
                        line.clone()
                    }
                    Spliced::Changed(bytes) => {
                        prop_assert_ne!(&new, &old);
                        String::from_utf8(bytes).expect("UTF-8")
                    }
                };
                prop_assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), new.clone());
                prop_assert_eq!(text.len() as isize, line.len() as isize + added);
            }
        }
    }

    #[test]
    fn a_member_or_item_added_or_removed_replaces_its_object_or_list() {
        let line = r#"{"a":{"k":1},"l":[1, 2],"n":1.50}"#;
        let text = spliced(line, |value| value["a"]["m"] = json!(2));
        assert_eq!(text, r#"{"a":{"k":1,"m":2},"l":[1, 2],"n":1.50}"#);
        let text = spliced(line, |value| {
            value["a"].as_object_mut().unwrap().clear();
            value["l"].as_array_mut().unwrap().pop();
        });
        assert_eq!(text, r#"{"a":{},"l":[1],"n":1.50}"#);
        let text = spliced(line, |value| value["l"] = json!([1, 2, 3]));
        assert_eq!(text, r#"{"a":{"k":1},"l":[1,2,3],"n":1.50}"#);
        let text = spliced(line, |value| value["n"] = json!("1.50"));
        assert_eq!(text, r#"{"a":{"k":1},"l":[1, 2],"n":"1.50"}"#);
    }

    #[test]
    fn bytes_that_hold_no_json_value_are_not_spliced() {
        assert_eq!(splice(br#"{"a":1"#, &json!({"a": 1})), None);
        assert_eq!(splice(br#"{"a":1} {}"#, &json!({"a": 1})), None);
        assert_eq!(
            rewritten(br#"{"a":1"#, &json!({"a": 1})),
            Some(br#"{"a":1}"#.to_vec())
        );
    }

    #[test]
    fn strings_replaced_are_written_as_the_splice_writes_them() {
        let line = r#"{"a":"x","b":"\u0079","c":"z"}"#;
        let new = json!({"a": "x", "b": "y", "c": "new \"one\"\n"});
        let ranges = [(5..8, "x"), (13..21, "y"), (26..29, "new \"one\"\n")];
        let replaced = strings_replaced(line.as_bytes(), ranges.clone()).expect("changed");
        assert_eq!(Some(replaced), rewritten(line.as_bytes(), &new));
        let same = [(5..8, "x"), (13..21, "y"), (26..29, "z")];
        assert_eq!(strings_replaced(line.as_bytes(), same), None);
    }

    #[test]
    fn an_unchanged_value_is_copied_whole() {
        let line = r#" [ {"id":1} ,2 ] "#;
        assert_eq!(spliced(line, |_| {}), line);
    }
}
