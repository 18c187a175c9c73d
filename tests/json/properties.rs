//! Properties that hold for every input, not only for the golden cases.
//!
//! 1. The llmxml element cannot be forged: whatever the tool name and message,
//!    `render_error` writes exactly one element, its name decodes back with Go's
//!    `strconv.Unquote`, and its body is the message with only the guarded `<`
//!    escaped.
//! 2. The layer never panics on its own and changes nothing but the text items of
//!    `isError` results of `tools/call` requests, whatever JSON goes through it;
//!    an element of the tool called passes, and one of another tool is that
//!    tool's element of the same message.
//! 3. A panic of the inner service is answered for every request that has an id,
//!    whatever else the message holds.

use crate::support;

use std::convert::Infallible;

use mcp_tool_errors::{ToolErrorLayer, ToolErrors, is_rendered, render_error};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRunner};
use serde_json::{Map, Value, json};
use support::complete::complete;
use support::golden::preserves_key_order;
use support::panic_answers::check_panic_answers;
use tower::util::BoxService;
use tower::{Layer, Service, service_fn};

// ---------------------------------------------------------------------------
// Go's `strconv.Unquote`, written from its specification: the oracle for the
// `tool` attribute.
// ---------------------------------------------------------------------------

/// Decodes a double-quoted Go string literal into the bytes it denotes, with the
/// rules of Go's `strconv.Unquote`; `Err` where Go returns `ErrSyntax`.
fn go_unquote(literal: &str) -> Result<Vec<u8>, String> {
    let inner = literal
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .ok_or_else(|| format!("not a double-quoted literal: {literal:?}"))?;
    if inner.contains('\n') {
        return Err("a raw newline inside a literal".to_owned());
    }
    let mut out = Vec::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Err("an unescaped quote inside a literal".to_owned()),
            '\\' => decode_escape(&mut chars, &mut out)?,
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    Ok(out)
}

/// Decodes one escape sequence after its backslash, as Go's `strconv.UnquoteChar`
/// does inside a double-quoted literal.
fn decode_escape(chars: &mut std::str::Chars<'_>, out: &mut Vec<u8>) -> Result<(), String> {
    let kind = chars.next().ok_or("a backslash at the end")?;
    let simple = match kind {
        'a' => Some(0x07),
        'b' => Some(0x08),
        'f' => Some(0x0c),
        'n' => Some(b'\n'),
        'r' => Some(b'\r'),
        't' => Some(b'\t'),
        'v' => Some(0x0b),
        '\\' => Some(b'\\'),
        '"' => Some(b'"'),
        _ => None,
    };
    if let Some(byte) = simple {
        out.push(byte);
        return Ok(());
    }
    match kind {
        // `\x` and octal escapes denote one byte, which need not be valid UTF-8.
        'x' => out.push(read_digits(chars, 2, 16)? as u8),
        '0'..='7' => {
            let rest = read_digits(chars, 2, 8)?;
            let value = (kind as u32 - '0' as u32) << 6 | rest;
            out.push(u8::try_from(value).map_err(|_| "an octal escape above 255")?);
        }
        'u' | 'U' => {
            let digits = if kind == 'u' { 4 } else { 8 };
            let value = read_digits(chars, digits, 16)?;
            let c = char::from_u32(value).ok_or("an escape of an invalid code point")?;
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        other => return Err(format!("an unknown escape \\{other}")),
    }
    Ok(())
}

/// Reads exactly `count` digits in `radix` (either case for hex, as Go accepts).
fn read_digits(chars: &mut std::str::Chars<'_>, count: usize, radix: u32) -> Result<u32, String> {
    let mut value = 0u32;
    for _ in 0..count {
        let c = chars.next().ok_or("an escape cut short")?;
        let digit = c
            .to_digit(radix)
            .ok_or_else(|| format!("{c:?} is not a base-{radix} digit"))?;
        value = value * radix + digit;
    }
    Ok(value)
}

/// The length of the double-quoted literal that `s` starts with: up to the first
/// quote that no backslash escapes.
fn quoted_literal_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix('"')?;
    let mut chars = rest.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next()?;
            }
            '"' => return Some(1 + at + 1),
            _ => {}
        }
    }
    None
}

