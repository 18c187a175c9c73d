//! The processes that still hold a child's stdout once the child has exited
//! and its group has ended: a helper that left the group (`setsid`), which no
//! signal to the group reaches, and which keeps the pipe open. They are found
//! by the pipe itself, which every holder of its writing end shares, and
//! killed: the relay's reading of the pipe ends, and the helper does not
//! outlive the command. A helper that left the group and closed the pipe is
//! no one the command can tell apart from any other process: it is left
//! alone.

use std::fs::File;
use std::os::unix::fs::MetadataExt;

/// The child's stdout, by the identity of its pipe.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StdoutPipe {
    /// The pipe's inode, which both its ends share.
    inode: Option<u64>,
}

impl StdoutPipe {
    /// The pipe whose reading end is `stdout`.
    pub(crate) fn of(stdout: &File) -> Self {
        Self {
            inode: stdout.metadata().ok().map(|metadata| metadata.ino()),
        }
    }

    /// Sends SIGKILL to every other process that holds the pipe open;
    /// returns how many there were.
    pub(crate) fn kill_holders(self) -> usize {
        let holders = self.inode.map(holders).unwrap_or_default();
        for pid in &holders {
            crate::signals::kill(*pid);
        }
        holders.len()
    }
}

/// The processes other than this one that hold the writing end of the pipe
/// `inode` open. Only that end keeps the pipe open; and a process this one
/// forks holds a copy of the reading end until it runs its program, which
/// is no holder.
#[cfg(target_os = "linux")]
fn holders(inode: u64) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id();
    let link = format!("pipe:[{inode}]");
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != own)
        .filter(|pid| {
            // Another user's process, or one gone meanwhile, is not listed.
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.filter_map(Result::ok).any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|target| target == *link)
                        && writes(*pid, &fd.file_name().to_string_lossy())
                })
            })
        })
        .collect()
}

/// Whether the descriptor `fd` of `pid` is open for writing, by its flags in
/// `/proc/PID/fdinfo/FD` (octal).
#[cfg(target_os = "linux")]
fn writes(pid: u32, fd: &str) -> bool {
    let Ok(info) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")) else {
        return false;
    };
    info.lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
        .is_some_and(|flags| {
            let access = flags & 0o3;
            access == 0o1 || access == 0o2
        })
}

/// Where the system offers no list of processes' files, no holder is found.
#[cfg(not(target_os = "linux"))]
fn holders(_inode: u64) -> Vec<u32> {
    Vec::new()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::fd::OwnedFd;

    use super::*;

    #[test]
    fn a_process_writing_to_the_pipe_is_found_and_one_reading_it_or_this_one_never() {
        let (reader, writer) = std::io::pipe().unwrap();
        let pipe = StdoutPipe::of(&File::from(OwnedFd::from(reader.try_clone().unwrap())));
        let inode = pipe.inode.expect("a pipe has an inode");
        assert_eq!(holders(inode), Vec::<u32>::new(), "only this process");
        let reading = std::process::Command::new("sleep")
            .arg("30")
            .stdin(reader.try_clone().unwrap())
            .spawn()
            .unwrap();
        let mut holder = std::process::Command::new("sleep")
            .arg("30")
            .stdout(writer)
            .spawn()
            .unwrap();
        assert_eq!(holders(inode), [holder.id()]);
        assert_eq!(pipe.kill_holders(), 1);
        let status = holder.wait().unwrap();
        assert!(!status.success());
        assert_eq!(holders(inode), Vec::<u32>::new());
        let mut reading = reading;
        reading.kill().unwrap();
        reading.wait().unwrap();
        drop(reader);
    }
}
