//! Go's `strconv.Quote`, byte for byte, and a check that a literal is exactly its output.
//!
//! go-gerrit-mcp writes the `tool` attribute of its llmxml with `strconv.Quote`, so
//! we do the same to stay byte-compatible. Go decides what is printable with its
//! own Unicode 15.0.0 tables (`unicode.IsPrint`: letters, marks, numbers,
//! punctuation, symbols and the ASCII space); `unicode-general-category` 0.6.0 is
//! pinned because it carries exactly those tables.

use std::fmt::Write as _;

use unicode_general_category::{GeneralCategory as Gc, get_general_category};

/// Appends `s` quoted as Go's `strconv.Quote` would, quotes included.
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    if is_plain_ascii(s) {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut plain_from = 0;
    for (at, c) in s.char_indices() {
        if is_kept_as_is(c) {
            continue;
        }
        out.push_str(&s[plain_from..at]);
        push_escape(out, c);
        plain_from = at + c.len_utf8();
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

/// Whether `literal` is exactly what [`push_quoted`] appends for `s`, without
/// writing it.
pub(crate) fn is_quoted(literal: &str, s: &str) -> bool {
    if is_plain_ascii(s) {
        return literal
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            == Some(s);
    }
    if literal.len() != quoted_len(s) {
        return false;
    }
    let mut quoted = String::with_capacity(literal.len());
    push_quoted(&mut quoted, s);
    quoted == literal
}

/// The length in bytes of what [`push_quoted`] appends for `s`.
pub(crate) fn quoted_len(s: &str) -> usize {
    if is_plain_ascii(s) {
        return 2 + s.len();
    }
    2 + s
        .chars()
        .map(|c| {
            if is_kept_as_is(c) {
                c.len_utf8()
            } else {
                escape_len(c)
            }
        })
        .sum::<usize>()
}

/// Whether every byte of `s` is printable ASCII that Go keeps as it is: the common
/// case for tool names, checked in one pass over bytes.
fn is_plain_ascii(s: &str) -> bool {
    s.bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
}

/// If `s` starts with a Go-quoted literal that is exactly `strconv.Quote` of the
/// string it encodes, returns the length of that literal (quotes included).
///
/// Any other spelling of the same string (`\u0041` for `A`, `\x07` for `\a`,
/// uppercase hex, a raw non-printable character) is rejected: only the canonical
/// form counts, so a look-alike cannot pass for our own output.
pub(crate) fn canonical_quoted_prefix(s: &str) -> Option<usize> {
    let rest = s.strip_prefix('"')?;
    let mut chars = rest.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some(1 + at + 1),
            '\\' => {
                let (_, kind) = chars.next()?;
                let canonical = match kind {
                    '"' | '\\' => true,
                    'a' | 'b' | 'f' | 'n' | 'r' | 't' | 'v' => true,
                    'x' => read_hex(&mut chars, 2).is_some_and(|v| escape_kind(v) == Some('x')),
                    'u' => read_hex(&mut chars, 4).is_some_and(|v| escape_kind(v) == Some('u')),
                    'U' => read_hex(&mut chars, 8).is_some_and(|v| escape_kind(v) == Some('U')),
                    _ => false,
                };
                if !canonical {
                    return None;
                }
            }
            c if is_kept_as_is(c) => {}
            _ => return None,
        }
    }
    None
}

/// Reads `digits` lowercase hex digits, as Go writes them.
fn read_hex(chars: &mut std::str::CharIndices<'_>, digits: usize) -> Option<u32> {
    let mut value = 0u32;
    for _ in 0..digits {
        let (_, c) = chars.next()?;
        let digit = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='f' => c as u32 - 'a' as u32 + 10,
            _ => return None,
        };
        value = value << 4 | digit;
    }
    Some(value)
}

/// Which numeric escape Go uses for the code point `v`, if it escapes it numerically.
fn escape_kind(v: u32) -> Option<char> {
    let c = char::from_u32(v)?;
    if is_kept_as_is(c) || named_escape(c).is_some() || c == '"' || c == '\\' {
        return None;
    }
    Some(if v < 0x20 || v == 0x7f {
        'x'
    } else if v < 0x1_0000 {
        'u'
    } else {
        'U'
    })
}

fn is_kept_as_is(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c) && c != '"' && c != '\\';
    }
    is_go_printable(c)
}

