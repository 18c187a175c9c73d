//! An answer the layer changed, written as the child's bytes with only the
//! values that changed replaced: key order, spacing, number spellings and
//! escapes of everything else stay the child's.
//!
//! The child's line is walked beside the value it was parsed into and the value
//! after the layer's changes: a part equal in both is copied as it was written;
//! an object with the same keys, or an array of the same length, is walked
//! into; anything else that differs (a rewritten text, a content list the layer
//! added an item to) is replaced by its serialization. An object that names a
//! key twice is replaced whole, since the value kept only one of them.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// `line` (the child's, newline included) with `new` written in place of what
/// differs from `old`, the value `line` was parsed into; `None` if `line` does
/// not hold one JSON value (it does, since `old` was parsed from it).
pub(crate) fn splice(line: &[u8], old: &Value, new: &Value) -> Option<Vec<u8>> {
    let mut walk = Walk {
        bytes: line,
        at: 0,
        out: Vec::with_capacity(line.len() + line.len() / 4),
    };
    walk.copy_whitespace();
    walk.value(old, new)?;
    walk.copy_whitespace();
    (walk.at == line.len()).then_some(walk.out)
}

/// A position in the child's bytes and the bytes written so far.
struct Walk<'a> {
    bytes: &'a [u8],
    at: usize,
    out: Vec<u8>,
}

impl Walk<'_> {
    fn value(&mut self, old: &Value, new: &Value) -> Option<()> {
        let (start, mark) = (self.at, self.out.len());
        let walked = if old == new {
            self.skip_value()?;
            self.out.extend_from_slice(&self.bytes[start..self.at]);
            true
        } else {
            match (old, new) {
                (Value::Object(old), Value::Object(new)) if same_keys(old, new) => {
                    self.object(old, new)?
                }
                (Value::Array(old), Value::Array(new)) if old.len() == new.len() => {
                    self.array(old, new)?
                }
                _ => false,
            }
        };
        if !walked {
            self.at = start;
            self.skip_value()?;
            self.out.truncate(mark);
            serde_json::to_writer(&mut self.out, new).ok()?;
        }
        Some(())
    }

    /// Walks an object member by member; `false` if it names a key twice.
    fn object(&mut self, old: &Map<String, Value>, new: &Map<String, Value>) -> Option<bool> {
        self.copy_byte(b'{')?;
        let mut seen: Vec<Cow<'_, str>> = Vec::with_capacity(old.len());
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
            if seen.contains(&key) {
                return Some(false);
            }
            self.copy_whitespace();
            self.copy_byte(b':')?;
            self.copy_whitespace();
            self.value(old.get(key.as_ref())?, new.get(key.as_ref())?)?;
            seen.push(key);
            self.copy_whitespace();
            if self.peek()? != b',' {
                break;
            }
            self.copy_byte(b',')?;
        }
        self.copy_byte(b'}')?;
        Some(true)
    }

    fn array(&mut self, old: &[Value], new: &[Value]) -> Option<bool> {
        self.copy_byte(b'[')?;
        for (index, (old, new)) in old.iter().zip(new).enumerate() {
            self.copy_whitespace();
            if index > 0 {
                self.copy_byte(b',')?;
                self.copy_whitespace();
            }
            self.value(old, new)?;
        }
        self.copy_whitespace();
        self.copy_byte(b']')?;
        Some(true)
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

    /// Moves past one value, which the child wrote and serde_json accepted.
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

fn same_keys(old: &Map<String, Value>, new: &Map<String, Value>) -> bool {
    old.len() == new.len() && old.keys().all(|key| new.contains_key(key))
}

/// `new`, a rewrite of `old`, as bytes: `bytes` (which hold `old`) with only
/// what changed written anew, so that key order, spacing, number spellings and
/// escapes stay the writer's whatever serde_json's map; `new` serialized when
/// `bytes` do not hold `old`.
pub(crate) fn rewritten(bytes: &[u8], old: &Value, new: &Value) -> Vec<u8> {
    splice(bytes, old, new)
        .unwrap_or_else(|| serde_json::to_vec(new).expect("a JSON value serializes"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spliced(line: &str, change: impl FnOnce(&mut Value)) -> String {
        let old: Value = serde_json::from_str(line).expect("JSON");
        let mut new = old.clone();
        change(&mut new);
        let bytes = splice(line.as_bytes(), &old, &new).expect("spliced");
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

        use super::super::splice;

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
                let spliced = splice(line.as_bytes(), &old, &new).expect("spliced");
                let text = String::from_utf8(spliced).expect("UTF-8");
                prop_assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), new.clone());
                prop_assert_eq!(text.len() as isize, line.len() as isize + added);
                if new == old {
                    prop_assert_eq!(text, line);
                }
            }
        }
    }

    #[test]
    fn an_unchanged_value_is_copied_whole() {
        let line = r#" [ {"id":1} ,2 ] "#;
        assert_eq!(spliced(line, |_| {}), line);
    }
}
