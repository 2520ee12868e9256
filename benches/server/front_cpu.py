"""Server CPU per derender chunk of ``tokstream serve``'s front, against the build before it and
two servers that do no work, measured in one run, the servers taking turns.

The servers, each loaded the same way with the same request (``benches/server/loopback_floor.py``'s
derender chunk: a chat stream's second chunk, one id, with the state the server returned for the
first):

- ``old front``: ``tokstream serve`` of an earlier build, from the interpreter ``--old-python``
  (a virtualenv with that build installed); left out when not given;
- ``new front``: ``tokstream serve`` from ``--new-python`` (default: this interpreter);
- ``hyper floor``: ``examples/loopback_floor.rs``'s ``hyper`` server, hyper 1.x on a one-worker
  tokio runtime as the front runs it, answering the new front's status, type and body;
- ``mio floor``: its ``serve``, which answers every read with the new front's whole answer;
- ``new front, access log`` (with ``--access-log``): the new front writing a line for every
  request to its log file (``--access-log --log-level info``).

Both ``tokstream serve`` run one worker (qwen3). Over HTTP/1.1 the load is 64 keep-alive
connections with one request in flight each; over HTTP/2 (the new front and the hyper floor;
the old front has none) 4 connections of 16 streams each. The client is h2load (Debian's
``nghttp2-client``), ``--requests`` answers a run, or the example's native HTTP/1.1 client,
``--seconds`` a run. Server CPU is user + system time of the server's process (all threads)
from ``/proc/<pid>/stat`` over the run, per answer. A round runs every server once in a fixed
order (old, new, hyper, mio, then HTTP/2: new, hyper); a round during which other processes
used more than ``--max-other`` cores is run again (at most ``--retries`` times in all). The
figures are the medians over rounds, and each ratio is the median of the rounds' own ratios.
Every answer must be a 200, else the exit status is 1::

    python benches/server/front_cpu.py --old-python OLD_VENV/bin/python  # h2load, 5 rounds
    python benches/server/front_cpu.py --client native --seconds 3
    python benches/server/front_cpu.py --quick    # debug build, native client, 8 connections, 0.5 s
    python benches/server/front_cpu.py --access-log  # the access log's cost, next to the others

The issue's targets (new front over old at most 1.3, over the hyper floor at most 1.25) are
printed with the ratios; they are not checked in the exit status, which is about correctness.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from load_support import CLK_TCK, MODEL, descendants, free_port, healthy, load_tokenizer
from loopback_floor import build, cpu, derender_chunk, exchange, wait_listening
from support import report

from fixtures import model_dir

#: Rows in table order: (server, protocol).
RUNS = (
    ("old front", "h1"),
    ("new front", "h1"),
    ("new front, access log", "h1"),
    ("hyper floor", "h1"),
    ("mio floor", "h1"),
    ("new front", "h2"),
    ("hyper floor", "h2"),
)
#: The issue's ceilings for the ratios.
TARGETS = {"new/old": 1.3, "new/hyper": 1.25}


@dataclass
class Target:
    """A server being measured: its address and the processes whose CPU counts."""

    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pids(self) -> list[int]:
        return descendants(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log is not None:
            self.log.close()


def start_tokstream(
    name: str,
    python: str,
    tokenizer: str,
    workdir: str,
    extra: tuple[str, ...] = (),
    nofile: int | None = None,
) -> Target:
    """``python -m tokstream serve`` (one worker, ``extra`` flags), run outside the repository
    and without ``PYTHONPATH``, so that the interpreter's installed build is the one measured;
    ``nofile`` sets its open-file limit, soft and hard."""
    port = free_port()
    command = [python, "-m", "tokstream", "serve", "--tokenizer", tokenizer, "--workers", "1"]
    command += ["--port", str(port), "--log-level", "warning", "--served-model-name", MODEL]
    command += list(extra)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def limit_files() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
        env=env,
        preexec_fn=limit_files if nofile is not None else None,
    )
    target = Target(name, port, proc, log)
    deadline = time.monotonic() + 120
    while not healthy(target.url):
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            log_text = log.read().decode(errors="replace")[-3000:]
            target.stop()
            raise RuntimeError(f"{name} ({python}) did not start:\n{log_text}")
        time.sleep(0.1)
    return target


def start_floor(name: str, binary: Path, mode: str, answer_file: Path) -> Target:
    port = free_port()
    proc = subprocess.Popen([str(binary), mode, f"127.0.0.1:{port}", str(answer_file)])
    wait_listening(port, proc)
    return Target(name, port, proc)


def without_date(answer: bytes) -> bytes:
    """An HTTP/1.1 answer with its ``Date`` field's value blanked."""
    return re.sub(rb"(?im)^date:[^\r\n]*", b"date: -", answer)


