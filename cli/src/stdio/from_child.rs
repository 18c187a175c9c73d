//! The thread reading the child's stdout: an answer to a request in flight is
//! written to the client by this thread itself, as the child's bytes when the
//! layer would leave it alone (see `stack`); any other line that is JSON goes
//! to the client as it is; a line that is not JSON is logged, at most once a
//! second.
//!
//! A line longer than `--max-message-bytes` is dropped, and what it is
//! decides what is answered, as for a line read whole (only a response
//! answers a call): a response's call in flight gets the wrapper's answer
//! saying so, and a request of the server's own gets a JSON-RPC error, sent
//! to the child's stdin, so that the server does not wait for ever.

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_tool_errors::NoAnswer;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::jsonrpc::envelope::{self, Envelope};
use crate::jsonrpc::member::Kind;
use crate::jsonrpc::member_scan::Scanned;
use crate::jsonrpc::message::{Answer, response_ids};
use crate::jsonrpc::own_answer::{self, INTERNAL_ERROR};
use crate::stdio::child::{Child, Offered};
use crate::stdio::lines::{Line, Lines};
use crate::stdio::stack::Stack;
use crate::throttled_log::ThrottledLog;

/// Starts the thread and the runtime's task that writes the counts of log
/// lines not shown; `done` is told at the end of the child's stdout.
pub(crate) fn spawn(
    stack: Arc<Stack>,
    stdout: File,
    max_message_bytes: usize,
    done: oneshot::Sender<()>,
) -> std::io::Result<()> {
    let (count_due, counts_due) = mpsc::unbounded_channel();
    let logs = Arc::new(ChildLogs {
        logs: Mutex::default(),
        count_due,
    });
    tokio::spawn(write_counts_when_due(logs.clone(), counts_due));
    let to_child = Arc::new(ToChild::new(stack.child().clone(), Handle::current()));
    std::thread::Builder::new()
        .name("server stdout".to_owned())
        .spawn(move || {
            let lines = Lines::new(stdout, max_message_bytes);
            relay_child(&stack, lines, max_message_bytes, &logs, &to_child);
            let _ = done.send(());
        })?;
    Ok(())
}

fn relay_child(
    stack: &Stack,
    mut lines: Lines,
    max_message_bytes: usize,
    logs: &ChildLogs,
    to_child: &Arc<ToChild>,
) {
    let output = stack.output();
    loop {
        match lines.next() {
            Ok(Some(Line::Whole(line))) => route_child_line(stack, line, logs),
            Ok(Some(Line::TooLong {
                members,
                batch,
                first,
            })) => {
                answer_too_long(stack, &members, max_message_bytes);
                if !refuse_too_long(to_child, &members, batch, max_message_bytes) {
                    logs.event(Log::NotRefused, || NOT_REFUSED.to_owned());
                }
                if first {
                    logs.event(Log::TooLong, || TOO_LONG.to_owned());
                }
            }
            Ok(None) => break,
            Err(error) => {
                crate::log(&format!("cannot read the server's stdout: {error}"));
                break;
            }
        }
        if !lines.has_another() {
            output.flush();
        }
    }
    output.flush();
    logs.write_counts();
}

/// Sends `line` on: an answer to a request in flight to its request, a late
/// answer nowhere, anything else that is JSON to the client.
fn route_child_line(stack: &Stack, line: &[u8], logs: &ChildLogs) {
    let text = line.trim_ascii();
    if text.is_empty() {
        return;
    }
    let fields = match envelope::read(line) {
        Ok(Envelope::Single(fields)) => fields,
        Ok(Envelope::Batch) => return route_child_whole(stack, line),
        Err(error) if error.is_too_deep() => return route_child_whole(stack, line),
        Err(error) => {
            logs.event(Log::NotJson, || {
                let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
                format!("{NOT_JSON} ({error}): {shown}")
            });
            return;
        }
    };
    if let Some(id) = fields.id.as_ref().filter(|_| fields.is_response()) {
        let mut in_flight = stack.child().in_flight();
        if let Some(waiting) = in_flight.answered(&[id]) {
            drop(in_flight);
            return stack.answer(waiting, line, Some(&fields));
        }
        if in_flight.was_given_up(&[id]) {
            drop(in_flight);
            return logs.event(Log::LateAnswer, || LATE_ANSWER.to_owned());
        }
    }
    stack.output().write(line);
}

