//! One loop thread: its connections, each a small state machine (head, body, waiting for the
//! pool, lingering after a refusal), driven by readiness events and a sweep of deadlines.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use super::http::{self, Chunked, Decoded, Framing, Head, Method, Parsed};
use super::{Done, Job, LINGER, LINGER_BYTES, Shared, lock};
use crate::wire::{CHAT_PATH, COMPLETION_PATH, Reply};

pub(crate) const LISTENER: Token = Token(usize::MAX - 1);
pub(crate) const WAKER: Token = Token(usize::MAX);
/// How often deadlines are looked at.
const SWEEP: Duration = Duration::from_millis(50);
const READ_CHUNK: usize = 64 * 1024;

/// Where a request is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Derender(&'static str, usize),
    Health,
    Models,
    Metrics,
    WrongMethod(usize, &'static str),
    NotFound,
}

const CHAT: usize = 0;
const COMPLETIONS: usize = 1;
const HEALTH: usize = 2;
const MODELS: usize = 3;
const METRICS: usize = 4;
const OTHER: usize = 5;

fn route(method: Method, path: &str) -> Route {
    let get = matches!(method, Method::Get | Method::Head);
    match path {
        CHAT_PATH | COMPLETION_PATH => {
            let (p, e) = if path == CHAT_PATH {
                (CHAT_PATH, CHAT)
            } else {
                (COMPLETION_PATH, COMPLETIONS)
            };
            if method == Method::Post {
                Route::Derender(p, e)
            } else {
                Route::WrongMethod(e, "use POST")
            }
        }
        "/health" | "/v1/models" | "/metrics" => {
            let e = match path {
                "/health" => HEALTH,
                "/v1/models" => MODELS,
                _ => METRICS,
            };
            if !get {
                Route::WrongMethod(e, "use GET")
            } else if e == HEALTH {
                Route::Health
            } else if e == MODELS {
                Route::Models
            } else {
                Route::Metrics
            }
        }
        _ => Route::NotFound,
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        400 => "bad_request",
        404 => "not_found",
        405 => "method_not_allowed",
        413 => "payload_too_large",
        503 => "shutting_down",
        _ => "internal",
    }
}

/// A request whose head has arrived.
struct Request {
    head: Head,
    route: Route,
    start: Instant,
    chunked: Option<Chunked>,
}

enum Phase {
    /// Waiting for a request line and headers.
    Head,
    /// Reading a body.
    Body(Request),
    /// The pool is derendering.
    Waiting(Request),
    /// Refused: the answer is out (or going), what the client sends is dropped until `LINGER`.
    Linger,
}

struct Conn {
    sock: TcpStream,
    buf: Vec<u8>,
    out: Vec<u8>,
    sent: usize,
    phase: Phase,
    /// When the current wait ends (header, body, keep-alive or linger deadline).
    deadline: Instant,
    over_cap: bool,
    /// Answers sent on this connection.
    served: u64,
    generation: u64,
    close_after: bool,
    drained: usize,
    /// The peer shut its side, or the socket failed.
    gone: bool,
    /// Bytes of the next request's head have arrived (its header deadline is set).
    head_started: bool,
    /// Reading stopped at the buffer's cap; resumed once there is room.
    paused: bool,
}

struct Loop<'a> {
    index: usize,
    shared: &'a Shared,
    poll: Poll,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    generation: u64,
    listener: Option<TcpListener>,
    /// What a read lands in before it is appended to its connection's buffer.
    scratch: Box<[u8]>,
}

