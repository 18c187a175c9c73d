//! A client's socket as the server watches it: registered with the
//! connections for as long as it is open, telling its activity when bytes
//! come, and lingering once the server ends it.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::server::activity::{Activity, coarse_now};
use crate::server::connections::Registered;

/// How many bytes a connection the proxy ends reads and discards, at most:
/// four request bodies at their bound.
const LINGER_BYTES: u64 = 64 << 20;

/// A client's socket, registered with the connections for as long as it is
/// open: it tells its [`Activity`] when bytes come to an idle connection.
///
/// When the proxy ends a connection, its socket's sending side is shut down
/// and what the client still sends is read and discarded until the client
/// closes its own side, for
/// [`LINGER_TIME`](crate::server::activity::LINGER_TIME) and [`LINGER_BYTES`]
/// at most, as
/// nginx's `lingering_close` does: a socket closed with bytes unread sends
/// the client a reset, which can reach it before it has read the answer (an
/// early `413` to a client still sending its body), and then the answer is
/// lost.
#[derive(Debug)]
pub(crate) struct WatchedStream {
    // Dropped first: the registry forgets the socket before it is closed.
    registered: Registered,
    stream: TcpStream,
    /// The bytes read and discarded once the proxy ended the connection;
    /// `None` before.
    lingered: Option<u64>,
}

impl WatchedStream {
    pub(crate) fn new(registered: Registered, stream: TcpStream) -> Self {
        Self {
            registered,
            stream,
            lingered: None,
        }
    }

    pub(crate) fn activity(&self) -> &Arc<Activity> {
        self.registered.activity()
    }

    /// A write went out, or waits for room in the socket (the client does
    /// not read).
    fn written(&self, pending: bool) {
        self.registered.activity().written(pending);
    }
}

impl AsyncRead for WatchedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        // Bytes, or the end (then the connection closes whatever it does).
        if read.is_ready() {
            self.registered.activity().bytes_read(coarse_now);
        }
        read
    }
}

impl AsyncWrite for WatchedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.written(written.is_pending());
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.written(written.is_pending());
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    /// Ends the sending side, then lingers: resolves once the client has
    /// closed its side, or at the bounds.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let lingered = match this.lingered {
            Some(lingered) => lingered,
            None => {
                std::task::ready!(Pin::new(&mut this.stream).poll_shutdown(cx))?;
                this.registered.activity().lingers_from(coarse_now());
                0
            }
        };
        let mut discarded = [0; 16 * 1024];
        let mut total = lingered;
        let end = loop {
            if total >= LINGER_BYTES {
                break Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut discarded);
            match Pin::new(&mut this.stream).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                    total += u64::try_from(buf.filled().len()).unwrap_or(u64::MAX);
                }
                // The client's end, or the sweep's past the time: closing
                // now resets nothing the client waits for.
                Poll::Ready(_) => break Poll::Ready(Ok(())),
                Poll::Pending => break Poll::Pending,
            }
        };
        this.lingered = Some(total);
        end
    }
}
