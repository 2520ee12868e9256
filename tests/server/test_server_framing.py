"""``tokstream serve`` frames pipelined HTTP/1.x as h11, a strict parser, does.

hypothesis writes byte streams of one to five requests, plain ones and ones with the constructs
that desynchronise servers (Content-Length and Transfer-Encoding mixes, duplicate and ill-formed
lengths, bare LF, chunk sizes and extensions good and bad, trailers good and malformed, obs-fold,
HTTP/1.0 with and without keep-alive, ``Expect: 100-continue``, ``Connection: close``, HEAD), each
ended by ``GET /end`` asking to close, sometimes sent in two parts. The same bytes go to one real
server over a loopback connection and to ``h11.Connection(our_role=SERVER)``. Every answer tells
which request it is for (a 404 names its path, a derender answers as it answers that body alone).

The property: the server answers the requests h11 frames, in order. It may stop early only by
closing, or by one refusal (a 4xx/5xx naming no other request, or the answer to the request h11
stopped inside, from its head alone), and sends nothing after a refusal or after an answer that
ends the connection (``close``, or HTTP/1.0 without ``keep-alive``). No 1xx goes to HTTP/1.0. A
stream of plain requests is answered in full.

h11 closes every HTTP/1.0 connection; RFC 9112 9.3 lets a server keep one on ``keep-alive``
(never with Transfer-Encoding), so the oracle frames on after such a request. Left out: what RFC
9112 allows and h11 refuses (whitespace before a chunk extension's ``;``, framing fields in
trailers, an ill-formed Content-Length beside Transfer-Encoding), and Host errors (a 400 on a
connection that stays open).
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import h11
import pytest
from helpers.raw_http import raw_connect
from helpers.real_tokenizers import load_tokenizer, tokenizer_path
from helpers.server_util import CHAT, COMPLETION, Server, whole_body
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

#: How long an answer h11 says is due may take (2 shared cores), and how long the connection
#: must then stay silent before the exchange counts as over.
ANSWER_SECONDS = 5.0
IDLE_SECONDS = 0.5
#: The sender's pause where a stream is written in parts (so that a server sees a head before
#: its body, and reads a request across two reads).
PAUSE_SECONDS = 0.05
CRLF = b"\r\n"
#: Ends every stream: when everything before it is framed, the server answers it and closes.
SENTINEL = b"GET /end HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
HEALTH, MODELS = "/health", "/v1/models"
DERENDER_PATHS = (COMPLETION, CHAT)
#: Bodies the derender path answers 400 (not JSON, or not a derender request).
INVALID_BODIES = (b"", b"{", b"[]", b'{"generate_responses": 5}')
#: A request line's path, wherever one is in a stream (to tell which request an answer names).
_PATH_IN_REQUEST_LINE = re.compile(rb"[!-~]+ (/[!-~]*) HTTP/1\.[01]")


# --- the oracle: what h11 frames -----------------------------------------------------------------


@dataclass(frozen=True)
class Framed:
    """A request h11 read to its end."""

    method: str
    target: str
    http10: bool
    body: bytes
    #: The connection may carry another request (HTTP/1.1 without close, or HTTP/1.0 keep-alive).
    persists: bool


@dataclass
class Framing:
    requests: list[Framed]
    #: The request h11 was reading when it stopped (its head read, not its end), if any.
    partial: tuple[str, str] | None
    #: Where the first byte h11 did not frame is.
    offset: int


def _tokens(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> set[bytes]:
    values = b",".join(value for key, value in headers if key.lower() == name)
    return {token.strip().lower() for token in values.split(b",") if token.strip()}


def frame(raw: bytes) -> Framing:
    """The requests h11 frames from ``raw`` until it errors or needs more bytes."""
    found: list[Framed] = []
    partial: tuple[str, str] | None = None
    rest = raw
    while rest:  # (an empty ``receive_data`` would tell h11 the connection closed)
        conn = h11.Connection(our_role=h11.SERVER)
        conn.receive_data(rest)
        head: h11.Request | None = None
        body = b""
        while True:
            try:
                event = conn.next_event()
            except h11.ProtocolError:
                return Framing(found, partial, len(raw) - len(rest))
            if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                return Framing(found, partial, len(raw) - len(rest))
            if isinstance(event, h11.Request):
                head, body = event, b""
                partial = (event.method.decode(), event.target.decode())
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                partial = None
                rest = conn.trailing_data[0]
                http10 = head.http_version == b"1.0"
                connection = _tokens(head.headers, b"connection")
                kept10 = (
                    http10
                    and b"keep-alive" in connection
                    and b"close" not in connection
                    and not _tokens(head.headers, b"transfer-encoding")
                )
                kept11 = conn.their_state is h11.DONE
                found.append(
                    Framed(
                        head.method.decode(), head.target.decode(), http10, body, kept10 or kept11
                    )
                )
                if kept11:
                    conn.send(h11.Response(status_code=200, headers=[(b"content-length", b"0")]))
                    conn.send(h11.EndOfMessage())
                    conn.start_next_cycle()
                elif kept10:
                    break  # on with a fresh h11 connection: h11 closes every HTTP/1.0 one
                else:
                    return Framing(found, None, len(raw) - len(rest))
    return Framing(found, None, len(raw))


# --- the server's answers ------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    http10: bool
    headers: Sequence[tuple[bytes, bytes]]
    body: bytes
    #: The 1xx answers sent before this one.
    interim: list[int] = field(default_factory=list)

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def message(self) -> str:
        found = self.json()
        if isinstance(found, dict) and isinstance(found.get("error"), dict):
            return str(found["error"].get("message"))
        return ""

    def ends_connection(self, http10_request: bool) -> bool:
        """The answer tells the client that nothing follows it on this connection: it says
        ``close``, or it answers HTTP/1.0 without saying ``keep-alive``."""
        connection = _tokens(self.headers, b"connection")
        old = self.http10 or http10_request
        return b"close" in connection or (old and b"keep-alive" not in connection)


def read_answers(
    data: bytes, methods: Callable[[int], str], closed: bool
) -> tuple[list[Answer], bytes, str | None]:
    """The complete answers at the front of ``data`` (h11 as the client, told each request's
    method so that a HEAD answer has no body), the bytes after them, and why parsing stopped if
    the bytes are not an answer (None when they are only incomplete)."""
    answers: list[Answer] = []
    while data:
        conn = h11.Connection(our_role=h11.CLIENT)
        method = methods(len(answers))
        conn.send(h11.Request(method=method, target="/", headers=[(b"host", b"x")]))
        conn.send(h11.EndOfMessage())
        conn.receive_data(data)
        if closed:
            conn.receive_data(b"")
        interim: list[int] = []
        head: h11.Response | None = None
        body = b""
        while True:
            try:
                event = conn.next_event()
            except h11.ProtocolError as error:
                what = f"answer {len(answers)} (to a {method}) does not parse: {error}"
                return answers, data, what
            if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                return answers, data, None
            if isinstance(event, h11.InformationalResponse):
                interim.append(event.status_code)
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                answers.append(
                    Answer(
                        head.status_code, head.http_version == b"1.0", head.headers, body, interim
                    )
                )
                data = conn.trailing_data[0]
                break
    return answers, data, None


@dataclass
class Exchange:
    data: bytes
    closed: bool
    reset: bool


def exchange(
    address: int | str, raw: bytes, due: Callable[[bytes], bool], pauses: tuple[int, ...] = ()
) -> Exchange:
    """Sends ``raw`` on a new connection (pausing at the offsets ``pauses``) and reads until the
    server closes, or until ``due`` holds and the connection then stays silent
    ``IDLE_SECONDS``, or ``ANSWER_SECONDS`` pass."""
    sock = raw_connect(address, ANSWER_SECONDS)
    data, closed, reset = b"", False, False
    cuts = [0, *sorted(p for p in set(pauses) if 0 < p < len(raw)), len(raw)]
    try:
        try:
            for n, (start, end) in enumerate(itertools.pairwise(cuts)):
                if n:
                    time.sleep(PAUSE_SECONDS)
                sock.sendall(raw[start:end])
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole stream went out; what came back still counts
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:
            wait = IDLE_SECONDS if due(data) else deadline - time.monotonic()
            if wait <= 0:
                break
            sock.settimeout(wait)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                closed = reset = True
                break
            if not chunk:
                closed = True
                break
            data += chunk
    finally:
        sock.close()
    return Exchange(data, closed, reset)


# --- what each framed request's answer is ---------------------------------------------------------


def names(answer: Answer, path: str) -> bool:
    """The answer's error message names ``path`` (and not a longer path it starts)."""
    return re.search(re.escape(path) + r"(?![\w/.%~-])", answer.message()) is not None


