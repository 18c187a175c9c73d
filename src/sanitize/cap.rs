//! `max_error_bytes`: an error text cut to a size the model can afford.

use std::borrow::Cow;

use super::redact::REDACTED;
use crate::render::guarded_len;

/// What a cut never splits: the guard entity of the llmxml body (see
/// `render/guard.rs`), so that a body never ends in half a guard, and the
/// redaction marker, so that a cut marker is not taken for a secret next time.
const ATOMS: [&str; 2] = ["&lt;", REDACTED];

/// The suffix of a cut text, up to the number of bytes removed.
const SUFFIX_START: &str = " … [truncated ";

/// `text` cut to at most `max_bytes` bytes, followed by ` … [truncated N bytes]`
/// where `N` is how many bytes were removed, and `N`; unchanged (and `0`) when it
/// fits.
///
/// The limit counts the kept text as the llmxml body shows it (each `<` of an
/// `<error` / `</error` tag guarded as the 4 bytes of `&lt;`), not the suffix, so
/// that a rendered body is within the limit and a stacked layer, which sees that
/// body, finds nothing to cut. The cut moves back to a UTF-8 character boundary,
/// and before an `&lt;` it would split, so that an already-rendered body never
/// ends in half a guard. Cutting only removes a tail, so it cannot make an
/// `<error` tag; the text is guarded after the cut anyway.
pub(crate) fn cap(text: Cow<'_, str>, max_bytes: usize) -> (Cow<'_, str>, usize) {
    let fits = text.len() <= max_bytes && guarded_len(&text) <= max_bytes;
    if fits || is_capped(&text, max_bytes) {
        return (text, 0);
    }
    let kept = cut_point(&text, max_bytes);
    let removed = text.len() - kept;
    let suffix = format!("{SUFFIX_START}{removed} bytes]");
    let mut capped = match text {
        Cow::Borrowed(text) => {
            let mut capped = String::with_capacity(kept + suffix.len());
            capped.push_str(&text[..kept]);
            capped
        }
        Cow::Owned(mut text) => {
            text.truncate(kept);
            text
        }
    };
    capped.push_str(&suffix);
    (Cow::Owned(capped), removed)
}

/// Whether `text` is already the output of [`cap`] for this limit: a kept part
/// within it and then the suffix. A stacked layer, or an element rendered by
/// another layer, is then left as it is rather than cut twice.
fn is_capped(text: &str, max_bytes: usize) -> bool {
    let Some(rest) = text.strip_suffix(" bytes]") else {
        return false;
    };
    let digits = rest.len() - rest.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let Some(kept) = rest[..rest.len() - digits].strip_suffix(SUFFIX_START) else {
        return false;
    };
    digits > 0 && guarded_len(kept) <= max_bytes
}

/// The longest prefix whose guarded length is within `max_bytes`, cut as
/// [`boundary_at_or_below`] allows.
fn cut_point(text: &str, max_bytes: usize) -> usize {
    let mut limit = max_bytes.min(text.len());
    loop {
        let cut = boundary_at_or_below(text, limit);
        let shown = guarded_len(&text[..cut]);
        if shown <= max_bytes {
            return cut;
        }
        // Each guard in the prefix costs 3 more bytes: give those back and retry
        // (the prefix only shrinks, so this ends).
        limit = cut.saturating_sub(shown - max_bytes);
    }
}

/// The largest cut at or below `max_bytes` that is a character boundary and
/// splits no [`ATOMS`] occurrence.
fn boundary_at_or_below(text: &str, max_bytes: usize) -> usize {
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let bytes = text.as_bytes();
    for atom in ATOMS {
        let look_back = cut.saturating_sub(atom.len() - 1);
        let straddling = (look_back..cut).find(|&at| bytes[at..].starts_with(atom.as_bytes()));
        if let Some(at) = straddling {
            cut = at;
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capped(text: &str, max: usize) -> (String, usize) {
        let (out, removed) = cap(Cow::Borrowed(text), max);
        (out.into_owned(), removed)
    }

    #[test]
    fn fits_unchanged() {
        assert_eq!(capped("abc", 3), ("abc".to_owned(), 0));
    }

    #[test]
    fn ascii_cut_counts_removed_bytes() {
        assert_eq!(
            capped("abcdef", 4),
            ("abcd … [truncated 2 bytes]".to_owned(), 2)
        );
        assert_eq!(capped("abc", 0), (" … [truncated 3 bytes]".to_owned(), 3));
    }

    #[test]
    fn never_splits_a_character_or_a_guard() {
        // "é" is two bytes: a cut after byte 2 would split it.
        assert_eq!(capped("aéb", 2), ("a … [truncated 3 bytes]".to_owned(), 3));
        for max in 2..6 {
            let (out, _) = capped("ab&lt;error", max);
            assert!(out.starts_with("ab … "), "{max}: {out}");
        }
        assert!(capped("ab&lt;error", 6).0.starts_with("ab&lt; … "));
        assert!(capped("a&amp;b", 3).0.starts_with("a&a … "));
        assert!(capped("key=[REDACTED] x", 12).0.starts_with("key= … "));
    }

    #[test]
    fn counts_a_tag_as_guarded() {
        // "<error" shows as "&lt;error": 9 bytes, not 6; "<erro" is no tag.
        assert_eq!(capped("<error", 8).0, "<erro … [truncated 1 bytes]");
        assert_eq!(capped("<error", 9), ("<error".to_owned(), 0));
        assert_eq!(capped("x<error>y", 10).0, "x<error … [truncated 2 bytes]");
    }

    #[test]
    fn a_capped_text_is_not_cut_again() {
        let (once, _) = capped(&"y".repeat(50), 10);
        assert_eq!(capped(&once, 10), (once.clone(), 0));
        // A longer limit keeps it too; a shorter one cuts the cut text.
        assert_eq!(capped(&once, 20).1, 0);
        assert!(capped(&once, 5).1 > 0);
    }

    #[test]
    fn owned_text_is_cut_in_place() {
        let (out, removed) = cap(Cow::Owned("x".repeat(10)), 4);
        assert_eq!(out, "xxxx … [truncated 6 bytes]");
        assert_eq!(removed, 6);
    }
}
