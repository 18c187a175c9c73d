//! Signals: the ones that stop the wrapper are passed to the child's process
//! group, so that the child decides how to stop and the wrapper exits with its
//! status. In the listening modes (the reverse proxy, the bridge) SIGTERM and
//! SIGINT are [`Stops`], the first starting the drain and the second ending
//! it.
//!
//! The child runs in a process group of its own: a terminal's Ctrl-C goes to
//! the wrapper's group, and reaches the child once, through the wrapper. A
//! second SIGINT or SIGTERM is the user insisting: the child's stdin is closed,
//! it gets SIGTERM, and SIGKILL 5 seconds later (see `relay`); what is left of
//! its group once it exited is ended before the command exits (see
//! `stdio::process_group`). On Linux the
//! child gets SIGKILL when the wrapper dies, even of SIGKILL.

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;

/// The signals passed to the child: the wrapper's own (the stdio mode), or
/// those a bridge's session sends when it ends.
#[derive(Debug)]
pub(crate) enum Forwarded {
    Received {
        interrupt: Signal,
        terminate: Signal,
        hangup: Signal,
        quit: Signal,
    },
    Sent(mpsc::UnboundedReceiver<i32>),
}

impl Forwarded {
    /// Takes SIGINT, SIGTERM, SIGHUP and SIGQUIT over from their default
    /// action (exiting).
    pub(crate) fn install() -> std::io::Result<Self> {
        Ok(Self::Received {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    /// The signals sent on the returned sender.
    pub(crate) fn sent() -> (mpsc::UnboundedSender<i32>, Self) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (sender, Self::Sent(receiver))
    }

    /// Waits for the next of these signals and returns its number.
    pub(crate) async fn next(&mut self) -> i32 {
        match self {
            Self::Received {
                interrupt,
                terminate,
                hangup,
                quit,
            } => tokio::select! {
                _ = interrupt.recv() => libc::SIGINT,
                _ = terminate.recv() => libc::SIGTERM,
                _ = hangup.recv() => libc::SIGHUP,
                _ = quit.recv() => libc::SIGQUIT,
            },
            Self::Sent(sent) => match sent.recv().await {
                Some(signal) => signal,
                None => std::future::pending().await,
            },
        }
    }
}

/// SIGTERM and SIGINT, each time one comes: a listening mode drains at the
/// first, and ends the drain at the second (the user insisting).
#[derive(Debug)]
pub(crate) struct Stops {
    terminate: Signal,
    interrupt: Signal,
}

impl Stops {
    /// Takes SIGTERM and SIGINT over from their default action (exiting).
    pub(crate) fn install() -> std::io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for the next SIGTERM or SIGINT (one sent before this is called
    /// and not waited for yet counts).
    pub(crate) async fn next(&mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
        }
    }
}

/// Whether `signal` asks the child to stop: the second one insists.
pub(crate) fn asks_to_stop(signal: i32) -> bool {
    signal == libc::SIGINT || signal == libc::SIGTERM
}

/// Starts the child in a process group of its own and, on Linux, has it killed
/// when the wrapper dies.
pub(crate) fn isolate(command: &mut tokio::process::Command) {
    command.process_group(0);
    #[cfg(target_os = "linux")]
    die_with_parent(command);
}

#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut tokio::process::Command) {
    let parent = libc::pid_t::try_from(std::process::id()).expect("a process id is a pid_t");
    // SAFETY: the closure runs in the forked child before exec and calls only
    // prctl(2), getppid(2) and raise(3), which are async-signal-safe; it
    // allocates nothing and touches no lock. The death signal is sent when the
    // thread that forked exits: that is the runtime's, the main thread.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The wrapper died before the line above: nothing would kill us.
            if libc::getppid() != parent {
                libc::raise(libc::SIGKILL);
            }
            Ok(())
        });
    }
}

/// Sends `signal` to the child's process group (the child and what it started),
/// or to the child alone if it left the group.
pub(crate) fn send(pid: u32, signal: i32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes two integers and touches no memory of this process.
    // The pid is the child's, which is not reaped before its group is gone
    // (see `stdio::process_group`), so neither it nor its group's id can name
    // another process.
    #[allow(unsafe_code)]
    let result = unsafe {
        if libc::kill(-pid, signal) == 0 {
            0
        } else {
            libc::kill(pid, signal)
        }
    };
    if result != 0 {
        crate::telemetry::log(&format!(
            "could not pass signal {signal} to the server: {}",
            std::io::Error::last_os_error()
        ));
    }
}

/// Sends SIGKILL to the process `pid` alone: one found holding what a child
/// that exited left open (the stdio mode's `stdout_holders`). Its id was read from the system
/// just before, while it held the pipe: to name another process, it would
/// have to exit and the system hand its id out again in between, which
/// takes going through every other id first.
pub(crate) fn kill(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes two integers and touches no memory of this process.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}
