"""Where response templates come from: the checkpoint's ``tokenizer_config.json`` (``auto``), a
file (``--response-template``) and the library's ``response_template=``, on a real server and
through ``Derenderer``; and the errors when none is there or it is malformed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.parsers_oracle import SERVED, chat_request
from helpers.parsers_util import derenderer_class, whole
from helpers.server_util import CHAT, Server
from helpers.stream_util import import_tokstream
from helpers.templates_util import case, template_json

from fixtures import model_dir

REQUEST = chat_request()


def _model_with_template(tmp_path: Path, template: dict[str, Any] | None) -> Path:
    """The qwen3 fixture's tokenizer, with a tokenizer_config carrying ``template``."""
    folder = tmp_path / "model"
    folder.mkdir(parents=True, exist_ok=True)
    source = model_dir("qwen3")
    shutil.copyfile(source / "tokenizer.json", folder / "tokenizer.json")
    config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
    if template is not None:
        config["response_template"] = template
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _chat_body(prompt: list[int], gen: list[int]) -> dict[str, Any]:
    response = {
        "request_id": "gen-1",
        "choices": [{"index": 0, "token_ids": gen, "finish_reason": "stop"}],
        "prompt_token_ids": prompt,
    }
    return {"generate_response": response, "prompt_token_ids": prompt, "chat_request": REQUEST}


def _check(answer: Any) -> None:
    (choice,) = answer["choices"]
    message = choice["message"]
    assert message["reasoning"] == "Need the tool."
    ((call,),) = [message["tool_calls"]]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert choice["finish_reason"] == "tool_calls"


def test_serve_auto_parses_with_the_checkpoints_template(tmp_path: Path) -> None:
    folder = _model_with_template(tmp_path, json.loads(template_json("qwen3_template")))
    c = case("qwen3_template", "reasoning_call")
    assert c is not None
    args = ["--tokenizer", str(folder), "--reasoning-parser", "auto", "--tool-call-parser", "auto"]
    server = Server(args, tmp_path / "server.log").start()
    try:
        _check(server.ok(CHAT, _chat_body(c.prompt, c.gen)))
    finally:
        server.stop()


def test_serve_response_template_file(tmp_path: Path) -> None:
    folder = _model_with_template(tmp_path, None)
    path = tmp_path / "template.json"
    path.write_text(template_json("qwen3_template"), encoding="utf-8")
    c = case("qwen3_template", "reasoning_call")
    assert c is not None
    args = ["--tokenizer", str(folder), "--response-template", str(path)]
    server = Server(args, tmp_path / "server.log").start()
    try:
        _check(server.ok(CHAT, _chat_body(c.prompt, c.gen)))
    finally:
        server.stop()


def test_library_template_and_auto(tmp_path: Path) -> None:
    tokstream = import_tokstream()
    c = case("qwen3_template", "reasoning_call")
    assert c is not None
    template = json.loads(template_json("qwen3_template"))
    # vLLM's hf parser (and beam, the same) serves the fields "thinking", "content" and
    # "tool_calls" only: the template's "reasoning_content" is "thinking" for them.
    fields = template["fields"]
    vllm_template = {
        **template,
        "fields": {("thinking" if k == "reasoning_content" else k): v for k, v in fields.items()},
    }
    plain = tokstream.Detokenizer.from_file(str(_model_with_template(tmp_path, None)))

    def checkpoint(name: str, template: dict[str, object]) -> object:
        folder = _model_with_template(tmp_path / name, template)
        detokenizer = tokstream.Detokenizer.from_file(str(folder))
        return derenderer_class()(
            detokenizer, served_model_name=SERVED, reasoning_parser=name, tool_parser=name
        )

    # hf and beam send the text as it is written, as vLLM does; auto strips it.
    for r, reasoning in (
        (
            derenderer_class()(plain, served_model_name=SERVED, response_template=template),
            "Need the tool.",
        ),
        (checkpoint("auto", template), "Need the tool."),
        *((checkpoint(n, vllm_template), "\nNeed the tool.\n") for n in ("hf", "beam")),
    ):
        assert (r.reasoning_parser, r.tool_parser) == ("response_template",) * 2
        got = whole(r, c.prompt, c.gen, REQUEST, "stop")
        assert got.message.reasoning == reasoning and got.finish_reason == "tool_calls"
    for name in ("auto", "hf", "beam"):
        with pytest.raises(ValueError, match=f"parser '{name}': .* no response_template"):
            derenderer_class()(plain, served_model_name=SERVED, reasoning_parser=name)
    with pytest.raises(ValueError, match='a field "reasoning_content"'):
        checkpoint("hf", template)
    with pytest.raises(ValueError, match=r'"hf" and "beam" .* cannot be named together'):
        folder = _model_with_template(tmp_path / "both", vllm_template)
        detokenizer = tokstream.Detokenizer.from_file(str(folder))
        derenderer_class()(detokenizer, reasoning_parser="hf", tool_parser="beam")
    with pytest.raises(ValueError, match='not "hermes"'):
        derenderer_class()(plain, response_template=template, tool_parser="hermes")
    with pytest.raises(ValueError, match="close_pattern"):
        bad = {"start_anchor": "a", "fields": {"content": {"close_pattern": "("}}}
        derenderer_class()(plain, response_template=bad)
    with pytest.raises(ValueError, match="two different built-in templates"):
        derenderer_class()(plain, reasoning_parser="qwen3_template", tool_parser="llama3_json")


def test_model_config_reads_the_response_template() -> None:
    config = import_tokstream().config.ModelConfig
    found = config.from_texts(json.dumps({"response_template": {"fields": {}}}), None)
    assert json.loads(found.response_template or "") == {"fields": {}}
    assert config.from_texts('{"response_template": "x"}', None).response_template is None
    assert config.from_texts(None, None).response_template is None


def test_every_builtin_template_loads() -> None:
    core = import_tokstream()._core
    assert len(set(core.TEMPLATES)) == len(core.TEMPLATES) > 11
    for name in core.TEMPLATES:
        assert json.loads(core.builtin_template(name))["fields"], name
    assert core.builtin_template("nope") is None
