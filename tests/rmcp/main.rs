//! The layer over rmcp: the golden corpus through rmcp's typed messages; rmcp's
//! own client against layered servers over an in-memory duplex and over
//! streamable HTTP; every `ServerHandler` method forwarded; rmcp's
//! protocol-version shaping; `TowerHandler`; stacks of one's own; timeouts; no
//! panic payload on the wire; the `rmcp_stdio` example driven as a child process.

#[path = "../support/mod.rs"]
mod support;

mod delegation;
mod duplex;
mod golden;
mod http;
mod leaks;
mod scenarios;
mod servers;
mod shaping;
mod stack;
mod stdio_example;
mod timeouts;
mod tower_handler;
