//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

pub mod block_on;
pub mod golden;
pub mod log;
pub mod quiet_panics;
