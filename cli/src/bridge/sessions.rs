//! The bridge's sessions: at most `--max-sessions` at once, each ended at
//! `DELETE`, after `--session-idle-timeout` with no request and no open
//! stream, when its child exits, or when the bridge stops; a session is
//! forgotten once its child has exited.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use crate::bridge::session::Session;
use crate::bridge::session_id;
use crate::options::Options;
use crate::stdio::exit_status::describe;
use crate::stdio::relay::StartError;

/// `--max-sessions` when not given.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 64;

/// `--session-idle-timeout` when not given.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the bridge waits for its children to exit once their sessions
/// have ended: each gets SIGKILL 5 s after its stdin closed.
const EXIT_WAIT: Duration = Duration::from_secs(7);

/// Every session, by id.
#[derive(Debug)]
pub(crate) struct Sessions {
    table: Mutex<HashMap<String, Arc<Session>>>,
    /// Told when a session is forgotten.
    forgotten: Notify,
    max: usize,
    idle_timeout: Duration,
    options: Options,
    traced: bool,
}

/// Why no session was opened.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// `--max-sessions` are open.
    Full,
    /// The child could not be started.
    Start(String),
}

impl Sessions {
    pub(crate) fn new(options: Options, traced: bool) -> Arc<Self> {
        Arc::new(Self {
            table: Mutex::new(HashMap::new()),
            forgotten: Notify::new(),
            max: options.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS),
            idle_timeout: options.session_idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
            options,
            traced,
        })
    }

    fn table(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a session: its child started, on the calling thread, which must
    /// live as long as the process (see `Relay::start`).
    pub(crate) fn open(self: &Arc<Self>) -> Result<Arc<Session>, Refusal> {
        self.open_for(false)
    }

    /// Opens a session of the bridge's own, whose child serves sessionless
    /// clients ([`Pool`](crate::bridge::pool::Pool)); it counts in
    /// `--max-sessions` as any other.
    pub(crate) fn open_pooled(self: &Arc<Self>) -> Result<Arc<Session>, Refusal> {
        self.open_for(true)
    }

    fn open_for(self: &Arc<Self>, pooled: bool) -> Result<Arc<Session>, Refusal> {
        let mut table = self.table();
        if table.len() >= self.max {
            return Err(Refusal::Full);
        }
        let id = session_id::mint().map_err(|error| Refusal::Start(error.to_string()))?;
        let (session, relay, mut forwarded) =
            Session::start(id, &self.options, self.traced, pooled).map_err(|error| {
                Refusal::Start(match error {
                    StartError::Spawn(error) => {
                        format!("cannot start `{}`: {error}", self.options.command[0])
                    }
                    StartError::Relay(error) => format!("cannot relay the server's stdio: {error}"),
                })
            })?;
        table.insert(session.id().to_owned(), session.clone());
        drop(table);
        let shown = session_id::prefix(session.id()).to_owned();
        let pid = relay.pid().unwrap_or_default();
        event!(
            info,
            session = shown,
            pid,
            "session started: {shown}, the server's pid {pid}"
        );
        let sessions = self.clone();
        let ended = session.clone();
        tokio::spawn(async move {
            let status = relay.finish(&mut forwarded).await;
            // Ended by DELETE, the idle timeout or the stop: its exit, by
            // SIGTERM or otherwise, was asked for.
            let asked = ended.has_ended();
            ended.child_exited().await;
            sessions.table().remove(ended.id());
            sessions.forgotten.notify_waiters();
            match status {
                Ok(status) if asked || status.success() => event!(
                    info,
                    session = shown,
                    pid,
                    exit_status = describe(status),
                    "session ended: {shown}, the server's pid {pid} exited with {}",
                    describe(status)
                ),
                Ok(status) => event!(
                    warn,
                    session = shown,
                    pid,
                    exit_status = describe(status),
                    "the server exited with {}: session ended: {shown}, the server's pid {pid}",
                    describe(status)
                ),
                Err(error) => crate::log(&format!(
                    "cannot wait for the server of session {shown} (pid {pid}): {error}"
                )),
            }
        });
        Ok(session)
    }

    /// The session `id`, unless it ended.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.table()
            .get(id)
            .filter(|session| !session.has_ended())
            .cloned()
    }

    /// Every session open.
    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        self.table().values().cloned().collect()
    }

    /// Ends every stream of every session (the bridge drains).
    pub(crate) fn stop_listening(&self) {
        for session in self.table().values() {
            session.stop_listening();
        }
    }

    /// Ends the sessions idle past the timeout, checking a tenth of it apart
    /// (at least a second), for ever.
    pub(crate) async fn end_idle(self: Arc<Self>) {
        let period = (self.idle_timeout / 10).max(Duration::from_secs(1));
        loop {
            tokio::time::sleep(period).await;
            let idle: Vec<Arc<Session>> = self
                .table()
                .values()
                .filter(|session| {
                    session
                        .idle_since()
                        .is_some_and(|since| since.elapsed() >= self.idle_timeout)
                })
                .cloned()
                .collect();
            for session in idle {
                let shown = session_id::prefix(session.id());
                let pid = session.pid();
                event!(
                    info,
                    session = shown,
                    pid,
                    "session idle: ending it: {shown}, the server's pid {pid}"
                );
                session.end().await;
            }
        }
    }

    /// Ends every session and waits (a few seconds at most) until every
    /// child has exited.
    pub(crate) async fn end_all(&self) {
        let sessions: Vec<Arc<Session>> = self.table().values().cloned().collect();
        for session in &sessions {
            session.end().await;
        }
        let all_exited = async {
            loop {
                let forgotten = self.forgotten.notified();
                if self.table().is_empty() {
                    return;
                }
                forgotten.await;
            }
        };
        if tokio::time::timeout(EXIT_WAIT, all_exited).await.is_err() {
            crate::log("some servers had not exited 7 s after their sessions ended");
        }
    }
}
