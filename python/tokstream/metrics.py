"""The server's Prometheus metrics: counters, and their text.

The front counts per worker thread; a scrape of ``/metrics`` hands every thread's snapshot (JSON,
in the shape of ``Metrics.snapshot``) to ``launch.front_for``'s renderer, which adds them up here
and renders the sums. The embeddable ASGI app counts in one ``Metrics``.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

__all__ = ["BYTES_BOUNDS", "LATENCY_BOUNDS", "Histogram", "Metrics", "render"]

_LATENCY_BOUNDS = (
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip
_BYTES_BOUNDS = (128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 16384.0, 65536.0)
#: The histograms' upper bounds (the front counts with the same ones).
LATENCY_BOUNDS = _LATENCY_BOUNDS
BYTES_BOUNDS = _BYTES_BOUNDS


class Histogram:
    """A Prometheus histogram: per-bucket counts (not cumulative), sum and count."""

    __slots__ = ("bounds", "count", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value
        self.count += 1

    def snapshot(self) -> dict[str, Any]:
        return {"counts": list(self.counts), "total": self.total, "count": self.count}

    def add(self, snap: dict[str, Any]) -> None:
        """Adds another worker thread's snapshot of a histogram with the same bounds."""
        counts = snap["counts"]
        if len(counts) != len(self.counts):
            return
        self.counts = [a + int(b) for a, b in zip(self.counts, counts, strict=True)]
        self.total += float(snap["total"])
        self.count += int(snap["count"])

    def render(self, name: str, labels: str) -> list[str]:
        lines = []
        running = 0
        sep = "," if labels else ""
        for bound, n in zip(self.bounds, self.counts[:-1], strict=True):
            running += n
            lines.append(f'{name}_bucket{{{labels}{sep}le="{bound:g}"}} {running}')
        running += self.counts[-1]
        lines.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {running}')
        braces = f"{{{labels}}}" if labels else ""
        lines.append(f"{name}_sum{braces} {self.total:.9g}")
        lines.append(f"{name}_count{braces} {self.count}")
        return lines


class Metrics:
    """One set of counters; ``add`` sums another's ``snapshot`` (a worker thread's, as JSON)."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, int], int] = {}
        self.errors: dict[str, int] = {}
        self.tokens = 0
        self.request_seconds: dict[str, Histogram] = {}
        self.chunk_seconds = Histogram(_LATENCY_BOUNDS)
        self.state_bytes = Histogram(_BYTES_BOUNDS)

    def record(self, endpoint: str, status: int, seconds: float) -> None:
        key = (endpoint, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        hist = self.request_seconds.get(endpoint)
        if hist is None:
            hist = self.request_seconds[endpoint] = Histogram(_LATENCY_BOUNDS)
        hist.observe(seconds)

    def error(self, reason: str) -> None:
        self.errors[reason] = self.errors.get(reason, 0) + 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": [[e, s, n] for (e, s), n in self.requests.items()],
            "errors": self.errors,
            "tokens": self.tokens,
            "request_seconds": {e: h.snapshot() for e, h in self.request_seconds.items()},
            "chunk_seconds": self.chunk_seconds.snapshot(),
            "state_bytes": self.state_bytes.snapshot(),
        }

    def add(self, snap: dict[str, Any]) -> None:
        """Adds another worker thread's ``snapshot()``."""
        for endpoint, status, n in snap["requests"]:
            key = (str(endpoint), int(status))
            self.requests[key] = self.requests.get(key, 0) + int(n)
        for reason, n in snap["errors"].items():
            self.errors[reason] = self.errors.get(reason, 0) + int(n)
        self.tokens += int(snap["tokens"])
        for endpoint, hist in snap["request_seconds"].items():
            mine = self.request_seconds.get(endpoint)
            if mine is None:
                mine = self.request_seconds[endpoint] = Histogram(_LATENCY_BOUNDS)
            mine.add(hist)
        self.chunk_seconds.add(snap["chunk_seconds"])
        self.state_bytes.add(snap["state_bytes"])


def render(metrics: Metrics, workers: int) -> bytes:
    """Prometheus text of ``metrics`` (the sums over ``workers`` worker threads)."""
    out = [
        "# HELP tokstream_workers Worker threads whose counters this scrape sums.",
        "# TYPE tokstream_workers gauge",
        f"tokstream_workers {workers}",
        "# HELP tokstream_requests_total HTTP requests answered, by endpoint and status.",
        "# TYPE tokstream_requests_total counter",
    ]
    for (endpoint, status), n in sorted(metrics.requests.items()):
        out.append(f'tokstream_requests_total{{endpoint="{endpoint}",status="{status}"}} {n}')
    out += [
        "# HELP tokstream_errors_total Requests refused, by reason.",
        "# TYPE tokstream_errors_total counter",
    ]
    for reason, n in sorted(metrics.errors.items()):
        out.append(f'tokstream_errors_total{{reason="{reason}"}} {n}')
    out += [
        "# HELP tokstream_tokens_derendered_total Output token ids derendered.",
        "# TYPE tokstream_tokens_derendered_total counter",
        f"tokstream_tokens_derendered_total {metrics.tokens}",
        "# HELP tokstream_request_duration_seconds Time to answer a request, by endpoint.",
        "# TYPE tokstream_request_duration_seconds histogram",
    ]
    for endpoint, hist in sorted(metrics.request_seconds.items()):
        out += hist.render("tokstream_request_duration_seconds", f'endpoint="{endpoint}"')
    out += [
        "# HELP tokstream_chunk_duration_seconds Time to derender one stream chunk.",
        "# TYPE tokstream_chunk_duration_seconds histogram",
        *metrics.chunk_seconds.render("tokstream_chunk_duration_seconds", ""),
        "# HELP tokstream_stream_state_bytes Size of the stream_state returned per chunk.",
        "# TYPE tokstream_stream_state_bytes histogram",
        *metrics.state_bytes.render("tokstream_stream_state_bytes", ""),
    ]
    return ("\n".join(out) + "\n").encode()
