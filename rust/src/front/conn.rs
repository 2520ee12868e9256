//! A connection's own limits, the ones hyper lacks, kept by wrapping its socket: how long it may
//! sit with no request in progress (the head deadline and the keep-alive timeout), how long an
//! answer may wait for a client that does not read, and being closed to make room for another.
//!
//! The socket wrapper ([`Guarded`]) sees every read and write hyper makes, and the connection's
//! [`State`] says whether a request is in progress: a request is counted from the moment hyper
//! hands it to the service until its answer's body is dropped (written, or abandoned). A deadline
//! that passes while no request is in progress ends the connection as a client's close would:
//! the next read returns end of file, so hyper closes the connection itself. An answer that
//! cannot be written for `send_timeout` fails the write, which also ends it.
//!
//! A connection the server closes while the client may still be sending (after a refusal, or
//! hyper's own answer to a malformed message) is drained for up to [`LINGER`] and
//! [`LINGER_BYTES`] after its answer (a task of its own), so the client reads the answer rather
//! than a reset. One closed for a deadline, or to make room, is closed at once: it has no answer
//! in flight, and its descriptor may be what another connection waits for.
//!
//! The wrapper also tells HTTP/2 from HTTP/1 by the first bytes (the preface), as hyper does,
//! and ends an HTTP/1 connection that sends a NUL byte in its chunked framing, where hyper skips
//! one inside a chunk extension and a strict parser would refuse the message ([`Framing`]).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::Sleep;

use super::nul::Framing;
use super::sock::Stream;
use super::{Shared, lock};
use crate::limits::{LINGER, LINGER_BYTES};

/// What a connection's socket wrapper and its service share.
pub(super) struct State {
    /// Requests handed to the service, and those whose answer is done with.
    started: AtomicU64,
    finished: AtomicU64,
    /// A tick of [`IDLE_ORDER`] taken when the connection opened and each time a request's
    /// answer was done with: the lowest tick among idle connections is the one idle longest.
    /// A shared counter, not a clock, so that two connections never tie.
    idle_since: AtomicU64,
    /// An answer is waiting for the client to read.
    writing: AtomicBool,
    /// Asked to close as soon as no request is in progress.
    evict: AtomicBool,
    /// The task to wake when asked to close.
    waker: Mutex<Option<Waker>>,
}

impl State {
    fn new() -> State {
        State {
            started: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            idle_since: AtomicU64::new(idle_tick()),
            writing: AtomicBool::new(false),
            evict: AtomicBool::new(false),
            waker: Mutex::new(None),
        }
    }

    fn idle(&self) -> bool {
        self.started.load(Ordering::Acquire) == self.finished.load(Ordering::Acquire)
            && !self.writing.load(Ordering::Acquire)
    }

    /// Asks the connection to close once no request is in progress.
    fn close_when_idle(&self) {
        self.evict.store(true, Ordering::Release);
        if let Some(w) = lock(&self.waker).take() {
            w.wake();
        }
    }
}

/// The order in which connections became idle (see [`State::idle_since`]).
static IDLE_ORDER: AtomicU64 = AtomicU64::new(1);

fn idle_tick() -> u64 {
    IDLE_ORDER.fetch_add(1, Ordering::AcqRel)
}

/// One request in progress on a connection, from the service's call until dropped.
pub(super) struct Ticket(Arc<State>);

impl Ticket {
    pub(super) fn new(state: &Arc<State>) -> Ticket {
        state.started.fetch_add(1, Ordering::AcqRel);
        Ticket(Arc::clone(state))
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.idle_since.store(idle_tick(), Ordering::Release);
        self.0.finished.fetch_add(1, Ordering::AcqRel);
    }
}

/// The open connections, to count them against the cap and to choose one to close.
pub(super) struct Registry {
    slots: Mutex<Slots>,
    open: AtomicUsize,
}

#[derive(Default)]
struct Slots {
    states: Vec<Option<Arc<State>>>,
    free: Vec<usize>,
}

impl Registry {
    pub(super) fn new() -> Registry {
        Registry {
            slots: Mutex::new(Slots::default()),
            open: AtomicUsize::new(0),
        }
    }

    pub(super) fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// Registers a new connection; its slot is given back by [`Registry::remove`].
    pub(super) fn add(&self) -> (usize, Arc<State>) {
        let state = Arc::new(State::new());
        let mut s = lock(&self.slots);
        let slot = match s.free.pop() {
            Some(slot) => {
                if let Some(entry) = s.states.get_mut(slot) {
                    *entry = Some(Arc::clone(&state));
                }
                slot
            }
            None => {
                s.states.push(Some(Arc::clone(&state)));
                s.states.len() - 1
            }
        };
        self.open.fetch_add(1, Ordering::AcqRel);
        (slot, state)
    }

