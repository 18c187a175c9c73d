//! The items of `ServerHandler` as the source of the rmcp that cargo resolved
//! declares them: what a test compares with the methods [`LayeredHandler`]
//! writes, so that a method added in any rmcp release fails a test instead of
//! being answered by the trait's default.
//!
//! [`LayeredHandler`]: super::LayeredHandler

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The resolved rmcp, named as `cargo metadata` names it, and the names of the
/// items (`fn`, `const`, `type`) of its `pub trait ServerHandler`.
pub(super) fn server_handler_items() -> (String, BTreeSet<String>) {
    let (id, root) = resolved_rmcp();
    let sources: Vec<String> = rust_files(&root.join("src"))
        .iter()
        .map(|file| without_comments_and_literals(&std::fs::read_to_string(file).unwrap()))
        .collect();
    let mut items = BTreeSet::new();
    let mut traits = 0;
    for source in &sources {
        for body in bodies_after(source, &["pub", "trait", "ServerHandler"]) {
            traits += 1;
            collect_items(&body, &sources, &mut items);
        }
    }
    assert!(traits > 0, "no `pub trait ServerHandler` in {id}");
    (id, items)
}

/// The package id and the folder of the rmcp this crate depends on, as cargo
/// resolved it with the current Cargo.lock.
fn resolved_rmcp() -> (String, PathBuf) {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--filter-platform"])
        .arg(host_triple())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cargo metadata failed: {stderr}");
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let resolve = &metadata["resolve"];
    let root = nodes_with(&resolve["nodes"], "id", &resolve["root"]);
    let rmcp = nodes_with(&root["deps"], "name", &"rmcp".into());
    let package = nodes_with(&metadata["packages"], "id", &rmcp["pkg"]);
    let manifest = Path::new(package["manifest_path"].as_str().unwrap());
    let id = package["id"].as_str().unwrap().to_owned();
    (id, manifest.parent().unwrap().to_owned())
}

fn nodes_with<'a>(list: &'a Value, key: &str, value: &Value) -> &'a Value {
    let found = list.as_array().unwrap().iter().find(|v| v[key] == *value);
    found.unwrap_or_else(|| panic!("no {key} = {value} in cargo metadata"))
}

/// The host's target triple, so that `cargo metadata` needs no package of
/// another platform (which may not be downloaded).
fn host_triple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("-vV").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let host = text.lines().find_map(|line| line.strip_prefix("host: "));
    host.expect("rustc -vV names the host").to_owned()
}

fn rust_files(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// The items declared at the top level of `body` (a trait's, or a macro's
/// transcriber), following the macro invocations that declare them.
fn collect_items(body: &str, sources: &[String], items: &mut BTreeSet<String>) {
    let tokens: Vec<Token<'_>> = tokens(body).collect();
    for (i, token) in tokens.iter().enumerate() {
        match (token, tokens.get(i + 1), tokens.get(i + 2)) {
            (Token::Word(kind @ ("fn" | "const" | "type")), Some(next), _) => match next {
                Token::Word(name) => {
                    items.insert((*name).to_owned());
                }
                _ => panic!("a `{kind}` whose name is not written out: {body}"),
            },
            (Token::Word(name), Some(Token::Punct('!')), Some(Token::Group(..))) => {
                let transcribers: Vec<String> = sources
                    .iter()
                    .flat_map(|source| bodies_after(source, &["macro_rules", "!", name]))
                    .flat_map(|rules| transcribers(&rules))
                    .collect();
                assert!(!transcribers.is_empty(), "no `macro_rules! {name}`");
                for transcriber in transcribers {
                    collect_items(&transcriber, sources, items);
                }
            }
            _ => {}
        }
    }
}

/// The transcribers of a `macro_rules!` body: `(matcher) => { transcriber };`.
fn transcribers(rules: &str) -> Vec<String> {
    let tokens: Vec<Token<'_>> = tokens(rules).collect();
    let arrows = tokens.windows(3).filter_map(|window| match window {
        [
            Token::Punct('='),
            Token::Punct('>'),
            Token::Group(_, transcriber),
        ] => Some((*transcriber).to_owned()),
        _ => None,
    });
    arrows.collect()
}

/// The insides of the first group after each place where `words` are written
/// in a row (as tokens), in `source`.
fn bodies_after(source: &str, words: &[&str]) -> Vec<String> {
    let mut bodies = Vec::new();
    let mut from = 0;
    while let Some(at) = source[from..].find(words[0]) {
        let start = from + at;
        from = start + words[0].len();
        let mut tokens = tokens(&source[start..]);
        let written = words.iter().all(|word| match tokens.next() {
            Some(Token::Word(w)) => w == *word,
            Some(Token::Punct(c)) => word.len() == 1 && word.starts_with(c),
            _ => false,
        });
        if !written {
            continue;
        }
        let group = tokens.find_map(|token| match token {
            Token::Group('{', inside) => Some(inside),
            _ => None,
        });
        bodies.extend(group.map(str::to_owned));
    }
    bodies
}

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Punct(char),
    /// An opening bracket and what is between it and its closing one.
    Group(char, &'a str),
}

/// The tokens of `text` at its top level, up to a closing bracket it did not
/// open; brackets of any kind make a group. Read as they are asked for: a
/// caller that looks at a few tokens does not pay for the rest of the file.
fn tokens(text: &str) -> Tokens<'_> {
    Tokens {
        text,
        chars: text.char_indices().peekable(),
    }
}

