"""The smoke test of an installed wheel: import, a stream equal to decode, a model id from an
offline hub cache, a served derender.

Run by ``scripts/smoke-wheels`` with the virtualenv's interpreter, from outside the source tree,
on the Qwen3 tokenizer fixture (a model directory). Standard library only, and nothing but
127.0.0.1 is contacted. Exits non-zero, saying what failed, at the first failure.

Usage: python smoke_wheel.py MODEL_DIR
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

# Qwen3's ids of TEXT (tokenizers 0.23.3, no special tokens), and its EOS id <|im_end|>.
TEXT = "Hello, 世界! Streaming 👋 never splits a character."
IDS = [9707, 11, 220, 99489, 0, 44810, 61804, 233, 2581, 40467, 264, 3668, 13]
EOS = 151645


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"smoke: FAILED: {what}")


def library(model: Path) -> None:
    import tokstream

    where = Path(tokstream.__file__).resolve()
    check(Path(sys.prefix).resolve() in where.parents, f"tokstream imported from {where}")
    d = tokstream.Detokenizer.from_file(model)
    check(d.decode(IDS) == TEXT, f"decode gives {d.decode(IDS)!r}")
    rng = random.Random(12)
    ids = [rng.randrange(d.vocab_size) for _ in range(2000)]
    for chunk in (1, 3, 16):
        s = d.stream()
        text = "".join(s.step(ids[i : i + chunk]) for i in range(0, len(ids), chunk))
        check(text + s.finish() == d.decode(ids), f"a stream of {chunk}-id chunks != decode")
    print(f"smoke: tokstream {tokstream.__version__} from {where.parent}, engine {d.engine}")
    model_id(model)


def model_id(model: Path) -> None:
    """A model id from a hub cache laid out in a temporary folder, offline (the server extra
    brings huggingface_hub)."""
    import tokstream

    with tempfile.TemporaryDirectory() as tmp:
        snapshot = Path(tmp, "models--Qwen--Qwen3-0.6B", "snapshots", "0" * 40)
        snapshot.mkdir(parents=True)
        shutil.copyfile(model / "tokenizer.json", snapshot / "tokenizer.json")
        Path(tmp, "models--Qwen--Qwen3-0.6B", "refs").mkdir()
        Path(tmp, "models--Qwen--Qwen3-0.6B", "refs", "main").write_text("0" * 40)
        os.environ.update(HF_HUB_OFFLINE="1", HF_HUB_CACHE=tmp)
        d = tokstream.Detokenizer.from_pretrained("Qwen/Qwen3-0.6B")
        check(d.decode(IDS) == TEXT, "a model id from the hub cache decodes wrongly")
        try:
            tokstream.Detokenizer.from_pretrained("Qwen/Not-Cached")
        except tokstream.TokenizerLoadError as e:
            check(tmp in str(e) and "HF_HUB_OFFLINE=1" in str(e), f"unclear: {e}")
        else:
            check(False, "a model missing from the cache loaded")
    print("smoke: Detokenizer.from_pretrained found a model id in an offline hub cache")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def post(port: int, path: str, body: object) -> dict[str, object]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as answer:
        result: dict[str, object] = json.loads(answer.read())
        return result


def served(model: Path) -> None:
    port = free_port()
    command = [str(Path(sys.executable).with_name("tokstream")), "serve"]
    command += ["--tokenizer", str(model), "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            check(server.poll() is None, "tokstream serve exited before answering")
            check(time.monotonic() < deadline, "tokstream serve did not answer /health in 60 s")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                time.sleep(0.1)
        body = {
            "generate_response": {
                "request_id": "smoke",
                "choices": [{"index": 0, "token_ids": [*IDS, EOS], "finish_reason": "stop"}],
            }
        }
        answer = post(port, "/v1/chat/completions/derender", body)
        message = answer["choices"][0]["message"]  # type: ignore[index]
        check(message["content"] == TEXT, f"the chat derender answered {answer}")
        state = None
        pieces = []
        for i, chunk in enumerate((IDS[:5], IDS[5:])):
            finish = "length" if i == 1 else None
            choice = {"index": 0, "token_ids": chunk, "finish_reason": finish}
            step = {"request_id": "smoke-s", "choices": [choice]}
            reply = post(port, "/v1/completions/derender", {
                "stream": True, "generate_chunk": step, "stream_state": state,
            })  # fmt: skip
            pieces += [c["text"] for c in reply["chunk"]["choices"]]  # type: ignore[index]
            state = reply["stream_state"]
        check("".join(pieces) == TEXT, f"the streamed completion gave {pieces}")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            output = server.communicate(timeout=20)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            server.kill()
            output = server.communicate()[0].decode(errors="replace")
    check(server.returncode == 0, f"tokstream serve exited {server.returncode}:\n{output}")
    print(f"smoke: tokstream serve answered a chat derender and a 2-chunk stream, port {port}")


def main() -> None:
    model = Path(sys.argv[1])
    check((model / "tokenizer.json").is_file(), f"no tokenizer.json in {model}")
    check(os.getcwd() != str(Path(__file__).resolve().parent.parent), "run outside the source")
    library(model)
    served(model)


if __name__ == "__main__":
    main()