/// A batch from the child, or a message nested too deep for its envelope,
/// read whole: an answer to a request or batch in flight, or anything else.
fn route_child_whole(stack: &Stack, line: &[u8]) {
    if let Ok(batch) = crate::jsonrpc::nested::from_slice(line) {
        let ids = response_ids(&batch);
        let waiting = (!ids.is_empty())
            .then(|| stack.child().in_flight().answered(&ids))
            .flatten();
        if let Some(waiting) = waiting {
            return stack.answer(waiting, line, None);
        }
    }
    stack.output().write(line);
}

/// Answers the requests in flight that the responses among `members` (of a
/// message too long to read) answer: with an answer of the wrapper's own,
/// saying so.
fn answer_too_long(stack: &Stack, members: &[Scanned], max: usize) {
    let ids: Vec<&Value> = members
        .iter()
        .filter(|member| member.kind == Kind::Response)
        .map(|member| &member.id)
        .collect();
    if ids.is_empty() {
        return;
    }
    let waiting = stack.child().in_flight().answered(&ids);
    if let Some(waiting) = waiting {
        let sentence = format!(
            "The server's answer is larger than {max} bytes (--max-message-bytes): it was not read."
        );
        let answer = own_answer::unanswered_all(
            &waiting.requests,
            waiting.batch,
            &sentence,
            NoAnswer::UpstreamTooLarge,
        );
        stack.answer_instead(waiting, Answer::made(answer));
    }
}

/// Answers the server's requests among `members` (of a message too long to
/// read, a `batch` or not) with a JSON-RPC error each, sent to the child;
/// returns `false` when there are some and the child has not read enough of
/// the errors before for theirs to be queued.
fn refuse_too_long(to_child: &Arc<ToChild>, members: &[Scanned], batch: bool, max: usize) -> bool {
    refusal(members, batch, max).is_none_or(|refusal| to_child.send(refusal))
}

/// The line that answers the requests among `members` (of a message too long
/// to read, a `batch` or not); `None` when there are none.
fn refusal(members: &[Scanned], batch: bool, max: usize) -> Option<Vec<u8>> {
    let message =
        format!("The request is larger than {max} bytes (--max-message-bytes): it was not read.");
    let mut errors = members
        .iter()
        .filter(|member| member.kind == Kind::Request)
        .map(|member| own_answer::error(&member.id, INTERNAL_ERROR, &message));
    let answer = if batch {
        let errors: Vec<Value> = errors.collect();
        (!errors.is_empty()).then_some(Value::Array(errors))?
    } else {
        errors.next()?
    };
    let mut line = serde_json::to_vec(&answer).expect("a JSON value serializes");
    line.push(b'\n');
    Some(line)
}

/// The most bytes of the wrapper's own lines that wait for the child's stdin
/// (one line longer than this is taken when none waits): a child that does
/// not read it gets no more.
const MAX_QUEUED_TO_CHILD: usize = 64 * 1024;

/// How long the writer of the wrapper's own lines waits before it looks again
/// for room in the pipe of a child that has not read them.
const ROOM_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// The wrapper's own lines for the child's stdin (its answers to the server's
/// requests too long to read), written from the runtime's blocking pool, by
/// one thread at a time: the thread reading the child's stdout must never
/// wait on its stdin, which a child that does not read would stop. They are
/// written only while the pipe has room for them (see
/// [`ChildInput::write_if_room`](crate::stdio::child::ChildInput::write_if_room)),
/// so that they never stop the client's lines.
#[derive(Debug)]
struct ToChild {
    child: Arc<Child>,
    runtime: Handle,
    /// The lines not written yet, at most [`MAX_QUEUED_TO_CHILD`] bytes.
    queued: Mutex<Vec<u8>>,
    /// Whether a thread is writing them.
    writing: AtomicBool,
}

