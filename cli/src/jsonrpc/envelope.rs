//! What the relay reads of a line: the envelope of the JSON-RPC message it
//! holds (its id, its method, the tool or task it names, the request a
//! cancellation names; of an answer, whether its result is an error or may be a
//! task, and whether it is an error), without building the message as a
//! `serde_json::Value`. Everything else is checked to be JSON and skipped, so a
//! line costs one pass and no allocation for what the relay does not read.
//! What the message is (a request, a response…) is not decided here: its `id`
//! and its `method` are read fast, and [`Kind::of`] (`member`) says.
//!
//! A line is JSON when, without the ASCII whitespace around it, it is UTF-8 and
//! one JSON value. An object that names a member twice is read by its last
//! one, as `serde_json::Value` reads it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::jsonrpc::member::{self, Kind, MethodMember};

/// A line that is JSON, read as JSON-RPC.
#[derive(Debug)]
// `allow`, not `expect`: the lint fires only where serde_json's
// `preserve_order` makes a `Value` larger, which depends on the build.
#[allow(
    clippy::large_enum_variant,
    reason = "an envelope lives on the stack for one line; boxing its fields would cost an allocation per message"
)]
pub(crate) enum Envelope<'a> {
    /// An array: a batch, which the relay reads whole.
    Batch,
    /// One value; its members, when it is an object.
    Single(Fields<'a>),
}

/// The members of a message that the relay reads.
#[derive(Debug, Default)]
pub(crate) struct Fields<'a> {
    /// `id`, whatever its value.
    pub(crate) id: Option<Value>,
    /// What its `method` holds, for [`Kind::of`].
    method_member: MethodMember,
    /// `method`, when a string.
    pub(crate) method: Option<Cow<'a, str>>,
    /// `params`, when an object.
    pub(crate) params: Params<'a>,
    /// `result`, when an object.
    pub(crate) result: ResultFields,
    /// Whether the message has an `error`.
    pub(crate) has_error: bool,
}

/// The members of `params` that the relay reads.
#[derive(Debug, Default)]
pub(crate) struct Params<'a> {
    /// `name` (a `tools/call`'s tool), when a string.
    pub(crate) name: Option<Cow<'a, str>>,
    /// `taskId` (a `tasks/get`'s or `tasks/result`'s task), when a string.
    pub(crate) task_id: Option<Cow<'a, str>>,
    /// `requestId` (a cancellation's request), whatever its value.
    pub(crate) request_id: Option<Value>,
}

/// What the members of `result` say about a tool's answer.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ResultFields {
    /// `isError` is `true`: the layer rewraps the result.
    pub(crate) is_error: bool,
    /// It has `resultType` or `task`: it may be a task handle, which the layer
    /// remembers.
    pub(crate) may_be_task: bool,
}

/// Reads the envelope of `line`; when it is not JSON, says why.
pub(crate) fn read(line: &[u8]) -> Result<Envelope<'_>, NotJson> {
    let text = std::str::from_utf8(line.trim_ascii()).map_err(NotJson::Utf8)?;
    serde_json::from_str(text).map_err(NotJson::Json)
}

/// Why a line is not JSON; written out only when shown (an event with no
/// message, which a stream may send often, costs no text).
#[derive(Debug)]
pub(crate) enum NotJson {
    Utf8(std::str::Utf8Error),
    Json(serde_json::Error),
}

impl NotJson {
    /// Whether the line is JSON nested past serde_json's limit, which
    /// [`nested::from_slice`](crate::jsonrpc::nested::from_slice) reads.
    pub(crate) fn is_too_deep(&self) -> bool {
        matches!(self, Self::Json(error) if crate::jsonrpc::nested::is_too_deep(error))
    }
}

impl fmt::Display for NotJson {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Utf8(error) => error.fmt(formatter),
            Self::Json(error) => error.fmt(formatter),
        }
    }
}

