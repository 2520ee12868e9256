//! One request: its route, its body read within the limits, its derender, its answer and its
//! counters. hyper has framed it already; what is checked here is what hyper leaves to the
//! application (`Host`, the transfer codings it passes through, the body's size and pace).

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::header::{self, HeaderValue};
use http::request::Parts;
use http::{Method, Request, Response, StatusCode, Version};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::sync::oneshot;

use super::conn::{State, Ticket};
use super::{Job, Shared};
use crate::wire::{self, Reply};

/// The endpoints, as routed and as counted in `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endpoint {
    Chat,
    Completions,
    Health,
    Models,
    Metrics,
    Other,
}

impl Endpoint {
    fn of(path: &str) -> Endpoint {
        match wire::Endpoint::from_path(path) {
            Some(wire::Endpoint::Chat) => return Endpoint::Chat,
            Some(wire::Endpoint::Completion) => return Endpoint::Completions,
            None => {}
        }
        match path {
            "/health" => Endpoint::Health,
            "/v1/models" => Endpoint::Models,
            "/metrics" => Endpoint::Metrics,
            _ => Endpoint::Other,
        }
    }

    /// Its index in [`super::metrics::ENDPOINTS`].
    pub(super) fn index(self) -> usize {
        self as usize
    }

    /// The methods it answers, as an `Allow` header says them.
    fn allow(self) -> &'static str {
        match self {
            Endpoint::Chat | Endpoint::Completions => "POST",
            _ => "GET, HEAD",
        }
    }

    fn allows(self, method: &Method) -> bool {
        match self {
            Endpoint::Chat | Endpoint::Completions => method == Method::POST,
            Endpoint::Other => true,
            _ => method == Method::GET || method == Method::HEAD,
        }
    }
}

/// The reason a refusal is counted under, by status.
fn reason(status: u16) -> &'static str {
    match status {
        400 => "bad_request",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "request_timeout",
        413 => "payload_too_large",
        415 => "unsupported_media_type",
        431 => "header_too_large",
        501 => "not_implemented",
        503 => "shutting_down",
        _ => "internal",
    }
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const PROMETHEUS: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
const CLOSE: HeaderValue = HeaderValue::from_static("close");

/// What a request is answered.
pub(super) struct Out {
    pub(super) status: u16,
    kind: HeaderValue,
    body: Bytes,
    /// Counted under this reason (refusals).
    pub(super) reason: Option<&'static str>,
    /// Close the connection after it (a refusal whose body may not have been read).
    close: bool,
    allow: Option<&'static str>,
    no_store: bool,
    /// A derender's answer: its tokens and state size are counted.
    pub(super) derendered: bool,
    pub(super) tokens: u64,
    pub(super) state_bytes: u64,
    /// The derender body, for the request id a log line names.
    input: Bytes,
}

impl Out {
    fn ok(kind: HeaderValue, body: Bytes) -> Out {
        Out {
            status: 200,
            kind,
            body,
            reason: None,
            close: false,
            allow: None,
            no_store: false,
            derendered: false,
            tokens: 0,
            state_bytes: 0,
            input: Bytes::new(),
        }
    }

    fn error(status: u16, message: &str) -> Out {
        let body = Bytes::from(crate::wire::error_body(status, message, None));
        Out {
            status,
            reason: Some(reason(status)),
            ..Out::ok(JSON, body)
        }
    }

    /// A refusal after which the connection is closed.
    fn refusal(status: u16, message: &str) -> Out {
        Out {
            close: true,
            ..Out::error(status, message)
        }
    }

    fn derendered(reply: Reply) -> Out {
        let status = reply.status;
        Out {
            status,
            reason: (status != 200).then(|| reason(status)),
            derendered: status == 200,
            tokens: reply.tokens,
            state_bytes: reply.state_bytes,
            ..Out::ok(JSON, Bytes::from(reply.body))
        }
    }
}

/// An answer's body: its bytes, in one frame. It holds the request's [`Ticket`], so the
/// connection counts the request as in progress until hyper is done with the answer.
pub(super) struct Answer {
    data: Option<Bytes>,
    len: u64,
    _ticket: Ticket,
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().data.take().map(|d| Ok(Frame::data(d))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len)
    }
}

