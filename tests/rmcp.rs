//! The layer over rmcp: the golden corpus through rmcp's typed messages; rmcp's
//! own client against layered servers over an in-memory duplex and over
//! streamable HTTP; every `ServerHandler` method forwarded; rmcp's
//! protocol-version shaping; `TowerHandler`; stacks of one's own; timeouts.

mod support;

#[path = "rmcp/delegation.rs"]
mod delegation;
#[path = "rmcp/duplex.rs"]
mod duplex;
#[path = "rmcp/golden.rs"]
mod golden;
#[path = "rmcp/http.rs"]
mod http;
#[path = "rmcp/scenarios.rs"]
mod scenarios;
#[path = "rmcp/servers.rs"]
mod servers;
#[path = "rmcp/shaping.rs"]
mod shaping;
#[path = "rmcp/stack.rs"]
mod stack;
#[path = "rmcp/timeouts.rs"]
mod timeouts;
#[path = "rmcp/tower_handler.rs"]
mod tower_handler;
