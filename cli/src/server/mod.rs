//! What serves clients over HTTP, for the HTTP mode and the bridge alike and
//! owned by neither: the listener and its accept loop (`listener`), what a
//! listener serves (`site`, the one thing each mode writes), every
//! connection, its socket and what it is doing (`connections`,
//! `watched_stream`, `activity`) under the
//! limits on clients (`client_limits`), the workers that share the listener
//! (`workers`), the drain and the signals that start and end it (`drain`,
//! `stopping`), and the health listener (`admin`). It uses the HTTP
//! plumbing (`crate::http`) and nothing of either mode.

pub(crate) mod activity;
pub(crate) mod admin;
pub(crate) mod client_limits;
pub(crate) mod connections;
pub(crate) mod drain;
pub(crate) mod listener;
pub(crate) mod site;
pub(crate) mod stopping;
pub(crate) mod watched_stream;
pub(crate) mod workers;