    pub(super) fn remove(&self, slot: usize) {
        let mut s = lock(&self.slots);
        if let Some(entry) = s.states.get_mut(slot) {
            if entry.take().is_some() {
                s.free.push(slot);
                self.open.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// Asks the connection that has been idle longest (no request in progress: reading its
    /// head, or waiting on keep-alive) to close; false when none is idle.
    pub(super) fn close_oldest_idle(&self) -> bool {
        let s = lock(&self.slots);
        let oldest = s
            .states
            .iter()
            .flatten()
            .filter(|c| !c.evict.load(Ordering::Acquire) && c.idle())
            .min_by_key(|c| c.idle_since.load(Ordering::Acquire));
        match oldest {
            Some(c) => {
                c.close_when_idle();
                true
            }
            None => false,
        }
    }
}

/// A deadline polled only while its connection waits: a timer armed lazily and moved forward
/// only when it fires early, so a request costs no timer updates.
struct Deadline {
    at: Option<Instant>,
    timer: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    fn new() -> Deadline {
        Deadline {
            at: None,
            timer: None,
        }
    }

    /// Whether `at` has passed; when not, the task is woken when it does.
    fn poll(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(at) = self.at else {
            return false;
        };
        loop {
            let at_tokio = tokio::time::Instant::from_std(at);
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at_tokio)));
            if timer.deadline() > at_tokio {
                timer.as_mut().reset(at_tokio);
            }
            if timer.as_mut().poll(cx).is_pending() {
                return false;
            }
            if Instant::now() >= at {
                return true;
            }
            timer.as_mut().reset(at_tokio);
        }
    }
}

/// The HTTP/2 client preface: a connection that starts otherwise is HTTP/1.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What the first bytes said the connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Speaks {
    /// Every byte so far (this many) is the preface's.
    Unknown(usize),
    Http1,
    Http2,
}

impl Speaks {
    /// Takes in bytes just read: whether they may go on to hyper (an HTTP/1 connection must not
    /// send a NUL in its chunked framing, [`Framing`]).
    fn admits(&mut self, fresh: &[u8], framing: &mut Framing) -> bool {
        let mut rest = fresh;
        if let Speaks::Unknown(seen) = *self {
            let want = PREFACE.get(seen..).unwrap_or_default();
            let n = want.len().min(rest.len());
            if rest.get(..n) == want.get(..n) {
                *self = if seen + n == PREFACE.len() {
                    Speaks::Http2
                } else {
                    Speaks::Unknown(seen + n)
                };
                rest = rest.get(n..).unwrap_or_default();
            } else {
                *self = Speaks::Http1;
            }
        }
        *self != Speaks::Http1 || framing.admits(rest)
    }
}

/// A connection's socket, with its deadlines.
pub(super) struct Guarded {
    io: Option<Stream>,
    shared: &'static Shared,
    state: Arc<State>,
    /// The `finished` count last seen: a change means a request ended and an idle time began.
    seen: u64,
    /// Bytes have arrived since the idle time began (a head is being read).
    reading_head: bool,
    idle: Deadline,
    send: Deadline,
    speaks: Speaks,
    framing: Framing,
    /// The client closed its side, or the connection ended for a deadline: nothing to drain
    /// on close.
    quiet: bool,
}

impl Guarded {
    pub(super) fn new(io: Stream, shared: &'static Shared, state: Arc<State>) -> Guarded {
        let mut idle = Deadline::new();
        idle.at = Some(Instant::now() + shared.opts.header_timeout);
        Guarded {
            io: Some(io),
            shared,
            state,
            seen: 0,
            reading_head: false,
            idle,
            send: Deadline::new(),
            speaks: Speaks::Unknown(0),
            framing: Framing::new(),
            quiet: false,
        }
    }

    /// While no request is in progress: whether the connection must end now (its deadline
    /// passed, or it was asked to close); otherwise the task wakes when it must.
    fn idle_over(&mut self, cx: &mut Context<'_>) -> bool {
        let st = &self.state;
        if !st.idle() {
            return false;
        }
        let finished = st.finished.load(Ordering::Acquire);
        if finished != self.seen {
            self.seen = finished;
            self.reading_head = false;
            self.idle.at = Some(Instant::now() + self.shared.opts.keep_alive_timeout);
        }
        {
            let mut w = lock(&st.waker);
            if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *w = Some(cx.waker().clone());
            }
        }
        if st.evict.load(Ordering::Acquire) {
            return true;
        }
        if self.idle.poll(cx) {
            if self.reading_head {
                self.shared.count_error(
                    "request_timeout",
                    "a request head did not arrive within --header-timeout: closed",
                );
            }
            return true;
        }
        false
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(io) = this.io.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let before = buf.filled().len();
        match Pin::new(io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() == before {
                    this.quiet = true;
                    return Poll::Ready(Ok(()));
                }
                let fresh = buf.filled().get(before..).unwrap_or_default();
                if !this.speaks.admits(fresh, &mut this.framing) {
                    this.shared.count_error(
                        "bad_request",
                        "a NUL byte in an HTTP/1 message's chunked framing: closed",
                    );
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a NUL byte in an HTTP/1 message's chunked framing",
                    )));
                }
                if !this.reading_head && this.state.idle() {
                    // The first bytes of a head: it has the header timeout from now.
                    this.reading_head = true;
                    if this.seen > 0 {
                        this.idle.at = Some(Instant::now() + this.shared.opts.header_timeout);
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                if this.idle_over(cx) {
                    this.quiet = true;
                    return Poll::Ready(Ok(())); // read as the client's close
                }
                Poll::Pending
            }
        }
    }
}

