//! A child's process group, from the child's start until no process of it is
//! left: the one home of its end, in the stdio mode and in each of the
//! bridge's sessions.
//!
//! The child leads the group (its id is the child's process id) and is not
//! reaped until the group is gone: its exit is watched with `waitid(2)` and
//! `WNOWAIT`, which leaves it a zombie. While it is one, its
//! process id, and so the group's id, cannot be given to another process,
//! and every signal to the group reaches the server's own processes or no
//! one. Once the child has exited, what is left of its group (a server's
//! helpers: a browser, a language server) gets SIGTERM, and SIGKILL at the
//! end of the grace; the relay reaps the child after that, and reads its
//! status then.

use std::io;
use std::time::Duration;

use tokio::sync::oneshot;

/// How often the group is looked at while its processes are asked to exit.
const POLL: Duration = Duration::from_millis(20);

/// How long the processes of a group killed with SIGKILL may take to go.
const KILLED_WITHIN: Duration = Duration::from_secs(2);

/// The process group a child leads.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    id: u32,
    /// Told once the child has exited (it is not reaped).
    exited: oneshot::Receiver<io::Result<()>>,
}

impl ProcessGroup {
    /// Watches the exit of `leader`, a child of this process that leads its
    /// own group, on a thread of its own.
    pub(crate) fn watch(leader: u32) -> io::Result<Self> {
        let (sender, exited) = oneshot::channel();
        std::thread::Builder::new()
            .name("child-exit".to_owned())
            .spawn(move || {
                let _ = sender.send(wait_unreaped(leader));
            })?;
        Ok(Self { id: leader, exited })
    }

    /// Waits until the leader has exited; it stays unreaped. Cancel-safe.
    pub(crate) async fn leader_exited(&mut self) -> io::Result<()> {
        match (&mut self.exited).await {
            Ok(status) => status,
            Err(_) => Err(io::Error::other("the child's exit was not seen")),
        }
    }

    /// Ends what is left of the group once its leader has exited: SIGTERM,
    /// then SIGKILL after `grace` to whatever is still there; returns when
    /// no process of it runs (or a killed one has not gone within a bound).
    pub(crate) async fn end(&self, grace: Duration) {
        if !signal_group(self.id, libc::SIGTERM) {
            return;
        }
        let deadline = tokio::time::Instant::now() + grace;
        while has_living_member(self.id) {
            if tokio::time::Instant::now() >= deadline {
                crate::telemetry::log("the server's helpers did not exit in time; killing them");
                signal_group(self.id, libc::SIGKILL);
                let _ = tokio::time::timeout(KILLED_WITHIN, async {
                    while has_living_member(self.id) {
                        tokio::time::sleep(POLL).await;
                    }
                })
                .await;
                return;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Waits for `pid` to exit without reaping it.
fn wait_unreaped(pid: u32) -> io::Result<()> {
    let id = libc::id_t::from(pid);
    loop {
        // SAFETY: waitid(2) writes the siginfo_t it is given, which lives on
        // this stack; WNOWAIT leaves the child waitable (a zombie).
        #[allow(unsafe_code)]
        let result = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                id,
                &raw mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if result == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Sends `signal` to the process group `group`: whether any process (the
/// unreaped leader counts) was there to receive it.
fn signal_group(group: u32, signal: i32) -> bool {
    let Ok(group) = libc::pid_t::try_from(group) else {
        return false;
    };
    // SAFETY: kill(2) takes two integers and touches no memory of this process.
    #[allow(unsafe_code)]
    let result = unsafe { libc::kill(-group, signal) };
    result == 0
}

/// Whether a process of `group` other than a zombie (its leader, unreaped)
/// still runs.
#[cfg(target_os = "linux")]
fn has_living_member(group: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    let group = group.to_string();
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .any(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // After the command's name: the state, the parent, the group.
            let Some((_, fields)) = stat.rsplit_once(')') else {
                return false;
            };
            let mut fields = fields.split_whitespace();
            let state = fields.next().unwrap_or_default();
            let in_group = fields.nth(1) == Some(group.as_str());
            in_group && state != "Z" && state != "X"
        })
}

/// Whether a process of `group` still runs; where the system offers no list
/// of processes, the unreaped leader counts, and the group gets its grace.
#[cfg(not(target_os = "linux"))]
fn has_living_member(group: u32) -> bool {
    signal_group(group, 0)
}
