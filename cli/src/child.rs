//! The child's stdio as a `tower::Service`: a client request goes to the child's
//! stdin, and its future resolves with the child's response of the same id.
//!
//! The future that is dropped before its answer came (the layer's tool timeout
//! expired) tells the child with `notifications/cancelled`, and the child's late
//! answer is dropped. A request the client cancels ends with [`Withdrawn`]:
//! the client's own cancellation goes to the child, and nothing answers it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};
use tower_service::Service;

use crate::in_flight::{InFlight, Ticket};
use crate::message::{Answer, Outgoing, Withdrawn, cancelled_ids, requests, response_ids};
use crate::throttled_log::ThrottledLog;

/// What the task writing to the child's stdin is given.
#[derive(Debug)]
pub(crate) enum ToChild {
    /// One line, newline included, written as it is.
    Line(Vec<u8>),
    /// The client closed its side: close the child's stdin.
    Close,
}

/// The state shared by the service, its futures and the task reading the child.
#[derive(Debug)]
pub(crate) struct Child {
    in_flight: Mutex<InFlight>,
    to_child: mpsc::UnboundedSender<ToChild>,
}

impl Child {
    pub(crate) fn new(to_child: mpsc::UnboundedSender<ToChild>) -> Arc<Self> {
        Arc::new(Self {
            in_flight: Mutex::new(InFlight::default()),
            to_child,
        })
    }

    /// Sends a line to the child as it is. A child that is gone loses it.
    pub(crate) fn send(&self, message: ToChild) {
        let _ = self.to_child.send(message);
    }

    /// The child is gone: every request in flight, and every later one, is
    /// answered with its `status`.
    pub(crate) fn gone(&self, status: String) {
        self.in_flight().child_gone(status);
    }

    /// Withdraws the requests that the client's `message` cancels; returns
    /// whether the message is to be sent to the child: not when it is only
    /// cancellations the child was sent already.
    pub(crate) fn client_cancelled(&self, message: &Value) -> bool {
        let ids = cancelled_ids(message);
        if ids.is_empty() {
            return true;
        }
        let mut in_flight = self.in_flight();
        let mut tell_child = false;
        for id in ids {
            tell_child |= in_flight.withdraw(id);
        }
        tell_child || message.is_array()
    }

    fn in_flight(&self) -> MutexGuard<'_, InFlight> {
        // A panic while the lock was held left the table consistent: every
        // method of InFlight finishes its changes before it can panic.
        self.in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn cancel(&self, ticket: Ticket) {
        let Some(ids) = self.in_flight().cancel(ticket) else {
            return;
        };
        for id in ids {
            let notification = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "The client's tool timeout expired."},
            });
            let mut line = serde_json::to_vec(&notification).expect("a JSON value serializes");
            line.push(b'\n');
            self.send(ToChild::Line(line));
        }
    }
}

/// Client requests to the child, answered by the child's responses.
#[derive(Debug, Clone)]
pub(crate) struct ChildService {
    child: Arc<Child>,
}

impl ChildService {
    pub(crate) fn new(child: Arc<Child>) -> Self {
        Self { child }
    }
}

impl Service<Outgoing> for ChildService {
    type Response = Answer;
    type Error = Withdrawn;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Withdrawn>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Outgoing) -> ResponseFuture {
        let (sender, receiver) = oneshot::channel();
        let batch = request.value.is_array();
        // Registered before it is sent, so that the answer always finds it.
        let registered = self
            .child
            .in_flight()
            .register(requests(&request.value), batch, sender);
        match registered {
            Ok(ticket) => {
                self.child.send(ToChild::Line(request.line));
                ResponseFuture::Waiting {
                    receiver,
                    ticket,
                    child: self.child.clone(),
                }
            }
            Err(answer) => ResponseFuture::Answered(Some(answer)),
        }
    }
}

/// The future of [`ChildService`].
#[derive(Debug)]
pub(crate) enum ResponseFuture {
    Waiting {
        receiver: oneshot::Receiver<Answer>,
        ticket: Ticket,
        child: Arc<Child>,
    },
    Answered(Option<Answer>),
}

impl Future for ResponseFuture {
    type Output = Result<Answer, Withdrawn>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let answer = match &mut *self {
            Self::Answered(answer) => answer.take().expect("future polled after completion"),
            Self::Waiting { receiver, .. } => match Pin::new(receiver).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(answer)) => answer,
                // The table drops a request unanswered only when the client
                // cancelled it.
                Poll::Ready(Err(_)) => {
                    *self = Self::Answered(None);
                    return Poll::Ready(Err(Withdrawn));
                }
            },
        };
        *self = Self::Answered(None);
        Poll::Ready(Ok(answer))
    }
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        if let Self::Waiting { ticket, child, .. } = self {
            child.cancel(*ticket);
        }
    }
}

