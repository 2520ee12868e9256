//! One loop thread: its connections, each a small state machine (head, body, waiting for the
//! pool, lingering after a refusal), driven by readiness events and a sweep of deadlines.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use super::http::{self, Framing};
use super::inbuf::InBuf;
use super::request::{Request, Route};
use super::sock::{Accept, Sock};
use super::{Done, LINGER, LINGER_BYTES, Shared, lock};

pub(crate) const LISTENER: Token = Token(usize::MAX - 1);
pub(crate) const WAKER: Token = Token(usize::MAX);
/// How often deadlines are looked at.
const SWEEP: Duration = Duration::from_millis(50);
pub(super) const READ_CHUNK: usize = 64 * 1024;
/// Answers queued on a connection past which its next pipelined request waits for them to go
/// out: what a client that writes and does not read makes the server hold.
const OUT_CAP: usize = 256 * 1024;

pub(super) enum Phase {
    /// Waiting for a request line and headers.
    Head,
    /// Reading a body.
    Body(Request),
    /// The pool is derendering.
    Waiting(Request),
    /// Refused: the answer is out (or going), what the client sends is dropped until `LINGER`.
    Linger,
}

pub(super) struct Conn {
    pub(super) sock: Sock,
    pub(super) buf: InBuf,
    pub(super) out: Vec<u8>,
    pub(super) sent: usize,
    pub(super) phase: Phase,
    /// When the current wait ends (header, body, keep-alive or linger deadline).
    pub(super) deadline: Instant,
    pub(super) over_cap: bool,
    /// Answers sent on this connection.
    pub(super) served: u64,
    pub(super) generation: u64,
    pub(super) close_after: bool,
    pub(super) drained: usize,
    /// The peer shut its side, or the socket failed.
    pub(super) gone: bool,
    /// Bytes of the next request's head have arrived (its header deadline is set).
    pub(super) head_started: bool,
    /// Reading stopped at the buffer's cap; resumed once there is room.
    pub(super) paused: bool,
}

pub(super) struct Loop<'a> {
    pub(super) index: usize,
    pub(super) shared: &'a Shared,
    pub(super) poll: Poll,
    pub(super) conns: Vec<Option<Conn>>,
    pub(super) free: Vec<usize>,
    pub(super) generation: u64,
    pub(super) listener: Option<Accept>,
    /// What a read lands in before it is appended to its connection's buffer.
    pub(super) scratch: Box<[u8]>,
    /// When the current round of events began: what deadlines are counted from (they are
    /// seconds long, a round is not), one clock read a round rather than several a request.
    pub(super) now: Instant,
}

/// Runs one loop thread until its connections are done after a drain.
pub(crate) fn run(index: usize, poll: Poll, mut listener: Accept, shared: &Shared) {
    let registered = poll
        .registry()
        .register(&mut listener, LISTENER, Interest::READABLE);
    let mut lp = Loop {
        index,
        shared,
        poll,
        conns: Vec::new(),
        free: Vec::new(),
        generation: 0,
        listener: registered.ok().map(|()| listener),
        scratch: vec![0; READ_CHUNK].into_boxed_slice(),
        now: Instant::now(),
    };
    lp.run();
}

