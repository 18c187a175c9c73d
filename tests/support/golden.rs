//! The golden corpus: `golden/<case>.in.json` says what a client sends and how the
//! inner service behaves; `golden/<case>.out.json` holds, byte for byte, what the
//! client receives through the layer (pretty-printed JSON and a newline, or `null`
//! when no response is sent).
//!
//! `"inner": {"hang": true}` is an inner service that never answers, and
//! `"layer": {"tool_timeout_ms": N}` gives the layer `tool_timeout`; such cases
//! run under tokio's paused clock, which moves on by itself while every task
//! waits.
//!
//! `UPDATE_GOLDEN=1` rewrites the `.out.json` files; a normal run never writes.
//!
//! A case is one exchange (`"request"` and `"inner"`), or, when what it pins
//! needs state the layer carries from one request to the next (a task created
//! by a `tools/call`, its result delivered by a later `tasks/get`), a sequence:
//! `"exchanges": [{"request": .., "inner": ..}, ..]`, sent in order through one
//! layered service. The `.out.json` of a sequence is the array of what the
//! client received for each exchange (`null` where nothing was sent).
//!
//! The files hold keys in the order the server wrote them, which serde_json keeps
//! only with its `preserve_order` feature (tower-mcp turns it on, so
//! `--all-features` has it). Without it serde_json sorts keys, for the bare server
//! as for the layer; then each expected file is read and written again by the
//! same serde_json before the byte-for-byte comparison, so every value is still
//! checked, and only the order is left to the build.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use serde_json::Value;

/// One golden case, as read from its `.in.json` file.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    /// What the case pins, in one sentence.
    pub rule: String,
    /// What the client sends and how the inner service answers, in order: one
    /// exchange, or several for a sequence.
    pub exchanges: Vec<Exchange>,
    /// Whether the case is a sequence (`"exchanges"`), whose output is an array.
    pub sequence: bool,
    /// `ToolErrorLayer::expose_panic_messages`.
    pub expose_panic_messages: bool,
    /// `ToolErrorLayer::tool_timeout`.
    pub tool_timeout: Option<Duration>,
    /// `ToolErrorLayer::redact_secrets`.
    pub redact_secrets: bool,
    /// `ToolErrorLayer::max_error_bytes`, when the case sets it.
    pub max_error_bytes: Option<usize>,
    /// Whether the rule says the response passes through unchanged.
    pub untouched: bool,
}

/// One request of a case, and how the inner service behaves for it.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The message (or batch) the client sends.
    pub request: Value,
    pub inner: Inner,
}

impl Case {
    /// The one exchange of a case that is not a sequence; `None` for a sequence.
    pub fn single(&self) -> Option<&Exchange> {
        match &self.exchanges[..] {
            [exchange] if !self.sequence => Some(exchange),
            _ => None,
        }
    }
}

/// How the inner service behaves for a case.
#[derive(Debug, Clone)]
pub enum Inner {
    /// Answers with this message; `Value::Null` means no response.
    Respond(Value),
    /// Panics with a string payload, in `call` or while its future is polled.
    Panic { at: PanicAt, payload: Payload },
    /// Never answers.
    Hang,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanicAt {
    Call,
    Poll,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Str(String),
    /// `std::panic::panic_any` with an integer: not a string payload.
    Integer(i64),
}

impl Payload {
    /// Panics with this payload.
    pub fn raise(&self) -> ! {
        match self {
            Payload::Str(message) => std::panic::panic_any(message.clone()),
            Payload::Integer(n) => std::panic::panic_any(*n),
        }
    }
}

pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

/// Every case of the corpus that this build can run, sorted by name: a case
/// whose layer sets `redact_secrets` needs the feature `redact`, and is left
/// out without it (with it, as with `--all-features`, every case runs).
pub fn load_cases() -> Vec<Case> {
    case_names()
        .iter()
        .map(|name| read_case(name))
        .filter(Case::runs_in_this_build)
        .collect()
}

/// The name of every case in `golden/`, sorted, whether this build runs it or not.
fn case_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(golden_dir())
        .expect("golden/ exists")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|file| file.strip_suffix(".in.json").map(str::to_owned))
        .collect();
    names.sort();
    names
}

