//! `mcp-tool-errors`: wraps any stdio MCP server, in any language, with the layer.
//!
//! ```text
//! mcp-tool-errors [OPTIONS] COMMAND [ARGS]...      (`--` before COMMAND is optional)
//! ```
//!
//! The command runs as a child; newline-delimited JSON-RPC is relayed between
//! the wrapper's stdin/stdout and the child's, in both directions, byte for byte.
//! Client requests go through a `tower::Service` over the child's stdio with
//! `ToolErrorLayer` in front of it, so the answers to `tools/call` get the
//! layer's contract (rewrapped errors, timeouts, redaction, the cap); every other
//! message, and every answer the layer left alone, is forwarded as the child's
//! own bytes. When the child dies, what it left unanswered is answered, and the
//! wrapper exits with the child's status.
//!
//! The files: `options` (the command line), `envelope` (what the relay reads of
//! a line), `message` (the child's answer, its line and its value), `stack`
//! (the layer's stack over one request, and when it runs), `child` (the
//! requests in flight, the child's stdin, the service a timed request waits
//! on), `lines` (lines of a pipe), `client_io` (the wrapper's own stdin and
//! stdout), `from_client` and `from_child` (the threads relaying each
//! direction), `in_flight` (matching answers to requests by id),
//! `given_up` (the bounded memory of ids given up), `id_in_use` (refusing an id
//! in flight), `invalid_params` (the `-32602` conversion), `splice` (a changed
//! answer written as the child's bytes), `nested` (JSON of any depth),
//! `throttled_log` (logs a child can
//! cause at any rate), `relay` (the loops), `exit_status` and `signals`;
//! `observability_options` and `telemetry` (the command's log, OTLP export).

/// An event of the command's own log (`telemetry`), at `$level` (`info`,
/// `warn`, `error`), with `tracing`'s fields and message.
macro_rules! event {
    ($level:ident, $($rest:tt)+) => {
        tracing::$level!(target: crate::telemetry::TARGET, $($rest)+)
    };
}

mod child;
mod client_io;
mod envelope;
mod exit_status;
mod from_child;
mod from_client;
mod given_up;
mod http;
mod id_in_use;
mod in_flight;
mod invalid_params;
mod layer_request;
mod lines;
mod message;
mod nested;
mod observability_options;
mod options;
mod own_answer;
mod relay;
mod signals;
mod splice;
mod stack;
mod telemetry;
mod throttled_log;

use clap::Parser;

fn main() {
    let options = options::Options::parse();
    let telemetry = telemetry::install(&options.observability);
    let http = options.upstream.clone().zip(options.listen);
    let mut runtime = tokio::runtime::Builder::new_current_thread();
    runtime.enable_all();
    if http.is_none() {
        runtime.max_blocking_threads(relay::BLOCKING_THREADS);
    }
    let runtime = runtime.build().expect("the runtime starts");
    let code = match http {
        Some((upstream, listen)) => runtime.block_on(http::run(&options, upstream, listen)),
        None => runtime.block_on(relay::run(options, telemetry.traced())),
    };
    // Outside the runtime: the exporters' threads send what is left.
    telemetry.flush();
    // Not dropping the runtime: a blocking read of stdin may still be waiting,
    // and the answers are written and flushed already.
    std::process::exit(code);
}

/// A message of the wrapper's own log (stderr, beside the child's), at the
/// level most of them have: something went wrong. `event!` gives a level and
/// fields.
pub(crate) fn log(message: &str) {
    event!(warn, "{message}");
}
