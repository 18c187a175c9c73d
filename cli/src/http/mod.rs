//! What every HTTP part of the command carries or writes, whichever mode it
//! serves: the bodies (`body`), the headers that stay on their hop and the
//! media type of a body (`headers`), the client at the other end of a
//! connection (`peer`), a request's body read whole (`whole_request`), and
//! the responses the command makes itself (`own_response`). It uses the
//! JSON-RPC rules and the log, nothing else of the command.

pub(crate) mod body;
pub(crate) mod headers;
pub(crate) mod own_response;
pub(crate) mod peer;
pub(crate) mod whole_request;