impl Fields<'_> {
    /// What the message is ([`Kind::of`]).
    pub(crate) fn kind(&self) -> Kind {
        Kind::of(self.id.is_some(), self.method_member)
    }

    /// Whether the message is a request: one the relay answers.
    pub(crate) fn is_request(&self) -> bool {
        self.kind() == Kind::Request
    }

    /// Whether the message is a response: an answer to a request.
    pub(crate) fn is_response(&self) -> bool {
        self.kind() == Kind::Response
    }

    /// The request a `notifications/cancelled` cancels.
    pub(crate) fn cancelled_id(&self) -> Option<&Value> {
        let method = self.method.as_deref()?;
        if self.kind() != Kind::Notification || !member::cancels(method) {
            return None;
        }
        self.params.request_id.as_ref()
    }
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EnvelopeVisitor)
    }
}

/// Drains a sequence, checking that it is JSON.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Drains what is left of a map, checking that it is JSON.
fn skip_entry<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<IgnoredAny>().map(drop)
}

/// Implements the `visit_*` methods of a value that is not the container the
/// visitor looks for: the value is skipped (checked) and read as `$default`.
macro_rules! otherwise {
    ($value:ty, $default:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$value, E> {
            Ok($default)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$value, E> {
            Ok($default)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$value, E> {
            Ok($default)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$value, E> {
            Ok($default)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<$value, E> {
            Ok($default)
        }
        fn visit_unit<E: de::Error>(self) -> Result<$value, E> {
            Ok($default)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<$value, A::Error> {
            skip_seq(seq)?;
            Ok($default)
        }
    };
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Envelope::Single(Fields::default()))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Envelope::Single(Fields::default()))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Envelope::Single(Fields::default()))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Envelope::Single(Fields::default()))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Envelope::Single(Fields::default()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Envelope::Single(Fields::default()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        skip_seq(seq)?;
        Ok(Envelope::Batch)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match &*key.0 {
                "id" => fields.id = Some(map.next_value()?),
                "method" => {
                    fields.method = map.next_value::<OptionalStr<'de>>()?.0;
                    fields.method_member = match fields.method {
                        Some(_) => MethodMember::Name,
                        None => MethodMember::NotAName,
                    };
                }
                "params" => fields.params = map.next_value()?,
                "result" => fields.result = map.next_value()?,
                "error" => {
                    fields.has_error = true;
                    skip_entry(&mut map)?;
                }
                _ => skip_entry(&mut map)?,
            }
        }
        Ok(Envelope::Single(fields))
    }
}

/// A member's name, borrowed from the line unless it holds an escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_str(OptionalStrVisitor)
            .map(|name| Key(name.0.unwrap_or_default()))
    }
}

/// A string, borrowed from the line unless it holds an escape; `None` for any
/// other value.
struct OptionalStr<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for OptionalStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OptionalStrVisitor)
    }
}

struct OptionalStrVisitor;

impl<'de> Visitor<'de> for OptionalStrVisitor {
    type Value = OptionalStr<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(OptionalStr(Some(Cow::Borrowed(text))))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(OptionalStr(Some(Cow::Owned(text.to_owned()))))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(OptionalStr(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(OptionalStr(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(OptionalStr(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(OptionalStr(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(OptionalStr(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        skip_seq(seq)?;
        Ok(OptionalStr(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(OptionalStr(None))
    }
}

impl<'de> Deserialize<'de> for Params<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Params<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    otherwise!(Params<'de>, Params::default());

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut params = Params::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match &*key.0 {
                "name" => params.name = map.next_value::<OptionalStr<'de>>()?.0,
                "taskId" => params.task_id = map.next_value::<OptionalStr<'de>>()?.0,
                "requestId" => params.request_id = Some(map.next_value()?),
                _ => skip_entry(&mut map)?,
            }
        }
        Ok(params)
    }
}

impl<'de> Deserialize<'de> for ResultFields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ResultVisitor)
    }
}

struct ResultVisitor;

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = ResultFields;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    otherwise!(ResultFields, ResultFields::default());

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut result = ResultFields::default();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match &*key.0 {
                // The layer rewraps a result whose `isError` is `true` only.
                "isError" => result.is_error = map.next_value::<IsTrue>()?.0,
                "resultType" | "task" => {
                    result.may_be_task = true;
                    skip_entry(&mut map)?;
                }
                _ => skip_entry(&mut map)?,
            }
        }
        Ok(result)
    }
}

/// Whether a value is `true`.
struct IsTrue(bool);

impl<'de> Deserialize<'de> for IsTrue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IsTrueVisitor)
    }
}

