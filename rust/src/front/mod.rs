//! The HTTP/1.1 front (feature `front`): `tokstream serve`'s server, with no Python on a request's
//! path. Each loop thread runs an epoll loop (`mio`) over its connections, reads heads with
//! `httparse` and hands derender bodies to [`Derenderer::handle_json`]; bodies of
//! `offload_bytes` or more go to a small pool of threads, so a large whole response never stalls
//! `/health` or other streams.
//!
//! The limits are those of the Python face (`tokstream.connection`): a header deadline (408), a
//! body idle timeout (408), a keep-alive timeout, a header size limit (431, never buffered), a cap
//! on open connections per loop thread (503), a body limit (413) and the JSON error shape for
//! malformed HTTP (400). A refused connection is half-closed and drained for up to [`LINGER`]
//! and [`LINGER_BYTES`] so the client reads its answer. [`Front::drain`] stops accepting, closes
//! idle connections, lets requests in flight finish and answers 503 to those still waiting for
//! their body or their derender when the grace period ends.
//!
//! `/v1/models` is bytes the host gives; `/metrics` is the host's rendering of every thread's
//! counters (one scrape sees the whole server).

mod conn;
mod http;
mod inbuf;
mod metrics;
mod request;
mod sock;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::limits;
use crate::wire::{Derenderer, Reply};

pub use metrics::Bounds;
pub use sock::Listener;

pub use crate::limits::{LINGER, LINGER_BYTES};
/// Most threads that derender large bodies (one a core, so the loop threads keep theirs).
const POOL_THREADS: usize = 4;

/// The front's limits and sizes.
#[derive(Debug, Clone)]
pub struct Options {
    /// Loop threads (each with its own connections).
    pub threads: usize,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub keep_alive_timeout: Duration,
    pub max_header_bytes: usize,
    pub max_body_bytes: usize,
    /// Open connections per loop thread; more are answered 503.
    pub max_connections: usize,
    /// Bodies at least this long are derendered on the pool.
    pub offload_bytes: usize,
    pub bounds: Bounds,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: 1,
            header_timeout: limits::HEADER_TIMEOUT,
            body_timeout: limits::BODY_TIMEOUT,
            keep_alive_timeout: limits::KEEP_ALIVE_TIMEOUT,
            max_header_bytes: limits::MAX_HEADER_BYTES,
            max_body_bytes: limits::MAX_BODY_BYTES,
            max_connections: limits::MAX_CONNECTIONS,
            offload_bytes: limits::OFFLOAD_BYTES,
            bounds: Bounds::default(),
        }
    }
}

/// Renders `/metrics` from a JSON array of every loop thread's counters.
pub type Render = Arc<dyn Fn(&str) -> Vec<u8> + Send + Sync>;

/// Runs a derender in the context it needs: for a derenderer with a Python parser, attached
/// to the interpreter (the parser's sessions are Python objects, made and dropped in it).
pub type Runner = Arc<dyn Fn(&mut dyn FnMut()) + Send + Sync>;

/// What the loop threads share.
pub(crate) struct Shared {
    derenderer: Derenderer,
    opts: Options,
    models: Vec<u8>,
    render: Render,
    runner: Option<Runner>,
    metrics: Vec<Mutex<metrics::Metrics>>,
    draining: AtomicBool,
    drain_at: Mutex<Option<Instant>>,
    loops: Vec<LoopHandle>,
    pool: Mutex<Option<mpsc::Sender<Job>>>,
    busy: AtomicUsize,
    /// Loop threads that have ended, and the signal that one has.
    ended: Mutex<usize>,
    ended_signal: Condvar,
}

/// How other threads reach one loop: its waker, its inbox of finished derenders and of
/// connections handed over, and how many connections it has.
pub(crate) struct LoopHandle {
    waker: Arc<mio::Waker>,
    done: Mutex<Vec<Done>>,
    handed: Mutex<Vec<sock::Sock>>,
    open: AtomicUsize,
}

/// A body for the pool.
struct Job {
    to: usize,
    token: usize,
    generation: u64,
    path: &'static str,
    body: Vec<u8>,
}

