//! The bridge's sessions: at most `--max-sessions` at once, each ended at
//! `DELETE`, after `--session-idle-timeout` with no request and no open
//! stream, when its child exits, or when the bridge stops; a session is
//! forgotten once its child has exited.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use crate::bridge::own_answers::OwnAnswers;
use crate::bridge::session::{Session, Started};
use crate::bridge::session_id;
use crate::options::Options;
use crate::stdio::exit_status::describe;
use crate::stdio::relay::StartError;
use crate::telemetry::event;

/// `--max-sessions` when not given.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 64;

/// `--session-idle-timeout` when not given.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the bridge waits for its children to exit once their sessions
/// have ended: each gets SIGKILL, with its group, 5 s after its session
/// ended ([`KILL_AFTER`](crate::bridge::session::KILL_AFTER)); what is left of
/// a group whose first process exited
/// by itself gets SIGKILL at the end of its grace (5 s); and the relay
/// writes its last answers (2 s at most).
const EXIT_WAIT: Duration = Duration::from_secs(13);

/// How long the routing of a session's lines may take to end after its
/// relay did.
const ROUTED_WITHIN: Duration = Duration::from_secs(2);

/// Every session, by id.
#[derive(Debug)]
pub(crate) struct Sessions {
    table: Mutex<Table>,
    /// Told when a session is forgotten.
    forgotten: Notify,
    max: usize,
    idle_timeout: Duration,
    options: Options,
    traced: bool,
    own_answers: OwnAnswers,
}

/// The sessions open, and how many are being opened.
#[derive(Debug, Default)]
struct Table {
    open: HashMap<String, Arc<Session>>,
    /// Sessions whose child is being started, which count in the cap.
    opening: usize,
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
            table: Mutex::new(Table::default()),
            forgotten: Notify::new(),
            max: options.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS),
            idle_timeout: options.session_idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
            own_answers: OwnAnswers::new(&options),
            options,
            traced,
        })
    }

    fn table(&self) -> MutexGuard<'_, Table> {
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
        {
            let mut table = self.table();
            if table.open.len() + table.opening >= self.max {
                return Err(Refusal::Full);
            }
            table.opening += 1;
        }
        // No lock is held while the child starts.
        let started = self.start(pooled);
        let mut table = self.table();
        table.opening -= 1;
        let Started {
            session,
            relay,
            signals: mut forwarded,
            routing,
        } = started?;
        table.open.insert(session.id().to_owned(), session.clone());
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
            // The relay's last lines are routed once its reading of the
            // session's pipe has ended; then what the child never got is
            // answered.
            ended.abandon_input();
            let _ = tokio::time::timeout(ROUTED_WITHIN, routing).await;
            let described = match &status {
                Ok(status) => describe(*status),
                Err(_) => "status unknown".to_owned(),
            };
            ended.child_exited(&described);
            sessions.table().open.remove(ended.id());
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
                Err(error) => crate::telemetry::log(&format!(
                    "cannot wait for the server of session {shown} (pid {pid}): {error}"
                )),
            }
        });
        Ok(session)
    }

    /// Starts a session's child, on the calling thread.
    fn start(&self, pooled: bool) -> Result<Started, Refusal> {
        let id = session_id::mint().map_err(|error| Refusal::Start(error.to_string()))?;
        Session::start(
            id,
            &self.options,
            self.traced,
            pooled,
            self.own_answers.clone(),
        )
        .map_err(|error| {
            Refusal::Start(match error {
                StartError::Spawn(error) => {
                    format!("cannot start `{}`: {error}", self.options.command[0])
                }
                StartError::Relay(error) => format!("cannot relay the server's stdio: {error}"),
            })
        })
    }

    /// The session `id`, unless it ended.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.table()
            .open
            .get(id)
            .filter(|session| !session.has_ended())
            .cloned()
    }

    /// Every session open.
    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        self.table().open.values().cloned().collect()
    }

    /// Ends every stream of every session (the bridge drains).
    pub(crate) fn stop_listening(&self) {
        for session in self.table().open.values() {
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
                .open
                .values()
                .filter(|session| {
                    // An ended session waits for its child's group only.
                    !session.has_ended()
                        && session
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
                session.end();
            }
        }
    }

    /// Ends every session and waits (a few seconds at most) until no
    /// process of any child's group is left.
    pub(crate) async fn end_all(&self) {
        for session in self.all() {
            session.end();
        }
        let all_exited = async {
            loop {
                let forgotten = self.forgotten.notified();
                if self.table().open.is_empty() {
                    return;
                }
                forgotten.await;
            }
        };
        if tokio::time::timeout(EXIT_WAIT, all_exited).await.is_err() {
            crate::telemetry::log(&format!(
                "some servers had not exited {} s after their sessions ended",
                EXIT_WAIT.as_secs()
            ));
        }
    }
}
