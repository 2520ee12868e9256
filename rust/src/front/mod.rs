//! The HTTP front (feature `front`): `tokstream serve`'s server, with no Python on a request's
//! path. hyper serves HTTP/1.1 and HTTP/2 (cleartext, prior knowledge) on a tokio runtime of
//! `threads` worker threads, over TCP or a Unix domain socket; this module keeps only what is the
//! project's own: the routes to [`Derenderer::handle_json`], the limits hyper lacks, the cap on
//! connections, the drain, and the counters.
//!
//! hyper does the framing, `HEAD`, `Date`, `100 Continue`, keep-alive and pipelining, and answers
//! a message it cannot frame itself (400, or 431 for a head over `max_header_bytes`, each with no
//! body, then a close). What the front adds:
//! - a head must arrive within `header_timeout`, a connection may idle `keep_alive_timeout`
//!   after an answer, and an answer the client does not read is dropped after `send_timeout`:
//!   each closes the connection (`conn`);
//! - a body must keep arriving (`body_timeout`, then 408) and stay under `max_body_bytes` (413),
//!   and memory grows with what arrives, not with a declared length (`service`);
//! - at `max_connections` a new connection closes the connection idle longest; only when none is
//!   idle is it answered 503. When the process runs out of file descriptors the same happens and
//!   `accept` is retried on a timer, so an idle flood cannot keep `/health` from answering;
//! - bodies of `offload_bytes` or more, and every body when a Python parser runs, are derendered
//!   on a small pool of threads, so a large derender never stalls the threads that answer
//!   `/health`;
//! - [`Front::drain`] stops accepting, closes idle connections (HTTP/2: `GOAWAY`), lets requests
//!   in flight finish and answers 503 to those still waiting for their body or derender when the
//!   grace period ends.
//!
//! `/v1/models` is bytes the host gives; `/metrics` is the host's rendering of every thread's
//! counters (one scrape sees the whole server).

mod conn;
mod log;
mod metrics;
mod nul;
mod service;
mod sock;

use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, mpsc};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::sync::{Notify, oneshot};

use crate::limits;
use crate::wire::{Derenderer, Endpoint, Reply};

pub use log::{Format as LogFormat, Level as LogLevel, LogOptions};
pub use metrics::Bounds;
pub use sock::Listener;

pub use crate::limits::{LINGER, LINGER_BYTES};

/// Most threads that derender large bodies (one a core, so the connections' threads keep theirs).
const POOL_THREADS: usize = 4;
/// How long `accept` waits before it is retried after the process ran out of descriptors, and
/// how many idle connections it closes first to make room.
const ACCEPT_RETRY: Duration = Duration::from_millis(5);
const ACCEPT_ROOM: usize = 8;

/// The front's limits and sizes.
#[derive(Debug, Clone)]
pub struct Options {
    /// Worker threads serving the connections.
    pub threads: usize,
    /// How long a request's head may take to arrive (then 408, or a close).
    pub header_timeout: Duration,
    /// How long a body may pause between its parts (then 408).
    pub body_timeout: Duration,
    /// How long an idle connection is kept open between requests.
    pub keep_alive_timeout: Duration,
    /// How long an answer may wait for a client that does not read it.
    pub send_timeout: Duration,
    /// Most bytes of a request's head (then 431).
    pub max_header_bytes: usize,
    /// Most bytes of a body (then 413).
    pub max_body_bytes: usize,
    /// Open connections per worker thread (see the module's notes on the cap).
    pub max_connections: usize,
    /// Bodies at least this long are derendered on the pool.
    pub offload_bytes: usize,
    /// The derender work a body may ask for.
    pub bounds: Bounds,
    /// What is logged, and how.
    pub log: LogOptions,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: 1,
            header_timeout: limits::HEADER_TIMEOUT,
            body_timeout: limits::BODY_TIMEOUT,
            keep_alive_timeout: limits::KEEP_ALIVE_TIMEOUT,
            send_timeout: limits::SEND_TIMEOUT,
            max_header_bytes: limits::MAX_HEADER_BYTES,
            max_body_bytes: limits::MAX_BODY_BYTES,
            max_connections: limits::MAX_CONNECTIONS,
            offload_bytes: limits::OFFLOAD_BYTES,
            bounds: Bounds::default(),
            log: LogOptions::default(),
        }
    }
}

