//! `tools/call` end to end through rmcp's own client and server over an in-memory
//! duplex: a server as written, next to the same server `.with_tool_errors()`.
//!
//! One iteration is 10,000 sequential round trips. Client and server run on one
//! current-thread runtime, so both connections see the same scheduling.

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{SamplingMode, Throughput};
use mcp_tool_errors::rmcp::ServerHandlerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use support::{Estimates, Summary};
use tokio::runtime::Runtime;

const ROUND_TRIPS: u64 = 10_000;
/// 24 bytes: the longest tool name the layer keeps inline.
const TOOL: &str = "list_merge_requests_open";

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let bare = runtime.block_on(connect(Repository::new()));
    let layered = runtime.block_on(connect(Repository::new().with_tool_errors()));
    if let Some(spec) = std::env::var_os("BENCH_REPEAT") {
        let routine = |name: &str| -> Option<support::Routine> {
            let client = match name {
                "rmcp_tools_call/bare" => &bare,
                "rmcp_tools_call/with_tool_errors" => &layered,
                _ => return None,
            };
            let runtime = &runtime;
            Some(Box::new(move || {
                drop(black_box(runtime.block_on(round_trip(client))))
            }))
        };
        support::repeat(&spec.to_string_lossy(), routine);
        return;
    }
    let estimates = Estimates::since_now();
    let mut criterion = support::criterion();
    assert_eq!(
        runtime.block_on(round_trip(&bare)),
        runtime.block_on(round_trip(&layered)),
        "a successful call passes through unchanged",
    );

    let mut group = criterion.benchmark_group("rmcp_tools_call");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(ROUND_TRIPS));
    for (name, client) in [("bare", &bare), ("with_tool_errors", &layered)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                runtime.block_on(async {
                    let started = Instant::now();
                    for _ in 0..iterations * ROUND_TRIPS {
                        black_box(round_trip(client).await);
                    }
                    started.elapsed()
                })
            })
        });
    }
    group.finish();
    criterion.final_summary();
    summarize(&estimates, &runtime, &bare, &layered);
    for client in [bare, layered] {
        runtime
            .block_on(client.cancel())
            .expect("the client closes");
    }
}

type Client = RunningService<RoleClient, ()>;

/// A client connected over a duplex to `server`, which runs until the client
/// goes away.
async fn connect<S: ServerHandler>(server: S) -> Client {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(server.serve(server_io), ().serve(client_io));
    tokio::spawn(server.expect("the server starts").waiting());
    client.expect("the client connects")
}

/// One successful `tools/call`, answered with a short text.
async fn round_trip(client: &Client) -> String {
    let arguments = serde_json::json!({"project": "core", "limit": 10});
    let params = CallToolRequestParams::new(TOOL)
        .with_arguments(arguments.as_object().expect("an object").clone());
    let result = client
        .call_tool(params)
        .await
        .expect("the call is answered");
    assert_ne!(result.is_error, Some(true));
    result.content[0]
        .as_text()
        .expect("a text item")
        .text
        .clone()
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct ListArgs {
    /// The project path.
    project: String,
    /// How many merge requests to list at most.
    limit: u32,
}

/// A server with one tool that answers from memory.
#[derive(Debug, Clone)]
struct Repository {
    tool_router: ToolRouter<Self>,
}

impl Repository {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl Repository {
    #[tool(description = "Lists the open merge requests of a project")]
    fn list_merge_requests_open(
        &self,
        Parameters(ListArgs { project, limit }): Parameters<ListArgs>,
    ) -> String {
        format!(
            "{limit} open merge requests in {project}: !101 Fix the login redirect, !102 Bump serde"
        )
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Repository {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn summarize(estimates: &Estimates, runtime: &Runtime, bare: &Client, layered: &Client) {
    let group = "rmcp_tools_call";
    let mut summary = Summary::default();
    let per_second = |ns: f64| ROUND_TRIPS as f64 / ns * 1e9;
    summary.row(
        "bare: round trips per second",
        estimates.median_ns(group, "bare").map(per_second),
        |figure| format!("{figure:.0}"),
        "",
    );
    summary.row(
        "with_tool_errors: round trips per second",
        estimates
            .median_ns(group, "with_tool_errors")
            .map(per_second),
        |figure| format!("{figure:.0}"),
        "",
    );
    // Throughput is the inverse of time: bare time over layered time.
    summary.row(
        "throughput with_tool_errors / bare, criterion medians",
        estimates.ratio(group, "bare", "with_tool_errors"),
        support::ratio,
        "≥ 0.97",
    );
    if estimates.median_ns(group, "bare").is_some() {
        let mut bare_call = || drop(black_box(runtime.block_on(round_trip(bare))));
        let mut layered_call = || drop(black_box(runtime.block_on(round_trip(layered))));
        let time_ratio = support::paired_ratio(&mut bare_call, &mut layered_call);
        summary.row(
            "throughput with_tool_errors / bare, paired",
            Some(1.0 / time_ratio),
            support::ratio,
            "≥ 0.97",
        );
    }
    summary.print("rmcp end to end: criterion medians of this run, and a paired ratio");
}
