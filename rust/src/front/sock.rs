//! The two transports a front listens on: TCP, and Unix domain sockets for a client on the same
//! host (a proxy or router beside the server), where a request costs no TCP/IP stack in the
//! kernel. Everything above this file sees one listener type and one stream type.

use std::io::{self, Read, Write};
use std::net::Shutdown;

use mio::event::Source;
use mio::{Interest, Registry, Token};

/// A bound, listening socket handed to [`super::Front::start`].
#[derive(Debug)]
pub enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

impl Listener {
    pub(super) fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.set_nonblocking(true),
            Listener::Unix(l) => l.set_nonblocking(true),
        }
    }

    /// One loop thread's own handle on the socket (they share the accept queue).
    pub(super) fn for_loop(&self) -> io::Result<Accept> {
        Ok(match self {
            Listener::Tcp(l) => Accept::Tcp(mio::net::TcpListener::from_std(l.try_clone()?)),
            Listener::Unix(l) => Accept::Unix(mio::net::UnixListener::from_std(l.try_clone()?)),
        })
    }
}

/// A loop thread's listener.
pub(super) enum Accept {
    Tcp(mio::net::TcpListener),
    Unix(mio::net::UnixListener),
}

impl Accept {
    pub(super) fn accept(&self) -> io::Result<Sock> {
        match self {
            Accept::Tcp(l) => l.accept().map(|(s, _)| {
                // Answers are written whole: Nagle's wait would only delay them.
                let _ = s.set_nodelay(true);
                Sock::Tcp(s)
            }),
            Accept::Unix(l) => l.accept().map(|(s, _)| Sock::Unix(s)),
        }
    }
}

/// A connection's socket.
pub(super) enum Sock {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
}

impl Sock {
    pub(super) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Sock::Tcp(s) => s.shutdown(how),
            Sock::Unix(s) => s.shutdown(how),
        }
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(buf),
            Sock::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(buf),
            Sock::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Registration goes to whichever socket it is.
macro_rules! delegate_source {
    ($ty:ident { $($variant:ident),* }) => {
        impl Source for $ty {
            fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
                match self { $($ty::$variant(s) => s.register(r, t, i),)* }
            }
            fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
                match self { $($ty::$variant(s) => s.reregister(r, t, i),)* }
            }
            fn deregister(&mut self, r: &Registry) -> io::Result<()> {
                match self { $($ty::$variant(s) => s.deregister(r),)* }
            }
        }
    };
}

delegate_source!(Sock { Tcp, Unix });
delegate_source!(Accept { Tcp, Unix });