/// Renders `/metrics` from a JSON array of every thread's counters.
pub type Render = Arc<dyn Fn(&str) -> Vec<u8> + Send + Sync>;

/// Runs a derender in the context it needs: for a derenderer with a Python parser, attached
/// to the interpreter (the parser's sessions are Python objects, made and dropped in it).
pub type Runner = Arc<dyn Fn(&mut dyn FnMut()) + Send + Sync>;

/// What the connections share.
pub(crate) struct Shared {
    derenderer: Derenderer,
    opts: Options,
    /// Open connections allowed in all.
    cap: usize,
    models: Bytes,
    render: Render,
    runner: Option<Runner>,
    metrics: Vec<Mutex<metrics::Metrics>>,
    conns: conn::Registry,
    log: log::Log,
    builder: auto::Builder<TokioExecutor>,
    draining: AtomicBool,
    drain_signal: Notify,
    /// The drain's grace is about to end: waits for a body or a derender give up.
    late: AtomicBool,
    late_signal: Notify,
    accepting: AtomicBool,
    pool: Mutex<Option<mpsc::Sender<Job>>>,
    busy: AtomicUsize,
    /// The front has ended (drained, every connection closed), and the signal that it has.
    ended: Mutex<bool>,
    ended_signal: Condvar,
}

/// A body for the pool.
struct Job {
    endpoint: Endpoint,
    body: Bytes,
    tx: oneshot::Sender<Reply>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

thread_local! {
    /// The counters this thread writes to (threads are given one in turn as they start).
    static SHARD: Cell<usize> = const { Cell::new(0) };
}

impl Shared {
    /// `handle_json`, in the runner's context if there is one.
    fn handle(&self, endpoint: Endpoint, body: &[u8]) -> Reply {
        let Some(runner) = &self.runner else {
            return self.derenderer.handle(endpoint, body);
        };
        let mut reply = None;
        runner(&mut || reply = Some(self.derenderer.handle(endpoint, body)));
        reply.unwrap_or_else(|| Reply {
            status: 500,
            body: crate::wire::error_body(500, "the derender could not run", None),
            tokens: 0,
            state_bytes: 0,
        })
    }

    fn counters(&self) -> MutexGuard<'_, metrics::Metrics> {
        let shard = SHARD.with(Cell::get) % self.metrics.len().max(1);
        lock(&self.metrics[shard])
    }

    /// Counts an answer (and its refusal reason, or its derender).
    fn record(&self, endpoint: service::Endpoint, out: &service::Out, seconds: f64) {
        let b = &self.opts.bounds;
        let mut m = self.counters();
        if let Some(reason) = out.reason {
            m.error(reason);
        } else if out.derendered {
            m.derendered(b, out.tokens, out.state_bytes, seconds);
        }
        m.record(b, endpoint.index(), out.status, seconds);
    }

    /// Counts and logs a refusal that has no answer of the front's own (a close, hyper's
    /// answer).
    fn count_error(&self, reason: &'static str, message: &str) {
        self.counters().error(reason);
        self.log.closed(reason, message);
    }

    fn snapshot(&self) -> String {
        let mut out = String::from("[");
        for (i, m) in self.metrics.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            lock(m).write(&mut out);
        }
        out.push(']');
        out
    }

    fn offload(&self, job: Job) -> Result<(), Job> {
        match lock(&self.pool).as_ref() {
            Some(tx) => tx.send(job).map_err(|e| e.0),
            None => Err(job),
        }
    }

    fn is_late(&self) -> bool {
        self.late.load(Ordering::SeqCst)
    }

    /// Marks the front ended once it drains, has stopped accepting and has no connection.
    fn check_ended(&self) {
        if self.draining.load(Ordering::SeqCst)
            && !self.accepting.load(Ordering::SeqCst)
            && self.conns.open() == 0
        {
            *lock(&self.ended) = true;
            self.ended_signal.notify_all();
        }
    }
}