struct IsTrueVisitor;

impl<'de> Visitor<'de> for IsTrueVisitor {
    type Value = IsTrue;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
        Ok(IsTrue(value))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(IsTrue(false))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(IsTrue(false))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(IsTrue(false))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(IsTrue(false))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(IsTrue(false))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        skip_seq(seq)?;
        Ok(IsTrue(false))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(IsTrue(false))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn single(line: &str) -> Fields<'_> {
        match read(line.as_bytes()) {
            Ok(Envelope::Single(fields)) => fields,
            other => panic!("not a single message: {other:?}"),
        }
    }

    #[test]
    fn a_request_gives_its_id_method_and_tool_borrowed_unless_escaped() {
        let line = r#" {"params":{"arguments":{"name":"not this"},"name":"se\u0061rch"},"jsonrpc":"2.0","id":"a","method":"tools/call"}"#;
        let fields = single(line);
        assert!(fields.is_request() && !fields.is_response());
        assert_eq!(fields.id, Some(json!("a")));
        assert!(matches!(fields.method, Some(Cow::Borrowed("tools/call"))));
        assert!(matches!(fields.params.name, Some(Cow::Owned(ref name)) if name == "search"));
    }

    #[test]
    fn a_cancellation_names_its_request_and_a_notification_has_no_id() {
        let fields = single(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
        );
        assert!(!fields.is_request());
        assert_eq!(fields.cancelled_id(), Some(&json!(7)));
        let with_id = single(
            r#"{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":7}}"#,
        );
        assert_eq!(with_id.cancelled_id(), None);
    }

    #[test]
    fn a_result_is_an_error_only_when_is_error_is_true() {
        let answer = |result: &str| {
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            let fields = single(&line);
            assert!(fields.is_response());
            (fields.result.is_error, fields.result.may_be_task)
        };
        assert_eq!(answer(r#"{"content":[],"isError":true}"#), (true, false));
        assert_eq!(answer(r#"{"isError":"true","content":[]}"#), (false, false));
        assert_eq!(answer(r#"{"isError":false}"#), (false, false));
        assert_eq!(answer(r#"{"isError":{"isError":true}}"#), (false, false));
        assert_eq!(answer(r#"{"isError":false,"isError":true}"#), (true, false));
        assert_eq!(
            answer(r#"{"resultType":"task","taskId":"t"}"#),
            (false, true)
        );
        assert_eq!(answer(r#"{"task":{"taskId":"t"}}"#), (false, true));
        assert_eq!(answer(r#"[{"isError":true}]"#), (false, false));
    }

    #[test]
    fn an_error_and_a_method_of_any_type_are_seen() {
        let fields = single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"x"}}"#);
        assert!(fields.has_error && fields.is_response());
        assert_eq!(fields.id, Some(Value::Null));
        let fields = single(r#"{"id":1,"method":5}"#);
        assert!(!fields.is_request() && !fields.is_response());
    }

    #[test]
    fn a_batch_is_an_array_and_what_is_not_json_says_why() {
        assert!(matches!(read(b"[1, {\"id\": 2}]\n"), Ok(Envelope::Batch)));
        assert!(matches!(read(b"\"text\""), Ok(Envelope::Single(_))));
        for not_json in [
            &b""[..],
            b"not json",
            b"{\"id\":1} trailing",
            b"{\"id\":1,}",
            b"[1,2",
            b"{\"a\":\"\xff\"}",
            b"{\"a\":\"\\x\"}",
        ] {
            assert!(read(not_json).is_err(), "{not_json:?} is not JSON");
        }
    }
}
