//! What a request costs a server that does no work, over loopback TCP with one request in flight
//! a connection, and a native client that loads any HTTP/1.1 server that way.
//!
//! Two do-nothing servers, each answering every request with the same bytes:
//! - `serve` answers every read of a connection with a whole recorded answer, on mio: its CPU
//!   time per request is the kernel's and an event loop's alone, the floor under any front's
//!   figure with a connection a stream;
//! - `hyper` is hyper 1.x (hyper-util's auto builder: HTTP/1.1, and HTTP/2 with prior
//!   knowledge) on a tokio runtime of one worker thread, built as `tokstream serve`'s front
//!   builds its runtime and connections. It reads each request's body and answers the recorded
//!   answer's status, `Content-Type` and body (hyper adds `Content-Length` and `Date`, as for
//!   the front): the floor of a front on hyper.
//!
//! `load` keeps `CONNS` keep-alive connections each with one request in flight (the request file
//! resent as soon as its answer is complete) and prints what it got as one JSON line.
//! `benches/server/loopback_floor.py` and `benches/server/front_cpu.py` run them against
//! `tokstream serve`:
//!
//! ```text
//! loopback_floor serve ADDR ANSWER_FILE
//! loopback_floor hyper ADDR ANSWER_FILE
//! loopback_floor load ADDR CONNS REQUEST_FILE SECONDS
//! ```

use std::convert::Infallible;
use std::future::poll_fn;
use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::Context;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

const LISTENER: Token = Token(usize::MAX);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["serve", addr, answer] => addr_of(addr).and_then(|a| serve(a, &std::fs::read(answer)?)),
        ["hyper", addr, answer] => {
            addr_of(addr).and_then(|a| serve_hyper(a, &std::fs::read(answer)?))
        }
        ["load", addr, conns, request, secs] => (|| {
            let conns = conns.parse().map_err(|_| bad("CONNS must be a number"))?;
            let secs: f64 = secs.parse().map_err(|_| bad("SECONDS must be a number"))?;
            let (requests, not_ok, took) =
                load(addr_of(addr)?, conns, &std::fs::read(request)?, secs)?;
            writeln!(
                io::stdout().lock(),
                "{{\"requests\": {requests}, \"not_ok\": {not_ok}, \"seconds\": {took:.3}}}"
            )
        })(),
        _ => Err(bad(
            "usage: loopback_floor serve|hyper ADDR ANSWER_FILE | load ADDR CONNS REQUEST_FILE \
             SECONDS",
        )),
    };
    if let Err(e) = run {
        let _ = writeln!(io::stderr().lock(), "loopback_floor: {e}");
        std::process::exit(2);
    }
}

fn bad(message: &str) -> io::Error {
    io::Error::new(ErrorKind::InvalidInput, message.to_owned())
}

fn addr_of(addr: &str) -> io::Result<SocketAddr> {
    addr.parse().map_err(|_| bad("ADDR must be HOST:PORT"))
}

/// Reads everything the socket holds into `buf` (appending, or dropping when `keep` is false);
/// the bytes read and whether the peer closed or failed.
fn drain(s: &mut TcpStream, buf: &mut Vec<u8>, keep: bool) -> (usize, bool) {
    let mut chunk = [0u8; 65536];
    let mut got = 0;
    loop {
        match s.read(&mut chunk) {
            Ok(0) => return (got, true),
            Ok(n) => {
                got += n;
                if keep {
                    buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return (got, false),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return (got, true),
        }
    }
}

/// Answers each read burst of a connection with `answer` (a client with one request in flight
/// sends one request a burst), until killed.
fn serve(addr: SocketAddr, answer: &[u8]) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(512);
    let mut listener = TcpListener::bind(addr)?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut conns: Vec<Option<TcpStream>> = Vec::new();
    let mut unused = Vec::new();
    loop {
        poll.poll(&mut events, None)?;
        for event in &events {
            if event.token() == LISTENER {
                loop {
                    match listener.accept() {
                        Ok((mut s, _)) => {
                            s.set_nodelay(true)?;
                            poll.registry().register(
                                &mut s,
                                Token(conns.len()),
                                Interest::READABLE,
                            )?;
                            conns.push(Some(s));
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) => return Err(e),
                    }
                }
                continue;
            }
            let Some(place) = conns.get_mut(event.token().0) else {
                continue;
            };
            let Some(s) = place.as_mut() else {
                continue;
            };
            let (got, mut closed) = drain(s, &mut unused, false);
            if got > 0 && !closed && s.write(answer).ok() != Some(answer.len()) {
                // An answer the socket cannot take whole: this tool does not queue.
                closed = true;
            }
            if closed {
                if let Some(mut s) = place.take() {
                    let _ = poll.registry().deregister(&mut s);
                }
            }
        }
    }
}

/// What the hyper server answers: a recorded answer's status, `Content-Type` and body.
struct Canned {
    status: StatusCode,
    kind: HeaderValue,
    body: Bytes,
}

impl Canned {
    fn parse(answer: &[u8]) -> io::Result<Canned> {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        let Ok(httparse::Status::Complete(head)) = response.parse(answer) else {
            return Err(bad("ANSWER_FILE must hold a whole HTTP/1.1 answer"));
        };
        let status = response
            .code
            .and_then(|c| StatusCode::from_u16(c).ok())
            .ok_or_else(|| bad("the answer's status is not valid"))?;
        let value = |name: &str| {
            response
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| h.value)
        };
        let kind = value("content-type")
            .and_then(|v| HeaderValue::from_bytes(v).ok())
            .ok_or_else(|| bad("the answer has no Content-Type"))?;
        let length = value("content-length")
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<usize>().ok())
            .ok_or_else(|| bad("the answer has no Content-Length"))?;
        let body = answer
            .get(head..head + length)
            .ok_or_else(|| bad("the answer's body is shorter than its Content-Length"))?;
        Ok(Canned {
            status,
            kind,
            body: Bytes::copy_from_slice(body),
        })
    }
}

