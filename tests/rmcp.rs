//! The layer over rmcp: the golden corpus through rmcp's typed messages, and
//! rmcp's own client against layered servers over an in-memory duplex and over
//! streamable HTTP.

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
