//! The bodies the proxy sends, both ways: one boxed type for a body passed
//! through as it streams, a body read whole, and an event stream the proxy
//! writes as the upstream's events arrive.

use std::pin::Pin;
use std::task::{Context, Poll};

use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Bytes, Frame};
use tokio::sync::mpsc;

/// The most the proxy reads of one message at the MCP endpoint, either way: a
/// request (which it reads whole to know what it asks), a JSON answer, an
/// event of a stream. Four times the default limit of the official Python
/// SDK's server (4 MiB) on requests, so that the proxy refuses nothing that
/// common servers accept. A larger request is answered `413`; a larger answer
/// or event ends the exchange with the proxy's own answer.
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Any error of a body being relayed.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Every body the proxy sends, to the upstream or to the client.
pub(crate) type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// A body passed on as it streams: a client's request, or an upstream's
/// response.
pub(crate) fn streamed<B>(body: B) -> ProxyBody
where
    B: Body<Data = Bytes, Error = hyper::Error> + Send + 'static,
{
    body.map_err(BoxError::from).boxed_unsync()
}

/// A body already read whole (or made by the proxy).
pub(crate) fn whole(bytes: impl Into<Bytes>) -> ProxyBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// The event stream sent to the client: the chunks the proxy writes into the
/// other end of the channel, until that end is dropped.
#[derive(Debug)]
pub(crate) struct ChannelBody {
    /// A chunk taken already ([`ChannelBody::first_chunk`]), sent first.
    first: Option<Bytes>,
    chunks: mpsc::Receiver<Bytes>,
}

impl ChannelBody {
    /// A body, and where its chunks are written; a small bound, so that a slow
    /// client slows the reading of the upstream instead of filling memory.
    pub(crate) fn new() -> (mpsc::Sender<Bytes>, Self) {
        let (sender, chunks) = mpsc::channel(16);
        (
            sender,
            Self {
                first: None,
                chunks,
            },
        )
    }

    /// Waits for the first chunk, which the body still sends first: a
    /// response whose head waits for it goes out with it in one write.
    /// Cancel-safe: a chunk that came stays in the channel or is kept.
    pub(crate) async fn first_chunk(&mut self) {
        if self.first.is_none() {
            self.first = self.chunks.recv().await;
        }
    }

    pub(crate) fn boxed(self) -> ProxyBody {
        self.boxed_unsync()
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        self.chunks
            .poll_recv(cx)
            .map(|chunk| chunk.map(|chunk| Ok(Frame::data(chunk))))
    }

    /// Once the writer is done, hyper learns it with the last chunk and
    /// sends the end in that chunk's write.
    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.chunks.is_closed() && self.chunks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_channel_body_ends_with_its_last_chunk_once_the_writer_is_done() {
        let (chunks, mut body) = ChannelBody::new();
        chunks.send(Bytes::from("first")).await.expect("open");
        chunks.send(Bytes::from("last")).await.expect("open");
        let first = body.frame().await.expect("a frame").expect("no error");
        assert_eq!(first.into_data().expect("data"), "first");
        assert!(!body.is_end_stream(), "a chunk is still to come");
        drop(chunks);
        assert!(!body.is_end_stream(), "the last chunk is still to be sent");
        let last = body.frame().await.expect("a frame").expect("no error");
        assert_eq!(last.into_data().expect("data"), "last");
        assert!(body.is_end_stream());
    }

    #[tokio::test]
    async fn a_first_chunk_waited_for_is_still_sent_first() {
        let (chunks, mut body) = ChannelBody::new();
        chunks.send(Bytes::from("first")).await.expect("open");
        drop(chunks);
        body.first_chunk().await;
        assert!(!body.is_end_stream(), "the first chunk is still to be sent");
        let first = body.frame().await.expect("a frame").expect("no error");
        assert_eq!(first.into_data().expect("data"), "first");
        assert!(body.is_end_stream());
    }
}