#[test]
fn go_unquote_follows_go() {
    // Expected values are what Go's strconv.Unquote returns.
    let cases: [(&str, &[u8]); 9] = [
        (r#""""#, b""),
        (r#""a\"b\\c""#, b"a\"b\\c"),
        (r#""\a\b\f\n\r\t\v""#, b"\x07\x08\x0c\n\r\t\x0b"),
        (r#""\x41\xfF\101\377""#, b"A\xff\x41\xff"),
        (r#""\u00e9\U0001F642""#, "é🙂".as_bytes()),
        ("\"世界\"", "世界".as_bytes()),
        (r#""\u0041""#, b"A"),
        (r#""\x00""#, b"\0"),
        ("\"\t\"", b"\t"),
    ];
    for (literal, expected) in cases {
        assert_eq!(go_unquote(literal).as_deref(), Ok(expected), "{literal}");
    }
    for bad in [
        r#"""#,
        r#""a"b""#,
        "\"a\nb\"",
        r#""\'""#,
        r#""\400""#,
        r#""\ud800""#,
        r#""\U00110000""#,
        r#""\x4""#,
        r#""\q""#,
        r#""\""#,
        "'a'",
    ] {
        assert!(go_unquote(bad).is_err(), "accepted {bad}");
    }
}

// ---------------------------------------------------------------------------
// Text that tries hard to break the element.
// ---------------------------------------------------------------------------

/// Pieces that matter to the element, its quoting or the guard, mixed into every
/// generated text far more often than random characters would bring them.
const TRICKY: &[&str] = &[
    "<error",
    "</error",
    "<ERROR",
    "</ERROR",
    "<ErRoR",
    "</eRRor>",
    "</error>",
    "<error tool=\"x\">",
    "<errors",
    "<",
    "</",
    "/",
    ">",
    "\">",
    "<//error",
    "</ error",
    "\"",
    "\\",
    "\\\"",
    "\\u0041",
    "\\x07",
    "&lt;",
    "&lt;error",
    "tool=",
    "error",
    "\n",
    "\r\n",
    "\t",
    "\0",
    "\u{7}",
    "\u{b}",
    "\u{1b}",
    "\u{7f}",
    "\u{80}",
    "\u{9f}",
    "\u{a0}",
    "\u{ad}",
    "\u{2028}",
    "\u{200b}",
    "\u{3000}",
    "\u{feff}",
    "\u{e000}",
    "\u{10ffff}",
    "\u{1e030}",
    "\u{2ebf0}",
    "é",
    "e\u{301}",
    "世界",
    "🙂",
    "İ",
    "ſ",
    "K",
];

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(TRICKY).prop_map(str::to_owned),
        2 => any::<char>().prop_map(String::from),
        2 => "[a-zA-Z0-9_ .:-]{1,8}",
        1 => prop::char::range('\0', '\u{7f}').prop_map(String::from),
    ]
}

/// A string made of up to `max_fragments` tricky fragments.
fn tricky_text(max_fragments: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..=max_fragments).prop_map(|parts| parts.concat())
}

/// `message` with the `<` of every `<error` / `</error` (ASCII case-insensitive)
/// replaced by `&lt;`: the body the element must carry.
fn guarded(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for (at, c) in message.char_indices() {
        if c == '<' && opens_error_tag(&message[at + 1..]) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

fn opens_error_tag(after_lt: &str) -> bool {
    let name = after_lt.strip_prefix('/').unwrap_or(after_lt);
    name.as_bytes()
        .get(..5)
        .is_some_and(|word| word.eq_ignore_ascii_case(b"error"))
}

fn holds_error_tag(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("<error") || lower.contains("</error")
}

/// The parts of a rendered element: the quoted name and the body.
struct Element<'a> {
    quoted_name: &'a str,
    body: &'a str,
}

/// Splits `text` as an element, checking the frame on the way.
fn parse_element(text: &str) -> Result<Element<'_>, TestCaseError> {
    let after_open = text
        .strip_prefix("<error tool=")
        .ok_or_else(|| TestCaseError::fail(format!("no opening in {text:?}")))?;
    prop_assert!(
        after_open.starts_with('"'),
        "the name is not quoted in {text:?}"
    );
    let name_len = quoted_literal_len(after_open)
        .ok_or_else(|| TestCaseError::fail(format!("the name literal never ends in {text:?}")))?;
    let (quoted_name, rest) = after_open.split_at(name_len);
    let inside = rest.strip_prefix(">").ok_or_else(|| {
        TestCaseError::fail(format!("the opening does not end with \"> in {text:?}"))
    })?;
    let inside = inside
        .strip_suffix("</error>")
        .ok_or_else(|| TestCaseError::fail(format!("no closing </error> in {text:?}")))?;
    prop_assert!(
        !holds_error_tag(inside),
        "an error tag between opening and closing in {text:?}"
    );
    let body = inside
        .strip_prefix('\n')
        .and_then(|inside| inside.strip_suffix('\n'))
        .ok_or_else(|| {
            TestCaseError::fail(format!("the body is not on its own lines in {text:?}"))
        })?;
    Ok(Element { quoted_name, body })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // A failure is reported with its minimal input; nothing is written to the tree.
        failure_persistence: None,
        // Strategies fork the generator often; ChaCha, unoptimised, would take
        // most of the run.
        rng_algorithm: RngAlgorithm::XorShift,
        ..ProptestConfig::default()
    }
}

/// Text shaped like an element around `name` and `body`, with the name quoted
/// as Go does or merely put between quotes.
fn look_alike(name: &str, body: &str, canonical_name: bool) -> String {
    let name_literal = if canonical_name {
        opening_of(name)
            .strip_prefix("<error tool=")
            .unwrap()
            .strip_suffix(">\n")
            .unwrap()
            .to_owned()
    } else {
        format!("\"{name}\"")
    };
    format!("<error tool={name_literal}>\n{body}\n</error>")
}

proptest! {
    #![proptest_config(config(10_000))]

    #[test]
    fn rendered_structure_cannot_be_forged(tool in tricky_text(10), message in tricky_text(24)) {
        let rendered = render_error(&tool, &message);
        let element = parse_element(&rendered)?;
        prop_assert_eq!(go_unquote(element.quoted_name), Ok(tool.clone().into_bytes()));
        prop_assert_eq!(element.body, guarded(&message));
        prop_assert!(is_rendered(&rendered), "is_rendered refused {:?}", rendered);
    }

    /// An element of any tool, for a call of another, becomes exactly the
    /// element the tool called gets when it fails with the same message: the
    /// message is kept, even one that imitates an element (its guard is kept,
    /// never undone), and only the name changes.
    #[test]
    fn another_tools_element_is_the_called_tools_element_of_the_same_message(
        called in tricky_text(6),
        other in tricky_text(6),
        message in tricky_text(16),
    ) {
        let text = render_error(&other, &message);
        let request = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": called}});
        let answer = |text: &str| Some(json!({"jsonrpc": "2.0", "id": 5,
            "result": {"content": [{"type": "text", "text": text}], "isError": true}}));
        let after = through_layer(request.clone(), answer(&text)).unwrap();
        let expected = if called == other { text.clone() } else { render_error(&called, &message) };
        prop_assert_eq!(&after["result"]["content"][0]["text"], &Value::from(expected));
        if !is_rendered(&message) {
            // The same as the layer writes for the message itself.
            let from_message = through_layer(request, answer(&message)).unwrap();
            prop_assert_eq!(&after["result"]["content"][0]["text"], &from_message["result"]["content"][0]["text"]);
        }
    }

    /// `is_rendered` accepts exactly `render_error`'s outputs: whatever it accepts
    /// decodes to a name and a message that render to the same text.
    #[test]
    fn is_rendered_accepts_only_what_render_error_writes(
        quoted_name in tricky_text(6),
        body in tricky_text(12),
        canonical_name in any::<bool>(),
    ) {
        let text = look_alike(&quoted_name, &body, canonical_name);
        if is_rendered(&text) {
            let element = parse_element(&text)?;
            let name = String::from_utf8(go_unquote(element.quoted_name).map_err(TestCaseError::fail)?)
                .map_err(|e| TestCaseError::fail(format!("{text:?} names invalid UTF-8: {e}")))?;
            prop_assert_eq!(render_error(&name, element.body), text);
        }
    }
}

// ---------------------------------------------------------------------------
// Arbitrary JSON and JSON-RPC-shaped messages.
// ---------------------------------------------------------------------------

/// Keys that JSON-RPC and MCP give meaning to, mixed with tricky ones.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(&[
            "jsonrpc", "id", "method", "params", "name", "arguments", "result", "error", "content",
            "isError", "type", "text", "code", "message", "structuredContent", "_meta",
        ][..])
        .prop_map(str::to_owned),
        1 => tricky_text(3),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..3).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("JSON has no NaN or infinity", |f| {
            serde_json::Number::from_f64(f).map(Value::Number)
        }),
        tricky_text(8).prop_map(Value::from),
    ]
}

