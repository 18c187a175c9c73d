//! What every mode reads and writes of a JSON-RPC message: `layer_over_answer` (the
//! layer over an answer already at hand), `layer_call` (the layer's future held
//! with a request whose span is exported, resolved where its answer is read), `envelope` (what
//! is read of a line or a body before the layer sees it), `member_scan` (what
//! the members of a message too large to read are, found as it passes),
//! `member` (what a message is, and each message of a batch: a request, a
//! cancellation, a response),
//! `message` (an answer, its bytes and its value), `layer_request` (the request handed to
//! the layer), `method` (the methods told apart), `splice` (a changed answer
//! written as the server's bytes),
//! `tool_error_texts` (a tool error's texts read from its answer's bytes),
//! `nested` (JSON of any depth), `invalid_params` (the `-32602` conversion),
//! `own_answer` (the answers the command makes itself), `id_in_use` (the
//! refusal of an id in flight or held twice, in every mode) and `timed_tools`
//! (the calls the layer holds a timer for). It uses the library and nothing
//! of the command but `telemetry` (whether the metric is recorded).

pub(crate) mod envelope;
pub(crate) mod id_in_use;
pub(crate) mod invalid_params;
pub(crate) mod layer_call;
pub(crate) mod layer_over_answer;
pub(crate) mod layer_request;
pub(crate) mod member;
pub(crate) mod member_scan;
pub(crate) mod message;
pub(crate) mod method;
pub(crate) mod nested;
pub(crate) mod own_answer;
pub(crate) mod splice;
pub(crate) mod timed_tools;
pub(crate) mod tool_error_texts;