/// Go's `unicode.IsPrint` for a non-ASCII character.
fn is_go_printable(c: char) -> bool {
    !matches!(
        get_general_category(c),
        Gc::SpaceSeparator
            | Gc::LineSeparator
            | Gc::ParagraphSeparator
            | Gc::Control
            | Gc::Format
            | Gc::Surrogate
            | Gc::PrivateUse
            | Gc::Unassigned
    )
}

fn named_escape(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{07}' => "\\a",
        '\u{08}' => "\\b",
        '\u{0c}' => "\\f",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '\u{0b}' => "\\v",
        _ => return None,
    })
}

fn push_escape(out: &mut String, c: char) {
    if c == '"' || c == '\\' {
        out.push('\\');
        out.push(c);
    } else if let Some(named) = named_escape(c) {
        out.push_str(named);
    } else {
        // Writing to a String cannot fail.
        let _ = match escape_kind(c as u32) {
            Some('x') => write!(out, "\\x{:02x}", c as u32),
            Some('u') => write!(out, "\\u{:04x}", c as u32),
            _ => write!(out, "\\U{:08x}", c as u32),
        };
    }
}

fn escape_len(c: char) -> usize {
    if c == '"' || c == '\\' || named_escape(c).is_some() {
        2
    } else {
        match escape_kind(c as u32) {
            Some('x') => 4,
            Some('u') => 6,
            _ => 10,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(s: &str) -> String {
        let mut out = String::new();
        push_quoted(&mut out, s);
        assert_eq!(out.len(), quoted_len(s), "quoted_len disagrees for {s:?}");
        out
    }

    // Expected values are what Go 1.21+ prints for `strconv.Quote`.
    #[test]
    fn quotes_like_go() {
        let cases = [
            ("search_changes", r#""search_changes""#),
            ("", r#""""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("\u{7}\u{8}\u{c}\n\r\t\u{b}", r#""\a\b\f\n\r\t\v""#),
            ("\u{0}\u{1b}\u{7f}", r#""\x00\x1b\x7f""#),
            ("\u{80}\u{9f}", r#""\u0080\u009f""#),
            (
                "\u{a0}\u{ad}\u{2028}\u{feff}",
                r#""\u00a0\u00ad\u2028\ufeff""#,
            ),
            ("\u{e000}\u{10ffff}", r#""\ue000\U0010ffff""#),
            ("héllo 世界 ✓ 🙂", "\"héllo 世界 ✓ 🙂\""),
            ("e\u{301}", "\"e\u{301}\""),
            ("\u{3000}", r#""\u3000""#),
        ];
        for (input, expected) in cases {
            assert_eq!(quote(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn unicode_tables_are_the_ones_go_uses() {
        assert_eq!(unicode_general_category::UNICODE_VERSION, (15, 0, 0));
        // U+1E030 was assigned in Unicode 15.0 (printable to Go); U+2EBF0 only
        // in 15.1 (still unassigned, so escaped, for Go).
        assert_eq!(quote("\u{1e030}"), "\"\u{1e030}\"");
        assert_eq!(quote("\u{2ebf0}"), r#""\U0002ebf0""#);
    }

    #[test]
    fn a_literal_is_the_quote_of_one_string_only() {
        for input in ["x", "", "a\"b", "\u{1b}", "世 🙂", "a\\b"] {
            assert!(is_quoted(&quote(input), input), "{input:?}");
        }
        assert!(!is_quoted(r#""x""#, "y"));
        assert!(!is_quoted(r#""x"#, "x"));
        assert!(!is_quoted(r#"x""#, "x"));
        assert!(!is_quoted(r#""\u0041""#, "A"));
        assert!(!is_quoted("\"\u{1b}\"", "\u{1b}"));
        assert!(!is_quoted(r#""a"b""#, "a\"b"));
    }

    #[test]
    fn accepts_only_the_canonical_spelling() {
        for input in ["x", "a\"b", "\u{1b}", "\u{ad}", "\u{10ffff}", "\t", "世"] {
            let quoted = quote(input);
            let with_tail = format!("{quoted}>rest");
            assert_eq!(canonical_quoted_prefix(&with_tail), Some(quoted.len()));
        }
        for forged in [
            r#""\u0041""#,
            r#""\x07""#,
            r#""\x1B""#,
            r#""\u00AD""#,
            r#""\U0000ad""#,
            "\"\u{ad}\"",
            "\"\n\"",
            r#""\q""#,
            r#""open"#,
            "x",
        ] {
            assert_eq!(canonical_quoted_prefix(forged), None, "accepted {forged:?}");
        }
    }
}