fn object_from(entries: Vec<(String, Value)>) -> Value {
    Value::Object(entries.into_iter().collect::<Map<_, _>>())
}

fn arbitrary_json() -> BoxedStrategy<Value> {
    scalar()
        .prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..6).prop_map(object_from),
            ]
        })
        .boxed()
}

/// A string of 16 to 64 KiB: far beyond any inline or small-string buffer.
fn huge_string() -> impl Strategy<Value = String> {
    (tricky_text(4), 16_384usize..65_536).prop_map(|(seed, len)| {
        let seed = if seed.is_empty() {
            "<error".to_owned()
        } else {
            seed
        };
        seed.repeat(len / seed.len() + 1)
    })
}

/// `leaf` wrapped in up to 128 arrays or `content` objects.
fn deeply_nested() -> impl Strategy<Value = Value> {
    (scalar(), 1usize..128, any::<bool>()).prop_map(|(leaf, depth, in_arrays)| {
        (0..depth).fold(leaf, |value, _| {
            if in_arrays {
                Value::Array(vec![value])
            } else {
                json!({"content": value, "isError": true})
            }
        })
    })
}

/// Any JSON value, with the odd huge string or deep nesting.
fn any_json() -> BoxedStrategy<Value> {
    prop_oneof![
        24 => arbitrary_json(),
        1 => huge_string().prop_map(Value::from),
        1 => deeply_nested(),
    ]
    .boxed()
}