class Peer:
    """The server under test, and each derender body's answer when sent alone."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._alone: dict[tuple[str, bytes], tuple[int, Any]] = {}

    def alone(self, path: str, body: bytes) -> tuple[int, Any]:
        """Status and identity (the text, or the error) of ``POST path`` with ``body``, sent
        alone with Content-Length on a fresh connection."""
        key = (path, body)
        if key not in self._alone:
            head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
            raw = head.encode() + b"Connection: close\r\n\r\n" + body
            got = exchange(self.server.address, raw, lambda data: False)
            answers, _, problem = read_answers(got.data, lambda _: "POST", got.closed)
            assert answers and problem is None, (raw, got.data, problem)
            self._alone[key] = (answers[0].status, identity(answers[0]))
        return self._alone[key]

    def expected(self, request: Framed) -> Callable[[Answer], bool]:
        """Whether an answer is the one ``request`` gets."""
        path = request.target.split("?", 1)[0]
        head = request.method == "HEAD"

        def empty_or(check: Callable[[Answer], bool]) -> Callable[[Answer], bool]:
            return (lambda a: a.body == b"") if head else check

        if path in (HEALTH, MODELS):
            if request.method not in ("GET", "HEAD"):
                return lambda a: a.status == 405 and empty_or(lambda a: json_error(a, 405))(a)
            if path == HEALTH:
                return lambda a: a.status == 200 and a.body == b""
            return lambda a: a.status == 200 and empty_or(is_model_list)(a)
        if path in DERENDER_PATHS:
            if request.method != "POST":
                return lambda a: a.status == 405 and empty_or(lambda a: json_error(a, 405))(a)
            want = self.alone(path, request.body)
            return lambda a: (a.status, identity(a)) == want
        return lambda a: a.status == 404 and empty_or(lambda a: names(a, path))(a)


def identity(answer: Answer) -> Any:
    """What tells one derender answer from another: the text, or the error's type and message."""
    found = answer.json()
    if answer.status == 200 and isinstance(found, dict):
        return [choice.get("text") for choice in found.get("choices", [])]
    if isinstance(found, dict) and isinstance(found.get("error"), dict):
        return (found["error"].get("type"), found["error"].get("message"))
    return answer.body


