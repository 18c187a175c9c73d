//! `max_error_bytes`: an error text cut to a size the model can afford.

use std::borrow::Cow;

use super::REDACTED;
use crate::render::guarded_len;

/// What a cut never splits: the guard entity of the llmxml body (see
/// `render/guard.rs`), so that a body never ends in half a guard, and the
/// redaction marker, so that a cut marker is not taken for a secret next time.
const ATOMS: [&str; 2] = ["&lt;", REDACTED];

/// The suffix of a cut text, up to the number of bytes removed.
const SUFFIX_START: &str = " … [truncated ";
/// The end of the suffix, after the number of bytes removed.
const SUFFIX_END: &str = " bytes]";

/// How the cap counts a text: as the renderer receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// Every byte as it is: what any renderer but llmxml receives.
    Plain,
    /// As llmxml's body shows it: each `<` of an `<error` / `</error` tag as the
    /// 4 bytes of `&lt;`.
    Guarded,
}

impl Count {
    fn len(self, text: &str) -> usize {
        match self {
            Count::Plain => text.len(),
            Count::Guarded => guarded_len(text),
        }
    }
}

/// `text` cut to at most `max_bytes` bytes, followed by ` … [truncated N bytes]`
/// where `N` is how many bytes were removed, and `N`; unchanged (and `0`) when it
/// fits.
///
/// The limit counts the kept text as `count` says (for llmxml, as its body shows
/// it), not the suffix, so that a rendered body is within the limit and a
/// stacked layer, which sees that body, finds nothing to cut. The cut moves back
/// to a UTF-8 character boundary, and before an `&lt;` it would split, so that an
/// already-rendered body never ends in half a guard. Cutting only removes a
/// tail, so it cannot make an `<error` tag; the text is guarded after the cut
/// anyway.
///
/// Whatever `text` ends with, the result is at most `max_bytes` counted bytes
/// and one suffix, whose `N` has at most 20 digits.
pub(crate) fn cap(text: Cow<'_, str>, max_bytes: usize, count: Count) -> (Cow<'_, str>, usize) {
    let fits = text.len() <= max_bytes && count.len(&text) <= max_bytes;
    if fits || is_capped(&text, max_bytes, count) {
        return (text, 0);
    }
    let kept = cut_point(&text, max_bytes, count);
    let removed = text.len() - kept;
    let suffix = format!("{SUFFIX_START}{removed}{SUFFIX_END}");
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

/// Whether `text` could be the output of [`cap`] for this limit: a kept part
/// within it, then one suffix whose `N` is a number [`cap`] writes (a `usize`
/// above zero, without leading zeros). A stacked layer, or an element rendered
/// by another layer, is then left as it is rather than cut twice.
///
/// The number is checked, not only its digits: a look-alike with a long run of
/// digits would otherwise carry any amount of text past the limit.
fn is_capped(text: &str, max_bytes: usize, count: Count) -> bool {
    let Some(rest) = text.strip_suffix(SUFFIX_END) else {
        return false;
    };
    let digits = rest.len() - rest.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (rest, number) = rest.split_at(rest.len() - digits);
    let Some(kept) = rest.strip_suffix(SUFFIX_START) else {
        return false;
    };
    let written_by_cap =
        !number.starts_with('0') && number.parse::<usize>().is_ok_and(|removed| removed > 0);
    written_by_cap && count.len(kept) <= max_bytes
}

/// The longest prefix whose counted length is within `max_bytes`, cut as
/// [`boundary_at_or_below`] allows.
fn cut_point(text: &str, max_bytes: usize, count: Count) -> usize {
    let mut limit = max_bytes.min(text.len());
    loop {
        let cut = boundary_at_or_below(text, limit);
        let shown = count.len(&text[..cut]);
        if shown <= max_bytes || cut == 0 {
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
        let (out, removed) = cap(Cow::Borrowed(text), max, Count::Guarded);
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
    fn a_plain_count_ignores_the_guard() {
        let plain = |text, max| cap(Cow::Borrowed(text), max, Count::Plain);
        assert_eq!(plain("<error", 6).0, "<error");
        assert_eq!(plain("x<error>y", 8).0, "x<error> … [truncated 1 bytes]");
    }

    #[test]
    fn only_a_number_the_cap_writes_passes_for_its_suffix() {
        for digits in ["0", "07", "18446744073709551616", &"9".repeat(40)] {
            let text = format!("abc{SUFFIX_START}{digits}{SUFFIX_END}");
            assert!(!is_capped(&text, 3, Count::Guarded), "{digits}");
        }
        for digits in ["1", "12", "18446744073709551615"] {
            let text = format!("abc{SUFFIX_START}{digits}{SUFFIX_END}");
            assert!(is_capped(&text, 3, Count::Guarded), "{digits}");
        }
    }

    #[test]
    fn owned_text_is_cut_in_place() {
        let (out, removed) = cap(Cow::Owned("x".repeat(10)), 4, Count::Guarded);
        assert_eq!(out, "xxxx … [truncated 6 bytes]");
        assert_eq!(removed, 6);
    }
}