struct Tokens<'a> {
    text: &'a str,
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let (start, c) = self.chars.find(|(_, c)| !c.is_whitespace())?;
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        if is_word(c) {
            let mut end = start + c.len_utf8();
            while let Some((i, c)) = self.chars.next_if(|(_, c)| is_word(*c)) {
                end = i + c.len_utf8();
            }
            return Some(Token::Word(&self.text[start..end]));
        }
        match c {
            '{' | '(' | '[' => {
                let mut depth = 1;
                let mut end = self.text.len();
                for (i, c) in self.chars.by_ref() {
                    match c {
                        '{' | '(' | '[' => depth += 1,
                        '}' | ')' | ']' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                Some(Token::Group(c, &self.text[start + 1..end]))
            }
            '}' | ')' | ']' => None,
            _ => Some(Token::Punct(c)),
        }
    }
}

/// `source` with its comments (doc comments and their examples too) blanked
/// out and its string and character literals emptied, so that what is left
/// is code whose brackets balance.
fn without_comments_and_literals(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        match rest {
            ['/', '/', ..] => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ['/', '*', ..] => {
                let mut depth = 0;
                loop {
                    match &chars[i..] {
                        ['/', '*', ..] => (depth, i) = (depth + 1, i + 2),
                        ['*', '/', ..] => (depth, i) = (depth - 1, i + 2),
                        [] => break,
                        _ => i += 1,
                    }
                    if depth == 0 {
                        break;
                    }
                }
                out.push(' ');
            }
            ['r', '"' | '#', ..] if !after_word(&chars, i) && raw_string_start(rest).is_some() => {
                let hashes = raw_string_start(rest).unwrap();
                i += 2 + hashes;
                let closing: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                while i < chars.len() && !chars[i..].starts_with(&closing) {
                    i += 1;
                }
                i += closing.len();
                out.push_str("\"\"");
            }
            ['"', ..] => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            ['\'', '\\', ..] => {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            }
            ['\'', _, '\'', ..] => {
                i += 3;
                out.push_str("' '");
            }
            [c, ..] => {
                out.push(*c);
                i += 1;
            }
            [] => unreachable!(),
        }
    }
    out
}

fn after_word(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// The number of `#` of a raw string that starts `rest` (`r"`, `r#"`, ...).
fn raw_string_start(rest: &[char]) -> Option<usize> {
    let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
    (rest.get(1 + hashes) == Some(&'"')).then_some(hashes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_items_of_a_trait_through_its_macros() {
        let source = without_comments_and_literals(
            r##"
            /// fn not_in_a_doc_comment() { '}'
            macro_rules! methods {
                () => {
                    fn listed(&self) -> Cow<'static, str> { let _ = "fn not_in_a_string {"; }
                    /* fn not_in_a_block_comment */
                    const LISTED_TOO: u8 = b'{' as u8;
                };
            }
            pub trait ServerHandler: Sized + 'static {
                fn direct(&self) { fn nested_in_a_body() {} let _ = r#"}"#; }
                type Listed;
                methods!();
            }
            "##,
        );
        let mut items = BTreeSet::new();
        for body in bodies_after(&source, &["pub", "trait", "ServerHandler"]) {
            collect_items(&body, std::slice::from_ref(&source), &mut items);
        }
        let expected = ["LISTED_TOO", "Listed", "direct", "listed"];
        assert_eq!(items, expected.map(str::to_owned).into());
    }

    #[test]
    #[should_panic(expected = "no `macro_rules! elsewhere`")]
    fn a_macro_it_cannot_read_fails() {
        let source = "pub trait ServerHandler { elsewhere!(); }".to_owned();
        let mut items = BTreeSet::new();
        for body in bodies_after(&source, &["pub", "trait", "ServerHandler"]) {
            collect_items(&body, std::slice::from_ref(&source), &mut items);
        }
    }
}
