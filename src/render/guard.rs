//! The body guard: no message can open or close an `<error` element.

/// Every `<` that starts `<error` or `</error` (ASCII case-insensitive) in the body
/// becomes this entity.
const ESCAPED_LT: &str = "&lt;";

/// Appends `message` with every guarded `<` replaced by [`ESCAPED_LT`].
pub(crate) fn push_guarded(out: &mut String, message: &str) {
    let mut plain_from = 0;
    for at in guarded_positions(message) {
        out.push_str(&message[plain_from..at]);
        out.push_str(ESCAPED_LT);
        plain_from = at + 1;
    }
    out.push_str(&message[plain_from..]);
}

/// The length in bytes of what [`push_guarded`] appends for `message`.
pub(crate) fn guarded_len(message: &str) -> usize {
    message.len() + guarded_positions(message).count() * (ESCAPED_LT.len() - 1)
}

/// Whether `body` holds no `<error` or `</error`, so it needs no guarding.
pub(crate) fn is_guard_clean(body: &str) -> bool {
    guarded_positions(body).next().is_none()
}

/// The byte offsets of the `<` of each `<error` / `</error`.
fn guarded_positions(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'<', bytes).filter(move |&at| opens_error_tag(&bytes[at + 1..]))
}

fn opens_error_tag(after_lt: &[u8]) -> bool {
    let name = after_lt.strip_prefix(b"/").unwrap_or(after_lt);
    name.get(..5)
        .is_some_and(|word| word.eq_ignore_ascii_case(b"error"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(message: &str) -> String {
        let mut out = String::new();
        push_guarded(&mut out, message);
        assert_eq!(out.len(), guarded_len(message));
        out
    }

    #[test]
    fn escapes_only_error_tags() {
        assert_eq!(guard("a < b <e <err"), "a < b <e <err");
        assert_eq!(guard("</error><error x>"), "&lt;/error>&lt;error x>");
        assert_eq!(
            guard("<ErRoR</ERROR<errors"),
            "&lt;ErRoR&lt;/ERROR&lt;errors"
        );
        assert_eq!(guard("<//error </ error"), "<//error </ error");
        assert_eq!(guard("<"), "<");
        assert_eq!(guard("é<error"), "é&lt;error");
    }

    #[test]
    fn clean_means_nothing_to_escape() {
        assert!(is_guard_clean("&lt;/error> fine"));
        assert!(!is_guard_clean("x</Error>"));
    }
}
