//! The relay: the client's stdin to the child and the child's stdout to the
//! client, with client requests going through the service stack, until the
//! child exits.

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use mcp_tool_errors::ToolErrorLayer;
use serde_json::Value;
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};
use tower_layer::Layer;
use tower_service::Service;

use crate::child::{Child, ChildService, ToChild, read_from_child, write_to_child};
use crate::client_io;
use crate::exit_status::{self, describe, exit_code};
use crate::invalid_params::InvalidParamsAsToolErrors;
use crate::message::{self, Answer, ChildAnswer, Outgoing, WithLine, Withdrawn, requests};
use crate::options::Options;
use crate::signals;

/// How long the child may take to exit after the client closed stdin, or after
/// it closed its stdout, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// How long the child's last lines may take to arrive after it exited (a
/// grandchild may hold its stdout open forever).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Runs the child until it exits; returns the wrapper's exit status.
pub(crate) async fn run(options: Options) -> i32 {
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
            crate::log(&format!("cannot start `{program}`: {error}"));
            return exit_status::spawn_failure(&error);
        }
    };

    let (to_child, lines_for_child) = mpsc::unbounded_channel();
    let (to_client, lines_for_client) = mpsc::unbounded_channel();
    let child = Child::new(to_child);
    let stdin = process.stdin.take().expect("stdin is piped");
    let stdout = process.stdout.take().expect("stdout is piped");
    tokio::spawn(write_to_child(stdin, lines_for_child));
    let mut reader = tokio::spawn(read_from_child(stdout, child.clone(), to_client.clone()));
    let all_written = client_io::write_lines(lines_for_client);

    // Spans say what carries the session: the child's stdio pipes.
    let layer = options.layer().network_transport("pipe");
    let service = InvalidParamsAsToolErrors::new(
        ChildService::new(child.clone()),
        options.invalid_params_as_tool_errors,
    );
    let (client_closed, mut client_closed_seen) = oneshot::channel();
    let client = tokio::spawn(relay_client(
        layer,
        service,
        child.clone(),
        to_client.clone(),
        client_closed,
    ));

    let status = wait_for_child(
        &mut process,
        &child,
        &mut forwarded,
        &mut client_closed_seen,
        &mut reader,
    )
    .await;
    // The child's last lines (answers written just before it exited) first, then
    // everything still in flight is answered with the status.
    if !reader.is_finished() {
        let _ = tokio::time::timeout(DRAIN_GRACE, &mut reader).await;
        reader.abort();
    }
    let status = match status {
        Ok(status) => status,
        Err(error) => {
            crate::log(&format!("cannot wait for the server: {error}"));
            return 1;
        }
    };
    child.gone(describe(status));
    client.abort();
    let _ = client.await;
    drop(to_client);
    // Ends when every answer task has written its answer.
    let _ = all_written.await;
    exit_code(status)
}

/// Waits for the child's exit, forwarding signals, and killing it when it does
/// not exit within the grace period after the client closed stdin or the child
/// closed its stdout (it can answer nothing more then), or after a second
/// SIGINT or SIGTERM (which closes its stdin and sends it SIGTERM).
async fn wait_for_child(
    process: &mut tokio::process::Child,
    child: &Child,
    forwarded: &mut signals::Forwarded,
    client_closed: &mut oneshot::Receiver<()>,
    reader: &mut tokio::task::JoinHandle<()>,
) -> std::io::Result<ExitStatus> {
    let pid = process.id();
    let mut kill_at = None;
    let mut reader_done = false;
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
                    child.send(ToChild::Close);
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
            _ = &mut *reader, if !reader_done => {
                reader_done = true;
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

/// Reads the client's lines: requests go through the service stack (each answer
/// written by its own task), everything else to the child as it is.
async fn relay_client<S>(
    layer: ToolErrorLayer,
    service: S,
    child: Arc<Child>,
    to_client: mpsc::UnboundedSender<Vec<u8>>,
    closed: oneshot::Sender<()>,
) where
    S: Service<Outgoing, Response = Answer, Error = Withdrawn> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let mut bursts = client_io::read_lines();
    while let Some(burst) = bursts.recv().await {
        for line in burst {
            relay_client_line(&layer, &service, &child, &to_client, line).await;
        }
    }
    child.send(ToChild::Close);
    let _ = closed.send(());
}

/// Sends a request through the service stack (the layer over `service`, as
/// over any `tower::Service<Value>`), answered in a task of its own, and
/// anything else to the child as it is.
async fn relay_client_line<S>(
    layer: &ToolErrorLayer,
    service: &S,
    child: &Child,
    to_client: &mpsc::UnboundedSender<Vec<u8>>,
    line: Vec<u8>,
) where
    S: Service<Outgoing, Response = Answer, Error = Withdrawn> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let value = match serde_json::from_slice::<Value>(line.trim_ascii()) {
        Ok(value) => value,
        // Not JSON: the child answers it.
        Err(_) => {
            child.send(ToChild::Line(line));
            return;
        }
    };
    let tell_child = child.client_cancelled(&value);
    if requests(&value).is_empty() {
        // Notifications and responses to the child's requests pass as they are.
        if tell_child {
            child.send(ToChild::Line(line));
        }
        return;
    }
    let child_answer = ChildAnswer::default();
    let mut service = layer.layer(WithLine::new(service.clone(), line, child_answer.clone()));
    if std::future::poll_fn(|cx| service.poll_ready(cx))
        .await
        .is_err()
    {
        return;
    }
    // Called here, not in the task: the child gets the client's lines in order.
    let answer = service.call(value);
    let to_client = to_client.clone();
    tokio::spawn(async move {
        // A request the client cancelled gets no answer.
        if let Ok(Some(value)) = answer.await {
            message::answered(value, &child_answer).queue(&to_client);
        }
    });
}