impl ToChild {
    fn new(child: Arc<Child>, runtime: Handle) -> Self {
        Self {
            child,
            runtime,
            queued: Mutex::default(),
            writing: AtomicBool::new(false),
        }
    }

    fn queued(&self) -> MutexGuard<'_, Vec<u8>> {
        // Whole lines are appended: a panic cannot leave half of one.
        self.queued
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `line`, unless the child has not read enough of the others
    /// (it is dropped then); returns whether it is queued.
    fn queue(&self, line: &[u8]) -> bool {
        let mut queued = self.queued();
        if !queued.is_empty() && queued.len() + line.len() > MAX_QUEUED_TO_CHILD {
            return false;
        }
        queued.extend_from_slice(line);
        true
    }

    /// Sends `line` to the child, from the blocking pool; returns whether it
    /// is queued (see [`queue`](Self::queue)).
    fn send(self: &Arc<Self>, line: Vec<u8>) -> bool {
        if !self.queue(&line) {
            return false;
        }
        if !self.writing.swap(true, Ordering::AcqRel) {
            let to_child = self.clone();
            self.runtime.spawn_blocking(move || to_child.write_queued());
        }
        true
    }

    /// Writes the queued lines until none is left, or the child's stdin is
    /// closed.
    fn write_queued(&self) {
        loop {
            let lines = std::mem::take(&mut *self.queued());
            if !lines.is_empty() && self.child.input().write_if_room(&lines) == Offered::NoRoom {
                // First again, before any queued since.
                self.queued().splice(0..0, lines);
                std::thread::sleep(ROOM_POLL);
                continue;
            }
            self.writing.store(false, Ordering::Release);
            // A line queued after the take, while this thread still wrote, is
            // this thread's to write unless another has started since.
            if self.queued().is_empty() || self.writing.swap(true, Ordering::AcqRel) {
                return;
            }
        }
    }
}

/// How the log line for a line from the child that is not JSON begins.
const NOT_JSON: &str = "not forwarded: the server wrote a line that is not JSON";

/// The log line for a line from the child longer than --max-message-bytes.
const TOO_LONG: &str = "dropped a line of the server longer than --max-message-bytes; a request it answers is answered so";

/// The log line for an error to a request of the server's too long to read
/// that is not sent.
const NOT_REFUSED: &str = "not answered: a request of the server longer than --max-message-bytes (the server has not read the errors sent to it before)";

/// The log line for a late answer that is dropped.
const LATE_ANSWER: &str = "dropped the server's late answer to a request given up";

/// The kinds of log line the child's stdout can cause at any rate.
#[derive(Debug, Clone, Copy)]
enum Log {
    NotJson,
    LateAnswer,
    TooLong,
    NotRefused,
}

/// The log lines the child's stdout can cause at any rate, each throttled;
/// the counts of lines not shown are written by a task of the runtime when
/// due, since this thread may be waiting for the child then.
#[derive(Debug)]
struct ChildLogs {
    logs: Mutex<Logs>,
    /// Told when a count becomes due.
    count_due: mpsc::UnboundedSender<Instant>,
}

#[derive(Debug)]
struct Logs {
    not_json: ThrottledLog,
    late_answers: ThrottledLog,
    too_long: ThrottledLog,
    not_refused: ThrottledLog,
}

impl Default for Logs {
    fn default() -> Self {
        Self {
            not_json: ThrottledLog::new(NOT_JSON),
            late_answers: ThrottledLog::new(LATE_ANSWER),
            too_long: ThrottledLog::new(TOO_LONG),
            not_refused: ThrottledLog::new(NOT_REFUSED),
        }
    }
}

impl Logs {
    fn all(&mut self) -> [&mut ThrottledLog; 4] {
        [
            &mut self.not_json,
            &mut self.late_answers,
            &mut self.too_long,
            &mut self.not_refused,
        ]
    }