/// Answers one request of a connection; `refuse` answers 503 (a connection over the cap).
pub(super) async fn serve(
    shared: &'static Shared,
    state: Arc<State>,
    refuse: bool,
    req: Request<Incoming>,
) -> Result<Response<Answer>, Infallible> {
    let ticket = Ticket::new(&state);
    let start = Instant::now();
    let (parts, body) = req.into_parts();
    let h1 = parts.version < Version::HTTP_2;
    let endpoint = Endpoint::of(parts.uri.path());
    let out = if refuse {
        let message = format!(
            "the server has {} connections open, its limit, and none is idle; retry shortly",
            shared.cap
        );
        Out {
            reason: Some("over_capacity"),
            ..Out::refusal(503, &message)
        }
    } else {
        answer(shared, endpoint, &parts, body, h1).await
    };
    // Counted before the answer goes out: a client that has its answer sees it counted.
    let seconds = start.elapsed().as_secs_f64();
    shared.record(endpoint, &out, seconds);
    if shared.log.wants(out.status) {
        log_request(shared, &parts, &out, seconds);
    }
    let len = out.body.len() as u64;
    let data = (len > 0).then_some(out.body);
    let mut response = Response::new(Answer {
        data,
        len,
        _ticket: ticket,
    });
    *response.status_mut() =
        StatusCode::from_u16(out.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, out.kind);
    if let Some(allow) = out.allow {
        headers.insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    if out.no_store {
        headers.insert(header::CACHE_CONTROL, NO_STORE);
    }
    if out.close && h1 {
        headers.insert(header::CONNECTION, CLOSE);
    }
    Ok(response)
}

/// The request's line in the log.
fn log_request(shared: &Shared, parts: &Parts, out: &Out, seconds: f64) {
    let header_id = parts
        .headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok());
    let message = (out.status >= 400)
        .then(|| super::log::error_message(&out.body))
        .flatten();
    let path: String = parts.uri.path().chars().take(200).collect();
    shared.log.request(&super::log::Request {
        status: out.status,
        reason: out.reason,
        method: parts.method.as_str(),
        path: &path,
        request_id: header_id.or_else(|| super::log::body_request_id(&out.input)),
        message: message.as_deref(),
        seconds,
        bytes_in: out.input.len(),
        bytes_out: out.body.len(),
    });
}

async fn answer(
    shared: &'static Shared,
    endpoint: Endpoint,
    parts: &Parts,
    body: Incoming,
    h1: bool,
) -> Out {
    if h1 {
        if let Some(refused) = framing(parts) {
            return refused;
        }
    }
    let allowed = endpoint.allows(&parts.method);
    let path = (endpoint == Endpoint::Other).then(|| parts.uri.path().chars().take(200).collect());
    // Every body is read, whatever the route: a body whose framing is wrong must be refused
    // (and the connection closed) rather than skipped by hyper, which could take the next
    // request for part of it.
    let keep = allowed && matches!(endpoint, Endpoint::Chat | Endpoint::Completions);
    let body = match read_body(shared, body, keep).await {
        Ok(body) => body,
        Err(out) => return out,
    };
    if !allowed {
        let message = if endpoint.allow() == "POST" {
            "use POST"
        } else {
            "use GET"
        };
        return Out {
            allow: Some(endpoint.allow()),
            ..Out::error(405, message)
        };
    }
    if keep {
        if let Some(refused) = encoded(parts) {
            return refused;
        }
    }
    match endpoint {
        Endpoint::Chat => Out {
            input: body.clone(),
            ..derender(shared, wire::Endpoint::Chat, body).await
        },
        Endpoint::Completions => Out {
            input: body.clone(),
            ..derender(shared, wire::Endpoint::Completion, body).await
        },
        Endpoint::Health => Out {
            no_store: true,
            ..Out::ok(PLAIN, Bytes::new())
        },
        Endpoint::Models => Out::ok(JSON, shared.models.clone()),
        Endpoint::Metrics => {
            // The host renders it, in the interpreter: off the connections' threads.
            let text = tokio::task::spawn_blocking(move || (shared.render)(&shared.snapshot()))
                .await
                .unwrap_or_else(|_| b"# the metrics renderer failed\n".to_vec());
            Out {
                no_store: true,
                ..Out::ok(PROMETHEUS, Bytes::from(text))
            }
        }
        Endpoint::Other => {
            let path: String = path.unwrap_or_default();
            Out::error(404, &format!("no endpoint at {path}"))
        }
    }
}

/// What hyper leaves to the server in an HTTP/1 head: exactly one `Host` (none is allowed in
/// HTTP/1.0), and no transfer coding but `chunked`, which hyper decodes (any other would be
/// passed on undecoded). hyper itself closes the connection after a request that has both
/// `Content-Length` and `Transfer-Encoding`, and refuses `Transfer-Encoding` in HTTP/1.0.
fn framing(req: &Parts) -> Option<Out> {
    let mut hosts = 0usize;
    let mut codings = 0usize;
    let mut only_chunked = true;
    for (name, value) in &req.headers {
        if name == header::HOST {
            hosts += 1;
        } else if name == header::TRANSFER_ENCODING {
            codings += 1;
            only_chunked &= value
                .to_str()
                .is_ok_and(|v| v.trim().eq_ignore_ascii_case("chunked"));
        }
    }
    if hosts > 1 || (hosts == 0 && req.version == Version::HTTP_11) {
        let message = "an HTTP/1.1 request must have exactly one Host header";
        return Some(Out::refusal(400, message));
    }
    if codings > 1 || !only_chunked {
        let message = "the only transfer coding served is chunked";
        return Some(Out::refusal(501, message));
    }
    None
}

