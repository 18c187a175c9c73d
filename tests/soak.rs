//! Load and soak through rmcp: 100,000 `tools/call` from rmcp's own client to an
//! rmcp server `.with_tool_errors()`, 64 at a time, over an in-memory duplex.
//! The calls mix successes, tool errors, sync and async panics and unknown tools.
//!
//! Every call must come back once, with its own answer; on the wire between the
//! two, every request must get exactly one response, with its id and of the kind
//! its tool gives; the server must end cleanly when the client leaves. Resident
//! memory after the run must stay within a few MiB of where it settled after the
//! first 10,000 calls (measured on Linux, where a missing figure fails the test).
//!
//! The control, `a_deliberate_leak_breaks_the_memory_bound`, runs the same soak,
//! shorter (40,000 calls), against a server that leaks 2 KiB in one call of
//! five and shows that the bound catches it. It is `#[ignore]`d, so that `cargo test` runs the soak once;
//! CI runs it with `cargo test --all-features --test soak -- --ignored`.
//!
//! These are the only tests of their binary, and they never run at the same
//! time, so the process's memory is the soak's own.

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_tool_errors::render_error;
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ErrorCode, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{Peer, QuitReason, ServiceError};
use rmcp::{RoleClient, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::Value;
use support::HIDDEN_TOOL_MESSAGE;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

const CALLS: u64 = 100_000;
const CONCURRENCY: u64 = 64;
/// Where memory is taken to have settled: caches, pools and the allocator's
/// arenas have grown to what the load needs.
const SETTLED_AFTER: u64 = 10_000;
/// How far resident memory may grow between settling and the end of the run.
const RSS_GROWTH_LIMIT: u64 = 4 * 1024 * 1024;
/// Hang guards: one call, and the whole run.
const CALL_WITHIN: Duration = Duration::from_secs(60);
const RUN_WITHIN: Duration = Duration::from_secs(900);

/// How many calls the control makes: a soak of its own, shorter.
const CONTROL_CALLS: u64 = 40_000;
/// What the control's server leaks in each successful call: 6,000 of them
/// after memory settled, about 12 MiB, well past the bound.
const DELIBERATE_LEAK: usize = 2048;

/// What a call does, by its sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Success,
    ToolError,
    SyncPanic,
    AsyncPanic,
    UnknownTool,
}

impl Kind {
    fn of(n: u64) -> Self {
        [
            Self::Success,
            Self::ToolError,
            Self::SyncPanic,
            Self::AsyncPanic,
            Self::UnknownTool,
        ][(n % 5) as usize]
    }

    fn tool(self) -> &'static str {
        match self {
            Self::Success => "echo",
            Self::ToolError => "refuse",
            Self::SyncPanic => "panic_sync",
            Self::AsyncPanic => "panic_async",
            Self::UnknownTool => "no_such_tool",
        }
    }

    fn of_tool(tool: &str) -> Option<Self> {
        [
            Self::Success,
            Self::ToolError,
            Self::SyncPanic,
            Self::AsyncPanic,
            Self::UnknownTool,
        ]
        .into_iter()
        .find(|kind| kind.tool() == tool)
    }
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Sequence {
    /// The call's sequence number.
    n: u64,
}

#[derive(Debug, Clone)]
struct SoakServer {
    tool_router: ToolRouter<Self>,
    /// Bytes `echo` leaks on each call: 0, or the control's deliberate leak.
    leak_per_echo: usize,
    /// How many calls the soak makes of it.
    calls: u64,
}

#[tool_router]
impl SoakServer {
    #[tool(description = "Answers with its sequence number")]
    fn echo(&self, Parameters(Sequence { n }): Parameters<Sequence>) -> String {
        if self.leak_per_echo > 0 {
            // Written to, so that the pages are resident.
            std::hint::black_box(Box::leak(vec![1u8; self.leak_per_echo].into_boxed_slice()));
        }
        format!("ok {n}")
    }

    #[tool(description = "Reports a tool error")]
    fn refuse(&self, Parameters(Sequence { n }): Parameters<Sequence>) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(format!("refused {n}"))])
    }

    #[tool(description = "Panics")]
    fn panic_sync(&self, Parameters(Sequence { n }): Parameters<Sequence>) -> String {
        panic!("[expected] sync panic in call {n}")
    }

    #[tool(description = "Panics after an await")]
    async fn panic_async(&self, Parameters(Sequence { n }): Parameters<Sequence>) -> String {
        tokio::task::yield_now().await;
        panic!("[expected] async panic in call {n}")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SoakServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn call(n: u64) -> CallToolRequestParams {
    let arguments = serde_json::json!({ "n": n });
    CallToolRequestParams::new(Kind::of(n).tool())
        .with_arguments(arguments.as_object().expect("an object").clone())
}

/// Checks what the client got for call `n`; `Err` says what was wrong.
fn check_answer(n: u64, answer: Result<CallToolResult, ServiceError>) -> Result<(), String> {
    let kind = Kind::of(n);
    let text = |result: &CallToolResult| -> Option<String> {
        match result.content.as_slice() {
            [only] => only.as_text().map(|text| text.text.clone()),
            _ => None,
        }
    };
    let (is_error, expected) = match kind {
        Kind::Success => (false, format!("ok {n}")),
        Kind::ToolError => (true, render_error("refuse", &format!("refused {n}"))),
        Kind::SyncPanic | Kind::AsyncPanic => {
            (true, render_error(kind.tool(), HIDDEN_TOOL_MESSAGE))
        }
        Kind::UnknownTool => {
            return match answer {
                Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                    Ok(())
                }
                other => Err(format!("call {n} ({kind:?}): {other:?}")),
            };
        }
    };
    match answer {
        Ok(result)
            if result.is_error.unwrap_or(false) == is_error && text(&result) == Some(expected) =>
        {
            Ok(())
        }
        other => Err(format!("call {n} ({kind:?}): {other:?}")),
    }
}

