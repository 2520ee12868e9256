//! A request on a connection: its head and body read from the buffer, its route, its answer and
//! counters, and the deadlines and drain that end waits.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::conn::{Loop, Phase};
use super::http::{self, Chunked, Decoded, Framing, Head, Method, Parsed};
use super::{Job, lock};
use crate::wire::{CHAT_PATH, COMPLETION_PATH, Reply};

/// Where a request is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
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

pub(super) fn route(method: Method, path: &str) -> Route {
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

pub(super) fn reason(status: u16) -> &'static str {
    match status {
        400 => "bad_request",
        404 => "not_found",
        405 => "method_not_allowed",
        413 => "payload_too_large",
        503 => "shutting_down",
        _ => "internal",
    }
}

/// Where a request's body is once it has all arrived.
pub(super) enum Body {
    /// The first `n` bytes of the connection's buffer, drained once answered (a body under
    /// the offload size).
    Buffered(usize),
    /// Taken out of the buffer: a body the pool may take, or a decoded chunked body.
    Owned(Vec<u8>),
}

/// A request whose head has arrived.
pub(super) struct Request {
    pub(super) head: Head,
    pub(super) route: Route,
    pub(super) start: Instant,
    pub(super) chunked: Option<Chunked>,
}

pub(super) fn endpoint_of(route: Route) -> usize {
    match route {
        Route::Derender(_, e) | Route::WrongMethod(e, _) => e,
        Route::Health => HEALTH,
        Route::Models => MODELS,
        Route::Metrics => METRICS,
        Route::NotFound => OTHER,
    }
}

impl Loop<'_> {
    /// Reads a head from the buffer; true when the connection can move on at once.
    pub(super) fn head(&mut self, slot: usize) -> bool {
        let opts = &self.shared.opts;
        let draining = self.shared.draining.load(Ordering::SeqCst);
        let now = self.now;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return false;
        };
        if !c.head_started {
            c.head_started = true;
            if c.served > 0 {
                // The first bytes of a later request: its headers have the header timeout.
                c.deadline = now + opts.header_timeout;
            }
        }
        match http::parse_head(c.buf.bytes(), opts.max_header_bytes) {
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
                c.buf.consume(len);
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
                    c.buf.reserve_for(n);
                }
                c.phase = Phase::Body(Request {
                    head,
                    route,
                    start,
                    chunked,
                });
                true // a 100 Continue goes out as `advance` ends, before the body is waited for
            }
        }
    }

    /// Reads a body from the buffer; true when the request was answered and the connection
    /// can read its next one.
    pub(super) fn body(&mut self, slot: usize) -> bool {
        let opts = &self.shared.opts;
        let now = self.now;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return false;
        };
        let Phase::Body(req) = &mut c.phase else {
            return false;
        };
        let body = match (&mut req.chunked, req.head.body) {
            (Some(chunked), _) => match chunked.feed(c.buf.bytes(), opts.max_body_bytes) {
                Decoded::More(used) => {
                    if used > 0 {
                        c.buf.consume(used);
                        c.deadline = now + opts.body_timeout;
                    }
                    if c.gone {
                        self.close(slot);
                    }
                    return false;
                }
                Decoded::Done(used) => {
                    c.buf.consume(used);
                    Body::Owned(std::mem::take(&mut chunked.body))
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
                if n < opts.offload_bytes {
                    Body::Buffered(n)
                } else {
                    Body::Owned(c.buf.take(n))
                }
            }
            (None, Framing::Chunked) => Body::Buffered(0),
        };
        let Phase::Body(req) = std::mem::replace(&mut c.phase, Phase::Head) else {
            return false;
        };
        self.answer(slot, req, body)
    }

    /// Answers a request whose body is in; true when the connection can go on at once.
    pub(super) fn answer(&mut self, slot: usize, req: Request, body: Body) -> bool {
        let shared = self.shared;
        let head_only = req.head.method == Method::Head;
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return false;
        };
        if let (Body::Buffered(n), false) = (&body, matches!(req.route, Route::Derender(..))) {
            c.buf.consume(*n); // only derender reads a body
        }
        match req.route {
            Route::Derender(path, endpoint) => {
                let reply = match body {
                    // Derendered where it lies, and the buffer keeps its room for the next
                    // request: no copy, no allocation.
                    Body::Buffered(n) => {
                        let reply = shared.handle(path, c.buf.bytes().get(..n).unwrap_or_default());
                        c.buf.consume(n);
                        reply
                    }
                    Body::Owned(body) if body.len() < shared.opts.offload_bytes => {
                        shared.handle(path, &body)
                    }
                    Body::Owned(body) => {
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
                            Err(job) => shared.handle(path, &job.body),
                        }
                    }
                };
                self.derendered(slot, endpoint, req.start, &reply);
            }
            Route::Health => {
                self.record(HEALTH, 200, req.start);
                self.send(slot, 200, http::PLAIN, b"", head_only);
            }
            Route::Models => {
                self.record(MODELS, 200, req.start);
                self.send(slot, 200, http::JSON, &shared.models, head_only);
            }
            Route::Metrics => {
                let text = (shared.render)(&shared.snapshot());
                self.record(METRICS, 200, req.start);
                self.send(slot, 200, http::PROMETHEUS, &text, head_only);
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

    pub(super) fn derendered(
        &mut self,
        slot: usize,
        endpoint: usize,
        start: Instant,
        reply: &Reply,
    ) {
        // Counted before the answer goes out: a client that has its answer sees it counted.
        {
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
        self.send(slot, reply.status, http::JSON, &reply.body, false);
    }

    /// Counts an answer, before it is sent (as [`Loop::derendered`] does).
    pub(super) fn record(&self, endpoint: usize, status: u16, start: Instant) {
        let b = &self.shared.opts.bounds;
        let seconds = start.elapsed().as_secs_f64();
        lock(&self.shared.metrics[self.index]).record(b, endpoint, status, seconds);
    }

    pub(super) fn error(
        &mut self,
        slot: usize,
        endpoint: usize,
        status: u16,
        message: &str,
        start: Instant,
    ) {
        {
            let b = &self.shared.opts.bounds;
            let seconds = start.elapsed().as_secs_f64();
            let mut m = lock(&self.shared.metrics[self.index]);
            m.error(reason(status));
            m.record(b, endpoint, status, seconds);
        }
        let body = crate::wire::error_body(status, message, None);
        self.send(slot, status, http::JSON, &body, false);
    }

    pub(super) fn too_large(&mut self, slot: usize, endpoint: usize, start: Instant) {
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

    /// Closes or refuses connections whose deadline has passed.
    pub(super) fn sweep(&mut self, now: Instant) {
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

    pub(super) fn start_drain(&mut self) {
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