/// A running front: its runtime, until the drain ends every connection.
///
/// Its shared state (the derenderer, the counters, the renderer) and its runtime live as long as
/// the process: they are never freed, since they may hold Python objects (a user parser, the
/// metrics renderer) that must not be dropped by a thread the interpreter does not know. One
/// front a process is the use; each costs a few kilobytes besides the derenderer.
pub struct Front {
    shared: &'static Shared,
    runtime: &'static tokio::runtime::Runtime,
}

impl Front {
    /// Starts serving `listener` (bound and listening) on `opts.threads` worker threads;
    /// `runner`, if given, runs every derender (see [`Runner`]).
    pub fn start(
        listener: Listener,
        derenderer: Derenderer,
        opts: Options,
        models: Vec<u8>,
        render: Render,
        runner: Option<Runner>,
    ) -> io::Result<Front> {
        let threads = opts.threads.max(1);
        let next_shard = Arc::new(AtomicUsize::new(0));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .max_blocking_threads(2)
            .thread_name("tokstream-front")
            .on_thread_start(move || {
                let n = next_shard.fetch_add(1, Ordering::Relaxed);
                SHARD.with(|s| s.set(n));
            })
            .enable_all()
            .build()?;
        let runtime: &'static tokio::runtime::Runtime = Box::leak(Box::new(runtime));
        let mut builder = auto::Builder::new(TokioExecutor::new());
        // Not `pipeline_flush`: with it, hyper never writes its own 400 and 431 answers (it
        // holds the write back while unread input remains, and closes first).
        builder
            .http1()
            .half_close(true)
            .max_buf_size(opts.max_header_bytes.max(8192));
        builder
            .http2()
            .max_header_list_size(u32::try_from(opts.max_header_bytes).unwrap_or(u32::MAX));
        let (tx, rx) = mpsc::channel::<Job>();
        let log = log::Log::new(opts.log);
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            derenderer,
            metrics: (0..threads)
                .map(|_| Mutex::new(metrics::Metrics::new(&opts.bounds)))
                .collect(),
            cap: opts.max_connections.max(1).saturating_mul(threads),
            opts,
            models: Bytes::from(models),
            render,
            runner,
            conns: conn::Registry::new(),
            log,
            builder,
            draining: AtomicBool::new(false),
            drain_signal: Notify::new(),
            late: AtomicBool::new(false),
            late_signal: Notify::new(),
            accepting: AtomicBool::new(true),
            pool: Mutex::new(Some(tx)),
            busy: AtomicUsize::new(0),
            ended: Mutex::new(false),
            ended_signal: Condvar::new(),
        }));
        let rx = Arc::new(Mutex::new(rx));
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        for n in 0..POOL_THREADS.min(cores) {
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("tokstream-derender-{n}"))
                .spawn(move || pool_thread(shared, &rx))?;
        }
        let accept = {
            let _entered = runtime.enter();
            listener.into_runtime()?
        };
        runtime.spawn(accept_loop(shared, accept));
        if shared.log.opts.access {
            runtime.spawn(async move {
                loop {
                    tokio::time::sleep(log::FLUSH_EVERY).await;
                    shared.log.flush();
                }
            });
        }
        Ok(Front { shared, runtime })
    }

    /// Begins the drain: no new connections, idle ones closed, and `grace` for the requests in
    /// flight (those still waiting for their body or derender get 503 just before it ends).
    pub fn drain(&self, grace: Duration) {
        if self.shared.draining.swap(true, Ordering::SeqCst) {
            return;
        }
        self.shared.drain_signal.notify_waiters();
        let early = grace
            .saturating_sub(Duration::from_millis(250))
            .max(grace / 2);
        let shared = self.shared;
        self.runtime.spawn(async move {
            tokio::time::sleep(early).await;
            shared.late.store(true, Ordering::SeqCst);
            shared.late_signal.notify_waiters();
        });
        shared.check_ended();
    }

    /// Whether the front has ended (after a drain).
    pub fn finished(&self) -> bool {
        *lock(&self.shared.ended)
    }

    /// Whether a pool thread is still derendering.
    pub fn busy(&self) -> bool {
        self.shared.busy.load(Ordering::SeqCst) > 0
    }

    /// Waits up to `timeout` for the front to end; true once it has.
    pub fn wait(&self, timeout: Duration) -> bool {
        let ended = lock(&self.shared.ended);
        let (ended, _) = self
            .shared
            .ended_signal
            .wait_timeout_while(ended, timeout, |e| !*e)
            .unwrap_or_else(PoisonError::into_inner);
        let ended = *ended;
        if ended {
            self.shared.log.flush();
        }
        ended
    }

    /// Every thread's counters, as a JSON array of `Metrics.snapshot()` objects.
    pub fn snapshot(&self) -> String {
        self.shared.snapshot()
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        // The pool threads end when the channel closes.
        lock(&self.shared.pool).take();
        self.shared.log.flush();
    }
}

