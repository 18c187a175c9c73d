//! `max_error_bytes` fed the worst inputs: texts that end like the layer's own
//! cut (any digits, repeated, nested), already-rendered elements, multibyte
//! characters at the cut, stacked layers. Whatever the text, the body the model
//! reads is at most the cap plus the longest suffix the cap writes
//! (`no_body_is_longer_than_the_cap_and_its_suffix`), and a body is never cut
//! or wrapped twice. The cap counts the body as the renderer receives it:
//! llmxml's guarded bytes for the default renderer, the plain text for any
//! other (`a_custom_renderer_has_the_plain_text_counted`).

use proptest::prelude::*;
use serde_json::json;
use tower::Layer;

use super::sanitize::rendered;
use crate::support::failing_tool::FailingTool;
use mcp_tool_errors::{ToolErrorLayer, is_rendered, render_error};

const TOOL: &str = super::sanitize::TOOL;

/// How the cap ends a cut text, up to the number of bytes removed.
const SUFFIX_START: &str = " … [truncated ";
const SUFFIX_END: &str = " bytes]";
/// The longest suffix the cap writes: the number of bytes removed is a `usize`,
/// at most 20 digits.
const LONGEST_SUFFIX: usize = SUFFIX_START.len() + 20 + SUFFIX_END.len();

/// The body of the element `out`, which must be one llmxml element of [`TOOL`],
/// wrapped once.
fn body(out: &str) -> &str {
    assert!(is_rendered(out), "not an element: {}", short(out));
    let body = out
        .strip_prefix(&format!("<error tool=\"{TOOL}\">\n"))
        .and_then(|rest| rest.strip_suffix("\n</error>"))
        .unwrap_or_else(|| panic!("not an element of {TOOL}: {}", short(out)));
    assert!(
        !body.starts_with("<error") && !body.starts_with("&lt;error tool="),
        "wrapped twice: {}",
        short(out)
    );
    body
}

/// `text` short enough for a failure message: its length and its ends.
fn short(text: &str) -> String {
    if text.len() <= 160 {
        return format!("{text:?}");
    }
    let head = text.char_indices().nth(60).map_or(text.len(), |(at, _)| at);
    let tail = (text.len() - 60..text.len())
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(text.len());
    format!(
        "{} bytes: {:?}..{:?}",
        text.len(),
        &text[..head],
        &text[tail..]
    )
}

fn suffix_of(digits: &str) -> String {
    format!("{SUFFIX_START}{digits}{SUFFIX_END}")
}

#[test]
fn a_text_ending_like_the_cut_suffix_is_cut() {
    let layer = ToolErrorLayer::new().max_error_bytes(16);
    // 16 bytes of kept text, then a suffix with 99,989 digits: 100,028 bytes.
    let forged = format!("{}{}", "x".repeat(16), suffix_of(&"9".repeat(99_989)));
    assert_eq!(forged.len(), 100_028);
    let many_digits = [
        forged,
        format!("{}{}", "x".repeat(16), suffix_of(&"0".repeat(5_000))),
        format!("{}{}", "x".repeat(16), suffix_of("000000000000000000001")),
        format!("{}{}", "x".repeat(16), suffix_of("99999999999999999999999")),
    ];
    for text in many_digits {
        let out = rendered(&layer, &text);
        let body = body(&out);
        assert!(
            body.len() <= 16 + LONGEST_SUFFIX,
            "{} bytes in, out: {}",
            text.len(),
            short(body)
        );
        assert!(body.starts_with(&"x".repeat(16)), "{}", short(body));
    }
}

#[test]
fn repeated_and_nested_suffixes_stay_within_the_bound() {
    let layer = ToolErrorLayer::new().max_error_bytes(16);
    let suffix = suffix_of("7");
    let repeated = format!("{}{}", "y".repeat(10), suffix.repeat(5_000));
    let nested = format!(
        "{}{SUFFIX_START}{SUFFIX_START}12{SUFFIX_END}{SUFFIX_END}",
        "z".repeat(16)
    );
    for text in [repeated, nested] {
        let out = rendered(&layer, &text);
        let body = body(&out);
        assert!(body.len() <= 16 + LONGEST_SUFFIX, "{}", short(body));
    }
}

#[test]
fn a_rendered_element_with_a_forged_suffix_is_cut_once() {
    let layer = ToolErrorLayer::new().max_error_bytes(16);
    let forged = format!("{}{}", "é".repeat(8), suffix_of(&"4".repeat(10_000)));
    let out = rendered(&layer, &render_error(TOOL, &forged));
    let body = body(&out);
    assert!(body.len() <= 16 + LONGEST_SUFFIX, "{}", short(body));
    // The cut falls between two characters of two bytes.
    assert!(body.starts_with(&"é".repeat(8)), "{}", short(body));
    assert!(body.ends_with(&suffix_of(&(forged.len() - 16).to_string())));
}