/// A derender the pool finished.
pub(crate) struct Done {
    token: usize,
    generation: u64,
    reply: Reply,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// `handle_json`, in the runner's context if there is one.
    fn handle(&self, path: &str, body: &[u8]) -> Reply {
        let Some(runner) = &self.runner else {
            return self.derenderer.handle_json(path, body);
        };
        let mut reply = None;
        runner(&mut || reply = Some(self.derenderer.handle_json(path, body)));
        reply.unwrap_or_else(|| Reply {
            status: 500,
            body: crate::wire::error_body(500, "the derender could not run", None),
            tokens: 0,
            state_bytes: 0,
        })
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
}

/// A running front: its loop threads, until they end after a drain.
///
/// Its shared state (the derenderer, the counters, the renderer) lives as long as the process:
/// it is never freed, since it may hold Python objects (a user parser, the metrics renderer)
/// that must not be dropped by a thread the interpreter does not know, whichever thread lets go
/// of it last. One front a process is the use; each costs a few kilobytes besides the
/// derenderer.
pub struct Front {
    shared: &'static Shared,
    threads: Vec<JoinHandle<()>>,
}

impl Front {
    /// Starts serving `listener` (bound and listening) with `opts.threads` loop threads;
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
        listener.set_nonblocking()?;
        let mut polls = Vec::with_capacity(threads);
        let mut loops = Vec::with_capacity(threads);
        for _ in 0..threads {
            let poll = mio::Poll::new()?;
            let waker = Arc::new(mio::Waker::new(poll.registry(), conn::WAKER)?);
            loops.push(LoopHandle {
                waker,
                done: Mutex::new(Vec::new()),
                handed: Mutex::new(Vec::new()),
                open: AtomicUsize::new(0),
            });
            polls.push(poll);
        }
        let (tx, rx) = mpsc::channel::<Job>();
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            derenderer,
            metrics: (0..threads)
                .map(|_| Mutex::new(metrics::Metrics::new(&opts.bounds)))
                .collect(),
            opts,
            models,
            render,
            runner,
            draining: AtomicBool::new(false),
            drain_at: Mutex::new(None),
            loops,
            pool: Mutex::new(Some(tx)),
            busy: AtomicUsize::new(0),
            ended: Mutex::new(0),
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
        let mut handles = Vec::with_capacity(threads);
        for (index, poll) in polls.into_iter().enumerate() {
            let listener = listener.for_loop()?;
            let handle = std::thread::Builder::new()
                .name(format!("tokstream-front-{index}"))
                .spawn(move || {
                    conn::run(index, poll, listener, shared);
                    *lock(&shared.ended) += 1;
                    shared.ended_signal.notify_all();
                })?;
            handles.push(handle);
        }
        Ok(Front {
            shared,
            threads: handles,
        })
    }

    /// Begins the drain: no new connections, idle ones closed, and `grace` for the requests in
    /// flight (those still waiting for their body or derender get 503 just before it ends).
    pub fn drain(&self, grace: Duration) {
        let early = grace
            .saturating_sub(Duration::from_millis(250))
            .max(grace / 2);
        {
            let mut at = lock(&self.shared.drain_at);
            if at.is_none() {
                *at = Some(Instant::now() + early);
            }
        }
        self.shared.draining.store(true, Ordering::SeqCst);
        for l in &self.shared.loops {
            let _ = l.waker.wake();
        }
    }

    /// Whether every loop thread has ended (after a drain).
    pub fn finished(&self) -> bool {
        self.threads.iter().all(JoinHandle::is_finished)
    }

    /// Whether a pool thread is still derendering.
    pub fn busy(&self) -> bool {
        self.shared.busy.load(Ordering::SeqCst) > 0
    }

    /// Waits up to `timeout` for the loop threads to end; true once they have.
    pub fn wait(&self, timeout: Duration) -> bool {
        let all = self.threads.len();
        let ended = lock(&self.shared.ended);
        let (ended, _) = self
            .shared
            .ended_signal
            .wait_timeout_while(ended, timeout, |n| *n < all)
            .unwrap_or_else(PoisonError::into_inner);
        *ended >= all
    }

    /// Every loop thread's counters, as a JSON array of `Metrics.snapshot()` objects.
    pub fn snapshot(&self) -> String {
        self.shared.snapshot()
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        // The pool threads end when the channel closes.
        lock(&self.shared.pool).take();
    }
}

fn pool_thread(shared: &Shared, rx: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = match lock(rx).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        shared.busy.fetch_add(1, Ordering::SeqCst);
        let reply = shared.handle(job.path, &job.body);
        shared.busy.fetch_sub(1, Ordering::SeqCst);
        if let Some(l) = shared.loops.get(job.to) {
            lock(&l.done).push(Done {
                token: job.token,
                generation: job.generation,
                reply,
            });
            let _ = l.waker.wake();
        }
    }
}

#[cfg(test)]
mod tests;