/// Ids drawn from a small pool so that requests and responses often match, plus
/// every type JSON-RPC forbids.
fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (0i64..3).prop_map(Value::from),
        2 => prop::sample::select(&["0", "1", "a", ""][..]).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => Just(json!(1.0)),
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(json!([1])),
        1 => Just(json!({"id": 1})),
        1 => tricky_text(4).prop_map(Value::from),
    ]
}

/// An object whose fields come in any order, each present or not.
fn shuffled_object(fields: Vec<Option<(String, Value)>>) -> impl Strategy<Value = Value> {
    Just(fields.into_iter().flatten().collect::<Vec<_>>())
        .prop_shuffle()
        .prop_map(object_from)
}

fn field(
    name: &'static str,
    value: impl Strategy<Value = Value>,
) -> impl Strategy<Value = Option<(String, Value)>> {
    prop::option::weighted(0.92, value.prop_map(move |value| (name.to_owned(), value)))
}

fn jsonrpc_version() -> impl Strategy<Value = Value> {
    prop_oneof![8 => Just(json!("2.0")), 1 => scalar()]
}

fn tool_name() -> impl Strategy<Value = Value> {
    prop_oneof![12 => tricky_text(6).prop_map(Value::from), 1 => scalar(), 1 => arbitrary_json()]
}

fn request_message() -> BoxedStrategy<Value> {
    let method = prop_oneof![
        12 => Just(json!("tools/call")),
        1 => prop::sample::select(&["tools/list", "initialize", "ping", "notifications/cancelled"][..])
            .prop_map(Value::from),
        1 => scalar(),
    ];
    let params = prop_oneof![
        12 => (field("name", tool_name()), field("arguments", arbitrary_json()), field("_meta", arbitrary_json()))
            .prop_flat_map(|(name, arguments, meta)| shuffled_object(vec![name, arguments, meta])),
        1 => arbitrary_json(),
    ];
    (
        field("jsonrpc", jsonrpc_version()),
        field("id", id()),
        field("method", method),
        field("params", params),
    )
        .prop_flat_map(|(jsonrpc, id, method, params)| {
            shuffled_object(vec![jsonrpc, id, method, params])
        })
        .boxed()
}

fn content_item() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        12 => Just(json!("text")),
        1 => prop::sample::select(&["image", "resource", "TEXT", ""][..]).prop_map(Value::from),
        1 => scalar(),
    ];
    // One malformed text item leaves the whole result alone, so they are rarer.
    let text = prop_oneof![
        40 => tricky_text(16).prop_map(Value::from),
        1 => huge_string().prop_map(Value::from),
        1 => scalar(),
    ];
    let text = prop::option::weighted(0.98, text.prop_map(|text| ("text".to_owned(), text)));
    prop_oneof![
        8 => (field("type", kind), text, field("annotations", arbitrary_json()))
            .prop_flat_map(|(kind, text, annotations)| shuffled_object(vec![kind, text, annotations])),
        1 => arbitrary_json(),
    ]
}

/// Text that is already an element now and then, so that the double-wrap rule
/// is exercised.
fn possibly_rendered_item() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => content_item(),
        1 => (tricky_text(4), tricky_text(8))
            .prop_map(|(tool, message)| json!({"type": "text", "text": render_error(&tool, &message)})),
    ]
}

fn tool_result() -> BoxedStrategy<Value> {
    let content = prop_oneof![
        12 => prop::collection::vec(possibly_rendered_item(), 0..5).prop_map(Value::Array),
        1 => arbitrary_json(),
    ];
    let is_error = prop_oneof![
        12 => Just(json!(true)),
        1 => Just(json!(false)),
        1 => prop::sample::select(vec![json!("true"), json!(1), json!(null), json!([true])]),
    ];
    (
        field("content", content),
        field("isError", is_error),
        field("structuredContent", arbitrary_json()),
        field("_meta", arbitrary_json()),
    )
        .prop_flat_map(|(content, is_error, structured, meta)| {
            shuffled_object(vec![content, is_error, structured, meta])
        })
        .boxed()
}

