//! Forwarding the signals that stop the wrapper to the child, so that the child
//! decides how to stop and the wrapper exits with its status.

use tokio::signal::unix::{SignalKind, signal};

/// The signals forwarded to the child.
pub(crate) struct Forwarded {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Forwarded {
    /// Takes SIGINT and SIGTERM over from their default action (exiting).
    pub(crate) fn install() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Waits for the next forwarded signal and returns its number.
    pub(crate) async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => libc::SIGINT,
            _ = self.terminate.recv() => libc::SIGTERM,
        }
    }
}

/// Sends `signal` to the process `pid`.
pub(crate) fn send(pid: u32, signal: i32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes two integers and touches no memory of this process.
    // The pid is the child's, which is not reaped before this is called.
    #[allow(unsafe_code)]
    let result = unsafe { libc::kill(pid, signal) };
    if result != 0 {
        eprintln!(
            "mcp-tool-errors: could not forward signal {signal} to the server: {}",
            std::io::Error::last_os_error()
        );
    }
}
