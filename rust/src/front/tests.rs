#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use super::{Front, Listener, Options, Render};
use crate::wire::{COMPLETION_PATH, Derenderer};

fn front(opts: Options) -> (Front, u16) {
    let det = Arc::new(crate::Detokenizer::from_json(&crate::doc_tokenizer_json()).unwrap());
    let derenderer = Derenderer::new(det, "m", vec![], Some(64));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let render: Render = Arc::new(|snapshots: &str| snapshots.as_bytes().to_vec());
    let f = Front::start(
        Listener::Tcp(listener),
        derenderer,
        opts,
        b"{\"models\":1}".to_vec(),
        render,
        None,
    )
    .unwrap();
    (f, port)
}

fn exchange(port: u16, raw: &[u8]) -> String {
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(raw).unwrap();
    let mut out = Vec::new();
    let _ = sock.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A whole completion derender of ids 0 and 1 (text "Hi"), as raw HTTP.
fn completion_request() -> Vec<u8> {
    let body = br#"{"generate_responses": [{"choices": [{"index": 0, "token_ids": [0, 1]}]}]}"#;
    let mut raw = format!(
        "POST {COMPLETION_PATH} HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(body);
    raw
}

#[test]
fn derenders_answers_errors_and_drains() {
    let (f, port) = front(Options::default());
    let mut raw = completion_request();
    raw.extend_from_slice(b"GET /health HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n");
    raw.extend_from_slice(b"POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    raw.extend_from_slice(b"2\r\n{}\r\n0\r\n\r\n");
    raw.extend_from_slice(b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
    let text = exchange(port, &raw);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 3, "{text}");
    assert!(text.contains("\"text\":\"Hi\""), "{text}");
    assert!(text.contains("HTTP/1.1 404 Not Found"), "{text}");
    assert!(
        text.contains("\"type\":\"MethodNotAllowedError\""),
        "{text}"
    );
    // The last answer is the host's rendering of the counters, the requests before it counted.
    assert!(text.contains(r#"["completions",200,1]"#), "{text}");
    assert!(text.contains(r#"["other",404,1]"#), "{text}");
    let bad = exchange(port, b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n");
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    assert!(
        bad.contains("connection: close") && bad.contains("BadRequestError"),
        "{bad}"
    );
    f.drain(Duration::from_secs(1));
    assert!(f.wait(Duration::from_secs(5)));
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err() || f.finished());
}

#[test]
fn serves_a_unix_socket_like_tcp() {
    let dir = std::env::temp_dir().join(format!("tokstream-front-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("front.sock");
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let det = Arc::new(crate::Detokenizer::from_json(&crate::doc_tokenizer_json()).unwrap());
    let render: Render = Arc::new(|snapshots: &str| snapshots.as_bytes().to_vec());
    let f = Front::start(
        Listener::Unix(listener),
        Derenderer::new(det, "m", vec![], Some(64)),
        Options::default(),
        b"{}".to_vec(),
        render,
        None,
    )
    .unwrap();
    let mut raw = completion_request();
    raw.extend_from_slice(b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
    let mut sock = std::os::unix::net::UnixStream::connect(&path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(&raw).unwrap();
    let mut out = Vec::new();
    let _ = sock.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 2, "{text}");
    assert!(text.contains("\"text\":\"Hi\""), "{text}");
    f.drain(Duration::from_millis(200));
    assert!(f.wait(Duration::from_secs(5)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn limits_answer_431_413_and_408() {
    let opts = Options {
        max_header_bytes: 1024,
        max_body_bytes: 100,
        header_timeout: Duration::from_millis(300),
        ..Options::default()
    };
    let (f, port) = front(opts);
    let big = [
        &b"GET /health HTTP/1.1\r\nX: "[..],
        &[b'a'; 3000],
        b"\r\n\r\n",
    ]
    .concat();
    assert!(exchange(port, &big).contains("RequestHeaderFieldsTooLargeError"));
    let long = format!("POST {COMPLETION_PATH} HTTP/1.1\r\nContent-Length: 101\r\n\r\n");
    assert!(exchange(port, long.as_bytes()).starts_with("HTTP/1.1 413"));
    let slow = exchange(port, b"GET /health HTTP/1.1\r\n");
    assert!(slow.starts_with("HTTP/1.1 408") && slow.contains("RequestTimeoutError"));
    assert_eq!(exchange(port, b""), "");
    f.drain(Duration::from_millis(200));
    assert!(f.wait(Duration::from_secs(5)));
}

#[test]
fn the_connection_past_the_cap_gets_503_and_a_half_closed_client_its_answer() {
    let opts = Options {
        max_connections: 1,
        ..Options::default()
    };
    let (f, port) = front(opts);
    let mut held = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // The held connection is served (it is the one allowed), and then stays open.
    held.write_all(b"GET /health HTTP/1.1\r\n\r\n").unwrap();
    let mut first = [0u8; 256];
    held.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = held.read(&mut first).unwrap();
    assert!(first[..n].starts_with(b"HTTP/1.1 200 OK"));
    let extra = exchange(port, b"GET /health HTTP/1.1\r\n\r\n");
    assert!(extra.starts_with("HTTP/1.1 503"), "{extra}");
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    // A client that shuts its side after its request still reads the whole answer.
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(b"GET /v1/models HTTP/1.1\r\n\r\n").unwrap();
    sock.shutdown(std::net::Shutdown::Write).unwrap();
    let mut out = String::new();
    let _ = sock.read_to_string(&mut out);
    assert!(
        out.starts_with("HTTP/1.1 200 OK") && out.ends_with("{\"models\":1}"),
        "{out}"
    );
    f.drain(Duration::from_millis(200));
    assert!(f.wait(Duration::from_secs(5)));
}

#[test]
fn many_pipelined_requests_and_a_body_past_a_read_are_all_served() {
    let opts = Options {
        max_header_bytes: 1024,
        ..Options::default()
    };
    let (f, port) = front(opts);
    // 2,000 heads (64 KiB or more) in one write: read in pieces as the answers go out.
    let mut raw = b"GET /health HTTP/1.1\r\n\r\n".repeat(2000);
    let padding = " ".repeat(200_000);
    let body = format!(
        r#"{{"generate_responses": [{{"choices": [{{"index": 0, "token_ids": [0, 1]}}]}}]{padding}}}"#
    );
    let head = format!(
        "POST {COMPLETION_PATH} HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    raw.extend_from_slice(head.as_bytes());
    raw.extend_from_slice(body.as_bytes());
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut reader = sock.try_clone().unwrap();
    let collect = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = reader.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    });
    sock.write_all(&raw).unwrap();
    let text = collect.join().unwrap();
    assert_eq!(
        text.matches("HTTP/1.1 200 OK").count(),
        2001,
        "{}",
        &text[..200]
    );
    assert!(text.ends_with("\"kv_transfer_params\":null}") || text.contains("\"text\":\"Hi\""));
    f.drain(Duration::from_millis(200));
    assert!(f.wait(Duration::from_secs(5)));
}

#[test]
fn pipelined_answers_wait_for_a_client_that_does_not_read() {
    let (f, port) = front(Options::default());
    // 200,000 requests whose answers (about 22 MB) are far past what a connection holds queued
    // and what the sockets buffer: the server stops taking requests until the client reads,
    // then answers every one, in order, the last (which asks to close) last.
    let n = 200_000;
    let mut raw = b"GET /v1/models HTTP/1.1\r\n\r\n".repeat(n - 1);
    raw.extend_from_slice(b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut writer = sock.try_clone().unwrap();
    let write = std::thread::spawn(move || writer.write_all(&raw).is_ok());
    std::thread::sleep(Duration::from_millis(300));
    let mut out = Vec::new();
    let _ = sock.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(
        text.matches("HTTP/1.1 200 OK").count(),
        n,
        "{}",
        &text[..200]
    );
    assert_eq!(text.matches("{\"models\":1}").count(), n - 1);
    assert!(
        text.ends_with("connection: close\r\n\r\n"),
        "{}",
        &text[text.len() - 200..]
    );
    let _ = write.join().unwrap();
    f.drain(Duration::from_millis(200));
    assert!(f.wait(Duration::from_secs(5)));
}

#[test]
fn a_client_that_expects_100_continue_gets_it_before_it_sends_the_body() {
    let (f, port) = front(Options::default());
    let body = br#"{"generate_responses": [{"choices": [{"index": 0, "token_ids": [0, 1]}]}]}"#;
    let head = format!(
        "POST {COMPLETION_PATH} HTTP/1.1\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    sock.write_all(head.as_bytes()).unwrap();
    let mut interim = [0u8; 25];
    sock.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    sock.write_all(body).unwrap();
    let mut out = String::new();
    let _ = sock.read_to_string(&mut out);
    assert!(
        out.starts_with("HTTP/1.1 200 OK") && out.contains("\"text\":\"Hi\""),
        "{out}"
    );
    f.drain(Duration::from_millis(200));
    assert!(f.wait(Duration::from_secs(5)));
}