fn response_message() -> BoxedStrategy<Value> {
    let result = prop_oneof![12 => tool_result(), 1 => any_json()];
    let error = prop_oneof![
        3 => (any::<i64>(), tricky_text(8)).prop_map(|(code, message)| json!({"code": code, "message": message})),
        1 => arbitrary_json(),
    ];
    let (result, error) = (
        prop::option::weighted(0.9, result),
        prop::option::weighted(0.1, error),
    );
    (
        field("jsonrpc", jsonrpc_version()),
        field("id", id()),
        result,
        error,
        field("extra", arbitrary_json()),
    )
        .prop_flat_map(|(jsonrpc, id, result, error, extra)| {
            let result = result.map(|result| ("result".to_owned(), result));
            let error = error.map(|error| ("error".to_owned(), error));
            shuffled_object(vec![jsonrpc, id, result, error, extra])
        })
        .boxed()
}

/// A message or a batch (empty ones and single-element ones included), or any JSON.
fn message_or_batch(message: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => message.clone(),
        3 => prop::collection::vec(message, 0..6).prop_map(Value::Array),
        1 => any_json(),
    ]
}

/// A request and what the inner service answers (`None`: nothing). The answers
/// mostly have the shape of the request (a batch for a batch) and carry its ids,
/// as a real server's do.
fn exchange() -> impl Strategy<Value = (Value, Option<Value>)> {
    message_or_batch(request_message())
        .prop_flat_map(|request| {
            let batch_len = request.as_array().map_or(1, Vec::len);
            let batch =
                prop::collection::vec(response_message(), 0..=batch_len + 1).prop_map(Value::Array);
            let (same_shape, other_shape) = match request {
                Value::Array(_) => (batch.boxed(), response_message()),
                _ => (response_message(), batch.boxed()),
            };
            let response = prop_oneof![8 => same_shape, 1 => other_shape, 1 => any_json()];
            let echo = prop::collection::vec(prop::bool::weighted(0.9), 1..8);
            (Just(request), prop::option::weighted(0.9, response), echo)
        })
        .prop_map(|(request, mut response, echo)| {
            if let Some(response) = &mut response {
                echo_request_ids(&request, response, &echo);
            }
            (request, response)
        })
}

/// Gives the `n`th answer of `response` the id of the `n`th request (cycling)
/// where `echo` says so and the answer has an id at all.
fn echo_request_ids(request: &Value, response: &mut Value, echo: &[bool]) {
    let ids: Vec<Value> = messages(request)
        .iter()
        .filter_map(|message| message.get("id").cloned())
        .collect();
    if ids.is_empty() {
        return;
    }
    let answers: Vec<&mut Value> = match response {
        Value::Array(answers) => answers.iter_mut().collect(),
        single => vec![single],
    };
    for (n, answer) in answers.into_iter().enumerate() {
        if let Some(id) = answer.get_mut("id").filter(|_| echo[n % echo.len()]) {
            *id = ids[n % ids.len()].clone();
        }
    }
}

// ---------------------------------------------------------------------------
// Running the layer.
// ---------------------------------------------------------------------------

/// The properties are only as good as the cases they reach: a sample must hold
/// plenty of both rewritten and untouched responses, and of accepted look-alikes.
#[test]
fn the_generators_reach_the_cases_that_matter() {
    let mut runner = TestRunner::deterministic();
    let (mut rewritten, mut untouched) = (0, 0);
    for _ in 0..500 {
        let (request, response) = exchange().new_tree(&mut runner).unwrap().current();
        let after = through_layer(request, response.clone());
        if after == response && after.as_ref().map(bytes) == response.as_ref().map(bytes) {
            untouched += 1;
        } else {
            rewritten += 1;
        }
    }
    assert!(
        rewritten >= 50 && untouched >= 50,
        "{rewritten} rewritten, {untouched} untouched of 500"
    );

    let look_alikes = (tricky_text(6), tricky_text(12), any::<bool>());
    let accepted = (0..500)
        .filter(|_| {
            let (name, body, canonical) = look_alikes.new_tree(&mut runner).unwrap().current();
            is_rendered(&look_alike(&name, &body, canonical))
        })
        .count();
    assert!(
        accepted >= 50,
        "only {accepted} of 500 look-alikes were accepted"
    );
}

/// Sends `request` through the default layer over an inner service answering `response`.
fn through_layer<Response>(request: Value, response: Response) -> Response
where
    Response: Clone + Send + 'static,
    ToolErrors<BoxService<Value, Response, Infallible>>:
        Service<Value, Response = Response, Error = Infallible>,
{
    let inner = BoxService::new(service_fn(move |_request: Value| {
        let response = response.clone();
        async move { Ok::<_, Infallible>(response) }
    }));
    let mut service = ToolErrorLayer::new().layer(inner);
    assert!(complete(std::future::poll_fn(|cx| service.poll_ready(cx))).is_ok());
    match complete(service.call(request)) {
        Ok(response) => response,
    }
}

/// The messages of a request: the elements of a batch, or the message itself.
fn messages(request: &Value) -> Vec<&Value> {
    match request {
        Value::Array(batch) => batch.iter().collect(),
        single => vec![single],
    }
}