/// Runs one loop thread until its connections are done after a drain.
pub(crate) fn run(index: usize, poll: Poll, mut listener: TcpListener, shared: &Shared) {
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
                Ok((sock, _)) => {
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

    fn take_handed(&mut self) {
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

    fn add(&mut self, mut sock: TcpStream) {
        let _ = sock.set_nodelay(true);
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
            buf: Vec::new(),
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

    fn close(&mut self, slot: usize) {
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
    fn read(&mut self, slot: usize) {
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
        let body_timeout = self.shared.opts.body_timeout;
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
                    c.buf.extend_from_slice(&scratch[..n]);
                    if let Phase::Body(_) = c.phase {
                        c.deadline = Instant::now() + body_timeout;
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

    /// Moves a connection on as far as what it has buffered allows.
    fn advance(&mut self, slot: usize) {
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
                    if pending_out {
                        // An answer is still going out (to a client that may have shut its
                        // side): the next request, or the close, waits for it.
                        return;
                    }
                    if c.buf.is_empty() {
                        if c.gone || c.close_after {
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

    /// Reads a head from the buffer; true when the connection can move on at once.
    fn head(&mut self, slot: usize) -> bool {
        let opts = &self.shared.opts;
        let draining = self.shared.draining.load(Ordering::SeqCst);
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return false;
        };
        if !c.head_started {
            c.head_started = true;
            if c.served > 0 {
                // The first bytes of a later request: its headers have the header timeout.
                c.deadline = Instant::now() + opts.header_timeout;
            }
        }
        match http::parse_head(&c.buf, opts.max_header_bytes) {
            Parsed::Partial => {
                if c.gone {
                    self.close(slot);
                }
                false
            }
            Parsed::TooLarge => {
                let message = format!(
                    "the request's headers are larger than the limit of {} bytes",
                    opts.max_header_bytes
                );
                self.refuse(slot, 431, &message);
                false
            }
            Parsed::Invalid => {
                let message =
                    "the request is not valid HTTP/1.1 (for example a bad Content-Length)";
                self.refuse(slot, 400, message);
                false
            }
            Parsed::Done(head, len) => {
                c.buf.drain(..len);
                c.head_started = false;
                if c.over_cap {
                    let message = format!(
                        "the server has {} connections open, its limit; retry shortly",
                        opts.max_connections
                    );
                    self.refuse(slot, 503, &message);
                    return false;
                }
                if draining || !head.keep_alive {
                    c.close_after = true;
                }
                let route = route(head.method, &head.path);
                let start = Instant::now();
                if let Framing::Length(n) = head.body {
                    if n > opts.max_body_bytes as u64 {
                        self.too_large(slot, endpoint_of(route), start);
                        return false;
                    }
                    if head.expect_continue && (c.buf.len() as u64) < n {
                        c.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                    }
                } else if head.expect_continue && c.buf.is_empty() {
                    c.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                }
                let chunked = (head.body == Framing::Chunked).then(Chunked::default);
                c.deadline = start + opts.body_timeout;
                if let Framing::Length(n) = head.body {
                    // Room for the whole body at once, not grown by doubling as it arrives.
                    let n = usize::try_from(n).unwrap_or(0);
                    c.buf.reserve(n.saturating_sub(c.buf.len()));
                }
                c.phase = Phase::Body(Request {
                    head,
                    route,
                    start,
                    chunked,
                });
                self.flush(slot);
                true
            }
        }
    }

    /// Reads a body from the buffer; true when the request was answered and the connection
    /// can read its next one.
    fn body(&mut self, slot: usize) -> bool {
        let opts = &self.shared.opts;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return false;
        };
        let Phase::Body(req) = &mut c.phase else {
            return false;
        };
        let body: Vec<u8> = match (&mut req.chunked, req.head.body) {
            (Some(chunked), _) => match chunked.feed(&c.buf, opts.max_body_bytes) {
                Decoded::More(used) => {
                    if used > 0 {
                        c.buf.drain(..used);
                        c.deadline = Instant::now() + opts.body_timeout;
                    }
                    if c.gone {
                        self.close(slot);
                    }
                    return false;
                }
                Decoded::Done(used) => {
                    c.buf.drain(..used);
                    std::mem::take(&mut chunked.body)
                }
                Decoded::TooLarge => {
                    let (endpoint, start) = (endpoint_of(req.route), req.start);
                    self.too_large(slot, endpoint, start);
                    return false;
                }
                Decoded::Invalid => {
                    self.refuse(
                        slot,
                        400,
                        "the request's chunked body is not valid HTTP/1.1",
                    );
                    return false;
                }
            },
            (None, Framing::Length(n)) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                if c.buf.len() < n {
                    if c.gone {
                        self.close(slot);
                    }
                    return false;
                }
                if n == 0 {
                    Vec::new()
                } else if c.buf.len() == n {
                    std::mem::take(&mut c.buf)
                } else {
                    let rest = c.buf.split_off(n);
                    std::mem::replace(&mut c.buf, rest)
                }
            }
            (None, Framing::Chunked) => Vec::new(),
        };
        let Phase::Body(req) = std::mem::replace(&mut c.phase, Phase::Head) else {
            return false;
        };
        self.answer(slot, req, body)
    }

    /// Answers a request whose body is in; true when the connection can go on at once.
    fn answer(&mut self, slot: usize, req: Request, body: Vec<u8>) -> bool {
        let shared = self.shared;
        let head_only = req.head.method == Method::Head;
        match req.route {
            Route::Derender(path, endpoint) => {
                if body.len() >= shared.opts.offload_bytes {
                    let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
                        return false;
                    };
                    let job = Job {
                        to: self.index,
                        token: slot,
                        generation: c.generation,
                        path,
                        body,
                    };
                    match shared.offload(job) {
                        Ok(()) => {
                            c.phase = Phase::Waiting(req);
                            return false;
                        }
                        Err(job) => {
                            let reply = shared.handle(path, &job.body);
                            self.derendered(slot, endpoint, req.start, &reply);
                        }
                    }
                } else {
                    let reply = shared.handle(path, &body);
                    self.derendered(slot, endpoint, req.start, &reply);
                }
            }
            Route::Health => {
                self.send(slot, 200, http::PLAIN, b"", head_only);
                self.record(HEALTH, 200, req.start);
            }
            Route::Models => {
                self.send(slot, 200, http::JSON, &shared.models, head_only);
                self.record(MODELS, 200, req.start);
            }
            Route::Metrics => {
                let text = (shared.render)(&shared.snapshot());
                self.send(slot, 200, http::PROMETHEUS, &text, head_only);
                self.record(METRICS, 200, req.start);
            }
            Route::WrongMethod(endpoint, message) => {
                self.error(slot, endpoint, 405, message, req.start);
            }
            Route::NotFound => {
                let path: String = req.head.path.chars().take(200).collect();
                let message = format!("no endpoint at {path}");
                self.error(slot, OTHER, 404, &message, req.start);
            }
        }
        true
    }

    fn derendered(&mut self, slot: usize, endpoint: usize, start: Instant, reply: &Reply) {
        self.send(slot, reply.status, http::JSON, &reply.body, false);
        let seconds = start.elapsed().as_secs_f64();
        let b = &self.shared.opts.bounds;
        let mut m = lock(&self.shared.metrics[self.index]);
        if reply.status == 200 {
            m.derendered(b, reply.tokens, reply.state_bytes, seconds);
        } else {
            m.error(reason(reply.status));
        }
        m.record(b, endpoint, reply.status, seconds);
    }

    fn record(&self, endpoint: usize, status: u16, start: Instant) {
        let b = &self.shared.opts.bounds;
        let seconds = start.elapsed().as_secs_f64();
        lock(&self.shared.metrics[self.index]).record(b, endpoint, status, seconds);
    }

    fn error(&mut self, slot: usize, endpoint: usize, status: u16, message: &str, start: Instant) {
        let body = crate::wire::error_body(status, message, None);
        self.send(slot, status, http::JSON, &body, false);
        let b = &self.shared.opts.bounds;
        let seconds = start.elapsed().as_secs_f64();
        let mut m = lock(&self.shared.metrics[self.index]);
        m.error(reason(status));
        m.record(b, endpoint, status, seconds);
    }

    fn too_large(&mut self, slot: usize, endpoint: usize, start: Instant) {
        let limit = self.shared.opts.max_body_bytes;
        let message = format!("the body is larger than the server's limit of {limit} bytes");
        {
            let b = &self.shared.opts.bounds;
            let mut m = lock(&self.shared.metrics[self.index]);
            m.error("payload_too_large");
            m.record(b, endpoint, 413, start.elapsed().as_secs_f64());
        }
        self.refuse(slot, 413, &message);
    }

    /// Queues a response and writes what the socket takes.
    fn send(&mut self, slot: usize, status: u16, kind: &str, body: &[u8], head_only: bool) {
        let keep_alive = self.shared.opts.keep_alive_timeout;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        http::respond(&mut c.out, status, kind, body, c.close_after, head_only);
        c.served += 1;
        c.deadline = Instant::now() + keep_alive;
        self.flush(slot);
    }

    /// Answers with the JSON error and `connection: close`, half-closes and lingers.
    fn refuse(&mut self, slot: usize, status: u16, message: &str) {
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        if let Phase::Linger = c.phase {
            return;
        }
        http::refuse(&mut c.out, status, message, true);
        c.phase = Phase::Linger;
        c.close_after = true;
        c.buf = Vec::new();
        c.deadline = Instant::now() + LINGER;
        self.flush(slot);
    }

    /// Writes what is queued; once all is out, a closing connection is half-closed or closed.
    fn flush(&mut self, slot: usize) {
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

    /// Closes or refuses connections whose deadline has passed.
    fn sweep(&mut self, now: Instant) {
        let drain_at = *lock(&self.shared.drain_at);
        let drain_due = drain_at.is_some_and(|at| now >= at);
        let header_timeout = self.shared.opts.header_timeout.as_secs_f64();
        let body_timeout = self.shared.opts.body_timeout.as_secs_f64();
        for slot in 0..self.conns.len() {
            let Some(c) = self.conns[slot].as_mut() else {
                continue;
            };
            let pending_out = c.sent < c.out.len();
            if drain_due {
                match c.phase {
                    Phase::Body(_) | Phase::Waiting(_) => {
                        let message = "the server is shutting down; retry on another server";
                        if let Phase::Waiting(_) = c.phase {
                            c.generation = 0; // the pool's answer, if it comes, is dropped
                        }
                        lock(&self.shared.metrics[self.index]).error("shutting_down");
                        self.refuse(slot, 503, message);
                    }
                    Phase::Head if !c.buf.is_empty() && !pending_out => {
                        let message = "the server is shutting down; retry on another server";
                        self.refuse(slot, 503, message);
                    }
                    Phase::Linger if !pending_out => self.close(slot),
                    _ if !pending_out => self.close(slot),
                    _ => {}
                }
                continue;
            }
            if now < c.deadline {
                continue;
            }
            match c.phase {
                Phase::Head => {
                    if pending_out {
                        continue; // the client is slow to read an answer: not idle
                    }
                    if c.buf.is_empty() {
                        self.close(slot);
                    } else {
                        let message = format!(
                            "the request's headers did not arrive within {header_timeout} seconds"
                        );
                        self.refuse(slot, 408, &message);
                    }
                }
                Phase::Body(_) => {
                    let message =
                        format!("the request's body stopped arriving for {body_timeout} seconds");
                    self.refuse(slot, 408, &message);
                }
                Phase::Waiting(_) => {}
                Phase::Linger => self.close(slot),
            }
        }
    }

    fn start_drain(&mut self) {
        if let Some(mut listener) = self.listener.take() {
            let _ = self.poll.registry().deregister(&mut listener);
        }
        self.take_handed();
        for slot in 0..self.conns.len() {
            let Some(c) = self.conns[slot].as_mut() else {
                continue;
            };
            c.close_after = true;
            let idle = matches!(c.phase, Phase::Head) && c.buf.is_empty() && c.sent >= c.out.len();
            if idle {
                self.close(slot);
            }
        }
    }
}

fn endpoint_of(route: Route) -> usize {
    match route {
        Route::Derender(_, e) | Route::WrongMethod(e, _) => e,
        Route::Health => HEALTH,
        Route::Models => MODELS,
        Route::Metrics => METRICS,
        Route::NotFound => OTHER,
    }
}
