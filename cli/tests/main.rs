//! The `mcp-tool-errors` command over real pipes: against a scripted child
//! (`scripted`), a server on the official Python SDK (`python`) and the
//! TypeScript reference server (`everything`), and launched by the MCP
//! Inspector's CLI (`inspector`); the child's environment (`environment`).
//!
//! The Python and TypeScript servers and the Inspector are installed by
//! `scripts/install-test-servers.sh` into `.tools/`; their tests are ignored
//! unless asked for (`cargo test -p mcp-tool-errors-cli -- --include-ignored`),
//! and then skip with a message when the servers are missing, unless
//! `MCP_TOOL_ERRORS_REQUIRE_SERVERS` is set (CI sets it), and then fail. Every read from a process is bounded by a
//! timeout, so a broken child fails a test instead of hanging it.

#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/support/example.rs"]
mod example;

mod child_output;
mod command_line;
mod depth;
mod environment;
mod everything;
mod in_flight;
mod inspector;
mod log_format;
mod otlp;
mod otlp_receiver;
mod python;
mod scripted;
mod signals;
mod support;
mod typescript_tasks;