/// The names of the `tools/call` requests in `request` that `answer` could
/// answer: `answer` must be an `isError: true` result with their id, and no
/// `error` member (which makes it an error response). Empty when the layer
/// must leave `answer` alone.
fn tools_answered<'a>(request: &'a Value, answer: &Value) -> Vec<&'a str> {
    let Some(answer_id) = answer.get("id") else {
        return Vec::new();
    };
    if answer.get("error").is_some() {
        return Vec::new();
    }
    if answer
        .get("result")
        .and_then(|result| result.get("isError"))
        != Some(&Value::Bool(true))
    {
        return Vec::new();
    }
    messages(request)
        .into_iter()
        .filter(|message| {
            message.get("method") == Some(&json!("tools/call"))
                && message.get("id").is_some_and(|id| same_id(id, answer_id))
        })
        .filter_map(|message| message.get("params")?.get("name")?.as_str())
        .collect()
}

/// Whether `a` and `b` are the same JSON-RPC id: numbers by their value
/// (`1` is `1.0`), anything else as JSON of the same type.
fn same_id(a: &Value, b: &Value) -> bool {
    /// An integral number as an integer, any other by its bits.
    fn value(n: &serde_json::Number) -> Result<i128, u64> {
        match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(n), _, _) => Ok(n.into()),
            (_, Some(n), _) => Ok(n.into()),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 1e38 => Ok(f as i128),
            (_, _, f) => Err(f.unwrap_or_default().to_bits()),
        }
    }
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => value(a) == value(b),
        _ => a == b,
    }
}

fn content_of(answer: &Value) -> Option<&Vec<Value>> {
    answer.get("result")?.get("content")?.as_array()
}

fn is_text_item(item: &Value) -> bool {
    item.get("type") == Some(&json!("text"))
}

/// The `text` of every text item of the result in `answer`.
fn texts_of(answer: &Value) -> Vec<Value> {
    content_of(answer)
        .into_iter()
        .flatten()
        .filter(|item| is_text_item(item))
        .map(|item| item.get("text").cloned().unwrap_or(Value::Null))
        .collect()
}

/// `answer` with the `text` of every text item blanked: what must not change.
fn without_texts(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Some(content) = answer
        .pointer_mut("/result/content")
        .and_then(Value::as_array_mut)
    {
        for item in content.iter_mut().filter(|item| is_text_item(item)) {
            if let Some(text) = item.get_mut("text") {
                *text = Value::Null;
            }
        }
    }
    answer
}

/// The text the element of `tool` starts with, before the body.
fn opening_of(tool: &str) -> String {
    render_error(tool, "")
        .strip_suffix("\n</error>")
        .unwrap()
        .to_owned()
}

