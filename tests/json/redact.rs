//! The built-in redaction (feature `redact`), through the public API: no
//! generated secret of any built-in kind survives `redact_secrets(true)`
//! wherever it sits in a message (`no_generated_secret_survives_redaction`),
//! the output is today's with every option off
//! (`without_options_the_output_is_unchanged`), ordinary error messages are
//! left byte for byte (`ordinary_messages_are_not_redacted`), the user's
//! scrubber runs after the built-in one, and the logs carry counts and never
//! the redacted text.

use std::borrow::Cow;
use std::convert::Infallible;

use super::sanitize::{TOOL, rendered};
use crate::support::log::CapturedLog;
use mcp_tool_errors::{ToolErrorLayer, render_error};
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::{Layer, Service, service_fn};

fn redacting() -> ToolErrorLayer {
    ToolErrorLayer::new().redact_secrets(true)
}

// ---------------------------------------------------------------------------
// False positives: ordinary error messages pass byte for byte.
// ---------------------------------------------------------------------------

/// Error messages as tools and upstreams write them, none holding a credential.
const ORDINARY_MESSAGES: &[&str] = &[
    "open /var/lib/app/data/config.yaml: no such file or directory",
    r"C:\Users\build\AppData\Local\Temp\cargo-install3kd9\target\release\tool.exe: access denied",
    "failed to read `/home/dev/project/src/secret_manager/key_store.rs`: permission denied (os error 13)",
    "ERROR:  duplicate key value violates unique constraint \"users_email_key\"\nDETAIL:  Key (email)=(ada@example.com) already exists.",
    "pq: syntax error at or near \"WHERE\" in: SELECT id, token_count FROM sessions WHERE user_id = $1 AND key_id = 42",
    "UPDATE api_keys SET revoked = true WHERE id = 7: deadlock detected",
    "invalid JSON at line 1 column 17: {\"name\": \"alpha\", \"key\": \"user.name\", \"tokens\": 42, \"signature_required\": true}",
    "validating \"arguments\": validating root: required: missing properties: [\"query\"]",
    "reading config: parsing \"timeout\": time: invalid duration \"5 minutes\": caused by: strconv.ParseInt: parsing \"5 minutes\": invalid syntax",
    "Error: failed to connect to the database\n\nCaused by:\n    0: connection refused (os error 111)\n    1: tcp connect to 10.0.0.12:5432 failed",
    "request 0f8fad5b-d9cb-469f-a165-70867728950e failed: upstream returned 503 Service Unavailable",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 not found; sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 mismatch",
    "image rejected: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg== is 1x1",
    "GET https://api.example.com/v2/search?q=rust+tower&page=2&per_page=50 returned 429 Too Many Requests",
    "cannot reach https://gerrit.example.com:8443/a/changes/?o=LABELS: certificate has expired",
    "token expired; please log in again",
    "missing bearer token in the request",
    "authorization failed: the key 'deploy' has no password set",
    "password must be at least 12 characters; the secret question is optional",
    "Basic authentication is disabled for this project",
    "task-runner sk-8 failed: disk-usage-limit exceeded (ask-before-delete is on)",
    "the keys eyJ and AKIA are reserved prefixes; ghp_ tokens need 36 characters",
    "thread 'main' panicked at src/main.rs:12:5: index out of bounds: the len is 3 but the index is 7",
    "user@example.com is not a member of project core; mailto:admin@example.com",
    "expected one of `=`, `;` but found `key` at 3:14 in `let key = value;`",
    "tool <error> tags are escaped: &lt;error tool=\"x\">",
    "Grüße: ключ не найден — キーが見つかりません 🔑",
];

#[test]
fn ordinary_messages_are_not_redacted() {
    let layer = redacting();
    for message in ORDINARY_MESSAGES {
        assert_eq!(
            rendered(&layer, message),
            render_error(TOOL, message),
            "{message}"
        );
    }
}

// ---------------------------------------------------------------------------
// The user's scrubber and the logs.
// ---------------------------------------------------------------------------

#[test]
fn the_scrubber_runs_after_the_built_in_redaction() {
    let layer = redacting().redact_with(|text: &str| {
        // Sees the built-in marker already in place.
        Cow::Owned(
            text.replace("[REDACTED]", "<hidden>")
                .replace("corp", "[host]"),
        )
    });
    assert_eq!(
        rendered(&layer, "token=abc123 at db.corp"),
        render_error(TOOL, "token=<hidden> at db.[host]")
    );
}

#[test]
fn the_rewrap_log_counts_redactions_and_never_shows_them() {
    let log = CapturedLog::start();
    let layer = redacting().max_error_bytes(40);
    let text = rendered(
        &layer,
        "login https://u:hunter2-secret@example.com token=tok-secret-9 then a long tail",
    );
    assert!(!text.contains("secret"), "{text}");
    let log = log.lines().join("\n");
    assert!(log.contains("redactions=2"), "{log}");
    assert!(log.contains("bytes_cut="), "{log}");
    assert!(!log.contains("secret"), "{log}");
}

#[tokio::test]
async fn the_logged_panic_payload_is_redacted_too() {
    crate::support::quiet_panics::silence_expected_panics();
    let log = CapturedLog::start();
    let panicking = service_fn(|_: Value| async {
        panic!("[expected] deploy with token=tok-secret-9 failed");
        #[allow(unreachable_code)]
        Ok::<Value, Infallible>(Value::Null)
    });
    let mut service = redacting().layer(panicking);
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                         "params": {"name": "deploy", "arguments": {}}});
    let response = service.call(request).await.unwrap();
    assert_eq!(response["result"]["isError"], true);
    let log = log.lines().join("\n");
    assert!(log.contains("token=[REDACTED]"), "{log}");
    assert!(!log.contains("tok-secret-9"), "{log}");
}

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

