"""vLLM 0.33.0's own derender answers, on CPU, for request bodies built on our tokenizer fixtures.

This is how the expected values of ``tests/derender/test_vllm_parity.py`` were measured, kept
so that they can be measured again (for a newer vLLM, say). It needs the acceptance virtualenv
that ``.ci/vllm-acceptance`` makes (the vLLM wheel, its light dependencies and our stand-ins):

    PYTHONPATH=acceptance/vllm/standins:. target/vllm-acceptance/venv/bin/python \\
        acceptance/vllm/oracle.py CASES.json > ANSWERS.json

``--parity`` instead of a file answers the cases of ``tests/derender/vllm_parity_cases.py``.
``CASES.json`` is a list of ``{"name", "fixture", "path", "body"}`` (optionally also
``generation_eos``, the ``eos_token_id`` list of the model's generation config;
``reasoning_parser`` and ``tool_parser``, vLLM's ``--reasoning-parser`` and ``--tool-call-parser``,
with ``--enable-auto-tool-choice``; ``model_type``, the model config's, ``"gpt_oss"`` for Harmony),
or ``{"name", ..., "steps": [body, ...]}`` for a stream, each step sent with the state the one
before it returned. The answer is a map from name to ``{"status", "body"}`` (or ``{"steps"}``).
``fixture`` may be a derived fixture (``fixtures.DERIVED``). Each body goes through vLLM's real
route (its FastAPI router ``vllm.entrypoints.scale_out.derender.api_router``, its exception
handlers, ``ServingDerender`` and ``OnlineDerenderer``), so the answer is what vLLM's server sends;
only the renderer (which derender asks for its tokenizer and EOS id) and the model config
(``max_model_len`` 2048, ``max_logprobs`` 20, the generation config) are stand-ins.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock

import tokstream_standins

tokstream_standins.install()

from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from vllm.entrypoints.scale_out.derender.api_router import router  # noqa: E402
from vllm.entrypoints.scale_out.derender.serving import ServingDerender  # noqa: E402
from vllm.entrypoints.serve.exception_handling.register import (  # noqa: E402
    init_exception_handler,
)
from vllm.renderers.online_derenderer import OnlineDerenderer  # noqa: E402
from vllm.tokenizers import get_tokenizer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import fixtures  # noqa: E402

MODEL = "m"
MAX_MODEL_LEN = 2048
MAX_LOGPROBS = 20


#: Fixtures whose ``tokenizer_config.json`` names a class transformers 5 rebuilds with another
#: decoder: deepseek-r1's ``LlamaTokenizerFast`` becomes a Metaspace decoder over a byte-level
#: vocabulary, and its text comes out garbled (``LetĠme``), so no marker of it ever matches.
#: These are loaded as ``PreTrainedTokenizerFast``, which keeps the file's own decoder.
AS_FAST = frozenset({"deepseek-r1"})


def tokenizer_dir(fixture: str) -> Path:
    """The folder vLLM loads the fixture's tokenizer from (a copy for ``AS_FAST``)."""
    source = fixtures.model_dir(fixture)
    if fixture not in AS_FAST:
        return Path(source)
    out = Path(tempfile.gettempdir()) / f"tokstream-oracle-{fixture}"
    out.mkdir(exist_ok=True)
    shutil.copyfile(Path(source) / "tokenizer.json", out / "tokenizer.json")
    config = json.loads((Path(source) / "tokenizer_config.json").read_text())
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    (out / "tokenizer_config.json").write_text(json.dumps(config))
    return out


#: The case keys that choose the server a case is sent to.
SERVER_KEYS = ("fixture", "generation_eos", "reasoning_parser", "tool_parser", "model_type")


def client(
    fixture: str,
    generation_eos: list[int] | None,
    reasoning_parser: str | None = None,
    tool_parser: str | None = None,
    model_type: str | None = None,
) -> TestClient:
    """A test client of vLLM's derender app (:func:`app`)."""
    derender = app(fixture, generation_eos, reasoning_parser, tool_parser, model_type)
    return TestClient(derender, raise_server_exceptions=False)


def app(
    fixture: str,
    generation_eos: list[int] | None,
    reasoning_parser: str | None = None,
    tool_parser: str | None = None,
    model_type: str | None = None,
) -> FastAPI:
    """vLLM's derender app on a tokenizer fixture: its router, exception handlers and serving
    objects, with stand-ins for the renderer and model config only."""
    tokenizer = get_tokenizer(str(tokenizer_dir(fixture)))
    renderer = MagicMock()
    renderer.get_tokenizer.return_value = tokenizer
    renderer.tokenizer = tokenizer
    renderer.get_eos_token_id.return_value = tokenizer.eos_token_id
    renderer._executor = None
    config = MagicMock()
    config.model = MODEL
    config.hf_config.model_type = model_type or "llama"
    config.max_model_len = MAX_MODEL_LEN
    config.max_logprobs = MAX_LOGPROBS
    generation = {} if generation_eos is None else {"eos_token_id": generation_eos}
    config.try_get_generation_config.return_value = generation
    derenderer = OnlineDerenderer(
        config,
        renderer,
        request_logger=None,
        chat_template=None,
        chat_template_content_format="string",
        enable_auto_tools=tool_parser is not None,
        tool_parser=tool_parser,
        reasoning_parser=reasoning_parser,
    )
    models = MagicMock()
    models.model_config = config
    models.model_name.return_value = MODEL
    models.is_base_model.side_effect = lambda name: name == MODEL
    models.lora_requests = {}
    models.base_model_paths = [MagicMock(name=MODEL)]
    out = FastAPI()
    out.include_router(router)
    init_exception_handler(out)
    out.state.serving_derender = ServingDerender(models, derenderer)
    out.state.args = SimpleNamespace(log_error_stack=False)  # read by its validation handler
    return out


def _body(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def answer(cases: list[dict[str, Any]]) -> dict[str, Any]:
    clients: dict[str, TestClient] = {}

    def key_of(case: dict[str, Any]) -> str:
        return json.dumps([case.get(k) for k in SERVER_KEYS])

    for case in cases:
        key = key_of(case)
        if key not in clients:
            clients[key] = client(*(case.get(k) for k in SERVER_KEYS))
    tokstream_standins.seal()
    out: dict[str, Any] = {}
    for case in cases:
        key = key_of(case)
        if "steps" not in case:
            response = clients[key].post(case["path"], json=case["body"])
            out[case["name"]] = {"status": response.status_code, "body": _body(response)}
            continue
        state = None
        steps = []
        for body in case["steps"]:
            response = clients[key].post(case["path"], json={**body, "stream_state": state})
            steps.append({"status": response.status_code, "body": _body(response)})
            state = response.json().get("stream_state") if response.status_code == 200 else None
        out[case["name"]] = {"steps": steps}
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["--parity"]:
        from tests.derender.vllm_parity_cases import all_cases

        cases = all_cases()
    else:
        cases = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(answer(cases), indent=1, ensure_ascii=False))