/// Whether an `accept` error means the process or system has no descriptor or memory left.
fn out_of_descriptors(e: &io::Error) -> bool {
    // EMFILE, ENFILE, ENOBUFS, ENOMEM on Linux.
    matches!(e.raw_os_error(), Some(24 | 23 | 105 | 12))
}

async fn accept_loop(shared: &'static Shared, accept: sock::Accept) {
    let mut drained = pin!(shared.drain_signal.notified());
    drained.as_mut().enable();
    loop {
        if shared.draining.load(Ordering::SeqCst) {
            break;
        }
        let next = {
            let mut accepted = pin!(accept.accept());
            poll_fn(|cx| {
                if drained.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                accepted.as_mut().poll(cx).map(Some)
            })
            .await
        };
        match next {
            None => break,
            Some(Ok(stream)) => {
                let refuse = shared.conns.open() >= shared.cap && !shared.conns.close_oldest_idle();
                let (slot, state) = shared.conns.add();
                tokio::spawn(connection(shared, stream, slot, state, refuse));
            }
            Some(Err(e)) if out_of_descriptors(&e) => {
                // The connections waiting stay in the listen queue: make room, and try again
                // soon rather than when another connection arrives.
                for _ in 0..ACCEPT_ROOM {
                    if !shared.conns.close_oldest_idle() {
                        break;
                    }
                }
                tokio::time::sleep(ACCEPT_RETRY).await;
            }
            Some(Err(_)) => {} // the client went away before it was accepted
        }
    }
    drop(accept);
    shared.accepting.store(false, Ordering::SeqCst);
    shared.check_ended();
}

async fn connection(
    shared: &'static Shared,
    stream: sock::Stream,
    slot: usize,
    state: Arc<conn::State>,
    refuse: bool,
) {
    let io = TokioIo::new(conn::Guarded::new(stream, shared, Arc::clone(&state)));
    let service = hyper::service::service_fn(move |req| {
        service::serve(shared, Arc::clone(&state), refuse, req)
    });
    let mut served = pin!(shared.builder.serve_connection(io, service));
    let mut drained = pin!(shared.drain_signal.notified());
    drained.as_mut().enable();
    let mut closing = false;
    let result = poll_fn(|cx| {
        if !closing
            && (shared.draining.load(Ordering::SeqCst) || drained.as_mut().poll(cx).is_ready())
        {
            closing = true;
            served.as_mut().graceful_shutdown();
        }
        served.as_mut().poll(cx)
    })
    .await;
    if let Err(e) = result {
        if let Some(e) = e.downcast_ref::<hyper::Error>() {
            if e.is_parse_too_large() {
                let message = "a request head over --max-header-bytes: answered 431, then closed";
                shared.count_error("header_too_large", message);
            } else if e.is_parse() || e.is_parse_version_h2() {
                let message = format!("not a valid HTTP message ({e}): answered 400, then closed");
                shared.count_error("bad_request", &message);
            }
        }
    }
    shared.conns.remove(slot);
    shared.check_ended();
}

fn pool_thread(shared: &Shared, rx: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = match lock(rx).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        shared.busy.fetch_add(1, Ordering::SeqCst);
        let reply = shared.handle(job.endpoint, &job.body);
        shared.busy.fetch_sub(1, Ordering::SeqCst);
        let _ = job.tx.send(reply);
    }
}
