//! The layer over JSON-RPC messages as `serde_json::Value`s: its public API, the
//! golden corpus byte for byte, every panic answered, no panic payload sent,
//! and properties that hold for any input.

#[path = "../support/mod.rs"]
mod support;

mod batches;
mod cap;
mod golden;
mod ids;
mod key_order;
mod layer;
mod leaks;
mod panics;
mod properties;
#[cfg(feature = "redact")]
mod redact;
mod render_panics;
mod result_at_hand;
mod sanitize;
mod tasks;
mod timeouts;