/// Writes the lines for the child to its stdin until the client closes its side.
pub(crate) async fn write_to_child(stdin: ChildStdin, mut lines: mpsc::UnboundedReceiver<ToChild>) {
    let mut stdin = tokio::io::BufWriter::new(stdin);
    while let Some(message) = lines.recv().await {
        let line = match message {
            ToChild::Line(line) => line,
            ToChild::Close => break,
        };
        let mut written = stdin.write_all(&line).await;
        if written.is_ok() && lines.is_empty() {
            written = stdin.flush().await;
        }
        if let Err(error) = written {
            // The child closed its stdin or exited; its exit is reported elsewhere.
            crate::log(&format!("the server's stdin is closed: {error}"));
            return;
        }
    }
    let _ = stdin.shutdown().await;
}

/// Reads the child's stdout: responses go to the requests waiting for them,
/// everything else to the client as it is. Returns at the child's EOF.
pub(crate) async fn read_from_child(
    stdout: ChildStdout,
    child: Arc<Child>,
    to_client: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut stdout = BufReader::new(stdout);
    let mut logs = ChildLogs::default();
    // Kept across a wait that ends early, so that no byte read is lost.
    let mut line = Vec::new();
    loop {
        let count_due = logs.count_due();
        let read = tokio::select! {
            read = stdout.read_until(b'\n', &mut line) => read,
            () = sleep_until_some(count_due) => {
                logs.write_due_counts();
                continue;
            }
        };
        match read {
            Ok(0) if line.is_empty() => break,
            Ok(_) => {}
            Err(error) => {
                crate::log(&format!("cannot read the server's stdout: {error}"));
                break;
            }
        }
        let mut line = std::mem::take(&mut line);
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        if let Some(queued) = route_child_line(line, &child, &to_client, &mut logs) {
            // The answer goes through the layer in its request's task; the
            // child's next line waits until it is queued, so order is kept.
            let _ = queued.await;
        }
    }
    logs.write_counts();
}

/// Sleeps until `deadline`, or forever without one.
async fn sleep_until_some(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// How the log line for a line from the child that is not JSON begins.
const NOT_JSON: &str = "not forwarded: the server wrote a line that is not JSON";

/// The log line for a late answer that is dropped.
const LATE_ANSWER: &str = "dropped the server's late answer to a request given up";

/// The log lines the child's stdout can cause at any rate, each throttled.
#[derive(Debug)]
struct ChildLogs {
    not_json: ThrottledLog,
    late_answers: ThrottledLog,
}

impl Default for ChildLogs {
    fn default() -> Self {
        Self {
            not_json: ThrottledLog::new(NOT_JSON),
            late_answers: ThrottledLog::new(LATE_ANSWER),
        }
    }
}

impl ChildLogs {
    fn logs(&mut self) -> [&mut ThrottledLog; 2] {
        [&mut self.not_json, &mut self.late_answers]
    }

    fn count_due(&mut self) -> Option<tokio::time::Instant> {
        self.logs()
            .into_iter()
            .filter_map(|log| log.count_due())
            .min()
    }

    fn write_due_counts(&mut self) {
        let now = tokio::time::Instant::now();
        for log in self.logs() {
            if log.count_due().is_some_and(|due| due <= now) {
                log.count().iter().for_each(|line| crate::log(line));
            }
        }
    }

    fn write_counts(&mut self) {
        for log in self.logs() {
            log.count().iter().for_each(|line| crate::log(line));
        }
    }
}

fn write_event(log: &mut ThrottledLog, message: impl FnOnce() -> String) {
    for line in log.event(tokio::time::Instant::now(), message) {
        crate::log(&line);
    }
}

/// Sends `line` on; for an answer to a request in flight, returns what tells
/// when the answer is queued for the client.
fn route_child_line(
    line: Vec<u8>,
    child: &Child,
    to_client: &mpsc::UnboundedSender<Vec<u8>>,
    logs: &mut ChildLogs,
) -> Option<oneshot::Receiver<()>> {
    let text = line.trim_ascii();
    if text.is_empty() {
        return None;
    }
    let value: Value = match serde_json::from_slice(text) {
        Ok(value) => value,
        Err(error) => {
            write_event(&mut logs.not_json, || {
                let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
                format!("{NOT_JSON} ({error}): {shown}")
            });
            return None;
        }
    };
    let ids = response_ids(&value);
    if !ids.is_empty() {
        let mut in_flight = child.in_flight();
        if let Some(waiting) = in_flight.answered(&ids) {
            drop(in_flight);
            let (queued, is_queued) = oneshot::channel();
            let answer = Answer {
                value,
                line: Some(line),
                changed: false,
                queued: Some(queued),
            };
            // A receiver dropped since (a timeout) takes no answer.
            return waiting.send(answer).ok().map(|()| is_queued);
        }
        if in_flight.was_given_up(&ids) {
            drop(in_flight);
            write_event(&mut logs.late_answers, || LATE_ANSWER.to_owned());
            return None;
        }
    }
    let _ = to_client.send(line);
    None
}
