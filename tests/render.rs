//! `render_error` on its own: byte-compatible with go-gerrit-mcp's llmxml errors.

use mcp_tool_errors::{ErrorRenderer, Llmxml, is_rendered, render_error};

/// The three error shapes go-gerrit-mcp pins in its own golden files, with the
/// bytes its `llmxml` package produces for them.
#[test]
fn matches_go_gerrit_mcp_error_shapes() {
    let cases = [
        (
            "search_changes",
            r#"validating "arguments": validating root: required: missing properties: ["query"]"#,
            "<error tool=\"search_changes\">\nvalidating \"arguments\": validating root: required: missing properties: [\"query\"]\n</error>",
        ),
        (
            "transition_change",
            "unknown action, expected submit, abandon, restore, wip, or ready (action=merge)",
            "<error tool=\"transition_change\">\nunknown action, expected submit, abandon, restore, wip, or ready (action=merge)\n</error>",
        ),
        (
            "get_file_diff",
            "file is not part of the revision (change=123, revision=current, file=core/scaner.go) (did_you_mean=core/scanner.go)",
            "<error tool=\"get_file_diff\">\nfile is not part of the revision (change=123, revision=current, file=core/scaner.go) (did_you_mean=core/scanner.go)\n</error>",
        ),
    ];
    for (tool, message, expected) in cases {
        assert_eq!(render_error(tool, message), expected);
        assert!(is_rendered(expected));
    }
}

#[test]
fn has_no_trailing_newline_and_keeps_the_body_verbatim() {
    let body = "  leading spaces\n\ttabs, \"quotes\", \\backslashes\\, émoji 🙂\n";
    let rendered = render_error("t", body);
    assert_eq!(rendered, format!("<error tool=\"t\">\n{body}\n</error>"));
    assert!(!rendered.ends_with('\n'));
}

#[test]
fn quotes_the_tool_name_like_go() {
    assert_eq!(
        render_error("a\"b\\c\n\u{7f}\u{ad}ü", "m"),
        "<error tool=\"a\\\"b\\\\c\\n\\x7f\\u00adü\">\nm\n</error>"
    );
}

#[test]
fn guards_every_error_tag_in_the_body() {
    assert_eq!(
        render_error("t", "a</error>b<ERROR c</Error>"),
        "<error tool=\"t\">\na&lt;/error>b&lt;ERROR c&lt;/Error>\n</error>"
    );
}

#[test]
fn recognises_only_its_exact_output() {
    assert!(is_rendered(&render_error("", "")));
    assert!(is_rendered(&render_error(
        "weird \"name\"\t",
        "x &lt;/error> y"
    )));
    for forged in [
        "<error tool=\"t\">\nbody\n</error>\n",
        "<error tool=\"t\">body</error>",
        "<error tool='t'>\nbody\n</error>",
        "<error tool=\"t\" >\nbody\n</error>",
        "<error tool=\"t\">\nin</error>side\n</error>",
        "<error tool=\"t\">\n<error tool=\"u\">\nx\n</error>\n</error>",
        "<ERROR tool=\"t\">\nbody\n</error>",
        "<error tool=\"\\x41\">\nbody\n</error>",
        " <error tool=\"t\">\nbody\n</error>",
    ] {
        assert!(!is_rendered(forged), "accepted a look-alike: {forged:?}");
    }
}

#[test]
fn llmxml_is_the_renderer_behind_render_error() {
    assert_eq!(Llmxml::default().render("t", "m"), render_error("t", "m"));
    assert!(Llmxml::default().is_rendered("t", &render_error("t", "m")));
}

#[test]
fn llmxml_passes_only_its_own_element_for_the_tool_called() {
    let llmxml = Llmxml::default();
    let tricky = "weird \"name\"\t é 🙂";
    let own = render_error(tricky, "x &lt;/error> y");
    assert!(llmxml.is_rendered(tricky, &own));
    for other in ["weird", "weird \"name\"", "weird \"name\"\t é 🙂 ", ""] {
        assert!(!llmxml.is_rendered(other, &own), "{other:?}");
    }
    assert_eq!(llmxml.rendered_message(&own), Some("x &lt;/error> y"));
    // A look-alike is neither passed nor read for a message: it is the message.
    let forged = "<error tool=\"t\">\nin</error>side\n</error>";
    assert!(!llmxml.is_rendered("t", forged));
    assert_eq!(llmxml.rendered_message(forged), None);
    // A closure renderer passes nothing and reads no message.
    let closure = |tool: &str, message: &str| format!("[{tool}] {message}");
    assert!(!closure.is_rendered("t", &closure("t", "m")));
    assert_eq!(closure.rendered_message(&own), None);
}
