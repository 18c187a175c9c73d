//! Whether the server's command can be started, looked up at the bridge's
//! start as `execvp(3)` will look it up for each session's child: a program
//! with a `/` as it is, any other in each directory of the child's `PATH`
//! (`/bin:/usr/bin` when it has none). The bridge starts no child until a
//! client comes, so without this a command that does not exist would start a
//! bridge that answers `500` to every `initialize`; with it, the bridge
//! exits as the stdio mode does (127: not found, 126: found but cannot run).

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// `execvp(3)`'s search path when the environment has no `PATH`.
const DEFAULT_SEARCH_PATH: &str = "/bin:/usr/bin";

/// The file `program` names, looked up in `search_path` (the child's `PATH`)
/// when it has no `/`; the error `execvp(3)` would fail with, when there is
/// none it could run.
pub(crate) fn find(program: &str, search_path: Option<&OsStr>) -> io::Result<PathBuf> {
    if program.contains('/') {
        return runnable(Path::new(program)).map(|()| PathBuf::from(program));
    }
    if program.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    let search_path = search_path.unwrap_or(OsStr::new(DEFAULT_SEARCH_PATH));
    let mut denied = None;
    for directory in search_path.as_bytes().split(|byte| *byte == b':') {
        // An empty entry is the current directory.
        let directory = if directory.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(directory))
        };
        let candidate = directory.join(program);
        match runnable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
                denied = Some(error);
            }
            Err(_) => {}
        }
    }
    // As execvp(3): a file found that cannot run says more than "not found".
    Err(denied.unwrap_or_else(|| io::Error::from_raw_os_error(libc::ENOENT)))
}

/// Whether `path` is a file that may be executed: `ENOENT` when there is
/// none, `EACCES` when it is a directory or has no execute permission.
fn runnable(path: &Path) -> io::Result<()> {
    let metadata = std::fs::metadata(path)?;
    if metadata.is_file() && metadata.permissions().mode() & 0o111 != 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(libc::EACCES))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_looked_up_in_the_search_path_as_execvp_does() {
        let found = find("sh", Some(OsStr::new("/nonexistent:/bin"))).unwrap();
        assert_eq!(found, Path::new("/bin/sh"));
        assert!(find("sh", None).is_ok(), "/bin:/usr/bin without PATH");
        let missing = find("no-such-program-here", Some(OsStr::new("/bin"))).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert_eq!(find("", None).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_path_is_taken_as_it_is() {
        assert!(find("/bin/sh", Some(OsStr::new(""))).is_ok());
        let missing = find("/nonexistent/server", None).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let directory = find("/tmp", None).unwrap_err();
        assert_eq!(directory.kind(), io::ErrorKind::PermissionDenied);
        let not_executable = find("/etc/passwd", None).unwrap_err();
        assert_eq!(not_executable.kind(), io::ErrorKind::PermissionDenied);
    }
}
