//! `max_error_bytes`: an error text cut to a size the model can afford.

use std::borrow::Cow;

/// The guard entity of the llmxml body (see `render/guard.rs`); a cut never
/// splits it.
const ESCAPED_LT: &str = "&lt;";

/// `text` cut to at most `max_bytes` bytes, followed by ` … [truncated N bytes]`
/// where `N` is how many bytes were removed, and `N`; unchanged (and `0`) when it
/// fits.
///
/// The limit counts the kept text only, not the suffix. The cut moves back to a
/// UTF-8 character boundary, and before an `&lt;` it would split, so that an
/// already-rendered body never ends in half a guard. Cutting only removes a tail,
/// so it cannot make an `<error` tag; the text is guarded after the cut anyway.
pub(crate) fn cap(text: Cow<'_, str>, max_bytes: usize) -> (Cow<'_, str>, usize) {
    if text.len() <= max_bytes {
        return (text, 0);
    }
    let kept = cut_point(&text, max_bytes);
    let removed = text.len() - kept;
    let suffix = format!(" … [truncated {removed} bytes]");
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

/// The largest cut at or below `max_bytes` that is a character boundary and does
/// not fall inside an `&lt;`.
fn cut_point(text: &str, max_bytes: usize) -> usize {
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let bytes = text.as_bytes();
    let look_back = cut.saturating_sub(ESCAPED_LT.len() - 1);
    if let Some(at) = bytes[look_back..cut].iter().rposition(|&b| b == b'&')
        && bytes[look_back + at..].starts_with(ESCAPED_LT.as_bytes())
    {
        cut = look_back + at;
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
    }

    #[test]
    fn owned_text_is_cut_in_place() {
        let (out, removed) = cap(Cow::Owned("x".repeat(10)), 4);
        assert_eq!(out, "xxxx … [truncated 6 bytes]");
        assert_eq!(removed, 6);
    }
}