/// A body of one frame, as the front's answers are.
struct Whole(Option<Bytes>);

impl Body for Whole {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        std::task::Poll::Ready(self.get_mut().0.take().map(|d| Ok(Frame::data(d))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.as_ref().map_or(0, |d| d.len() as u64))
    }
}

/// Reads the request's body (its frames dropped) and answers `canned`.
async fn answer_canned(
    canned: &'static Canned,
    req: Request<Incoming>,
) -> Result<Response<Whole>, Infallible> {
    let mut body = req.into_body();
    if !body.is_end_stream() {
        while let Some(frame) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            if frame.is_err() {
                break;
            }
        }
    }
    let mut response = Response::new(Whole(Some(canned.body.clone())));
    *response.status_mut() = canned.status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, canned.kind.clone());
    Ok(response)
}

/// Serves every connection with hyper's auto builder on a one-worker tokio runtime, as the
/// front does (the accept loop a task on the worker, TCP_NODELAY, the same HTTP/1 and HTTP/2
/// settings), answering `answer`'s status, type and body to every request, until killed.
fn serve_hyper(addr: SocketAddr, answer: &[u8]) -> io::Result<()> {
    let canned: &'static Canned = Box::leak(Box::new(Canned::parse(answer)?));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(2)
        .enable_all()
        .build()?;
    let max_header_bytes = tokstream::limits::MAX_HEADER_BYTES;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .half_close(true)
        .max_buf_size(max_header_bytes.max(8192));
    builder
        .http2()
        .max_header_list_size(u32::try_from(max_header_bytes).unwrap_or(u32::MAX));
    let builder: &'static auto::Builder<TokioExecutor> = Box::leak(Box::new(builder));
    let listener = {
        let _entered = runtime.enter();
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        tokio::net::TcpListener::from_std(std_listener)?
    };
    let accept = runtime.spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) if e.raw_os_error() == Some(24) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                Err(_) => continue,
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| answer_canned(canned, req));
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    // The accept loop runs on the worker; this thread only waits, as the front's host does.
    match runtime.block_on(accept) {
        Ok(()) => Ok(()),
        Err(e) => Err(io::Error::other(e)),
    }
}

/// The length of the complete answer at the start of `buf` and whether its status was 200.
fn answer_in(buf: &[u8]) -> io::Result<Option<(usize, bool)>> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(buf) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(io::Error::new(ErrorKind::InvalidData, e)),
    };
    let length = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| {
            std::str::from_utf8(h.value)
                .ok()?
                .trim()
                .parse::<usize>()
                .ok()
        })
        .ok_or_else(|| bad("an answer without a Content-Length"))?;
    let total = head + length;
    Ok((buf.len() >= total).then_some((total, response.code == Some(200))))
}

/// `conns` connections, each resending `request` when its answer is complete, for `secs`
/// seconds: (answers, answers that were not 200, seconds taken).
fn load(addr: SocketAddr, conns: usize, request: &[u8], secs: f64) -> io::Result<(u64, u64, f64)> {
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(512);
    let mut socks = Vec::with_capacity(conns);
    for i in 0..conns {
        let std_sock = std::net::TcpStream::connect(addr)?;
        std_sock.set_nodelay(true)?;
        std_sock.set_nonblocking(true)?;
        let mut s = TcpStream::from_std(std_sock);
        poll.registry()
            .register(&mut s, Token(i), Interest::READABLE)?;
        socks.push((s, Vec::new()));
    }
    let send = |s: &mut TcpStream| match s.write(request) {
        Ok(n) if n == request.len() => Ok(()),
        Ok(_) => Err(bad("a request the socket could not take whole")),
        Err(e) => Err(e),
    };
    for (s, _) in &mut socks {
        send(s)?;
    }
    let (mut answers, mut not_ok) = (0u64, 0u64);
    let start = Instant::now();
    let until = Duration::from_secs_f64(secs);
    while start.elapsed() < until {
        poll.poll(&mut events, Some(Duration::from_millis(100)))?;
        for event in &events {
            let Some((s, buf)) = socks.get_mut(event.token().0) else {
                continue;
            };
            if drain(s, buf, true).1 {
                return Err(bad("the server closed a connection"));
            }
            while let Some((total, ok)) = answer_in(buf)? {
                answers += 1;
                not_ok += u64::from(!ok);
                buf.drain(..total);
                send(s)?;
            }
        }
    }
    Ok((answers, not_ok, start.elapsed().as_secs_f64()))
}
