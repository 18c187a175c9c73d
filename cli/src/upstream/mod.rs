//! The HTTP mode's client of the upstream: its URL and what connects to it
//! (`url`), the connections, each given back at its response's end
//! (`client`), those that wait for a request (`idle`), how long a response
//! head may take (`head_timeout`), answers decoded before they are read
//! (`decoded`), event streams cut into events (`sse`), and what the upstream
//! learns of the client (`forwarded`). It uses the HTTP plumbing
//! (`crate::http`) and the JSON-RPC rules; nothing of what serves clients.

pub(crate) mod client;
pub(crate) mod decoded;
pub(crate) mod forwarded;
pub(crate) mod head_timeout;
mod idle;
pub(crate) mod sse;
pub(crate) mod url;
