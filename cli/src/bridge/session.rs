//! One client's session: its child, relayed as the stdio mode relays it
//! ([`Relay`]) to a pair of pipes whose other ends are the bridge's; what
//! the session writes to it (`child_input`), where its lines go (`routes`),
//! and how it is stopped. Nothing here waits on the child: a session ends at
//! once, and its child is stopped beside the rest.

use std::fs::File;
use std::io::pipe;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use hyper::body::Bytes;
use mcp_tool_errors::JsonRpcId;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::unix::pipe as async_pipe;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::bridge::child_input::{ChildInput, Queued};
use crate::bridge::own_answers::{OwnAnswers, Unanswered};
use crate::bridge::routes::{Registration, Routes, Sent, event};
use crate::bridge::session_id;
use crate::options::Options;
use crate::signals::Forwarded;
use crate::stdio::client_io::ClientOutput;
use crate::stdio::relay::{ClientPipes, Relay, StartError};
use crate::telemetry::event;

/// How long a session's child may take to exit on its own once its stdin is
/// closed, before it gets SIGTERM (servers on the Python SDK take more than a
/// second).
const TERM_AFTER: Duration = Duration::from_secs(2);

/// How long after its session ended a child still running gets SIGKILL, with
/// every process of its group: one that ignores SIGTERM, or does not read
/// its stdin to its end, is stopped all the same.
pub(crate) const KILL_AFTER: Duration = Duration::from_secs(5);

/// A session and its child.
#[derive(Debug)]
pub(crate) struct Session {
    id: String,
    /// The lines on their way to the child.
    input: ChildInput,
    routes: Mutex<Routes>,
    /// Signals for the child (SIGTERM, then SIGKILL, once the session ends).
    signals: mpsc::UnboundedSender<i32>,
    /// Set once the child's stop has started.
    stopping: AtomicBool,
    /// Set once the log said that the child is not reading its input.
    said_not_reading: AtomicBool,
    /// Whether the child serves sessionless clients ([`Pool`]): its calls
    /// carry ids of the bridge's, and the server's own messages reach no
    /// client.
    ///
    /// [`Pool`]: crate::bridge::pool::Pool
    pooled: bool,
    /// The child's process id, for the log.
    pid: u32,
    /// What the session's calls are answered when the child cannot answer.
    own_answers: OwnAnswers,
}

/// A session's child, started: the relay to be finished (`Relay::finish`)
/// with the signals, and the task routing the child's lines, which ends
/// after the relay.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) session: Arc<Session>,
    pub(crate) relay: Relay,
    pub(crate) signals: Forwarded,
    pub(crate) routing: JoinHandle<()>,
}

impl Session {
    /// Starts `options.command` for the session `id`. `pooled`: the child
    /// serves sessionless clients.
    pub(crate) fn start(
        id: String,
        options: &Options,
        traced: bool,
        pooled: bool,
        own_answers: OwnAnswers,
    ) -> Result<Started, StartError> {
        let (relay_input, input) = pipe().map_err(StartError::Relay)?;
        let (output, relay_output) = pipe().map_err(StartError::Relay)?;
        let client = ClientPipes {
            input: File::from(OwnedFd::from(relay_input)),
            output: ClientOutput::to(File::from(OwnedFd::from(relay_output))),
        };
        let relay = Relay::start(options, &options.command, client, traced)?;
        let pid = relay.pid().unwrap_or_default();
        let input = async_pipe::Sender::from_owned_fd(OwnedFd::from(input));
        let output = async_pipe::Receiver::from_owned_fd(OwnedFd::from(output));
        let (input, output) = input
            .and_then(|input| Ok((input, output?)))
            .map_err(StartError::Relay)?;
        let (signals, forwarded) = Forwarded::sent();
        let session = Arc::new(Self {
            id,
            input: ChildInput::start(input),
            routes: Mutex::new(Routes::new()),
            signals,
            stopping: AtomicBool::new(false),
            said_not_reading: AtomicBool::new(false),
            pooled,
            pid,
            own_answers,
        });
        let routing = tokio::spawn(session.clone().route_output(output));
        Ok(Started {
            session,
            relay,
            signals: forwarded,
            routing,
        })
    }

    /// The child's process id (0 if it was gone before it was read).
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// A new id for a call of a pooled child: `"mte-N"`.
    pub(crate) fn next_call_id(&self) -> Value {
        self.routes().next_call_id()
    }

