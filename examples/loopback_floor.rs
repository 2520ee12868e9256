//! What a request costs a server that does no work, over loopback TCP with one request in flight
//! a connection, and a native client that loads any HTTP/1.1 server that way.
//!
//! `serve` answers every read of a connection with the same bytes, on the event library the
//! front runs on (mio), so its CPU time per request is the kernel's and the event loop's alone:
//! the floor under any front's figure with a connection a stream. `load` keeps `CONNS`
//! keep-alive connections each with one request in flight (the request file resent as soon as
//! its answer is complete) and prints what it got as one JSON line. `benches/loopback_floor.py`
//! runs both against `tokstream serve`:
//!
//! ```text
//! loopback_floor serve ADDR ANSWER_FILE
//! loopback_floor load ADDR CONNS REQUEST_FILE SECONDS
//! ```

use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

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
            "usage: loopback_floor serve ADDR ANSWER_FILE | load ADDR CONNS REQUEST_FILE SECONDS",
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