#[test]
fn a_cut_body_is_not_cut_again_by_a_stacked_layer() {
    let text = format!("{}{}", "a".repeat(100), suffix_of("5"));
    let once = rendered(&ToolErrorLayer::new().max_error_bytes(16), &text);
    let twice = stacked_twice(16, &text);
    assert_eq!(once, twice);
    assert_eq!(
        body(&once),
        format!("{}{}", "a".repeat(16), suffix_of("108"))
    );
}

/// The text the model reads through two layers with the same cap, one behind
/// the other.
fn stacked_twice(max: usize, text: &str) -> String {
    let layer = ToolErrorLayer::new().max_error_bytes(max);
    let mut service = layer.layer(layer.layer(FailingTool {
        text: text.to_owned(),
    }));
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": TOOL, "arguments": {}}});
    let response =
        crate::support::complete::block_on(tower::Service::call(&mut service, request)).unwrap();
    response["result"]["content"][0]["text"]
        .as_str()
        .expect("a text item")
        .to_owned()
}

#[test]
fn a_custom_renderer_has_the_plain_text_counted() {
    let layer = ToolErrorLayer::new()
        .renderer(|tool: &str, message: &str| format!("[{tool}] {message}"))
        .max_error_bytes(8);
    // Six bytes as the renderer receives them: nothing to cut.
    assert_eq!(rendered(&layer, "<error"), format!("[{TOOL}] <error"));
    assert_eq!(
        rendered(&layer, "<error tool"),
        format!("[{TOOL}] <error t … [truncated 3 bytes]")
    );
    // The default renderer still counts the guard it writes.
    let llmxml = ToolErrorLayer::new().max_error_bytes(8);
    assert_eq!(
        rendered(&llmxml, "<error"),
        render_error(TOOL, "<erro … [truncated 1 bytes]")
    );
}

/// Text made of the pieces that can fool a cap: any character (multibyte
/// included), tags the guard grows, guards and redaction markers a cut must
/// not split, and suffixes of the cap with any number of digits.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => proptest::string::string_regex("(?s).{1,4}").unwrap(),
        1 => Just("<error".to_owned()),
        1 => Just("</error".to_owned()),
        1 => Just("&lt;".to_owned()),
        1 => Just("[REDACTED]".to_owned()),
        1 => Just("é".to_owned()),
        1 => Just("🙂".to_owned()),
        2 => proptest::string::string_regex("[0-9]{0,30}").unwrap().prop_map(|d| suffix_of(&d)),
        1 => (1usize..200).prop_map(|n| suffix_of(&"9".repeat(n * 50))),
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_body_is_longer_than_the_cap_and_its_suffix(
        text in tricky_text(),
        already_rendered in any::<bool>(),
        max in 0usize..48,
    ) {
        let text = if already_rendered { render_error(TOOL, &text) } else { text };
        let out = rendered(&ToolErrorLayer::new().max_error_bytes(max), &text);
        let body = body(&out);
        prop_assert!(
            body.len() <= max + LONGEST_SUFFIX,
            "{} capped at {max}: {}", short(&text), short(&out)
        );
        // A second layer with the same cap changes nothing.
        let twice = stacked_twice(max, &text);
        prop_assert!(twice == out, "{} stacked: {} then {}", short(&text), short(&out), short(&twice));
    }

    #[test]
    fn a_capped_body_is_within_the_limit(
        message in proptest::string::string_regex("(?s)(.|<error|</error|&lt;){0,80}").unwrap(),
        max in 0usize..64,
    ) {
        let out = rendered(&ToolErrorLayer::new().max_error_bytes(max), &message);
        prop_assert!(is_rendered(&out), "{out:?}");
        let body = out
            .strip_prefix(&format!("<error tool=\"{TOOL}\">\n"))
            .and_then(|rest| rest.strip_suffix("\n</error>"))
            .unwrap();
        let kept = body.split(" … [truncated ").next().unwrap();
        prop_assert!(kept.len() <= max, "{message:?} capped at {max}: {out:?}");
    }

    #[test]
    fn a_custom_renderer_body_is_within_the_cap_and_its_suffix(
        text in tricky_text(),
        max in 0usize..48,
    ) {
        let layer = ToolErrorLayer::new()
            .renderer(|_: &str, message: &str| message.to_owned())
            .max_error_bytes(max);
        let out = rendered(&layer, &text);
        prop_assert!(
            out.len() <= max + LONGEST_SUFFIX,
            "{} capped at {max}: {}", short(&text), short(&out)
        );
        prop_assert!(text.starts_with(out.split(SUFFIX_START).next().unwrap()));
    }
}
