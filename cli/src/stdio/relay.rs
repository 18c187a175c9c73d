//! One child relayed to one client: the child started in a process group of
//! its own, each direction of its pipes on a thread (`from_client`,
//! `from_child`), until it exits; then what it left unanswered is answered
//! with its status. The client is the wrapper's own stdin and stdout in the
//! stdio mode, and a session's pipes in the bridge.

use std::fs::File;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Command;
use tokio::sync::oneshot;

use crate::options::Options;
use crate::signals;
use crate::stdio::child::Child;
use crate::stdio::client_io::ClientOutput;
use crate::stdio::exit_status::describe;
use crate::stdio::process_group::ProcessGroup;
use crate::stdio::stack::Stack;
use crate::stdio::stdout_holders::StdoutPipe;
use crate::stdio::{environment, from_child, from_client};

/// How long the child may take to exit after the client closed stdin, or after
/// it closed its stdout, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// How long the child's last lines may take to arrive after it exited and
/// its group ended (a helper outside its group may hold its stdout: it is
/// killed then, `stdout_holders`).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// The client's side: where its lines are read, where the lines for it go.
#[derive(Debug)]
pub(crate) struct ClientPipes {
    pub(crate) input: File,
    pub(crate) output: ClientOutput,
}

/// Why a relay did not start.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The command could not be started.
    Spawn(std::io::Error),
    /// Its pipes could not be relayed.
    Relay(std::io::Error),
}

/// A child being relayed.
#[derive(Debug)]
pub(crate) struct Relay {
    process: tokio::process::Child,
    /// The child's process group, which ends before the child is reaped.
    group: ProcessGroup,
    child: Arc<Child>,
    stack: Arc<Stack>,
    output: Arc<ClientOutput>,
    /// Told at the end of the child's stdout.
    reader_done: oneshot::Receiver<()>,
    /// The child's stdout, for what still holds it after the child's end.
    stdout: StdoutPipe,
    /// Told at the end of the client's input.
    client_closed: oneshot::Receiver<()>,
}

impl Relay {
    /// Starts `command` (its program, then its arguments) with its pipes
    /// relayed to `client`. With `traced`, every request goes through the
    /// layer, which records its span. The layer's futures run on the current
    /// runtime, and the child dies with the thread that calls this (see
    /// [`signals::isolate`]): the caller's runtime must run on a thread that
    /// lives as long as the process.
    pub(crate) fn start(
        options: &Options,
        command: &[String],
        client: ClientPipes,
        traced: bool,
    ) -> Result<Self, StartError> {
        let (program, arguments) = command.split_first().expect("clap requires a command");
        let mut spawned = Command::new(program);
        spawned
            .args(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        signals::isolate(&mut spawned);
        environment::apply(options, &mut spawned);
        let mut process = spawned.spawn().map_err(StartError::Spawn)?;
        let group = process
            .id()
            .ok_or_else(|| std::io::Error::other("the child exited at once"))
            .and_then(ProcessGroup::watch)
            .map_err(StartError::Relay)?;
        let output = Arc::new(client.output);
        // The pipes as blocking files, for the threads that relay them.
        let stdin = process
            .stdin
            .take()
            .expect("stdin is piped")
            .into_owned_fd();
        let stdout = process
            .stdout
            .take()
            .expect("stdout is piped")
            .into_owned_fd();
        let (stdin, stdout) = stdin
            .and_then(|stdin| Ok((stdin, stdout?)))
            .map_err(StartError::Relay)?;
        let child = Child::new(stdin.into());
        let stack = Arc::new(Stack::new(
            options,
            tokio::runtime::Handle::current(),
            child.clone(),
            output.clone(),
            traced,
        ));
        let (reader_done, reader_seen) = oneshot::channel();
        let (client_closed, client_seen) = oneshot::channel();
        let stdout = File::from(stdout);
        let stdout_pipe = StdoutPipe::of(&stdout);
        from_child::spawn(
            stack.clone(),
            stdout,
            options.max_message_bytes(),
            reader_done,
        )
        .and_then(|()| from_client::spawn(stack.clone(), client.input, client_closed))
        .map_err(StartError::Relay)?;
        Ok(Self {
            process,
            group,
            child,
            stack,
            output,
            reader_done: reader_seen,
            stdout: stdout_pipe,
            client_closed: client_seen,
        })
    }

    /// The child's process id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.id()
    }

    /// Waits for the child's exit, passing `forwarded` on to it, and for the
    /// end of its group; then answers what it left unanswered, and returns
    /// its status once every answer is written.
    pub(crate) async fn finish(
        mut self,
        forwarded: &mut signals::Forwarded,
    ) -> std::io::Result<ExitStatus> {
        let exited = wait_for_child(
            &mut self.process,
            &mut self.group,
            &self.child,
            forwarded,
            &mut self.client_closed,
            &mut self.reader_done,
        )
        .await;
        // Its helpers, which may hold its stdout, end with it: asked at
        // once, killed at the end of the grace.
        self.group.end(EXIT_GRACE).await;
        // Reaped once its group is gone: until now, the group's id named no
        // other process.
        let reaped = self.process.wait().await;
        let status = exited.and(reaped)?;
        // The child's last lines (answers written just before it exited)
        // first, then everything still in flight is answered with the status.
        if !self.reader_done.is_terminated() {
            let _ = tokio::time::timeout(DRAIN_GRACE, &mut self.reader_done).await;
        }
        // A helper that left the group still holds the child's stdout: it
        // would outlive the command, and the reading of the pipe with it.
        if !self.reader_done.is_terminated() && self.stdout.kill_holders() > 0 {
            crate::telemetry::log(
                "killed what still held the server's stdout after it exited, outside its process group",
            );
            let _ = tokio::time::timeout(DRAIN_GRACE, &mut self.reader_done).await;
        }
        self.stack.child_gone(describe(status));
        // Ends when every future of the layer has written its answer.
        self.stack.all_answered().await;
        self.output.flush();
        Ok(status)
    }
}

/// Waits for the child's exit (it stays unreaped), forwarding signals, and
/// killing it when it does not exit within the grace period after the client
/// closed stdin or the child closed its stdout (it can answer nothing more
/// then), or after a second SIGINT or SIGTERM (which closes its stdin and
/// sends it SIGTERM).
async fn wait_for_child(
    process: &mut tokio::process::Child,
    group: &mut ProcessGroup,
    child: &Arc<Child>,
    forwarded: &mut signals::Forwarded,
    client_closed: &mut oneshot::Receiver<()>,
    reader: &mut oneshot::Receiver<()>,
) -> std::io::Result<()> {
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
            exited = group.leader_exited() => return exited,
            signal = forwarded.next() => {
                let Some(pid) = pid else { continue };
                let stop = signals::asks_to_stop(signal);
                if stop && asked_to_stop && !insisted {
                    insisted = true;
                    crate::telemetry::log("asked again to stop: closing the server's stdin and sending it SIGTERM, then SIGKILL in 5 s");
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
                crate::telemetry::log("the server did not exit in time; killing it");
                if let Some(pid) = pid {
                    signals::send(pid, libc::SIGKILL);
                }
                let _ = process.start_kill();
                kill_at = None;
            }
        }
    }
}
