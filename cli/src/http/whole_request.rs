//! A client's request body read whole, in either HTTP mode: what the MCP
//! endpoint reads to know what a message asks.

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Body, Bytes};
use hyper::{Response, StatusCode};

use crate::http::body::{BoxError, MAX_MESSAGE_BYTES, ProxyBody};
use crate::http::own_response::status_only;

/// `body` read whole, or the client's response when it cannot be: `413`
/// past [`MAX_MESSAGE_BYTES`] (logged), `400` when it breaks off (the client
/// is gone, or sent a broken body: nobody reads that answer).
pub(crate) async fn read_whole<B>(body: B) -> Result<Bytes, Response<ProxyBody>>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    match Limited::new(body, MAX_MESSAGE_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => {
            crate::telemetry::log(&format!(
                "refused a request of more than {MAX_MESSAGE_BYTES} bytes"
            ));
            Err(status_only(StatusCode::PAYLOAD_TOO_LARGE))
        }
        Err(_) => Err(status_only(StatusCode::BAD_REQUEST)),
    }
}
