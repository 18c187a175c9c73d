//! `--auth-token-file PATH`: the token clients must send, the file's first
//! line, read again when the file changes, so that a token is rotated
//! without a restart (which would end every session).
//!
//! The file is looked at (its device, inode, modification time and length,
//! following a symbolic link, as a mounted secret is swapped) at most once a
//! second, when a request comes. When it changed, it is read again; a file
//! that cannot be read, or whose first line is empty (a write caught
//! half-way), leaves the token read before in force, said once in the log for
//! each state of the file.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use crate::telemetry::event;
use tokio::time::Instant;

/// How often the file is looked at, at most.
const CHECK_PERIOD: Duration = Duration::from_secs(1);

/// The token file, and the token last read from it.
#[derive(Debug)]
pub(crate) struct TokenFile {
    path: PathBuf,
    read: Mutex<Read>,
}

/// What was last read of the file.
#[derive(Debug)]
struct Read {
    token: Vec<u8>,
    /// The file's state when `token` was read.
    stamp: Stamp,
    /// When the file was last looked at.
    checked: Instant,
    /// The state of the file last refused (unreadable, or empty), said once.
    refused: Option<Stamp>,
}

/// What tells one state of the file from another: its device, inode,
/// modification time and length; `None` when it cannot be looked at.
type Stamp = Option<(u64, u64, Option<SystemTime>, u64)>;

impl TokenFile {
    /// Reads the token at `path`; why the bridge cannot start, when it
    /// cannot be read or is empty.
    pub(crate) fn open(path: &Path) -> Result<Self, String> {
        let stamp = stamp(path);
        let token = read(path)?;
        Ok(Self {
            path: path.to_owned(),
            read: Mutex::new(Read {
                token,
                stamp,
                checked: Instant::now(),
                refused: None,
            }),
        })
    }

    /// Whether `given` is the token now in force, compared in a time that
    /// depends on the lengths only.
    pub(crate) fn matches(&self, given: &[u8]) -> bool {
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        if read.checked.elapsed() >= CHECK_PERIOD {
            read.checked = Instant::now();
            self.reread_if_changed(&mut read);
        }
        same_bytes(given, &read.token)
    }

    fn reread_if_changed(&self, last: &mut Read) {
        let now = stamp(&self.path);
        if now == last.stamp || Some(now) == last.refused {
            return;
        }
        let token = if now.is_some() {
            read(&self.path)
        } else {
            Err(format!(
                "the token file {} is gone (--auth-token-file)",
                self.path.display()
            ))
        };
        match token {
            Ok(token) => {
                event!(
                    info,
                    path = %self.path.display(),
                    "the token file {} changed: its token is in force",
                    self.path.display()
                );
                last.token = token;
                last.stamp = now;
                last.refused = None;
            }
            Err(why) => {
                crate::telemetry::log(&format!("{why}: the token read before stays in force"));
                last.refused = Some(now);
            }
        }
    }
}

fn stamp(path: &Path) -> Stamp {
    let metadata = std::fs::metadata(path).ok()?;
    Some((
        metadata.dev(),
        metadata.ino(),
        metadata.modified().ok(),
        metadata.len(),
    ))
}

/// The first line of the file at `path`, trimmed; why not, when it cannot
/// be read or is empty.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "cannot read the token (--auth-token-file {}): {error}",
            path.display()
        )
    })?;
    let token = text.lines().next().unwrap_or_default().trim();
    if token.is_empty() {
        return Err(format!(
            "the token file {} is empty (--auth-token-file)",
            path.display()
        ));
    }
    Ok(token.as_bytes().to_vec())
}

/// Whether `given` and `expected` are equal, in a time that depends on their
/// lengths only.
fn same_bytes(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token file of this test's own, holding `text`.
    fn written(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("token-{name}-{}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_token_is_in_force_a_second_after_the_file_changed() {
        let path = written("rotated", "first\n");
        let file = TokenFile::open(&path).unwrap();
        assert!(file.matches(b"first"));
        std::fs::write(&path, "second-token\n").unwrap();
        assert!(file.matches(b"first"), "looked at once a second at most");
        tokio::time::advance(CHECK_PERIOD).await;
        assert!(file.matches(b"second-token"));
        assert!(!file.matches(b"first"));
        std::fs::remove_file(path).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_or_missing_file_leaves_the_token_read_before() {
        let path = written("kept", "kept\n");
        let file = TokenFile::open(&path).unwrap();
        std::fs::write(&path, "").unwrap();
        tokio::time::advance(CHECK_PERIOD).await;
        assert!(file.matches(b"kept"));
        std::fs::remove_file(&path).unwrap();
        tokio::time::advance(CHECK_PERIOD).await;
        assert!(file.matches(b"kept"));
        assert!(!file.matches(b""));
    }

    #[test]
    fn an_empty_file_is_refused_at_start() {
        let path = written("empty", " \nsecond line\n");
        assert!(TokenFile::open(&path).unwrap_err().contains("is empty"));
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_bytes(b"abc", b"abc"));
        assert!(!same_bytes(b"abd", b"abc"));
        assert!(!same_bytes(b"ab", b"abc"));
        assert!(!same_bytes(b"", b"abc"));
    }
}
