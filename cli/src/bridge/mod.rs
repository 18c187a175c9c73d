//! The bridge, `--listen ADDR -- COMMAND`: the stdio server COMMAND served
//! over Streamable HTTP, a child per session, every answer through the layer
//! as in the stdio mode. It is the stdio mode's child
//! ([`Relay`](crate::stdio::relay::Relay), on a pair of pipes per session)
//! behind the server both listening modes share
//! ([`crate::server::listener::accept`]: the limits on clients, the
//! drain, the health listener). It uses nothing of the reverse proxy's own
//! parts.
//!
//! The files: `endpoint` (the transport's requests, answered), `session`
//! (one session's child, and its end), `child_input` (what a session writes
//! to its child: a bounded queue, written by a task of its own), `routes`
//! (where each line of the child goes), `own_answers` (what the bridge
//! answers itself, through the layer), `sessions` (the open ones, their cap,
//! their ends), `session_id` (minted at random),
//! `pool` (the children that serve sessionless clients), `executable` (the
//! command looked up at start), `guard` (`Origin`,
//! `Host` and the bearer token), `token_file` (the token, read again when
//! its file changes).
//!
//! Every child is started from the main thread, whose runtime serves the
//! bridge: it dies with the bridge (`PR_SET_PDEATHSIG` fires when the thread
//! that started a child exits), in its own process group, which its
//! session's end signals; the bridge exits once no process of any group is
//! left.
//!
//! It uses the server (`crate::server`), the stdio mode's relay, the HTTP
//! plumbing (`crate::http`), the JSON-RPC rules, the options and the signals;
//! nothing uses it but `main`.

mod child_input;
mod endpoint;
mod executable;
mod guard;
mod own_answers;
mod pool;
mod routes;
mod session;
mod session_id;
mod sessions;
mod token_file;

use std::net::SocketAddr;
use std::sync::Arc;

use crate::bridge::endpoint::Bridge;
use crate::bridge::guard::Guard;
use crate::bridge::sessions::Sessions;
use crate::options::Options;
use crate::server::admin;
use crate::server::client_limits;
use crate::server::connections::Connections;
use crate::server::listener::{accept, accept_queued, bind};
use crate::server::stopping::Stopping;
use crate::stdio::{environment, exit_status};
use crate::telemetry::event;

/// The endpoint's path when `--path` is not given.
const DEFAULT_PATH: &str = "/mcp";

/// Serves `listen` until the process is stopped; returns the exit status.
pub(crate) async fn run(options: Options, listen: SocketAddr, traced: bool) -> i32 {
    let program = &options.command[0];
    if let Err(error) = executable::find(program, environment::search_path(&options).as_deref()) {
        event!(error, program, %error, "cannot start `{program}`: {error}");
        return exit_status::spawn_failure(&error);
    }
    let listener = bind(listen).and_then(|listener| {
        let address = listener.local_addr()?;
        Ok((listener, address))
    });
    let (listener, address) = match listener {
        Ok(listening) => listening,
        Err(error) => {
            crate::telemetry::log(&format!("cannot listen on {listen}: {error}"));
            return 1;
        }
    };
    // The address bound: port 0 is a port of the system's choosing.
    let guard = match Guard::new(&options, address) {
        Ok(guard) => guard,
        Err(refusal) => {
            crate::telemetry::log(&refusal);
            return 2;
        }
    };
    client_limits::raise_descriptor_limit();
    let (mut stopping, drain) = Stopping::install(options.drain_timeout);
    let connections = Connections::new(options.client_limits(1));
    let path = options
        .path
        .clone()
        .unwrap_or_else(|| DEFAULT_PATH.to_owned());
    let Some(readiness) = admin::start(options.observability.admin_listen).await else {
        return 1;
    };
    let sessions = Sessions::new(options, traced);
    let bridge = Arc::new(Bridge::new(
        sessions.clone(),
        guard,
        path.clone(),
        connections,
        drain,
    ));
    let idle = tokio::spawn(sessions.clone().end_idle());
    event!(info, %address, "listening on {address}");
    event!(
        info,
        "serving the server at http://{address}{path}, a child per session"
    );
    accept(&listener, &bridge, stopping.next_stop()).await;
    // No new session from now on, on any connection.
    bridge.stop_opening();
    readiness.draining();
    accept_queued(listener, &bridge);
    // The sessions' GET streams stay open for ever: they end now.
    sessions.stop_listening();
    drop(bridge);
    stopping
        .drain_then(|| {
            for session in sessions.all() {
                session.answer_stopping();
            }
        })
        .await;
    idle.abort();
    sessions.end_all().await;
    event!(info, "drained");
    0
}
