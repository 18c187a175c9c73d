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
//! The three modes, a folder each: `stdio` (the child on pipes, the command's
//! first mode), `proxy` (`--upstream URL --listen ADDR`: a reverse proxy in
//! front of an HTTP server) and `bridge` (`--listen ADDR -- COMMAND`: a stdio
//! server served over Streamable HTTP, a `stdio` child per session). The
//! parts they are built of, a folder each: `server` (what serves clients
//! over HTTP, for the reverse proxy and the bridge alike), `upstream` (the
//! reverse proxy's client of the upstream), `exchange` (the reverse proxy's
//! MCP exchange: answers read and rewritten through the layer), `http`
//! (bodies, headers and the responses every HTTP part writes) and `jsonrpc`
//! (what every mode reads and writes of a JSON-RPC message); at the root,
//! the command line (`options`, `observability_options`), `signals`,
//! `throttled_log` (logs a peer can cause at any rate), `memory` (given back
//! after a burst) and `telemetry` (the command's log, OTLP export). A part
//! uses only the parts below it: `docs/cli.md` draws the map.

mod bridge;
mod exchange;
mod http;
mod jsonrpc;
mod memory;
mod observability_options;
mod options;
mod proxy;
mod server;
mod signals;
mod stdio;
mod telemetry;
mod throttled_log;
mod upstream;

use clap::Parser;

fn main() {
    let options = options::Options::parse();
    let telemetry = telemetry::install(&options.observability);
    let mut runtime = tokio::runtime::Builder::new_current_thread();
    runtime.enable_all();
    if options.listen.is_none() {
        runtime.max_blocking_threads(stdio::BLOCKING_THREADS);
    }
    let runtime = runtime.build().expect("the runtime starts");
    let code = match (options.upstream.clone(), options.listen) {
        (Some(upstream), Some(listen)) => runtime.block_on(proxy::run(&options, upstream, listen)),
        (None, Some(listen)) => runtime.block_on(bridge::run(options, listen, telemetry.traced())),
        _ => runtime.block_on(stdio::run(options, telemetry.traced())),
    };
    // Outside the runtime: the exporters' threads send what is left.
    telemetry.flush();
    // Not dropping the runtime: a blocking read of stdin may still be waiting,
    // and the answers are written and flushed already.
    std::process::exit(code);
}