def json_error(answer: Answer, status: int) -> bool:
    found = answer.json()
    error = found.get("error") if isinstance(found, dict) else None
    return isinstance(error, dict) and error.get("code") == status


def is_model_list(answer: Answer) -> bool:
    found = answer.json()
    return isinstance(found, dict) and found.get("object") == "list"


# --- the property ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A byte stream; ``plain`` when every request in it is plain (see ``requests``); the
    sender pauses at the offsets ``pauses``."""

    raw: bytes
    plain: bool = False
    pauses: tuple[int, ...] = ()


def check(peer: Peer, case: Case) -> None:
    """Sends ``case`` (and the closing ``GET /end``) and holds the server's answers to what h11
    frames of the same bytes."""
    raw = case.raw + SENTINEL
    framing = frame(raw)
    framed, partial = framing.requests, framing.partial
    expected = [peer.expected(request) for request in framed]
    k = len(framed)
    # The request h11 stopped inside may be answered from its head alone (not a derender).
    if partial is not None and not (partial[0] == "POST" and partial[1] in DERENDER_PATHS):
        early = peer.expected(Framed(partial[0], partial[1], False, b"", False))
    else:
        early = None
    after = raw[framing.offset :].split(b" ", 1)[0]

    def method(i: int) -> str:
        """The method of the request the server's answer ``i`` is to, as far as h11 tells."""
        if i < k:
            return framed[i].method
        if i == k and partial is not None:
            return partial[0]
        return "HEAD" if i == k and after == b"HEAD" else "GET"

    def due(data: bytes) -> bool:
        return len(read_answers(data, method, False)[0]) >= k

    got = exchange(peer.server.address, raw, due, case.pauses)
    answers, tail, problem = read_answers(got.data, method, got.closed)
    paths = {m.decode("latin-1") for m in _PATH_IN_REQUEST_LINE.findall(raw)}
    paths |= {request.target.split("?", 1)[0] for request in framed}
    shown = [f"{r.method} {r.target}" for r in framed]
    if partial is not None:
        shown.append(f"(stopped inside {partial[0]} {partial[1]})")
    where = f"\nstream: {raw!r}\nh11 frames: {shown}\nserver sent: {got.data!r}"
    if case.pauses:
        where += f"\n(the sender paused after byte {', '.join(map(str, case.pauses))})"

    def then(i: int) -> str:
        """What the server sent after answer ``i``."""
        if i + 1 < len(answers):
            return f"answer {i + 1} ({answers[i + 1].status})"
        hint = " (a body after a HEAD answer?)" if method(i) == "HEAD" else ""
        return f"{len(tail)} bytes that are no answer{hint}"

    refused = False
    matched = 0
    for i, answer in enumerate(answers):
        last = i == len(answers) - 1 and not tail
        if i < k and expected[i](answer):
            matched += 1
            request = framed[i]
            assert not (request.http10 and answer.interim), (
                f"a 1xx answer went to the HTTP/1.0 request {i}{where}"
            )
            if not request.persists or answer.ends_connection(request.http10):
                assert last, f"answer {i} ends the connection, yet {then(i)} followed{where}"
            continue
        if i == k and early is not None and early(answer):
            assert last, (
                f"answer {i} is to a request h11 does not frame to its end, yet {then(i)} "
                f"followed{where}"
            )
            refused = True
            continue
        assert answer.status >= 400, (
            f"answer {i} ({answer.status}) is not h11's request {i}'s answer: the server framed "
            f"the stream differently{where}"
            if i < k
            else f"answer {i} ({answer.status}) is to a request h11 does not frame{where}"
        )
        own = partial[1].split("?", 1)[0] if i == k and partial else None
        other = sorted(path for path in paths if path != own and names(answer, path))
        assert not other, f"answer {i} ({answer.status}) answers {other} out of place{where}"
        assert last, f"answer {i} refuses ({answer.status}), yet {then(i)} followed{where}"
        refused = True
    if problem is not None:
        hint = (
            " (a body after a HEAD answer?)"
            if answers and method(len(answers) - 1) == "HEAD"
            else ""
        )
        raise AssertionError(problem + hint + where)
    if not refused and matched < k:
        assert got.closed, (
            f"the server answered {matched} of the {k} requests h11 frames, then neither refused "
            f"nor closed{where}"
        )
    if case.plain and not got.reset:
        assert not refused and matched == k, f"a plain stream was not answered in full{where}"