/// A 415 for a derender body sent with a `Content-Encoding` (other than `identity`): bodies are
/// read as written, never decoded.
fn encoded(req: &Parts) -> Option<Out> {
    let coding = req
        .headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .map(str::trim)
        .find(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"))?;
    let coding: String = coding.chars().take(40).collect();
    let message = format!(
        "the body's Content-Encoding {coding:?} is not decoded here: send the JSON uncompressed"
    );
    Some(Out::error(415, &message))
}

/// Why a wait ended before its result.
enum Stop {
    /// Its timeout passed.
    Timeout,
    /// The drain's grace is about to end.
    Late,
}

/// `fut`'s result, unless `timeout` passes while it waits (reset by each `Ok`) or the drain's
/// grace ends first. The timers are made only if `fut` is still waiting when polled again:
/// hyper hands an HTTP/1 body to the service only after the service first asks for it, within
/// the same turn of the connection's task, so the first wait is almost always the only one and
/// a request then costs no timer.
async fn bounded<F: Future>(
    shared: &'static Shared,
    fut: F,
    timeout: Option<Duration>,
) -> Result<F::Output, Stop> {
    let mut fut = pin!(fut);
    let mut waited = false;
    let mut timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
    let mut late: Option<Pin<Box<tokio::sync::futures::Notified<'static>>>> = None;
    poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Ok(v));
        }
        if shared.is_late() {
            return Poll::Ready(Err(Stop::Late));
        }
        if !waited {
            // Polled again at once, when the timers are made if it still waits.
            waited = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if let Some(t) = timeout {
            let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(t)));
            if timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(Stop::Timeout));
            }
        }
        let late = late.get_or_insert_with(|| {
            let mut n = Box::pin(shared.late_signal.notified());
            n.as_mut().enable();
            n
        });
        if shared.is_late() || late.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Stop::Late));
        }
        Poll::Pending
    })
    .await
}

fn shutting_down() -> Out {
    Out::refusal(503, "the server is shutting down; retry on another server")
}

/// The body, read as it arrives (and kept only if `keep`): memory grows with the bytes received,
/// never with a declared length.
async fn read_body(shared: &'static Shared, mut body: Incoming, keep: bool) -> Result<Bytes, Out> {
    if body.is_end_stream() {
        return Ok(Bytes::new());
    }
    let opts = &shared.opts;
    let limit = opts.max_body_bytes;
    let too_large = || {
        let message = format!(
            "the body is larger than the server's limit of {limit} bytes (--max-body-bytes)"
        );
        Out::refusal(413, &message)
    };
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    let mut first: Option<Bytes> = None;
    let mut more: Option<BytesMut> = None;
    let mut total = 0usize;
    loop {
        let frame = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
        let frame = match bounded(shared, frame, Some(opts.body_timeout)).await {
            Ok(Some(Ok(frame))) => frame,
            Ok(None) => break,
            Ok(Some(Err(_))) => {
                let message = "the request's body ended early or its chunked framing is not valid";
                return Err(Out::refusal(400, message));
            }
            Err(Stop::Timeout) => {
                let message = format!(
                    "the request's body stopped arriving for {} seconds",
                    opts.body_timeout.as_secs_f64()
                );
                return Err(Out::refusal(408, &message));
            }
            Err(Stop::Late) => return Err(shutting_down()),
        };
        let data = match frame.into_data() {
            Ok(data) => data,
            Err(_) => {
                // Trailers: hyper ends a trailer section at a bare LF and drops what follows it
                // in the same section, where a strict parser reads a next request. No derender
                // needs them, so the request is refused and the connection closed.
                let message = "a chunked body with trailer fields is not served";
                return Err(Out::refusal(400, message));
            }
        };
        total += data.len();
        if total > limit {
            return Err(too_large());
        }
        if !keep {
            continue;
        }
        match (&mut first, &mut more) {
            (None, None) => first = Some(data),
            (Some(_), None) => {
                let mut m = BytesMut::with_capacity(total);
                if let Some(f) = first.take() {
                    m.extend_from_slice(&f);
                }
                m.extend_from_slice(&data);
                more = Some(m);
            }
            (_, Some(m)) => m.extend_from_slice(&data),
        }
    }
    Ok(match (first, more) {
        (_, Some(m)) => m.freeze(),
        (Some(f), None) => f,
        (None, None) => Bytes::new(),
    })
}

/// Derenders where it is cheap (a small body, no Python parser), else on the pool.
async fn derender(shared: &'static Shared, endpoint: wire::Endpoint, body: Bytes) -> Out {
    if shared.runner.is_none() && body.len() < shared.opts.offload_bytes {
        return Out::derendered(shared.handle(endpoint, &body));
    }
    let (tx, rx) = oneshot::channel();
    if let Err(job) = shared.offload(Job { endpoint, body, tx }) {
        return Out::derendered(shared.handle(endpoint, &job.body));
    }
    match bounded(shared, rx, None).await {
        Ok(Ok(reply)) => Out::derendered(reply),
        Ok(Err(_)) => Out::error(500, "the derender could not run"),
        Err(_) => shutting_down(),
    }
}