fn read_case(name: &str) -> Case {
    let path = golden_dir().join(format!("{name}.in.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (exchanges, sequence) = match &spec["exchanges"] {
        Value::Null => (vec![read_exchange(name, &spec)], false),
        Value::Array(exchanges) if exchanges.len() > 1 => (
            exchanges.iter().map(|e| read_exchange(name, e)).collect(),
            true,
        ),
        _ => panic!("{name}: \"exchanges\" must be an array of at least two exchanges"),
    };
    Case {
        name: name.to_owned(),
        rule: spec["rule"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no rule"))
            .to_owned(),
        exchanges,
        sequence,
        expose_panic_messages: spec["layer"]["expose_panic_messages"]
            .as_bool()
            .unwrap_or(false),
        tool_timeout: spec["layer"]["tool_timeout_ms"]
            .as_u64()
            .map(Duration::from_millis),
        redact_secrets: spec["layer"]["redact_secrets"].as_bool().unwrap_or(false),
        max_error_bytes: spec["layer"]["max_error_bytes"]
            .as_u64()
            .map(|max| usize::try_from(max).expect("max_error_bytes fits usize")),
        untouched: spec["untouched"].as_bool().unwrap_or(false),
    }
}

/// One exchange: `{"request": .., "inner": ..}`.
fn read_exchange(name: &str, spec: &Value) -> Exchange {
    let inner = &spec["inner"];
    let inner = if let Some(response) = inner.get("respond") {
        Inner::Respond(response.clone())
    } else if inner["hang"] == Value::Bool(true) {
        Inner::Hang
    } else {
        let at = match inner["panic_in"].as_str() {
            Some("call") => PanicAt::Call,
            Some("poll") => PanicAt::Poll,
            other => panic!("{name}: inner.panic_in must be \"call\" or \"poll\", not {other:?}"),
        };
        let payload = match &inner["payload"] {
            Value::String(s) => Payload::Str(s.clone()),
            Value::Number(n) => Payload::Integer(n.as_i64().expect("integer payload")),
            other => panic!("{name}: unsupported payload {other}"),
        };
        Inner::Panic { at, payload }
    };
    Exchange {
        request: spec["request"].clone(),
        inner,
    }
}

impl Case {
    /// Whether this build has the features the case's layer needs.
    fn runs_in_this_build(&self) -> bool {
        cfg!(feature = "redact") || !self.redact_secrets
    }

    /// The layer as the case's `layer` object sets it up; every harness builds it
    /// here.
    pub fn layer(&self) -> ToolErrorLayer {
        let mut layer = ToolErrorLayer::new().expose_panic_messages(self.expose_panic_messages);
        #[cfg(feature = "redact")]
        {
            layer = layer.redact_secrets(self.redact_secrets);
        }
        #[cfg(not(feature = "redact"))]
        assert!(
            !self.redact_secrets,
            "{}: needs the feature redact",
            self.name
        );
        if let Some(timeout) = self.tool_timeout {
            layer = layer.tool_timeout(timeout);
        }
        match self.max_error_bytes {
            Some(max) => layer.max_error_bytes(max),
            None => layer,
        }
    }
}

/// The bytes a response is pinned as.
pub fn serialize_output(response: &Value) -> String {
    let mut out = serde_json::to_string_pretty(response).unwrap();
    out.push('\n');
    out
}

/// Compares `actual` with `golden/<case>.out.json`, or rewrites it under
/// `UPDATE_GOLDEN=1`. Returns a description of the mismatch, if any.
pub fn check_output(case: &str, actual: &str) -> Result<(), String> {
    let path = golden_dir().join(format!("{case}.out.json"));
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        assert!(
            preserves_key_order(),
            "bless with serde_json's preserve_order (cargo test --all-features): \
             without it, keys would be written sorted"
        );
        std::fs::write(&path, actual).unwrap();
        return Ok(());
    }
    let expected = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{case}: cannot read {}: {e} (bless with UPDATE_GOLDEN=1)",
            path.display()
        )
    })?;
    let (expected, actual) = if preserves_key_order() {
        (expected, actual.to_owned())
    } else {
        (
            in_sorted_order(&expected).map_err(|e| format!("{case}: {e}"))?,
            in_sorted_order(actual).map_err(|e| format!("{case}: {e}"))?,
        )
    };
    if expected == actual {
        Ok(())
    } else {
        Err(format!(
            "{case}: output differs from {}\n--- expected\n{expected}--- actual\n{actual}",
            path.display()
        ))
    }
}

/// `json` written again by a serde_json that sorts keys.
pub fn in_sorted_order(json: &str) -> Result<String, serde_json::Error> {
    let value: Value = serde_json::from_str(json)?;
    Ok(serialize_output(&value))
}

/// `json` as this build's serde_json orders keys: unchanged when it keeps the
/// order written, sorted otherwise. For comparing output written by typed
/// structs (which keep their field order) with golden files.
pub fn in_this_build_order(json: &str) -> String {
    if preserves_key_order() {
        json.to_owned()
    } else {
        in_sorted_order(json).expect("golden output is JSON")
    }
}

/// Whether this build's serde_json keeps object keys in the order they were
/// written (feature `preserve_order`), rather than sorting them.
pub fn preserves_key_order() -> bool {
    let object: Value = serde_json::from_str(r#"{"b": 0, "a": 0}"#).unwrap();
    object
        .as_object()
        .unwrap()
        .keys()
        .next()
        .map(String::as_str)
        == Some("b")
}

/// Fails on any file in `golden/` that is not the input or output of a case
/// (run by this build or not).
pub fn assert_no_stray_files() {
    let used: BTreeSet<String> = case_names()
        .iter()
        .flat_map(|name| [format!("{name}.in.json"), format!("{name}.out.json")])
        .collect();
    let stray: Vec<String> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|file| !used.contains(file))
        .collect();
    assert!(
        stray.is_empty(),
        "golden files that no case uses: {stray:?}"
    );
}

/// The future of an inner service that never answers.
pub fn hanging<T: 'static>() -> Pin<Box<dyn Future<Output = T> + Send>> {
    Box::pin(std::future::pending())
}

/// The future of an inner service that panics as a case says: right away, in
/// `call` (the caller never gets a future), or on being polled after one yield.
pub fn panicking<T>(at: PanicAt, payload: Payload) -> Pin<Box<dyn Future<Output = T> + Send>> {
    match at {
        PanicAt::Call => payload.raise(),
        PanicAt::Poll => Box::pin(async move {
            tokio::task::yield_now().await;
            payload.raise()
        }),
    }
}
