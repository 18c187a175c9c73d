//! A stdio "MCP server" that does what a script says, for testing the
//! `mcp-tool-errors` command over real pipes: it can answer, stay silent, write
//! garbage, send requests of its own, answer in batches, or exit mid-call.
//!
//! The script is JSON in the environment variable `SCRIPTED_SERVER`:
//!
//! ```json
//! {
//!   "start": ["a line written at start"],
//!   "on": {"tools/call echo": [{"send": "{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{}}"}]}
//! }
//! ```
//!
//! Each received line is looked up by `tools/call NAME`, then by its method,
//! then as `response` (a message with an id and no method), `batch` (an array),
//! or `other`; a line with no entry gets nothing. Actions:
//!
//! - `{"send": TEXT}` writes TEXT and a newline, with `$ID` replaced by the
//!   received id's JSON text, `$JS_ID` by the received id as the TypeScript
//!   SDK writes it back (a number parsed and written again: `9` for `9.0`,
//!   `100` for `1e2`, `0` for `-0`), `$REQUEST_ID` by the JSON text of its
//!   `params.requestId` (a cancellation names the request it cancels) and
//!   `$LINE` by the received line (trimmed);
//! - `{"repeat": TEXT, "times": N}` writes TEXT and a newline N times, as is;
//! - `{"exit": CODE}` exits at once with CODE, without flushing anything else;
//! - `{"park": true}` reads nothing more and never exits by itself.
//!
//! At the end of stdin it exits with the script's `eof_exit` (0 if absent), or,
//! with `"eof_hang": true`, never exits by itself. It uses std only.

use std::io::{BufRead, Write};

use serde_json::Value;

fn main() {
    let script: Value = std::env::var("SCRIPTED_SERVER")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .expect("SCRIPTED_SERVER holds a JSON script");
    let mut stdout = std::io::stdout().lock();
    for line in script["start"].as_array().into_iter().flatten() {
        let line = line.as_str().expect("start lines are strings");
        writeln!(stdout, "{line}").expect("stdout is open");
    }
    stdout.flush().expect("stdout is open");
    let on = script["on"].as_object().cloned().unwrap_or_default();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin is readable");
        let received: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let Some(actions) = keys(&received).iter().find_map(|key| on.get(key)) else {
            continue;
        };
        let id = received.get("id").map(Value::to_string).unwrap_or_default();
        let js_id = received.get("id").map(js_spelling).unwrap_or_default();
        let request_id = received
            .pointer("/params/requestId")
            .map(Value::to_string)
            .unwrap_or_default();
        for action in actions.as_array().into_iter().flatten() {
            if let Some(text) = action["send"].as_str() {
                let text = text
                    .replace("$REQUEST_ID", &request_id)
                    .replace("$ID", &id)
                    .replace("$JS_ID", &js_id)
                    .replace("$LINE", line.trim());
                writeln!(stdout, "{text}").expect("stdout is open");
                stdout.flush().expect("stdout is open");
            }
            if let Some(text) = action["repeat"].as_str() {
                let mut flood = std::io::BufWriter::new(&mut stdout);
                for _ in 0..action["times"].as_u64().unwrap_or(1) {
                    writeln!(flood, "{text}").expect("stdout is open");
                }
                flood.flush().expect("stdout is open");
            }
            if let Some(code) = action["exit"].as_i64() {
                std::process::exit(i32::try_from(code).expect("an exit code"));
            }
            if action["park"] == true {
                park();
            }
        }
    }
    if script["eof_hang"] == true {
        park();
    }
    let code = script["eof_exit"].as_i64().unwrap_or(0);
    std::process::exit(i32::try_from(code).expect("an exit code"));
}

/// Never returns, nor reads anything.
fn park() -> ! {
    loop {
        std::thread::park();
    }
}

/// `id` as `JSON.stringify(JSON.parse(id))` writes it: a number as the
/// shortest text of its double (`9` for `9.0`, `100` for `1e2`).
fn js_spelling(id: &Value) -> String {
    match id.as_f64() {
        Some(number) if id.is_number() => format!("{number}"),
        _ => id.to_string(),
    }
}

/// The script keys a received message answers to, most specific first.
fn keys(received: &Value) -> Vec<String> {
    let mut keys = Vec::new();
    match received {
        Value::Array(_) => keys.push("batch".to_owned()),
        Value::Object(message) => match message.get("method").and_then(Value::as_str) {
            Some(method) => {
                if let Some(tool) = received["params"]["name"].as_str() {
                    keys.push(format!("{method} {tool}"));
                }
                keys.push(method.to_owned());
            }
            None if message.contains_key("id") => keys.push("response".to_owned()),
            None => {}
        },
        _ => {}
    }
    keys.push("other".to_owned());
    keys
}