impl Guarded {
    fn wrote<T>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match r {
            Poll::Ready(r) => {
                if self.send.at.is_some() {
                    self.send.at = None;
                    self.state.writing.store(false, Ordering::Release);
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                if self.send.at.is_none() {
                    self.send.at = Some(Instant::now() + self.shared.opts.send_timeout);
                    self.state.writing.store(true, Ordering::Release);
                }
                if self.send.poll(cx) {
                    self.shared.count_error(
                        "send_timeout",
                        "the client did not read its answers within --send-timeout: closed",
                    );
                    self.quiet = true;
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client did not read its answers",
                    )));
                }
                Poll::Pending
            }
        }
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(io) = this.io.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        };
        let r = Pin::new(io).poll_write(cx, buf);
        this.wrote(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(io) = this.io.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        };
        let r = Pin::new(io).poll_write_vectored(cx, bufs);
        this.wrote(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(io) = this.io.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let r = Pin::new(io).poll_flush(cx);
        this.wrote(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // The half-close is the linger's, when the connection is dropped.
        let _ = (self, cx);
        Poll::Ready(Ok(()))
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let Some(io) = self.io.take() else {
            return;
        };
        if self.quiet {
            return;
        }
        // The client may still be sending: drain what it sends for a while, so it reads the
        // answer rather than a reset.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(linger(io));
        }
    }
}

/// Half-closes `io` and reads what the client still sends, for at most [`LINGER`] and
/// [`LINGER_BYTES`].
async fn linger(mut io: Stream) {
    let _ = io.shutdown().await;
    let mut scratch = vec![0u8; 16 * 1024];
    let mut left = LINGER_BYTES;
    let until = tokio::time::Instant::now() + LINGER;
    while left > 0 {
        match tokio::time::timeout_at(until, io.read(&mut scratch)).await {
            Ok(Ok(n)) if n > 0 => left = left.saturating_sub(n),
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(parts: &[&[u8]]) -> (Speaks, bool) {
        let mut speaks = Speaks::Unknown(0);
        let mut framing = Framing::new();
        let ok = parts.iter().all(|p| speaks.admits(p, &mut framing));
        (speaks, ok)
    }

    #[test]
    fn the_preface_in_any_pieces_is_http2_and_may_carry_nul() {
        let (a, b) = PREFACE.split_at(5);
        assert_eq!(fed(&[a, b, b"\0\0\x04"]), (Speaks::Http2, true));
        assert_eq!(fed(&[PREFACE]), (Speaks::Http2, true));
    }

    #[test]
    fn http1_is_told_at_the_first_byte_off_the_preface_and_refuses_nul() {
        assert_eq!(fed(&[b"P", b"OST / HTTP/1.1\r\n"]), (Speaks::Http1, true));
        assert_eq!(fed(&[b"PR"]), (Speaks::Unknown(2), true));
        assert_eq!(fed(&[b"GET /\0"]), (Speaks::Http1, false));
        assert_eq!(fed(&[b"PR", b"X\0"]), (Speaks::Http1, false));
        assert_eq!(
            fed(&[b"GET / HTTP/1.1\r\n", b"5;a\0b"]),
            (Speaks::Http1, false)
        );
    }

    #[test]
    fn the_oldest_idle_connection_is_closed_first_and_busy_ones_never() {
        let r = Registry::new();
        let (_, served) = r.add();
        let (_, busy) = r.add();
        let (slot, waiting) = r.add();
        drop(Ticket::new(&served)); // an answer done with: idle from now, the youngest
        let ticket = Ticket::new(&busy);
        assert!(r.close_oldest_idle());
        assert!(waiting.evict.load(Ordering::Acquire));
        assert!(!busy.evict.load(Ordering::Acquire));
        assert!(!served.evict.load(Ordering::Acquire));
        assert!(r.close_oldest_idle());
        assert!(served.evict.load(Ordering::Acquire));
        assert!(!r.close_oldest_idle(), "only a busy connection is left");
        drop(ticket);
        assert!(r.close_oldest_idle(), "its request is done: it is idle");
        assert_eq!(r.open(), 3);
        r.remove(slot);
        r.remove(slot);
        assert_eq!(r.open(), 2);
    }
}