# --- the streams ----------------------------------------------------------------------------------


def _text_ids(index: int) -> list[int]:
    return load_tokenizer("qwen3").encode(f" q{index}", add_special_tokens=False).ids


class Picker:
    """Draws a request's parts; a part drawn from the odd ones makes the request not plain
    (``tame`` draws none)."""

    def __init__(self, draw: st.DrawFn, tame: bool) -> None:
        self.draw = draw
        self.tame = tame
        self.plain = True

    def pick(self, usual: Sequence[Any], odd: Sequence[Any] = (), weight: int = 1) -> Any:
        """One of ``usual`` (each ``weight`` times as likely as an odd one) or of ``odd``."""
        options = list(usual) * weight + ([] if self.tame else list(odd))
        value = self.draw(st.sampled_from(options))
        if value in odd and value not in usual:
            self.plain = False
        return value

    def odd(self, chance: int) -> bool:
        """True one time in ``chance`` (never when tame), making the request not plain."""
        return bool(self.pick([False], [True], weight=chance - 1))


def chunked(pick: Picker, body: bytes) -> bytes:
    """``body`` in one to three chunks, a last chunk, trailers and the end line."""

    def size_line(size: int) -> bytes:
        digits = f"{size:x}"
        if pick.draw(st.booleans()):
            digits = digits.upper()
        digits = "0" * pick.draw(st.sampled_from((0, 0, 0, 1, 3))) + digits
        lead = pick.pick([""], [" ", "\t"], weight=12)
        ext = pick.pick(["", "", ";a", ";a=b", ';a="q v"', ";a=b;c"], [";a\nb", ";a\rb"], 3)
        ext = pick.pick([ext], [";a\x00b", ";a\x7fb"], weight=10)
        # Whitespace before an extension's ";" is BWS in RFC 9112 but h11 refuses it: after.
        pad = pick.pick([""], [" ", "\t", " \t"], weight=8)
        eol: bytes = pick.pick([CRLF], [b"\n"], weight=8)
        line: str = lead + digits + ext + pad
        return line.encode("latin-1") + eol

    out = b""
    left = body
    pieces = pick.draw(st.integers(1, 3)) if body else 0
    for n in range(pieces):
        last = n == pieces - 1
        take = len(left) if last else pick.draw(st.integers(1, max(1, len(left) - 1)))
        piece, left = left[:take], left[take:]
        if piece:
            out += size_line(len(piece)) + piece + pick.pick([CRLF], [b"\n", b""], weight=10)
    out += size_line(0)
    # Trailers are odd even when well-formed: a server may refuse them (tokstream does).
    trailers: bytes = pick.pick([b""], ODD_TRAILERS, weight=6)
    end: bytes = pick.pick([CRLF], [b"\n"], weight=5)
    return out + trailers + end


