//! The MCP exchange of the HTTP mode: a request at the endpoint sent to the
//! upstream and its answer read, rewritten through the layer, and given to
//! the client. `direct_call` (a `tools/call` no timeout applies to) and
//! `layered_exchange` (any other request, the layer's future made as it is
//! sent) send; `answer_reader` reads either's response, `answer_stream` an
//! event stream as it passes, `answer_rewriter` gives the client what the
//! layer makes of each answer, against the requests it awaits
//! (`awaited_requests`); `failure` answers when the upstream gives none,
//! `cancel` says what the proxy gives up, `unread` counts answers it could
//! not read; `seen_calls` and `replayed` rewrite answers that come on a
//! session's `GET` stream, and `task_ids` gives the client task ids any
//! replica can serve. It uses the upstream client, the drain of the server,
//! the HTTP plumbing and the JSON-RPC rules.

pub(crate) mod answer_reader;
pub(crate) mod answer_rewriter;
pub(crate) mod answer_stream;
mod awaited_requests;
pub(crate) mod cancel;
pub(crate) mod direct_call;
pub(crate) mod failure;
pub(crate) mod layer_state;
pub(crate) mod layered_exchange;
pub(crate) mod outbound;
pub(crate) mod replayed;
pub(crate) mod seen_calls;
pub(crate) mod task_ids;
mod unread;
