//! Arbitrary bytes through the layer's JSON path.
//!
//! The first byte picks how the inner service behaves and whether panic
//! messages are exposed; the rest is the request, then a `0xff` byte (never part
//! of UTF-8 JSON), then what the inner service answers. Whatever they hold, the
//! layer must not panic, must change an answer only by putting rendered
//! elements in it, and must answer a panic without its payload: every request
//! with an id exactly once, with its id, and nothing else (the oracle of
//! `tests/support/panic_answers.rs`, shared with the property tests).
#![no_main]

#[path = "../../tests/support/panic_answers.rs"]
mod panic_answers;

use std::collections::HashSet;
use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::sync::Once;
use std::task::{Context, Poll, Waker};

use libfuzzer_sys::fuzz_target;
use mcp_tool_errors::{ToolErrorLayer, ToolErrors, is_rendered};
use serde_json::Value;
use tower::util::BoxService;
use tower::{Layer, Service, service_fn};

/// In the message of every panic the inner service raises on purpose.
const MARK: &str = "[expected] deliberate panic";
/// In every panic payload: it must not reach the answer unless exposed.
const SECRET: &str = "fuzz-secret-5Jc8q";

/// A panic payload that is not a string.
struct Deliberate;

fuzz_target!(|data: &[u8]| {
    let_deliberate_panics_unwind();
    run(data);
});

/// libFuzzer's panic hook aborts on every panic, caught or not. The inner
/// service's panics are meant to be caught by the layer, so they are let through;
/// any other panic still aborts and is reported as a crash.
fn let_deliberate_panics_unwind() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            let deliberate =
                payload.is::<Deliberate>() || message.is_some_and(|m| m.contains(MARK));
            if !deliberate {
                abort(info);
            }
        }));
    });
}

fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (request, answer) = match rest.iter().position(|&byte| byte == 0xff) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let Ok(request) = serde_json::from_slice::<Value>(request) else {
        return;
    };
    let answer: Option<Value> = serde_json::from_slice(answer).ok();
    let layer = ToolErrorLayer::new().expose_panic_messages(mode & 0b1000 != 0);
    match mode & 0b111 {
        0 | 1 => {
            let after = respond(&layer, request, answer.clone());
            check_rewrap(answer.as_ref(), after.as_ref());
        }
        2 | 3 => {
            let before = answer.unwrap_or(Value::Null);
            let after = respond(&layer, request, before.clone());
            check_rewrap(Some(&before), Some(&after));
        }
        kind => {
            let in_call = kind & 1 == 0;
            let string_payload = kind < 6;
            let after = panic(&layer, request.clone(), in_call, string_payload);
            check_panic_answer(&request, after.as_ref(), mode & 0b1000 != 0);
        }
    }
}

/// Drives a future that must finish at once: the inner services never wait.
fn complete<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the layer waited on an inner service that never does"),
    }
}

/// What the layer makes of `answer`, the inner service's answer to `request`.
fn respond<A>(layer: &ToolErrorLayer, request: Value, answer: A) -> A
where
    A: Clone + Send + 'static,
    ToolErrors<BoxService<Value, A, Infallible>>: Service<Value, Response = A, Error = Infallible>,
{
    let mut service = layer.layer(BoxService::new(service_fn(move |_request: Value| {
        std::future::ready(Ok::<A, Infallible>(answer.clone()))
    })));
    match complete(service.call(request)) {
        Ok(after) => after,
    }
}

/// What the layer answers when the inner service panics.
fn panic(
    layer: &ToolErrorLayer,
    request: Value,
    in_call: bool,
    string_payload: bool,
) -> Option<Value> {
    let raise = move || {
        if string_payload {
            panic!("{MARK} with {SECRET}");
        }
        std::panic::panic_any(Deliberate);
    };
    let mut service = layer.layer(service_fn(move |_request: Value| {
        if in_call {
            raise();
        }
        async move {
            raise();
            Ok::<Option<Value>, Infallible>(None)
        }
    }));
    match complete(service.call(request)) {
        Ok(after) => after,
    }
}

fn strings<'a>(value: &'a Value, found: &mut HashSet<&'a str>) {
    match value {
        Value::String(s) => {
            found.insert(s);
        }
        Value::Array(items) => items.iter().for_each(|item| strings(item, found)),
        Value::Object(map) => map.values().for_each(|item| strings(item, found)),
        _ => {}
    }
}

/// The layer leaves an answer without any `isError: true` byte for byte as it
/// is, and puts no string in any answer but rendered elements (and the type
/// of an item it inserts).
fn check_rewrap(before: Option<&Value>, after: Option<&Value>) {
    let (before, after) = match (before, after) {
        (None, None) => return,
        (Some(before), Some(after)) => (before, after),
        _ => panic!("the layer turned {before:?} into {after:?}"),
    };
    let before_bytes = serde_json::to_string(before).unwrap();
    let after_bytes = serde_json::to_string(after).unwrap();
    if !before_bytes.contains("\"isError\":true") {
        assert_eq!(
            before_bytes, after_bytes,
            "an answer without isError changed"
        );
        return;
    }
    let mut old = HashSet::new();
    strings(before, &mut old);
    let mut new = HashSet::new();
    strings(after, &mut new);
    // An error result without text gets an item of type "text" with an element.
    for text in new.difference(&old).filter(|text| **text != "text") {
        assert!(
            is_rendered(text),
            "the layer wrote {text:?}, which is not an element"
        );
    }
}

/// A panic is answered for every request of `request` that has an id, once and
/// with its id, and for nothing else; without its payload unless exposed.
fn check_panic_answer(request: &Value, after: Option<&Value>, exposed: bool) {
    if let Err(wrong) = panic_answers::check_panic_answers(request, after) {
        panic!("{wrong}");
    }
    let text = serde_json::to_string(&after).unwrap();
    if !exposed {
        assert!(
            !text.contains(SECRET),
            "the payload reached the answer: {text}"
        );
    }
}