#: Trailer sections: two well-formed, then ones h11 refuses or ends early at a bare LF.
ODD_TRAILERS = (
    b"X-T: 1\r\n",
    b"X-T: 1\r\nX-U: two words\r\n",
    b"not a field line\r\n",
    b"X-T: 1\r\n folded\r\n",
    b"X-T : 1\r\n",
    b": 1\r\n",
    b"X-T: 1\n",
    b"X-T: 1\nX-U: 2\n",
)
#: Content-Length values for a body of ``n`` bytes: right, then odd (each one header).
LENGTHS: dict[str, Callable[[int], list[str]]] = {
    "exact": lambda n: [str(n)],
    "zeros": lambda n: ["00" + str(n)],
    "twice": lambda n: [str(n), str(n)],
    "list": lambda n: [f"{n}, {n}"],
    "differ": lambda n: [str(n), str(n + 1)],
    "short": lambda n: [str(max(n - 1, 0))],
    "long": lambda n: [str(n + 1)],
    "plus": lambda n: [f"+{n}"],
    "hex": lambda n: [f"0x{n:x}"],
    "suffix": lambda n: [f"{n}a"],
    "negative": lambda n: ["-1"],
    "empty": lambda n: [""],
    "spaced": lambda n: [f"{n} {n}"],
}


