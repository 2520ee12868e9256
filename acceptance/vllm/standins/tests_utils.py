"""tokstream's stand-in for vLLM's ``tests.utils``: the one name its derender tests import from it.

vLLM's ``tests/utils.py`` starts ``vllm launch render MODEL`` after downloading the model's
tokenizer. This one starts ``tokstream serve`` on the tokenizer fixture that the acceptance stage
laid out under the model's name in the working directory (``<model>/tokenizer.json`` with a
minimal ``config.json``, see ``acceptance/vllm/models.py``), and puts a small front in front of
it on its own port:

- ``POST /v1/chat/completions/render`` and ``POST /v1/completions/render`` are answered by the
  front itself, tokenizer only: the chat template (or, for a tokenizer without one, a plain
  ``[INST] ... [/INST]`` turn) applied and encoded, or the completion prompts encoded, returned as
  vLLM's render does (``request_id``, ``token_ids``, ``model``). No sampling parameters are
  computed, since derender never reads them.
- every other request is sent unchanged to ``tokstream serve`` and its answer (status,
  content type, body) sent back unchanged.

The server's flags come from the vLLM arguments the tests pass: ``--reasoning-parser``,
``--tool-call-parser`` map to tokstream's flags of the same name, ``--enable-auto-tool-choice``
and ``--trust-remote-code`` have no tokstream counterpart (tool parsing is on whenever a tool
parser is) and are dropped; any other argument is an error. ``--max-model-len`` is the model
config's ``max_position_embeddings``, as vLLM derives it.

``TOKSTREAM_PYTHON`` names the interpreter that has tokstream installed (the acceptance
virtualenv does not).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
START_SECONDS = 120.0
_RENDER_PATHS = ("/v1/chat/completions/render", "/v1/completions/render")
_DROPPED_FLAGS = frozenset({"--enable-auto-tool-choice", "--trust-remote-code"})
_VALUE_FLAGS = frozenset({"--reasoning-parser", "--tool-call-parser"})


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _serve_flags(vllm_args: list[str]) -> list[str]:
    flags: list[str] = []
    args = iter(vllm_args)
    for arg in args:
        if arg in _DROPPED_FLAGS:
            continue
        if arg in _VALUE_FLAGS:
            flags += [arg, next(args)]
            continue
        raise ValueError(f"no tokstream counterpart for the vLLM argument {arg!r}")
    return flags


class _Renderer:
    """Tokenizer-only ``/render``: the prompt's ids, as the render server would compute them."""

    def __init__(self, model: str, model_dir: Path) -> None:
        from transformers import AutoTokenizer

        self.model = model
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if self.tokenizer.chat_template:
            ids = self.tokenizer.apply_chat_template(
                messages,
                tools=body.get("tools"),
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
            )
        else:
            turns = "".join(
                f"[INST] {m['content']} [/INST]" if m["role"] == "user" else f" {m['content']}"
                for m in messages
            )
            ids = self.tokenizer.encode(turns, add_special_tokens=True)
        return {"request_id": f"chatcmpl-{uuid.uuid4().hex}", "token_ids": list(ids)}

    def completion(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        prompts = body["prompt"]
        if isinstance(prompts, str):
            prompts = [prompts]
        return [
            {
                "request_id": f"cmpl-{uuid.uuid4().hex}-{i}",
                "token_ids": self.tokenizer.encode(p, add_special_tokens=True),
            }
            for i, p in enumerate(prompts)
        ]

    def answer(self, path: str, body: dict[str, Any]) -> Any:
        if body.get("model", self.model) != self.model:
            raise LookupError(f"model {body.get('model')!r} is not served")
        rendered = self.chat(body) if path == _RENDER_PATHS[0] else self.completion(body)
        if isinstance(rendered, dict):
            rendered["model"] = self.model
        else:
            for r in rendered:
                r["model"] = self.model
        return rendered


def _front(renderer: _Renderer, backend_port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _reply(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            if path in _RENDER_PATHS and self.command == "POST":
                try:
                    answer = renderer.answer(path, json.loads(body))
                except LookupError as e:
                    error = {"message": str(e), "type": "NotFoundError", "param": None, "code": 404}
                    self._reply(404, "application/json", json.dumps({"error": error}).encode())
                    return
                self._reply(200, "application/json", json.dumps(answer).encode())
                return
            conn = http.client.HTTPConnection(HOST, backend_port, timeout=300)
            try:
                headers = {"content-type": self.headers.get("content-type", "application/json")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                response = conn.getresponse()
                data = response.read()
                self._reply(
                    response.status, response.getheader("content-type") or "text/plain", data
                )
            finally:
                conn.close()

        do_GET = do_POST = do_PUT = do_DELETE = _handle

    server = ThreadingHTTPServer((HOST, _free_port()), Handler)
    server.daemon_threads = True
    return server


class RemoteLaunchRenderServer:
    """``with RemoteLaunchRenderServer(model, args) as server:``, tokstream serving ``model``."""

    def __init__(self, model: str, vllm_serve_args: list[str], **_: Any) -> None:
        self.model = model
        model_dir = Path(model).resolve()
        if not (model_dir / "tokenizer.json").is_file():
            raise FileNotFoundError(
                f"no tokenizer fixture is laid out for {model!r} (acceptance/vllm/models.py)"
            )
        config = json.loads((model_dir / "config.json").read_text())
        self._backend_port = _free_port()
        python = os.environ["TOKSTREAM_PYTHON"]
        command = [
            python, "-m", "tokstream", "serve",
            "--tokenizer", str(model_dir),
            "--served-model-name", model,
            "--port", str(self._backend_port),
            "--max-model-len", str(config["max_position_embeddings"]),
            "--log-level", "warning",
            *_serve_flags(list(vllm_serve_args)),
        ]  # fmt: skip
        print(f"Launching tokstream serve: {' '.join(command[1:])}", flush=True)
        self.proc = subprocess.Popen(command, stdout=sys.stdout, stderr=sys.stderr)
        try:
            self._wait_healthy()
            self._front = _front(_Renderer(model, model_dir), self._backend_port)
        except BaseException:
            self._stop_backend()
            raise
        self.host, self.port = HOST, self._front.server_address[1]
        self._thread = threading.Thread(target=self._front.serve_forever, daemon=True)
        self._thread.start()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tokstream serve exited with status {self.proc.returncode}")
            try:
                conn = http.client.HTTPConnection(HOST, self._backend_port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            finally:
                conn.close()
            time.sleep(0.1)
        raise RuntimeError(f"tokstream serve did not answer /health in {START_SECONDS:.0f} s")

    def _stop_backend(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def url_root(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url_for(self, *parts: str) -> str:
        segments = filter(None, (p.strip("/") for p in parts))
        return self.url_root + "/" + "/".join(segments)

    def __enter__(self) -> RemoteLaunchRenderServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._front.shutdown()
        self._front.server_close()
        self._stop_backend()
