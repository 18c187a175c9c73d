//! The built-in secret patterns of `redact_secrets`, compiled once into one
//! regular expression, and the pass that replaces what they find.
//!
//! Every pattern starts with a literal (`://`, `ghp_`, a parameter name, …), so
//! the regex engine looks for those literals first and only runs its automaton
//! around them: ordinary text is scanned at memchr-like speed, once per pattern. Every pattern is
//! ASCII, so the build needs no Unicode tables: case-insensitive parts are written
//! `(?i-u:…)` and word boundaries `(?-u:\b)`.
//!
//! A pattern has at most one capture group, the secret itself; what is around it
//! (`password=`, `Bearer `, the PEM markers) is kept, so the model still sees
//! what kind of credential was in the message.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::REDACTED;

/// Parameter names whose value is a credential, in a query string, a form body
/// or a connection string (`name=value`), matched ASCII case-insensitively.
/// Longer names come first where one ends another (`x-amz-signature`).
const SECRET_PARAMETERS: &str = "access_token|refresh_token|id_token|client_secret|x-amz-signature|\
     api_key|apikey|token|key|secret|password|passwd|pwd|signature|sig";

/// JSON field names whose string value is a credential (`"password": "…"`).
/// Narrower than the parameters: `"key"` and `"signature"` name ordinary data in JSON.
const SECRET_JSON_FIELDS: &str = "access_token|refresh_token|id_token|client_secret|api_key|apikey|\
     token|secret|password|passwd";

/// Characters that end an unquoted value: whitespace, quotes, angle brackets and
/// the separators of query strings, connection strings and lists.
const VALUE_END: &str = r#"&; \t\r\n"'<>#,)"#;

/// One built-in pattern: what it catches, and its regular expression.
struct Pattern {
    #[allow(dead_code, reason = "read by the tests and in a debugger")]
    kind: &'static str,
    regex: String,
}

fn patterns() -> Vec<Pattern> {
    let pattern = |kind, regex: String| Pattern { kind, regex };
    vec![
        pattern(
            "Authorization header",
            format!(
                r#"(?i-u:authorization)["']?[ \t]*[:=][ \t]*["']?(?i-u:bearer|basic)[ \t]+([^{VALUE_END}]+)"#
            ),
        ),
        pattern(
            "bearer token",
            r"(?-u:\b)(?i-u:bearer)[ \t]+([A-Za-z0-9\-._~+/]{20,}=*)".to_owned(),
        ),
        pattern(
            "URL userinfo password",
            r#"://[^/ \t\r\n:@"'<>]*:([^/ \t\r\n@"'<>]+)@"#.to_owned(),
        ),
        pattern(
            "secret parameter",
            format!(
                r#"(?-u:\b)(?i-u:{SECRET_PARAMETERS})=("[^"\r\n]*"|'[^'\r\n]*'|[^{VALUE_END}]+)"#
            ),
        ),
        pattern(
            "secret JSON field",
            format!(
                r#""(?i-u:{SECRET_JSON_FIELDS})"[ \t]*:[ \t]*("(?:[^"\\\r\n]|\\.)*")"#
            ),
        ),
        pattern(
            "AWS access key id",
            r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)".to_owned(),
        ),
        pattern(
            "GitHub token",
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})".to_owned(),
        ),
        pattern("Slack token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}".to_owned()),
        pattern(
            "secret API key",
            r"(?-u:\b)(?:sk-[A-Za-z0-9_-]{20,}|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,})"
                .to_owned(),
        ),
        pattern("Google API key", r"(?-u:\b)AIza[A-Za-z0-9_-]{35}".to_owned()),
        pattern(
            "JWT",
            r"(?-u:\b)eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*".to_owned(),
        ),
        pattern(
            "PEM private key",
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY-----((?s:.)*?)(?:-----END[ A-Z0-9]*PRIVATE KEY-----|\z)"
                .to_owned(),
        ),
    ]
}

/// Every pattern compiled on first use, each on its own: one alternation of all
/// of them is too large for the engine's literal prefilter and its lazy DFA
/// cache, and scanned ordinary text at about 120 MiB/s; a dozen separate scans,
/// each skipping from literal to literal, are several times faster
/// (docs/performance.md).
static SECRETS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    patterns()
        .iter()
        .map(|pattern| Regex::new(&pattern.regex).expect("the built-in secret patterns compile"))
        .collect()
});

/// `text` with every secret the built-in patterns find replaced by
/// [`REDACTED`], and how many were replaced. Borrowed, with no allocation, when
/// there was none.
///
/// Where the secrets of two patterns overlap (`Authorization: Bearer eyJ…`, a
/// JWT), their union is replaced once.
pub(crate) fn redact_secrets(text: &str) -> (Cow<'_, str>, usize) {
    let mut secrets: Vec<Range<usize>> = Vec::new();
    for regex in SECRETS.iter() {
        // One scan that allocates nothing for the common case, no match (the
        // capture slots of `captures_iter` would be one allocation per text).
        if !regex.is_match(text) {
            continue;
        }
        for captures in regex.captures_iter(text) {
            let whole = captures.get(0).expect("group 0 is the match");
            let secret = captures
                .get(1)
                .map_or(whole.range(), |group| unquoted(text, group.range()));
            // Nothing to hide, or hidden already (a stacked layer, a re-rendered
            // element): the text stays as it is.
            if !secret.is_empty() && text[secret.clone()] != *REDACTED {
                secrets.push(secret);
            }
        }
    }
    if secrets.is_empty() {
        return (Cow::Borrowed(text), 0);
    }
    secrets.sort_unstable_by_key(|secret| secret.start);
    let mut redacted = String::with_capacity(text.len());
    let (mut kept_until, mut count) = (0, 0);
    for secret in secrets {
        if secret.start < kept_until {
            // Overlaps the secret just replaced: extend it.
            kept_until = kept_until.max(secret.end);
            continue;
        }
        redacted.push_str(&text[kept_until..secret.start]);
        redacted.push_str(REDACTED);
        kept_until = secret.end;
        count += 1;
    }
    redacted.push_str(&text[kept_until..]);
    (Cow::Owned(redacted), count)
}

/// The range inside the quotes when `range` is a quoted value, so that the quotes
/// stay and the text keeps its shape (`password="[REDACTED]"`).
fn unquoted(text: &str, range: Range<usize>) -> Range<usize> {
    let value = &text[range.clone()];
    let quoted = value.len() >= 2
        && (value.starts_with('"') && value.ends_with('"')
            || value.starts_with('\'') && value.ends_with('\''));
    if quoted {
        range.start + 1..range.end - 1
    } else {
        range
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_alone_with_at_most_one_group() {
        for pattern in patterns() {
            let regex =
                Regex::new(&pattern.regex).unwrap_or_else(|e| panic!("{}: {e}", pattern.kind));
            assert!(regex.captures_len() <= 2, "{}", pattern.kind);
        }
    }

    #[test]
    fn keeps_the_name_and_the_quotes() {
        let (out, count) = redact_secrets(r#"connect: password="hunter2" user=bob"#);
        assert_eq!(out, r#"connect: password="[REDACTED]" user=bob"#);
        assert_eq!(count, 1);
    }

    #[test]
    fn nothing_found_borrows() {
        assert!(matches!(redact_secrets("plain").0, Cow::Borrowed(_)));
    }
}