impl Loop<'_> {
    fn run(&mut self) {
        let mut events = Events::with_capacity(1024);
        let mut next_sweep = Instant::now() + SWEEP;
        let mut drain_started = false;
        loop {
            let draining = self.shared.draining.load(Ordering::SeqCst);
            if draining && !drain_started {
                drain_started = true;
                self.start_drain();
            }
            if draining && self.open() == 0 {
                return;
            }
            let now = Instant::now();
            let timeout = next_sweep.saturating_duration_since(now);
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return;
                }
            }
            self.now = Instant::now();
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    WAKER => {
                        self.take_handed();
                        self.take_done();
                    }
                    Token(t) => self.ready(t, event.is_readable(), event.is_writable()),
                }
            }
            let now = Instant::now();
            if now >= next_sweep {
                self.sweep(now);
                next_sweep = now + SWEEP;
            }
        }
    }

    fn open(&self) -> usize {
        self.conns.len() - self.free.len()
    }

    fn set_open(&self) {
        if let Some(l) = self.shared.loops.get(self.index) {
            l.open.store(self.open(), Ordering::Relaxed);
        }
    }

    fn accept(&mut self) {
        loop {
            let Some(listener) = self.listener.as_ref() else {
                return;
            };
            match listener.accept() {
                Ok(sock) => {
                    // To the loop with the fewest connections, so threads share the load.
                    let target = self
                        .shared
                        .loops
                        .iter()
                        .enumerate()
                        .min_by_key(|(i, l)| (l.open.load(Ordering::Relaxed), *i != self.index))
                        .map_or(self.index, |(i, _)| i);
                    if target == self.index {
                        self.add(sock);
                    } else if let Some(l) = self.shared.loops.get(target) {
                        l.open.fetch_add(1, Ordering::Relaxed);
                        lock(&l.handed).push(sock);
                        let _ = l.waker.wake();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return, // WouldBlock, or out of descriptors: retried on the next event
            }
        }
    }

    pub(super) fn take_handed(&mut self) {
        let handed = std::mem::take(&mut *lock(&self.shared.loops[self.index].handed));
        for sock in handed {
            if self.shared.draining.load(Ordering::SeqCst) {
                drop(sock);
            } else {
                self.add(sock);
            }
        }
        self.set_open();
    }

    fn add(&mut self, mut sock: Sock) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.conns.push(None);
                self.conns.len() - 1
            }
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .register(&mut sock, Token(slot), interest)
            .is_err()
        {
            self.free.push(slot);
            return;
        }
        self.generation += 1;
        // `open()` counts this connection's slot already.
        let over_cap = self.open() > self.shared.opts.max_connections;
        self.conns[slot] = Some(Conn {
            sock,
            buf: InBuf::default(),
            out: Vec::new(),
            sent: 0,
            phase: Phase::Head,
            deadline: Instant::now() + self.shared.opts.header_timeout,
            over_cap,
            served: 0,
            generation: self.generation,
            close_after: false,
            drained: 0,
            gone: false,
            head_started: false,
            paused: false,
        });
        self.set_open();
    }

    pub(super) fn close(&mut self, slot: usize) {
        if let Some(mut c) = self.conns.get_mut(slot).and_then(Option::take) {
            let _ = self.poll.registry().deregister(&mut c.sock);
            self.free.push(slot);
            self.set_open();
        }
    }

    fn ready(&mut self, slot: usize, readable: bool, writable: bool) {
        let run = std::panic::AssertUnwindSafe(|| {
            if writable {
                self.flush(slot);
            }
            let paused = self
                .conns
                .get(slot)
                .and_then(Option::as_ref)
                .is_some_and(|c| c.paused);
            if readable || paused {
                self.read(slot);
            } else if writable {
                self.advance(slot); // a pipelined request may wait for the answer just sent
            }
        });
        if std::panic::catch_unwind(run).is_err() {
            self.close(slot);
        }
    }

    /// Reads what has arrived and acts on it, as long as the connection can take more.
    pub(super) fn read(&mut self, slot: usize) {
        loop {
            let paused = self.read_some(slot);
            let before = self.buffered(slot);
            self.advance(slot);
            let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
                return;
            };
            // Stopped at the connection's cap: read on only once acting on it made room (else
            // the flush or the pool's answer that unblocks it reads on).
            c.paused = paused;
            if !paused || c.buf.len() >= before {
                return;
            }
        }
    }

    fn buffered(&self, slot: usize) -> usize {
        self.conns
            .get(slot)
            .and_then(Option::as_ref)
            .map_or(0, |c| c.buf.len())
    }

    /// Reads into the connection's buffer up to its cap (a request's head, or its body);
    /// true when it stopped at the cap rather than at an empty socket.
    fn read_some(&mut self, slot: usize) -> bool {
        let max_head = self.shared.opts.max_header_bytes;
        let body_deadline = self.now + self.shared.opts.body_timeout;
        let scratch = &mut self.scratch;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return false;
        };
        // What a connection may hold unprocessed: a head, or the body being read, plus a read.
        let cap = match &c.phase {
            Phase::Body(req) => match (req.chunked.is_some(), req.head.body) {
                (false, Framing::Length(n)) => usize::try_from(n)
                    .unwrap_or(usize::MAX)
                    .saturating_add(max_head),
                _ => max_head + 3 * READ_CHUNK,
            },
            _ => max_head,
        }
        .saturating_add(READ_CHUNK);
        loop {
            if let Phase::Linger = c.phase {
                let mut sink = [0u8; 16 * 1024];
                match c.sock.read(&mut sink) {
                    Ok(0) => {
                        c.gone = true;
                        break;
                    }
                    Ok(n) => {
                        c.drained += n;
                        if c.drained > LINGER_BYTES {
                            c.gone = true;
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        c.gone = true;
                        break;
                    }
                }
                continue;
            }
            // Enough buffered for the request being read: the rest waits in the socket.
            if c.buf.len() >= cap {
                return true;
            }
            // Into the loop's buffer, then only what came is copied (no zeroing per read).
            match c.sock.read(&mut scratch[..]) {
                Ok(0) => {
                    c.gone = true;
                    break;
                }
                Ok(n) => {
                    c.buf.extend(&scratch[..n]);
                    if let Phase::Body(_) = c.phase {
                        c.deadline = body_deadline;
                    }
                    if n < READ_CHUNK {
                        break; // the socket is empty: a new arrival is a new event
                    }
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::Interrupted => {}
                    io::ErrorKind::WouldBlock => break,
                    _ => {
                        c.gone = true;
                        break;
                    }
                },
            }
        }
        false
    }

    /// Moves a connection on as far as what it has buffered allows, then writes what is queued
    /// (the only place answers are written but a refusal): pipelined requests that arrived
    /// together are answered in one write.
    pub(super) fn advance(&mut self, slot: usize) {
        loop {
            self.take_buffered(slot);
            let pending = |lp: &Self| {
                lp.conns
                    .get(slot)
                    .and_then(Option::as_ref)
                    .is_some_and(|c| c.sent < c.out.len())
            };
            if !pending(self) {
                return;
            }
            self.flush(slot);
            if pending(self) {
                return; // the socket is full: its writable event goes on
            }
            // All out: what waited for the answers (a close, the next request) goes on.
        }
    }

    fn take_buffered(&mut self, slot: usize) {
        loop {
            let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
                return;
            };
            let pending_out = c.sent < c.out.len();
            match &mut c.phase {
                Phase::Linger => {
                    if c.gone || (!pending_out && c.drained > LINGER_BYTES) {
                        self.close(slot);
                    }
                    return;
                }
                Phase::Waiting(_) => {
                    if c.gone {
                        self.close(slot);
                    }
                    return;
                }
                Phase::Head => {
                    if pending_out && (c.close_after || c.gone || c.out.len() - c.sent >= OUT_CAP) {
                        // The answers still going out (to a client that may have shut its
                        // side, or that does not read) hold the next request, or the close.
                        return;
                    }
                    if c.buf.is_empty() {
                        if !pending_out && (c.gone || c.close_after) {
                            self.close(slot);
                        }
                        return;
                    }
                    if !self.head(slot) {
                        return;
                    }
                }
                Phase::Body(_) => {
                    if !self.body(slot) {
                        return;
                    }
                }
            }
        }
    }

    /// Queues a response; `advance`, which every answer is given under, writes it.
    pub(super) fn send(
        &mut self,
        slot: usize,
        status: u16,
        kind: &str,
        body: &[u8],
        head_only: bool,
    ) {
        let idle_deadline = self.now + self.shared.opts.keep_alive_timeout;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        http::respond(&mut c.out, status, kind, body, c.close_after, head_only);
        c.served += 1;
        c.deadline = idle_deadline;
    }

    /// Answers with the JSON error and `connection: close`, half-closes and lingers.
    pub(super) fn refuse(&mut self, slot: usize, status: u16, message: &str) {
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        if let Phase::Linger = c.phase {
            return;
        }
        http::refuse(&mut c.out, status, message, true);
        c.phase = Phase::Linger;
        c.close_after = true;
        c.buf.release();
        c.deadline = Instant::now() + LINGER;
        self.flush(slot);
    }

    /// Writes what is queued; once all is out, a closing connection is half-closed or closed.
    pub(super) fn flush(&mut self, slot: usize) {
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        while c.sent < c.out.len() {
            match c.sock.write(&c.out[c.sent..]) {
                Ok(0) => {
                    c.gone = true;
                    break;
                }
                Ok(n) => c.sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.close(slot);
                    return;
                }
            }
        }
        if c.sent >= c.out.len() {
            c.out.clear();
            c.sent = 0;
            match c.phase {
                Phase::Linger if c.close_after => {
                    let _ = c.sock.shutdown(Shutdown::Write);
                }
                Phase::Head if c.close_after || (c.gone && c.buf.is_empty()) => self.close(slot),
                _ => {}
            }
        }
    }

    /// Derenders the pool finished: answered, unless the connection has gone since.
    fn take_done(&mut self) {
        let done: Vec<Done> = std::mem::take(&mut *lock(&self.shared.loops[self.index].done));
        for d in done {
            let Some(c) = self.conns.get_mut(d.token).and_then(Option::as_mut) else {
                continue;
            };
            if c.generation != d.generation {
                continue;
            }
            let Phase::Waiting(req) = std::mem::replace(&mut c.phase, Phase::Head) else {
                continue;
            };
            if let Route::Derender(_, endpoint) = req.route {
                self.derendered(d.token, endpoint, req.start, &d.reply);
            }
            self.read(d.token); // reads on if it had paused, then takes what is buffered
        }
    }
}
