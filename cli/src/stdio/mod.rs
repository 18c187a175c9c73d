//! The stdio mode, `mcp-tool-errors COMMAND`: the relay of the client's stdin
//! to the child and the child's stdout to the client, each direction on a
//! thread of its own with blocking pipes (see `from_client`, `from_child`),
//! until the child exits; the runtime (one thread) waits for the child, passes
//! signals on, keeps the grace periods and polls the layer's futures that hold
//! a timer.
//!
//! The files: `stack` (the layer's stack over one request, and when it runs),
//! `child` (the requests in flight, the service a timed request waits
//! on), `child_stdin` (the child's stdin, which a child that stops reading
//! cannot block), `lines` (lines of a pipe), `client_io` (the client's
//! side of the pipes), `from_client` and `from_child` (the threads relaying
//! each direction), `in_flight` (matching answers to requests by id),
//! `given_up` (the bounded memory of ids given up), `own_lines` (the wrapper's
//! own lines to the child, one bounded queue with one writer), `exit_status`,
//! `environment` (what the child's environment
//! holds), `process_group` (the child's group, ended before the child is
//! reaped), `stdout_holders` (what holds the child's stdout from outside its
//! group once it exited, killed), and `relay` (one child relayed to one
//! client's pipes, until it exits: the stdio mode's, and each of the bridge's
//! sessions'). It uses the JSON-RPC rules, the options, the signals and the
//! log; nothing of HTTP.

pub(crate) mod child;
mod child_stdin;
pub(crate) mod client_io;
pub(crate) mod environment;
pub(crate) mod exit_status;
mod from_child;
mod from_client;
mod given_up;
pub(crate) mod in_flight;
mod lines;
mod own_lines;
mod process_group;
pub(crate) mod relay;
pub(crate) mod stack;
mod stdout_holders;

use self::client_io::ClientOutput;
use self::exit_status::{describe, exit_code};
use self::relay::{ClientPipes, Relay, StartError};
use crate::options::Options;
use crate::signals;
use crate::telemetry::event;

/// The threads of the runtime's blocking pool, which writes what the runtime
/// answers (the layer's answers at a timeout) and the wrapper's own lines to
/// the child's stdin (`own_lines`). Those writes wait on one lock per pipe, so
/// more threads would only wait on the locks: with tokio's default of 512, a
/// burst of timeouts started a thread each (488 threads and 10 MB more after
/// 100,000 timeouts, 1,000 at a time). One thread at most waits on the child's
/// stdin (`Child::send_own_lines`, the one writer of the wrapper's own lines),
/// which leaves the others for the client.
pub(crate) const BLOCKING_THREADS: usize = 4;

/// Runs the child until it exits; returns the wrapper's exit status. With
/// `traced`, every request goes through the layer, which records its span.
pub(crate) async fn run(options: Options, traced: bool) -> i32 {
    // Before the child exists, so that no signal meant for it stops the wrapper.
    let mut forwarded = match signals::Forwarded::install() {
        Ok(forwarded) => forwarded,
        Err(error) => {
            crate::telemetry::log(&format!("cannot handle signals: {error}"));
            return 1;
        }
    };
    let client = client_io::stdin().and_then(|input| {
        Ok(ClientPipes {
            input,
            output: ClientOutput::stdout()?,
        })
    });
    let client = match client {
        Ok(client) => client,
        Err(error) => {
            crate::telemetry::log(&format!("cannot relay the wrapper's stdio: {error}"));
            return 1;
        }
    };
    let relay = match Relay::start(&options, &options.command, client, traced) {
        Ok(relay) => relay,
        Err(StartError::Spawn(error)) => {
            let program = &options.command[0];
            event!(error, program, %error, "cannot start `{program}`: {error}");
            return exit_status::spawn_failure(&error);
        }
        Err(StartError::Relay(error)) => {
            crate::telemetry::log(&format!("cannot relay the server's stdio: {error}"));
            return 1;
        }
    };
    match relay.finish(&mut forwarded).await {
        Ok(status) => {
            if !status.success() {
                event!(
                    warn,
                    exit_status = describe(status),
                    "the server exited with {}",
                    describe(status)
                );
            }
            exit_code(status)
        }
        Err(error) => {
            crate::telemetry::log(&format!("cannot wait for the server: {error}"));
            1
        }
    }
}