fn bytes(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

/// Checks that `after` differs from `before` only where the layer may write: the
/// texts of an `isError` result answering a `tools/call` of `request`.
fn check_answer(request: &Value, before: &Value, after: &Value) -> Result<(), TestCaseError> {
    let tools = tools_answered(request, before);
    if tools.is_empty() {
        prop_assert_eq!(
            bytes(after),
            bytes(before),
            "the layer changed a message it must leave alone"
        );
        return Ok(());
    }
    let (texts_before, mut texts_after) = (texts_of(before), texts_of(after));
    let mut after = after.clone();
    if texts_before.is_empty() && !texts_after.is_empty() {
        // An error result without text gets one rendered item, inserted first.
        let inserted = after
            .pointer_mut("/result/content")
            .and_then(Value::as_array_mut)
            .map(|content| content.remove(0));
        let inserted_text = inserted
            .as_ref()
            .and_then(|item| item.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        prop_assert!(
            is_rendered(inserted_text),
            "inserted an item that is not an element: {:?}",
            inserted
        );
        prop_assert!(
            tools
                .iter()
                .any(|tool| inserted_text.starts_with(&opening_of(tool)))
        );
        texts_after.remove(0);
    }
    prop_assert_eq!(
        bytes(&without_texts(&after)),
        bytes(&without_texts(before)),
        "changed more than the texts"
    );
    prop_assert_eq!(texts_after.len(), texts_before.len());
    if texts_after == texts_before {
        // Left alone as a whole (an answer the layer could not match to its
        // call, say), or every text is an element of the tool called.
        return Ok(());
    }
    // Rewrapped: then every text is, each as the rule says.
    for (old, new) in texts_before.iter().zip(&texts_after) {
        let (Value::String(old), Value::String(new)) = (old, new) else {
            return Err(TestCaseError::fail(format!(
                "rewrote a result with a text that is not a string: {old} into {new}"
            )));
        };
        prop_assert!(
            tools.iter().any(|tool| *new == rewrapped_for(tool, old)),
            "{:?} is not {:?} as the layer must write it for any of {:?}",
            new,
            old,
            tools
        );
    }
    Ok(())
}

/// The tool an element names and its body, decoded by this file's own
/// oracles, when `text` is an element `is_rendered` accepts.
fn element_parts(text: &str) -> Option<(String, String)> {
    if !is_rendered(text) {
        return None;
    }
    let element = parse_element(text).ok()?;
    let name = String::from_utf8(go_unquote(element.quoted_name).ok()?).ok()?;
    Some((name, element.body.to_owned()))
}

/// What the layer must make of `text`, an error text of a call of `tool`: an
/// element of `tool` as it is (a layer stacked twice writes once); an element
/// of another tool rendered again under `tool`, its body the message (no tool
/// speaks as another); any other text rendered as the message.
fn rewrapped_for(tool: &str, text: &str) -> String {
    match element_parts(text) {
        Some((name, _)) if name == tool => text.to_owned(),
        Some((_, body)) => render_error(tool, &body),
        None => render_error(tool, text),
    }
}

/// Checks a whole response against what the inner service answered.
fn check_response(request: &Value, before: &Value, after: &Value) -> Result<(), TestCaseError> {
    match (request, before, after) {
        (Value::Array(_), Value::Array(before), Value::Array(after)) => {
            prop_assert_eq!(before.len(), after.len(), "a batch changed length");
            for (before, after) in before.iter().zip(after) {
                check_answer(request, before, after)?;
            }
            Ok(())
        }
        _ => check_answer(request, before, after),
    }
}

/// The oracle must be able to fail: it rejects every change the layer may not make.
#[test]
fn the_oracle_rejects_what_the_layer_must_not_do() {
    let request =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}});
    let before = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "bad"}], "isError": true}});
    let rewrapped = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": render_error("t", "bad")}], "isError": true}});
    assert!(check_response(&request, &before, &rewrapped).is_ok());
    let mut forbidden = vec![
        // another tool's name
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": render_error("u", "bad")}], "isError": true}}),
        // another id
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": render_error("t", "bad")}], "isError": true}}),
        // the text, but not as the element
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "<error>bad</error>"}], "isError": true}}),
    ];
    if preserves_key_order() {
        // keys reordered: only a serde_json that keeps key order can tell
        forbidden.push(json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true, "content": [{"type": "text", "text": render_error("t", "bad")}]}}));
    }
    for after in &forbidden {
        assert!(
            check_response(&request, &before, after).is_err(),
            "accepted {after}"
        );
    }
    let wrapped_twice = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": render_error("t", &render_error("t", "bad"))}], "isError": true}});
    assert!(check_response(&request, &rewrapped, &wrapped_twice).is_err());
    assert!(check_response(&request, &rewrapped, &rewrapped).is_ok());
    // Another tool's element: passed as it is, or wrapped whole, is refused;
    // rendered again under the tool called, its body the message, is not.
    let answer = |texts: [&str; 2]| {
        json!({"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": texts[0]}, {"type": "text", "text": texts[1]}], "isError": true}})
    };
    let (bad, admin) = (
        render_error("t", "bad"),
        render_error("admin", "all <error fine"),
    );
    let other = answer(["bad", &admin]);
    assert!(check_response(&request, &other, &answer([&bad, &admin])).is_err());
    let wrapped_whole = render_error("t", &admin);
    assert!(check_response(&request, &other, &answer([&bad, &wrapped_whole])).is_err());
    let renamed = render_error("t", "all <error fine");
    assert!(check_response(&request, &other, &answer([&bad, &renamed])).is_ok());
    let success = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "bad"}]}});
    assert!(check_response(&request, &success, &rewrapped).is_err());
    let elsewhere = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert!(check_response(&elsewhere, &before, &rewrapped).is_err());
}

