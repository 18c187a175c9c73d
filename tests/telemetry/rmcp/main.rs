//! The request span, exported, through rmcp's own client and a layered rmcp
//! server over an in-memory duplex: tool calls, and the delivery of a task's
//! result in `tasks/get`. A binary of its own (features `opentelemetry` and
//! `rmcp`), since it installs its own global subscriber.

#[allow(unreachable_pub)]
#[path = "../../support/quiet_panics.rs"]
mod quiet_panics;

#[allow(dead_code)]
#[path = "../exporter.rs"]
mod exporter;

#[allow(unreachable_pub)]
#[path = "../../support/rmcp_tasks.rs"]
mod rmcp_tasks;

mod calls;
mod listed_tools;
mod tasks;