/// What the wire between client and server showed.
#[derive(Debug, Default)]
struct Wire {
    /// Requests sent and not yet answered, by id, with their kind (`None`: not
    /// a `tools/call`).
    outstanding: HashMap<String, Option<Kind>>,
    answered: HashMap<Kind, u64>,
    faults: Vec<String>,
}

impl Wire {
    fn fault(&mut self, fault: String) {
        // Enough to diagnose, without letting a broken run grow memory.
        if self.faults.len() < 20 {
            self.faults.push(fault);
        }
    }

    fn saw_from_client(&mut self, message: &Value) {
        let (Some(id), Some(method)) = (message.get("id"), message.get("method")) else {
            return;
        };
        let kind = match method.as_str() {
            Some("tools/call") => {
                let tool = message["params"]["name"].as_str().unwrap_or_default();
                Some(Kind::of_tool(tool).unwrap_or_else(|| panic!("an unexpected tool {tool}")))
            }
            _ => None,
        };
        if self.outstanding.insert(id.to_string(), kind).is_some() {
            self.fault(format!("id {id} sent again while in flight"));
        }
    }

    fn saw_from_server(&mut self, message: &Value) {
        let Some(id) = message
            .get("id")
            .filter(|_| message.get("method").is_none())
        else {
            return;
        };
        let Some(kind) = self.outstanding.remove(&id.to_string()) else {
            self.fault(format!(
                "a response to id {id}, which no request in flight has: {message}"
            ));
            return;
        };
        let Some(kind) = kind else { return };
        let is_error = message["result"]["isError"] == true;
        let right = match kind {
            Kind::Success => message.get("result").is_some() && !is_error,
            Kind::ToolError | Kind::SyncPanic | Kind::AsyncPanic => is_error,
            Kind::UnknownTool => message["error"]["code"] == ErrorCode::INVALID_PARAMS.0,
        };
        if !right {
            self.fault(format!("{kind:?} answered with {message}"));
        }
        *self.answered.entry(kind).or_default() += 1;
    }
}

/// Copies JSON-RPC lines from `from` to `to`, showing each message to `see`.
async fn relay(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    wire: Arc<Mutex<Wire>>,
    see: fn(&mut Wire, &Value),
) {
    let mut lines = BufReader::new(from).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        match serde_json::from_str::<Value>(&line) {
            Ok(message) => see(&mut wire.lock().unwrap(), &message),
            Err(error) => wire
                .lock()
                .unwrap()
                .fault(format!("not JSON ({error}): {line}")),
        }
        let sent = async {
            to.write_all(line.as_bytes()).await?;
            to.write_all(b"\n").await?;
            to.flush().await
        };
        if sent.await.is_err() {
            break;
        }
    }
    // The other end sees the close, as it would without the tap in between.
    let _ = to.shutdown().await;
}

/// Makes `n` calls, `CONCURRENCY` at a time, numbered from `first`; returns the
/// problems seen.
async fn run_calls(peer: &Peer<RoleClient>, first: u64, count: u64) -> Vec<String> {
    let next = Arc::new(AtomicU64::new(first));
    let end = first + count;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..CONCURRENCY {
        let (peer, next) = (peer.clone(), next.clone());
        workers.spawn(async move {
            let mut problems = Vec::new();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= end {
                    return problems;
                }
                let answer = tokio::time::timeout(CALL_WITHIN, peer.call_tool(call(n))).await;
                let checked = answer
                    .map_err(|_| format!("call {n}: no answer within {CALL_WITHIN:?}"))
                    .and_then(|answer| check_answer(n, answer));
                if let Err(problem) = checked {
                    problems.push(problem);
                    if problems.len() > 20 {
                        return problems;
                    }
                }
            }
        });
    }
    let mut problems = Vec::new();
    while let Some(worker) = workers.join_next().await {
        problems.extend(worker.expect("a worker task ended in a panic"));
    }
    problems
}

/// Resident memory of this process, in bytes (`VmRSS` of `/proc/self/status`,
/// in kB). `None` on systems without Linux's procfs; on Linux a missing or
/// unreadable figure fails the test, so that the bound is never skipped there.
fn resident_bytes() -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_else(|e| panic!("/proc/self/status is readable on Linux: {e}"));
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/self/status:\n{status}"));
    Some(kib * 1024)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

