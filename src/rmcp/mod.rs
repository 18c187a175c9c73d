//! rmcp support (feature `rmcp`).
