//! What every HTTP part of the command carries or writes, whichever mode it
//! serves: the bodies (`body`), the headers that stay on their hop and the
//! media type of a body (`headers`), the client at the other end of a
//! connection (`peer`), and the responses whose JSON the command writes
//! itself (`json_response`). It uses nothing else of the command.

pub(crate) mod body;
pub(crate) mod headers;
pub(crate) mod json_response;
pub(crate) mod peer;