    /// How many requests wait for the child.
    pub(crate) fn calls_in_flight(&self) -> usize {
        self.routes().calls.len()
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `requests`, whose answers go to `events`, unless the
    /// session ended or one of their ids is in flight already (checked and
    /// registered at once).
    pub(crate) fn register(
        &self,
        requests: Vec<Sent>,
        events: &mpsc::Sender<Bytes>,
    ) -> Result<(), Registration> {
        self.routes().register(requests, events)
    }

    /// Withdraws the requests with `ids`: they were not sent, or the client
    /// cancelled them (the relay never answers those); a stream left with no
    /// call ends.
    pub(crate) fn withdraw(&self, ids: &[JsonRpcId]) {
        let mut routes = self.routes();
        for id in ids {
            routes.calls.remove(id);
        }
    }

    /// Queues `line` (one message, without its newline) for the child.
    pub(crate) fn send(&self, line: &[u8]) -> Queued {
        self.routes().last_used = Instant::now();
        let queued = self.input.send(line);
        if queued == Queued::Full && !self.said_not_reading.swap(true, Ordering::Relaxed) {
            let (shown, pid) = (session_id::prefix(&self.id), self.pid);
            event!(
                warn,
                session = shown,
                pid,
                "the server is not reading its input: refusing what more its session sends: \
                 {shown}, the server's pid {pid}"
            );
        }
        queued
    }

    /// The answer to a message's `requests` (as the layer reads them) when
    /// the child does not read what the session queued for it: one event, a
    /// batch for a `batch`.
    pub(crate) fn not_reading(&self, requests: Vec<Value>, batch: bool) -> Option<Bytes> {
        self.own_answers
            .message_event(requests, batch, Unanswered::NotReading)
    }

    /// Opens the session's `GET` stream, replacing (ending) one open before;
    /// `false` when the session has ended.
    pub(crate) fn listen(&self, events: mpsc::Sender<Bytes>) -> bool {
        self.routes().listen(events)
    }

    /// Ends the `GET` stream, if one is open (the bridge drains).
    pub(crate) fn stop_listening(&self) {
        self.routes().listening = None;
    }

    /// Since when the session has had no open stream (a `POST`'s or the
    /// `GET`'s) and no new request; `None` while it has. A call in flight
    /// whose client went away keeps no stream open: it holds the session no
    /// longer, and ends with it.
    pub(crate) fn idle_since(&self) -> Option<Instant> {
        self.routes().idle_since()
    }

    /// Answers every call in flight itself, saying that the bridge is
    /// stopping (its drain ended first), through the layer; the child is
    /// told with `notifications/cancelled`, and its late answers reach no
    /// one.
    pub(crate) fn answer_stopping(&self) {
        let calls: Vec<_> = self.routes().calls.drain().collect();
        for (id, _) in &calls {
            let cancellation = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id.to_value(), "reason": "The bridge is stopping."},
            });
            self.send(cancellation.to_string().as_bytes());
        }
        self.own_answers.answer(calls, Unanswered::Stopping);
    }

    /// Whether the session has ended.
    pub(crate) fn has_ended(&self) -> bool {
        self.routes().ended
    }

    /// Ends the session, at once: no request is taken from now on; the
    /// child's stdin is closed once what is queued for it is written; it
    /// gets SIGTERM after [`TERM_AFTER`] if it is still running, and SIGKILL,
    /// with its group, after [`KILL_AFTER`].
    pub(crate) fn end(self: &Arc<Self>) {
        self.routes().ended = true;
        self.input.close();
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        let session = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(TERM_AFTER).await;
            // What is still queued will not be read.
            session.input.abandon();
            let _ = session.signals.send(libc::SIGTERM);
            tokio::time::sleep(KILL_AFTER - TERM_AFTER).await;
            let _ = session.signals.send(libc::SIGKILL);
        });
    }

    /// The child exited with `status` (described), and the relay is done:
    /// the session takes no request from now on, and the calls the child
    /// never got are answered with its status.
    pub(crate) fn child_exited(&self, status: &str) {
        let calls = self.routes().end();
        self.input.abandon();
        self.own_answers.answer(calls, Unanswered::Exited(status));
    }

    /// Closes the child's side of the relay now: the relay's thread reading
    /// it ends.
    pub(crate) fn abandon_input(&self) {
        self.input.abandon();
    }

    /// Reads the child's lines (the relay's, once the layer has done its
    /// part) and sends each where it goes, until the relay closes its end.
    async fn route_output(self: Arc<Self>, output: async_pipe::Receiver) {
        let mut output = BufReader::with_capacity(64 * 1024, output);
        let mut line = Vec::new();
        loop {
            line.clear();
            match output.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let message = line.trim_ascii();
            if message.is_empty() {
                continue;
            }
            let Some((events, spelling)) = self.routes().destination(message, self.pooled) else {
                continue;
            };
            let event = match spelling.applied(message) {
                Some(restored) => event(&restored),
                None => event(message),
            };
            // A client that does not read its stream holds its session's
            // lines only: its connection is closed past --client-send-timeout.
            let _ = events.send(event).await;
        }
        // No stream of the session stays open for the server's own messages.
        let mut routes = self.routes();
        routes.listening = None;
        routes.ended = true;
    }
}
