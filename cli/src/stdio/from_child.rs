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
    let runtime = Handle::current();
    std::thread::Builder::new()
        .name("server stdout".to_owned())
        .spawn(move || {
            let lines = Lines::new(stdout, max_message_bytes);
            relay_child(&stack, lines, max_message_bytes, &logs, &runtime);
            let _ = done.send(());
        })?;
    Ok(())
}

fn relay_child(
    stack: &Stack,
    mut lines: Lines,
    max_message_bytes: usize,
    logs: &ChildLogs,
    runtime: &Handle,
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
                if !refuse_too_long(stack, runtime, &members, batch, max_message_bytes) {
                    logs.event(Log::NotRefused, || NOT_REFUSED.to_owned());
                }
                if first {
                    logs.event(Log::TooLong, || TOO_LONG.to_owned());
                }
            }
            Ok(None) => break,
            Err(error) => {
                crate::telemetry::log(&format!("cannot read the server's stdout: {error}"));
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
/// read, a `batch` or not) with a JSON-RPC error each, sent to the child as
/// the wrapper's own line (`own_lines`): this thread never waits on the
/// child's stdin, which a child that does not read would stop. Returns
/// `false` when there are some and the child has not read enough of the
/// wrapper's lines before for theirs to be queued.
fn refuse_too_long(
    stack: &Stack,
    runtime: &Handle,
    members: &[Scanned],
    batch: bool,
    max: usize,
) -> bool {
    refusal(members, batch, max)
        .is_none_or(|refusal| stack.child().send_from_runtime(&refusal, runtime))
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
            crate::telemetry::log(&line);
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
                log.count()
                    .iter()
                    .for_each(|line| crate::telemetry::log(line));
            }
        }
    }

    /// Writes every count: the child's stdout has ended.
    fn write_counts(&self) {
        for log in self.logs().all() {
            log.count()
                .iter()
                .for_each(|line| crate::telemetry::log(line));
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
    use crate::stdio::own_lines::{MAX_QUEUED_BYTES, OwnLines};

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

    /// The errors to a batch of requests too long to read make one line,
    /// longer than the bound when the batch holds many: it is taken when
    /// nothing waits before it, and only then.
    #[test]
    fn a_line_longer_than_the_bound_is_queued_when_none_waits() {
        let own_lines = OwnLines::default();
        let members: Vec<Scanned> = (0..1000)
            .map(|id| scanned(Kind::Request, json!(id)))
            .collect();
        let line = refusal(&members, true, 1024).unwrap();
        assert!(line.len() > MAX_QUEUED_BYTES);
        assert!(own_lines.push(&line));
        assert!(!own_lines.push(b"{}\n"));
    }
}