impl SoakServer {
    fn new(leak_per_echo: usize, calls: u64) -> Self {
        Self {
            tool_router: Self::tool_router(),
            leak_per_echo,
            calls,
        }
    }
}

/// Resident memory where it settled, and at the end of the run.
#[derive(Debug, Clone, Copy)]
struct Resident {
    settled: u64,
    calls: u64,
    after: u64,
}

impl Resident {
    fn within_bound(self) -> bool {
        self.after <= self.settled + RSS_GROWTH_LIMIT
    }
}

impl std::fmt::Display for Resident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "resident memory: {:.1} MiB after {SETTLED_AFTER} calls, {:.1} MiB after {}",
            mib(self.settled),
            mib(self.after),
            self.calls
        )
    }
}

/// One soak at a time, so that each measures the memory of its own run.
static ONE_SOAK_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_mixed_calls_each_answered_once_in_bounded_memory() {
    let Some(resident) = run_soak(SoakServer::new(0, CALLS)).await else {
        println!("resident memory is not measured on this system");
        return;
    };
    println!("{resident}");
    assert!(
        resident.within_bound(),
        "resident memory grew by more than {:.1} MiB: {resident}",
        mib(RSS_GROWTH_LIMIT)
    );
}

/// The control: the bound must catch a server that leaks a little on every
/// successful call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the control of the memory bound, a second soak: CI runs it with --ignored"]
async fn a_deliberate_leak_breaks_the_memory_bound() {
    let resident = run_soak(SoakServer::new(DELIBERATE_LEAK, CONTROL_CALLS))
        .await
        .expect("the control needs resident memory figures (Linux)");
    println!("with a deliberate leak: {resident}");
    assert!(
        !resident.within_bound(),
        "a leak of {DELIBERATE_LEAK} bytes in one call of five stayed within the bound: {resident}"
    );
}

/// The soak against `server`, checked for answers; the resident memory figures
/// where this system has them.
async fn run_soak(server: SoakServer) -> Option<Resident> {
    support::quiet_panics::silence_expected_panics();
    let _alone = ONE_SOAK_AT_A_TIME.lock().await;
    tokio::time::timeout(RUN_WITHIN, soak(server))
        .await
        .unwrap_or_else(|_| panic!("the soak did not finish within {RUN_WITHIN:?}"))
}

async fn soak(server: SoakServer) -> Option<Resident> {
    let started = Instant::now();
    let calls = server.calls;
    // client <-> tap <-> server: the tap reads every message on its way.
    let (server_io, server_end) = tokio::io::duplex(64 * 1024);
    let (client_end, client_io) = tokio::io::duplex(64 * 1024);
    let (server_reads, server_writes) = tokio::io::split(server_end);
    let (client_reads, client_writes) = tokio::io::split(client_end);
    let wire = Arc::new(Mutex::new(Wire::default()));
    tokio::spawn(relay(
        client_reads,
        server_writes,
        wire.clone(),
        Wire::saw_from_client,
    ));
    tokio::spawn(relay(
        server_reads,
        client_writes,
        wire.clone(),
        Wire::saw_from_server,
    ));

    let server = server.with_tool_errors();
    let (server, client) = tokio::join!(server.serve(server_io), ().serve(client_io));
    let server = tokio::spawn(server.expect("the server starts").waiting());
    let client = client.expect("the client connects");
    let peer = client.peer().clone();

    let problems = run_calls(&peer, 0, SETTLED_AFTER).await;
    assert!(problems.is_empty(), "{problems:#?}");
    let (settled, settled_at) = (resident_bytes(), started.elapsed());
    let problems = run_calls(&peer, SETTLED_AFTER, calls - SETTLED_AFTER).await;
    assert!(problems.is_empty(), "{problems:#?}");
    let (after, took) = (resident_bytes(), started.elapsed());

    client.cancel().await.expect("the client closes");
    match tokio::time::timeout(CALL_WITHIN, server).await {
        Ok(Ok(Ok(QuitReason::Closed))) => {}
        other => panic!("the server did not end cleanly once the client left: {other:?}"),
    }

    let wire = wire.lock().unwrap();
    assert!(wire.faults.is_empty(), "{:#?}", wire.faults);
    assert!(
        wire.outstanding.is_empty(),
        "never answered: {:?}",
        wire.outstanding.keys()
    );
    for kind in [
        Kind::Success,
        Kind::ToolError,
        Kind::SyncPanic,
        Kind::AsyncPanic,
        Kind::UnknownTool,
    ] {
        assert_eq!(
            wire.answered.get(&kind),
            Some(&(calls / 5)),
            "{kind:?}: {:?}",
            wire.answered
        );
    }
    println!(
        "{calls} calls at concurrency {CONCURRENCY} in {took:.1?} (the first {SETTLED_AFTER} in {settled_at:.1?})"
    );
    Some(Resident {
        settled: settled?,
        calls,
        after: after?,
    })
}