@st.composite
def requests(draw: st.DrawFn, index: int, tame: bool) -> tuple[bytes, bool, int]:
    """One request's bytes; whether it is plain (every part valid, and a request the server
    keeps the connection open after, so a stream of them must be answered in full); the length
    of its head."""
    pick = Picker(draw, tame)
    missing = f"/q{index}z"
    method, path, what = pick.pick(
        [
            ("GET", HEALTH, "none"),
            ("GET", MODELS, "none"),
            ("HEAD", HEALTH, "none"),
            ("HEAD", MODELS, "none"),
            ("HEAD", missing, "none"),
            ("GET", missing, "none"),
            ("GET", COMPLETION, "none"),
            ("POST", COMPLETION, "valid"),
            ("POST", COMPLETION, "valid"),
        ],
        # The server may close after a derender error, or after a body it need not read.
        [("POST", COMPLETION, "invalid"), ("POST", missing, "form")],
    )
    body: bytes | None = None
    if what == "valid":
        body = json.dumps(whole_body(COMPLETION, _text_ids(index))).encode()
    elif what == "invalid":
        body = draw(st.sampled_from(INVALID_BODIES))
    elif what == "form":
        body = b"k=v&i=" + str(index).encode()
    elif pick.odd(10):
        body = b"extra"  # on a GET or HEAD
    http10 = draw(st.integers(0, 5)) == 0
    eol: bytes = pick.pick([CRLF], [b"\n"], weight=6)

    headers: list[bytes] = [b"Host: x"]
    persist = ("keep-alive", "Keep-Alive") * 2 if http10 else (None,) * 6 + ("keep-alive",)
    connection = draw(st.sampled_from((None, *persist, "close", "close, keep-alive")))
    if connection is not None:
        headers.append(b"Connection: " + connection.encode())
    if draw(st.integers(0, 4)) == 0:
        headers.append(b"Expect: 100-continue")
    if pick.odd(10):
        headers.append(b"X-Fold: a" + eol + b" b")

    payload = b""
    if body is not None:
        n = len(body)
        if pick.pick([False, True], [True] if http10 else []) and not (http10 and tame):
            if http10:
                pick.plain = False
            value = pick.pick([b"chunked"], [b"Chunked", b"gzip, chunked", b"chunked, chunked"], 6)
            value = pick.pick([value], [b"identity", b"chunked2"], weight=10)
            headers.append(b"Transfer-Encoding: " + value)
            if pick.odd(8):
                headers.append(b"Transfer-Encoding: chunked")
            payload = chunked(pick, body)
            if pick.odd(5):  # a well-formed length, which Transfer-Encoding overrides
                length = draw(st.sampled_from((n, len(payload), 0)))
                headers.append(b"Content-Length: " + str(length).encode())
        else:
            rule = pick.pick(["exact"], [name for name in LENGTHS if name != "exact"], weight=14)
            headers += [b"Content-Length: " + v.encode() for v in LENGTHS[rule](n)]
            payload = body
    headers = draw(st.permutations(headers))
    version = b"HTTP/1.0" if http10 else b"HTTP/1.1"
    head = f"{method} {path} ".encode() + version + eol
    head += b"".join(h + eol for h in headers) + eol
    return bytes(head + payload), pick.plain, len(head)