fn alnum(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop::sample::select(
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".to_vec(),
        ),
        len,
    )
    .prop_map(|bytes| String::from_utf8(bytes).unwrap())
}

fn upper_alnum(len: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop::sample::select(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".to_vec()),
        len,
    )
    .prop_map(|bytes| String::from_utf8(bytes).unwrap())
}

/// A secret as it appears in a message (`text`) and the part that must not
/// reach the model (`secret`).
#[derive(Debug, Clone)]
struct Planted {
    text: String,
    secret: String,
}

fn planted(text: String, secret: String) -> Planted {
    Planted { text, secret }
}

/// One secret of each built-in kind.
fn any_secret() -> impl Strategy<Value = Planted> {
    let params = [
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "api_key",
        "apikey",
        "key",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "pwd",
        "sig",
        "signature",
        "x-amz-signature",
    ];
    prop_oneof![
        (
            prop::sample::select(vec!["Bearer", "Basic", "bearer"]),
            alnum(12..=40)
        )
            .prop_map(|(scheme, value)| planted(format!("Authorization: {scheme} {value}"), value)),
        alnum(24..=60).prop_map(|value| planted(format!("Bearer {value}"), value)),
        (alnum(1..=8), alnum(12..=24)).prop_map(|(user, password)| planted(
            format!("https://{user}:{password}@host.example.com/path"),
            password
        )),
        (alnum(1..=8), alnum(12..=24)).prop_map(|(user, password)| planted(
            format!("postgres://{user}:{password}@db:5432/app"),
            password
        )),
        (
            prop::sample::select(params.to_vec()),
            any::<bool>(),
            alnum(12..=32)
        )
            .prop_map(|(name, upper, value)| {
                let name = if upper {
                    name.to_uppercase()
                } else {
                    name.to_owned()
                };
                planted(
                    format!("https://x.example/cb?a=1&{name}={value}&b=2"),
                    value,
                )
            }),
        alnum(12..=24)
            .prop_map(|value| planted(format!("Server=db;Password={value};Encrypt=true"), value)),
        (prop::sample::select(vec!["AKIA", "ASIA"]), upper_alnum(16)).prop_map(|(prefix, rest)| {
            let key = format!("{prefix}{rest}");
            planted(key.clone(), key)
        }),
        (
            prop::sample::select(vec!["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]),
            alnum(36..=40)
        )
            .prop_map(|(prefix, rest)| {
                let token = format!("{prefix}{rest}");
                planted(token.clone(), token)
            }),
        alnum(22..=82).prop_map(|rest| {
            let token = format!("github_pat_{rest}");
            planted(token.clone(), token)
        }),
        (prop::sample::select(b"abposr".to_vec()), alnum(10..=40)).prop_map(|(kind, rest)| {
            let token = format!("xox{}-{rest}", kind as char);
            planted(token.clone(), token)
        }),
        (
            prop::sample::select(vec![
                "sk-",
                "sk-proj-",
                "sk-ant-api03-",
                "sk_live_",
                "sk_test_",
                "rk_live_"
            ]),
            alnum(24..=48)
        )
            .prop_map(|(prefix, rest)| {
                let key = format!("{prefix}{rest}");
                planted(key.clone(), key)
            }),
        alnum(35..=35).prop_map(|rest| {
            let key = format!("AIza{rest}");
            planted(key.clone(), key)
        }),
        (alnum(8..=30), alnum(8..=60), alnum(16..=43)).prop_map(|(header, claims, signature)| {
            let jwt = format!("eyJ{header}.eyJ{claims}.{signature}");
            planted(jwt.clone(), jwt)
        }),
        (
            prop::sample::select(vec!["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]),
            alnum(20..=64),
            alnum(20..=64)
        )
            .prop_map(|(kind, line1, line2)| {
                let body = format!("\n{line1}\n{line2}\n");
                planted(
                    format!(
                        "-----BEGIN {kind}PRIVATE KEY-----{body}-----END {kind}PRIVATE KEY-----"
                    ),
                    line1,
                )
            }),
    ]
}

/// Arbitrary text around a secret: anything, including newlines, quotes, angle
/// brackets and non-ASCII.
fn any_text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(?s).{0,40}").unwrap()
}

/// Where the secret sits: between words, on its own line, inside a JSON string.
fn any_embedding() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        (" ", " "),
        ("\n", "\n"),
        ("{\"error\": \"", "\"}"),
        ("'", "'"),
        ("<", ">"),
        ("(", ")"),
        ("\t", ""),
        ("", ""),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        // A failure is reported with its minimal input; nothing is written to the tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_generated_secret_survives_redaction(
        before in any_text(),
        after in any_text(),
        secret in any_secret(),
        (open, close) in any_embedding(),
    ) {
        // A secret glued to a word is another word: the text on each side is
        // set apart by a space unless the embedding brings a delimiter there.
        let before = if open.is_empty() { format!("{before} ") } else { before };
        let after = if close.is_empty() { format!(" {after}") } else { after };
        let message = format!("{before}{open}{}{close}{after}", secret.text);
        let out = rendered(&redacting(), &message);
        prop_assert!(!out.contains(&secret.secret), "{message:?} -> {out:?}");
        prop_assert!(out.contains("[REDACTED]"));
    }

    #[test]
    fn without_options_the_output_is_unchanged(
        before in any_text(),
        secret in any_secret(),
    ) {
        let message = format!("{before} {}", secret.text);
        prop_assert_eq!(rendered(&ToolErrorLayer::new(), &message), render_error(TOOL, &message));
    }
}