    fn count_due(&mut self) -> Option<Instant> {
        self.all()
            .into_iter()
            .filter_map(|log| log.count_due())
            .min()
    }
}

impl ChildLogs {
    fn logs(&self) -> MutexGuard<'_, Logs> {
        // Counters cannot be left half-changed by a panic.
        self.logs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn event(&self, kind: Log, message: impl FnOnce() -> String) {
        let mut logs = self.logs();
        let was_due = logs.count_due();
        let log = match kind {
            Log::NotJson => &mut logs.not_json,
            Log::LateAnswer => &mut logs.late_answers,
            Log::TooLong => &mut logs.too_long,
            Log::NotRefused => &mut logs.not_refused,
        };
        for line in log.event(Instant::now(), message) {
            crate::log(&line);
        }
        if let (None, Some(due)) = (was_due, logs.count_due()) {
            let _ = self.count_due.send(due);
        }
    }

    /// Writes the counts due by now.
    fn write_due_counts(&self) {
        let now = Instant::now();
        for log in self.logs().all() {
            if log.count_due().is_some_and(|due| due <= now) {
                log.count().iter().for_each(|line| crate::log(line));
            }
        }
    }

    /// Writes every count: the child's stdout has ended.
    fn write_counts(&self) {
        for log in self.logs().all() {
            log.count().iter().for_each(|line| crate::log(line));
        }
    }
}

/// Writes each count when it is due.
async fn write_counts_when_due(
    logs: Arc<ChildLogs>,
    mut counts_due: mpsc::UnboundedReceiver<Instant>,
) {
    while let Some(due) = counts_due.recv().await {
        tokio::time::sleep_until(due).await;
        logs.write_due_counts();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn scanned(kind: Kind, id: Value) -> Scanned {
        Scanned { kind, id }
    }

    #[test]
    fn each_request_of_the_server_too_long_gets_an_error_and_a_batch_a_batch() {
        let message =
            "The request is larger than 1024 bytes (--max-message-bytes): it was not read.";
        let error =
            |id| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}});
        let line = |members: &[Scanned], batch| {
            refusal(members, batch, 1024).map(|line| {
                assert!(line.ends_with(b"\n"));
                serde_json::from_slice::<Value>(&line).unwrap()
            })
        };
        let members = [
            scanned(Kind::Response, json!(1)),
            scanned(Kind::Request, json!(1)),
            scanned(Kind::Request, json!("s")),
        ];
        assert_eq!(
            line(&members, true),
            Some(json!([error(json!(1)), error(json!("s"))]))
        );
        assert_eq!(line(&members[1..2], false), Some(error(json!(1))));
        assert_eq!(
            line(&members[..1], true),
            None,
            "a response is not answered"
        );
        assert_eq!(line(&[], false), None);
    }

    #[test]
    fn a_child_that_does_not_read_gets_no_more_than_the_bound() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let stdin = File::create("/dev/null").unwrap();
        let to_child = ToChild::new(Child::new(stdin), runtime.handle().clone());
        let line = vec![b'x'; 1000];
        let queued = std::iter::repeat_with(|| to_child.queue(&line))
            .take(100)
            .filter(|queued| *queued)
            .count();
        assert_eq!(queued, MAX_QUEUED_TO_CHILD / 1000);
        assert!(to_child.queued().len() <= MAX_QUEUED_TO_CHILD);
    }

    /// The errors to a batch of requests too long to read make one line,
    /// longer than the bound when the batch holds many: it is taken when
    /// nothing waits before it, and only then.
    #[test]
    fn a_line_longer_than_the_bound_is_queued_when_none_waits() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let stdin = File::create("/dev/null").unwrap();
        let to_child = ToChild::new(Child::new(stdin), runtime.handle().clone());
        let members: Vec<Scanned> = (0..1000)
            .map(|id| scanned(Kind::Request, json!(id)))
            .collect();
        let line = refusal(&members, true, 1024).unwrap();
        assert!(line.len() > MAX_QUEUED_TO_CHILD);
        assert!(to_child.queue(&line));
        assert!(!to_child.queue(b"{}\n"));
    }
}