@st.composite
def streams(draw: st.DrawFn) -> Case:
    """One to five requests; one stream in four only of plain ones; a pause in some."""
    count = draw(st.integers(1, 5))
    tame = draw(st.integers(0, 3)) == 0
    made = [draw(requests(index, tame)) for index in range(count)]
    raw = b"".join(one for one, _, _ in made)
    starts = [sum(len(one) for one, _, _ in made[:n]) for n in range(count)]
    pause = draw(st.sampled_from(("none", "none", "none", "after a head", "anywhere")))
    pauses: tuple[int, ...] = ()
    if pause == "after a head":
        n = draw(st.integers(0, count - 1))
        pauses = (starts[n] + made[n][2],)
    elif pause == "anywhere":
        pauses = (draw(st.integers(1, len(raw))),)
    return Case(raw, all(plain for _, plain, _ in made), pauses)


# --- the test -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    folder = tmp_path_factory.mktemp("framing")
    tokenizer = str(tokenizer_path("qwen3").parent)
    served = Server(["--tokenizer", tokenizer], folder / "server.log")
    try:
        yield Peer(served.start())
    finally:
        served.stop()


def _chunked_post(path: str, chunks: bytes) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + chunks
    )


#: The loaded hypothesis profile: CI's is derandomized; "slow" explores afresh, longer.
_PROFILE = settings()
GET_HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
EXPECT10 = f"POST {COMPLETION} HTTP/1.0\r\nHost: x\r\nExpect: 100-continue\r\n".encode()
EXPECT10 += b"Content-Length: 1\r\n\r\n"


@settings(
    max_examples=max(300, _PROFILE.max_examples),
    deadline=None,
    derandomize=_PROFILE.derandomize,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(case=streams())
# A bare LF ends the trailer section (h11, and RFC 9112 2.2), so the GET is a request.
@example(case=Case(_chunked_post("/a", b"0\r\n\n") + GET_HEALTH))
@example(case=Case(_chunked_post("/a", b"0\r\nX-T: 1\n\n") + GET_HEALTH))
# A trailer line that is no field line is refused, not skipped with what follows it.
@example(case=Case(_chunked_post("/b", b"0\r\nnot a field line\r\n\r\n") + GET_HEALTH))
# Chunk-size lines: a bare LF in an extension, whitespace before the size (refused by h11), a
# bare CR or NUL in an extension (which h11 accepts, so the server may too).
@example(case=Case(_chunked_post("/c", b"5;a\nb\r\nhello\r\n0\r\n\r\n") + GET_HEALTH))
@example(case=Case(_chunked_post("/c", b" 5\r\nhello\r\n0\r\n\r\n") + GET_HEALTH))
@example(case=Case(_chunked_post("/c", b"\t5\r\nhello\r\n0\r\n\r\n") + GET_HEALTH))
@example(case=Case(_chunked_post("/c", b"5;a\rb\r\nhello\r\n0\r\n\r\n") + GET_HEALTH))
@example(case=Case(_chunked_post("/c", b"5;a\x00b\r\nhello\r\n0\r\n\r\n") + GET_HEALTH))
# A HEAD answer has no body, error or not.
@example(case=Case(b"HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n" + GET_HEALTH, plain=True))
# HTTP/1.0 with Transfer-Encoding ends the connection (RFC 9112 6.1), keep-alive or not.
@example(
    case=Case(
        b"POST /d HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive"
        b"\r\n\r\n5\r\nhello\r\n0\r\n\r\n" + GET_HEALTH
    )
)
# An HTTP/1.0 answer that keeps the connection says so.
@example(case=Case(b"GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + GET_HEALTH, True))
# "close" wins over "keep-alive".
@example(
    case=Case(b"GET /e HTTP/1.1\r\nHost: x\r\nConnection: close, keep-alive\r\n\r\n" + GET_HEALTH)
)
# No 1xx to an HTTP/1.0 client.
@example(case=Case(EXPECT10 + b"{", pauses=(len(EXPECT10),)))
def test_the_server_answers_what_h11_frames_in_order(peer: Peer, case: Case) -> None:
    """The server answers exactly the requests h11 frames, in order, or refuses once and sends
    nothing more; it never answers a request h11 did not frame, and a plain stream is answered
    in full."""
    check(peer, case)
