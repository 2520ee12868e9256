//! The two transports the front listens on: TCP, and Unix domain sockets for a client on the same
//! host (a proxy or router beside the server), where a request costs no TCP/IP stack in the
//! kernel. Everything above this file sees one listener type and one stream type.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A bound, listening socket handed to [`super::Front::start`].
#[derive(Debug)]
pub enum Listener {
    /// A TCP socket (`--host`, `--port`).
    Tcp(std::net::TcpListener),
    /// A Unix socket (`--uds`).
    Unix(std::os::unix::net::UnixListener),
}

/// The listener on the front's runtime.
pub(super) enum Accept {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

impl Listener {
    /// The listener registered with the runtime entered on this thread.
    pub(super) fn into_runtime(self) -> io::Result<Accept> {
        Ok(match self {
            Listener::Tcp(l) => {
                l.set_nonblocking(true)?;
                Accept::Tcp(tokio::net::TcpListener::from_std(l)?)
            }
            Listener::Unix(l) => {
                l.set_nonblocking(true)?;
                Accept::Unix(tokio::net::UnixListener::from_std(l)?)
            }
        })
    }
}

impl Accept {
    pub(super) async fn accept(&self) -> io::Result<Stream> {
        match self {
            Accept::Tcp(l) => l.accept().await.map(|(s, _)| {
                // Answers are written whole: Nagle's wait would only delay them.
                let _ = s.set_nodelay(true);
                Stream::Tcp(s)
            }),
            Accept::Unix(l) => l.accept().await.map(|(s, _)| Stream::Unix(s)),
        }
    }
}

/// A connection's socket.
pub(super) enum Stream {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Stream::Tcp($s) => $e,
            Stream::Unix($s) => $e,
        }
    };
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        each!(self, s => Pin::new(s).poll_read(cx, buf))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        each!(self, s => Pin::new(s).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        each!(self, s => Pin::new(s).poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each!(self, s => Pin::new(s).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each!(self, s => Pin::new(s).poll_shutdown(cx))
    }
}