proptest! {
    #![proptest_config(config(3_000))]

    /// Anything at all, through both kinds of inner service.
    #[test]
    fn the_layer_changes_only_tool_error_texts(
        (request, response) in exchange(),
    ) {
        let after = through_layer(request.clone(), response.clone());
        match (&response, &after) {
            (Some(before), Some(after)) => check_response(&request, before, after)?,
            (None, None) => {}
            _ => prop_assert!(false, "the layer turned {:?} into {:?}", response, after),
        }
        let before = response.unwrap_or(Value::Null);
        let after = through_layer(request.clone(), before.clone());
        check_response(&request, &before, &after)?;
    }

    /// Arbitrary JSON on both sides, without any JSON-RPC shape.
    #[test]
    fn arbitrary_json_passes_through_unharmed(request in any_json(), response in any_json()) {
        let after = through_layer(request.clone(), response.clone());
        check_response(&request, &response, &after)?;
    }

    /// The positive side: a well-formed tool error is always rewrapped, an
    /// element of the tool called passed, an element of another tool rendered
    /// again under the tool called.
    #[test]
    fn every_tool_error_text_is_rewrapped(
        (tool, texts) in tricky_text(8).prop_flat_map(|tool| {
            let text = prop_oneof![
                4 => tricky_text(16),
                1 => tricky_text(16).prop_map({
                    let tool = tool.clone();
                    move |message| render_error(&tool, &message)
                }),
                1 => (tricky_text(4), tricky_text(16))
                    .prop_map(|(other, message)| render_error(&other, &message)),
            ];
            (Just(tool), prop::collection::vec(text, 1..4))
        }),
        batched in any::<bool>(),
    ) {
        let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool}});
        let content: Vec<Value> = texts.iter().map(|text| json!({"type": "text", "text": text})).collect();
        let response = json!({"jsonrpc": "2.0", "id": 3, "result": {"content": content, "isError": true}});
        let (request, response) = if batched {
            (json!([request]), json!([response]))
        } else {
            (request, response)
        };
        let after = through_layer(request, response);
        let answer = if batched { &after[0] } else { &after };
        let rewrapped: Vec<Value> = texts
            .iter()
            .map(|text| Value::from(rewrapped_for(&tool, text)))
            .collect();
        prop_assert_eq!(texts_of(answer), rewrapped);
    }
}

// ---------------------------------------------------------------------------
// Panics, for arbitrary requests.
// ---------------------------------------------------------------------------

/// Sends `request` through the layer over an inner service that panics.
fn answer_to_panic(request: Value, in_call: bool) -> Option<Value> {
    let inner = service_fn(move |_request: Value| {
        if in_call {
            panic!("[expected] inner service panicked in call");
        }
        async move {
            panic!("[expected] inner service panicked in its future");
            #[allow(unreachable_code)]
            Ok::<Option<Value>, Infallible>(None)
        }
    });
    let mut service = ToolErrorLayer::new().layer(inner);
    match complete(service.call(request)) {
        Ok(response) => response,
    }
}

/// The oracle must be able to fail: it rejects a dropped, doubled, misplaced or
/// wrong answer, an answer to a notification, and no response where one is due.
#[test]
fn the_panic_oracle_rejects_what_the_layer_must_not_do() {
    let call = |id: u64, tool: &str| support::tool_call(id, tool);
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ping = json!({"jsonrpc": "2.0", "id": "p", "method": "ping"});
    let answer = |id: u64, tool: &str| {
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": render_error(tool, "hidden")}], "isError": true}})
    };
    let internal = json!({"jsonrpc": "2.0", "id": "p", "error": {"code": -32603, "message": "m"}});
    let batch = json!([call(1, "a"), notification, ping, call(2, "b")]);
    let answered = json!([answer(1, "a"), internal, answer(2, "b")]);
    assert_eq!(check_panic_answers(&batch, Some(&answered)), Ok(()));
    assert_eq!(
        check_panic_answers(&call(1, "a"), Some(&answer(1, "a"))),
        Ok(())
    );
    assert_eq!(check_panic_answers(&notification, None), Ok(()));

    let wrong = [
        // a request left unanswered
        (call(1, "a"), None),
        // one answer of a batch dropped
        (batch.clone(), Some(json!([answer(1, "a"), internal]))),
        (batch.clone(), Some(json!([internal, answer(2, "b")]))),
        // an answer given twice
        (
            batch.clone(),
            Some(json!([
                answer(1, "a"),
                answer(1, "a"),
                internal,
                answer(2, "b")
            ])),
        ),
        // another id, another tool, not an error result, a tool error for a ping
        (call(1, "a"), Some(answer(2, "a"))),
        (call(1, "a"), Some(answer(1, "b"))),
        (
            call(1, "a"),
            Some(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603}})),
        ),
        (
            ping.clone(),
            Some(json!({"jsonrpc": "2.0", "id": "p", "result": {"isError": true}})),
        ),
        // an answer to a notification, a batch of notifications answered
        (notification.clone(), Some(internal.clone())),
        (json!([notification]), Some(json!([]))),
        // a batch answered with a single message
        (json!([ping]), Some(internal.clone())),
    ];
    for (request, response) in &wrong {
        assert!(
            check_panic_answers(request, response.as_ref()).is_err(),
            "accepted {response:?} for {request}"
        );
    }
}

proptest! {
    #![proptest_config(config(2_000))]

    #[test]
    fn every_panicked_request_gets_exactly_one_answer(
        request in message_or_batch(request_message()),
        in_call in any::<bool>(),
    ) {
        support::quiet_panics::silence_expected_panics();
        let response = answer_to_panic(request.clone(), in_call);
        check_panic_answers(&request, response.as_ref()).map_err(TestCaseError::fail)?;
    }
}