def body_of(answer: bytes) -> bytes:
    """An answer's body, the chunk's ``created`` time (seconds since the epoch) blanked."""
    return re.sub(rb'"created":\d+', b'"created":0', answer.partition(b"\r\n\r\n")[2])


def machine_busy() -> float:
    """CPU seconds the machine has spent in user and system mode, all cores, since boot."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    user, nice, system = (int(x) for x in fields[:3])
    return (user + nice + system) / CLK_TCK


def children_cpu() -> float:
    """CPU seconds of this process's waited-for children (the load clients, once each ends)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


_H2LOAD_DONE = re.compile(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded")
_H2LOAD_2XX = re.compile(r"status codes: (\d+) 2xx")
_H2LOAD_TIME = re.compile(r"finished in ([\d.]+)(ms|s),")


def h2load(
    url: str, body_file: Path, conns: int, streams: int, requests: int, h1: bool
) -> dict[str, float]:
    """One h2load run; answers, answers that were not 2xx, and the seconds it took."""
    command = ["h2load", "-c", str(conns), "-m", str(streams), "-n", str(requests)]
    command += ["-d", str(body_file), "-H", "content-type: application/json", url]
    if h1:
        command.insert(1, "--h1")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    out = done.stdout
    counts, codes, took = (
        _H2LOAD_DONE.search(out),
        _H2LOAD_2XX.search(out),
        _H2LOAD_TIME.search(out),
    )
    if done.returncode != 0 or counts is None or codes is None or took is None:
        raise RuntimeError(f"h2load failed ({done.returncode}): {out[-2000:]}{done.stderr[-2000:]}")
    answered = int(counts.group(3))
    seconds = float(took.group(1)) / (1000 if took.group(2) == "ms" else 1)
    return {"requests": answered, "not_ok": requests - int(codes.group(1)), "seconds": seconds}


def native(
    binary: Path, port: int, conns: int, request_file: Path, seconds: float
) -> dict[str, Any]:
    """One run of the example's native HTTP/1.1 client."""
    command = [str(binary), "load", f"127.0.0.1:{port}", str(conns), str(request_file)]
    done = subprocess.run(
        [*command, str(seconds)], capture_output=True, text=True, timeout=seconds + 60, check=True
    )
    got: dict[str, Any] = json.loads(done.stdout)
    return got


def one_run(
    target: Target, protocol: str, path: str, files: dict[str, Path], args: argparse.Namespace
) -> dict[str, float]:
    """Loads ``target`` once; its answers a second and server CPU per answer."""
    before, t0, busy0, kids0 = cpu(target.pids()), time.monotonic(), machine_busy(), children_cpu()
    if args.client == "h2load":
        url = f"http://127.0.0.1:{target.port}{path}"
        conns, streams = (args.connections, 1) if protocol == "h1" else args.h2
        got = h2load(url, files["body"], conns, streams, args.requests, protocol == "h1")
    else:
        got = native(args.binary, target.port, args.connections, files["request"], args.seconds)
    after, wall = cpu(target.pids()), time.monotonic() - t0
    server = (after[0] - before[0]) + (after[1] - before[1])
    client = children_cpu() - kids0
    if got["not_ok"] or not got["requests"]:
        raise RuntimeError(f"{target.name} over {protocol}: {got}")
    n = got["requests"]
    return {
        "per_s": n / got["seconds"],
        "user_us": (after[0] - before[0]) / n * 1e6,
        "sys_us": (after[1] - before[1]) / n * 1e6,
        "cpu_us": server / n * 1e6,
        "other_cores": (machine_busy() - busy0 - server - client) / wall,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    tokenizer = str(model_dir(args.tokenizer))
    workdir = tempfile.mkdtemp(prefix="tokstream-front-cpu-")
    files = {k: Path(workdir, k) for k in ("request", "body", "answer")}
    targets: dict[str, Target] = {}
    try:
        new = targets["new front"] = start_tokstream(
            "new front", args.new_python, tokenizer, workdir
        )
        request, answer = derender_chunk(new.port, load_tokenizer(tokenizer))
        head, _, body = request.partition(b"\r\n\r\n")
        path = head.split(b" ", 2)[1].decode()
        files["request"].write_bytes(request)
        files["body"].write_bytes(body)
        files["answer"].write_bytes(answer)
        checks: dict[str, Any] = {}
        if args.old_python:
            old = targets["old front"] = start_tokstream(
                "old front", args.old_python, tokenizer, workdir
            )
            old_answer = exchange(old.port, request)
            if not old_answer.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"the old front answered {old_answer[:300]!r}")
            checks["old front: same body"] = body_of(old_answer) == body_of(answer)
        if args.access_log:
            # Every request a line at info, to the server's log file.
            flags = ("--access-log", "--log-level", "info")
            targets["new front, access log"] = start_tokstream(
                "new front, access log", args.new_python, tokenizer, workdir, extra=flags
            )
        targets["hyper floor"] = start_floor("hyper floor", args.binary, "hyper", files["answer"])
        targets["mio floor"] = start_floor("mio floor", args.binary, "serve", files["answer"])
        hyper_answer = exchange(targets["hyper floor"].port, request)
        checks["hyper floor: same answer but Date"] = without_date(hyper_answer) == without_date(
            answer
        )
        runs = [
            (name, proto)
            for name, proto in RUNS
            if name in targets and (proto == "h1" or args.client == "h2load")
        ]
        for name, proto in runs:  # warm-up, not counted
            one_run(targets[name], proto, path, files, warm_args(args))
        rounds: list[dict[str, Any]] = []
        retries = 0
        while len(rounds) < args.rounds:
            load = os.getloadavg()[0]
            got = {f"{n} {p}": one_run(targets[n], p, path, files, args) for n, p in runs}
            other = max(r["other_cores"] for r in got.values())
            print(
                f"round {len(rounds) + 1}: load {load:.2f}, other work up to {other:.2f} cores: "
                + ", ".join(f"{k} {r['cpu_us']:.1f} us" for k, r in got.items()),
                file=sys.stderr,
                flush=True,
            )
            if other > args.max_other and retries < args.retries:
                retries += 1
                continue
            rounds.append({"load": load, "other_cores": other, "runs": got})
        return {"checks": checks, "rounds": rounds, "retries": retries, "runs": runs}
    finally:
        for t in targets.values():
            t.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def warm_args(args: argparse.Namespace) -> argparse.Namespace:
    """The arguments of a warm-up run: a tenth of a measured one."""
    warm = argparse.Namespace(**vars(args))
    warm.requests = max(args.requests // 10, 1000)
    warm.seconds = max(args.seconds / 10, 0.2)
    return warm


def summarize(got: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    """Per-run medians, and each ratio per round."""
    rows = []
    for name, proto in got["runs"]:
        key = f"{name} {proto}"
        per = [r["runs"][key] for r in got["rounds"]]
        row = {k: statistics.median(p[k] for p in per) for k in per[0]}
        rows.append(
            {"server": name, "protocol": proto, **row, "rounds": [p["cpu_us"] for p in per]}
        )
    ratios: dict[str, list[float]] = {}
    pairs = {
        "new/old": ("new front h1", "old front h1"),
        "access log on/off": ("new front, access log h1", "new front h1"),
        "new/hyper": ("new front h1", "hyper floor h1"),
        "new/mio": ("new front h1", "mio floor h1"),
        "hyper/mio": ("hyper floor h1", "mio floor h1"),
        "new/hyper over HTTP/2": ("new front h2", "hyper floor h2"),
    }
    for label, (a, b) in pairs.items():
        if all(a in r["runs"] and b in r["runs"] for r in got["rounds"]):
            ratios[label] = [r["runs"][a]["cpu_us"] / r["runs"][b]["cpu_us"] for r in got["rounds"]]
    return rows, ratios


def markdown(rows: list[dict[str, Any]], ratios: dict[str, list[float]], args: Any) -> str:
    h2 = f"{args.h2[0]} x {args.h2[1]} streams"
    lines = [
        "| server | protocol | connections | answers/s | server CPU per chunk (user + system) |",
        "|---|---|---|---:|---:|",
    ]
    for r in rows:
        conns = f"{args.connections} x 1" if r["protocol"] == "h1" else h2
        proto = "HTTP/1.1" if r["protocol"] == "h1" else "HTTP/2"
        lines.append(
            f"| {r['server']} | {proto} | {conns} | {r['per_s']:,.0f} | {r['cpu_us']:.2f} µs "
            f"({r['user_us']:.2f} + {r['sys_us']:.2f}) |"
        )
    lines += ["", "| ratio of server CPU per chunk | median of rounds | range | target |"]
    lines.append("|---|---:|---:|---:|")
    for label, values in ratios.items():
        target = TARGETS.get(label)
        met = target is not None and statistics.median(values) <= target
        verdict = "-" if target is None else f"≤ {target} ({'met' if met else 'missed'})"
        lines.append(
            f"| {label} | {statistics.median(values):.3f} | {min(values):.3f} to "
            f"{max(values):.3f} | {verdict} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--new-python", default=sys.executable, help="default: this interpreter")
    parser.add_argument("--old-python", help="an interpreter with the earlier build installed")
    parser.add_argument("--tokenizer", default="qwen3", help="a tokenizer fixture (qwen3)")
    parser.add_argument(
        "--access-log", action="store_true", help="also the new front with --access-log"
    )
    parser.add_argument("--client", choices=("h2load", "native"), help="default: h2load")
    parser.add_argument("--connections", type=int, help="HTTP/1.1 connections (default: 64)")
    parser.add_argument(
        "--h2",
        type=int,
        nargs=2,
        default=[4, 16],
        metavar=("CONNS", "STREAMS"),
        help="HTTP/2 connections and streams each (default: 4 16)",
    )
    parser.add_argument("--requests", type=int, default=100_000, help="per h2load run")
    parser.add_argument("--seconds", type=float, help="per native run (default: 3)")
    parser.add_argument("--rounds", type=int, help="default: 5")
    parser.add_argument("--max-other", type=float, default=0.3, help="cores of other work")
    parser.add_argument("--retries", type=int, default=3, help="rounds run again, at most")
    parser.add_argument("--quick", action="store_true", help="debug build, native, 8 conns, 0.5 s")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    args.client = args.client or ("native" if args.quick else "h2load")
    args.connections = args.connections or (8 if args.quick else 64)
    args.seconds = args.seconds or (0.5 if args.quick else 3.0)
    args.rounds = args.rounds or (1 if args.quick else 5)
    if args.quick:
        args.retries = 0
    if args.client == "h2load" and shutil.which("h2load") is None:
        parser.error("h2load is not installed (Debian: nghttp2-client); or use --client native")
    start = os.getloadavg()[0]
    try:
        args.binary = build(release=not args.quick)
        got = measure(args)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"front_cpu: {e}", file=sys.stderr)
        return 1
    rows, ratios = summarize(got)
    unit = f"{args.requests:,} answers" if args.client == "h2load" else f"{args.seconds:g} s"
    loads = [r["load"] for r in got["rounds"]]
    conditions = (
        f"{args.client}, {unit} a run, median of {args.rounds} rounds "
        f"({got['retries']} rounds run again for other work); load at the rounds' starts "
        f"{min(loads):.2f} to {max(loads):.2f}; "
        "checks: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in got["checks"].items())
    )
    report(markdown(rows, ratios, args), conditions, rows, start, None)
    if args.json:
        extra = {"ratios": ratios, "checks": got["checks"], "rounds": got["rounds"]}
        args.json.write_text(json.dumps({"runs": rows, **extra}, indent=2))
    return 0 if all(got["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
