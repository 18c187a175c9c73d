//! The stdio mode, `mcp-tool-errors COMMAND`: the relay of the client's stdin
//! to the child and the child's stdout to the client, each direction on a
//! thread of its own with blocking pipes (see `from_client`, `from_child`),
//! until the child exits; the runtime (one thread) waits for the child, passes
//! signals on, keeps the grace periods and polls the layer's futures that hold
//! a timer.
//!
//! The files: `stack` (the layer's stack over one request, and when it runs),
//! `child` (the requests in flight, the child's stdin, the service a timed
//! request waits on), `lines` (lines of a pipe), `client_io` (the client's
//! side of the pipes), `from_client` and `from_child` (the threads relaying
//! each direction), `in_flight` (matching answers to requests by id),
//! `given_up` (the bounded memory of ids given up), `id_in_use` (refusing an
//! id in flight), `exit_status`; this file holds the loops.

pub(crate) mod child;
pub(crate) mod client_io;
pub(crate) mod exit_status;
mod from_child;
mod from_client;
mod given_up;
mod id_in_use;
pub(crate) mod in_flight;
mod lines;
pub(crate) mod stack;

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Command;
use tokio::sync::oneshot;

use self::exit_status::{describe, exit_code};
use crate::options::Options;
use crate::signals;
use crate::stdio::child::Child;
use crate::stdio::client_io::ClientOutput;
use crate::stdio::stack::Stack;

/// How long the child may take to exit after the client closed stdin, or after
/// it closed its stdout, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// How long the child's last lines may take to arrive after it exited (a
/// grandchild may hold its stdout open forever).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// The threads of the runtime's blocking pool, which writes what the runtime
/// answers (the layer's answers at a timeout) and the cancellations and the
/// closing of the child's stdin. Those writes wait on one lock per pipe, so
/// more threads would only wait on the locks: with tokio's default of 512, a
/// burst of timeouts started a thread each (488 threads and 10 MB more after
/// 100,000 timeouts, 1,000 at a time). One thread at most waits on the child's
/// stdin (`Child::send_cancellations`), which leaves the others for the client.
pub(crate) const BLOCKING_THREADS: usize = 4;

/// Runs the child until it exits; returns the wrapper's exit status. With
/// `traced`, every request goes through the layer, which records its span.
pub(crate) async fn run(options: Options, traced: bool) -> i32 {
    let (program, arguments) = options
        .command
        .split_first()
        .expect("clap requires a command");
    // Before the child exists, so that no signal meant for it stops the wrapper.
    let mut forwarded = match signals::Forwarded::install() {
        Ok(forwarded) => forwarded,
        Err(error) => {
            crate::log(&format!("cannot handle signals: {error}"));
            return 1;
        }
    };
    let output = match ClientOutput::new() {
        Ok(output) => Arc::new(output),
        Err(error) => {
            crate::log(&format!("cannot write stdout: {error}"));
            return 1;
        }
    };
    let mut command = Command::new(program);
    command
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    signals::isolate(&mut command);
    let mut process = match command.spawn() {
        Ok(process) => process,
        Err(error) => {
            event!(error, program, %error, "cannot start `{program}`: {error}");
            return exit_status::spawn_failure(&error);
        }
    };

    // The pipes as blocking files, for the threads that relay them.
    let pipes = process
        .stdin
        .take()
        .expect("stdin is piped")
        .into_owned_fd()
        .and_then(|stdin| {
            let stdout = process.stdout.take().expect("stdout is piped");
            Ok((stdin, stdout.into_owned_fd()?))
        });
    let child = match pipes {
        Ok((stdin, stdout)) => {
            let child = Child::new(stdin.into());
            let stack = Arc::new(Stack::new(
                &options,
                tokio::runtime::Handle::current(),
                child.clone(),
                output.clone(),
                traced,
            ));
            let (reader_done, reader_seen) = oneshot::channel();
            let (client_closed, client_seen) = oneshot::channel();
            let started = from_child::spawn(stack.clone(), stdout.into(), reader_done)
                .and_then(|()| from_client::spawn(stack.clone(), client_closed));
            started.map(|()| (child, stack, reader_seen, client_seen))
        }
        Err(error) => Err(error),
    };
    let (child, stack, mut reader_done, mut client_closed) = match child {
        Ok(started) => started,
        Err(error) => {
            crate::log(&format!("cannot relay the server's stdio: {error}"));
            return 1;
        }
    };

    let status = wait_for_child(
        &mut process,
        &child,
        &mut forwarded,
        &mut client_closed,
        &mut reader_done,
    )
    .await;
    // The child's last lines (answers written just before it exited) first, then
    // everything still in flight is answered with the status.
    if !reader_done.is_terminated() {
        let _ = tokio::time::timeout(DRAIN_GRACE, &mut reader_done).await;
    }
    let status = match status {
        Ok(status) => status,
        Err(error) => {
            crate::log(&format!("cannot wait for the server: {error}"));
            return 1;
        }
    };
    if !status.success() {
        event!(
            warn,
            exit_status = describe(status),
            "the server exited with {}",
            describe(status)
        );
    }
    stack.child_gone(describe(status));
    // Ends when every future of the layer has written its answer.
    stack.all_answered().await;
    output.flush();
    exit_code(status)
}

/// Waits for the child's exit, forwarding signals, and killing it when it does
/// not exit within the grace period after the client closed stdin or the child
/// closed its stdout (it can answer nothing more then), or after a second
/// SIGINT or SIGTERM (which closes its stdin and sends it SIGTERM).
async fn wait_for_child(
    process: &mut tokio::process::Child,
    child: &Arc<Child>,
    forwarded: &mut signals::Forwarded,
    client_closed: &mut oneshot::Receiver<()>,
    reader: &mut oneshot::Receiver<()>,
) -> std::io::Result<ExitStatus> {
    let pid = process.id();
    let mut kill_at = None;
    let (mut asked_to_stop, mut insisted) = (false, false);
    loop {
        let grace_over = async {
            match kill_at {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            status = process.wait() => return status,
            signal = forwarded.next() => {
                let Some(pid) = pid else { continue };
                let stop = signals::asks_to_stop(signal);
                if stop && asked_to_stop && !insisted {
                    insisted = true;
                    crate::log("asked again to stop: closing the server's stdin and sending it SIGTERM, then SIGKILL in 5 s");
                    child.close_input_from_runtime();
                    signals::send(pid, libc::SIGTERM);
                    kill_at = Some(tokio::time::Instant::now() + EXIT_GRACE);
                } else {
                    signals::send(pid, signal);
                }
                asked_to_stop |= stop;
            }
            closed = &mut *client_closed, if kill_at.is_none() && !client_closed.is_terminated() => {
                if closed.is_ok() {
                    kill_at = Some(tokio::time::Instant::now() + EXIT_GRACE);
                }
            }
            _ = &mut *reader, if !reader.is_terminated() => {
                kill_at = kill_at.or(Some(tokio::time::Instant::now() + EXIT_GRACE));
            }
            () = grace_over => {
                crate::log("the server did not exit in time; killing it");
                if let Some(pid) = pid {
                    signals::send(pid, libc::SIGKILL);
                }
                let _ = process.start_kill();
                kill_at = None;
            }
        }
    }
}
