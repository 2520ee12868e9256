"""The parser classes vLLM's parser tests get instead of vLLM's: each answers with tokstream.

vLLM's unit tests of its parsers (``tests/tool_parsers/``, ``tests/reasoning/``) build a parser
class on a tokenizer and call its text API:

- ``extract_tool_calls(model_output, request)`` and ``extract_reasoning(model_output, request)``:
  the whole output, as text;
- ``extract_tool_calls_streaming(previous_text, current_text, delta_text, previous_token_ids,
  current_token_ids, delta_token_ids, request)`` and ``extract_reasoning_streaming(...)`` (the
  same without the request): one delta of a stream, on a parser object that lives for the
  stream.

``install()`` puts a class of ours in place of every tool and reasoning parser class vLLM
registers (in its registries and in the modules that define them), before the test modules are
imported. Our classes keep the names and subclass vLLM's abstract ``ToolParser`` /
``ReasoningParser`` (so the tests' type checks hold) but run none of vLLM's code: each call
becomes a chat derender body on token ids for ``tokstream.Derenderer``, in the process of
``parser_worker.py`` under ``TOKSTREAM_PYTHON``:

- the text becomes ids with the tokenizer fixture's ``tokenizers`` encoding (no special tokens
  added; a marker that is an added token of the vocabulary becomes its id);
- a whole call is one whole chat derender (``finish_reason`` ``"stop"``, no end-of-sequence id
  left out); its message is the answer: ``(reasoning, content)``, or the calls and content;
- a stream is a derender stream: each delta one chunk, the ``stream_state`` carried on the parser
  object, the chunk's delta the answer (``None`` when it sends nothing). ``finish_streaming()``,
  the end-of-output call vLLM's server makes on its engine-based parsers, is one more chunk of
  no ids with ``finish_reason`` ``"stop"``; a test that does not call it sends no finish, so text
  tokstream holds back at the end (a suffix that may begin a marker) is never sent;
- the chat request is the test's (its tools, ``tool_choice``, ``chat_template_kwargs``), with the
  constructor's ``tools`` and ``chat_template_kwargs`` where it has none. A tool parser is only
  called by vLLM's server for a request with tools, and tokstream parses calls only then: a
  request without tools gets one placeholder tool (``ANY_TOOL``) and ``tool_choice: "auto"``;
- the prompt is empty, or the ids given to ``set_prompt_token_ids`` /
  ``adjust_initial_state_from_prompt``.

Anything else of vLLM's parser API (its internal state, ``is_reasoning_end``,
``extract_content_ids``, ``adjust_request``, structural tags, ...) raises ``NotServedError``: a
test that uses it is listed not applicable. ``CALLS`` counts the answers tokstream gave, so the
stage can refuse a test that passed without asking tokstream anything, and ``VLLM_PARSERS``
counts vLLM parser objects built all the same (through a base class the test subclasses, say).
"""

from __future__ import annotations

import atexit
import functools
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent

#: The placeholder tool a request without tools gets (see the module's documentation).
ANY_TOOL = {
    "type": "function",
    "function": {"name": "any_tool", "parameters": {"type": "object", "properties": {}}},
}

#: Diagnosis (``TOKSTREAM_PARSERS_PROBE_FINISH=1``): each stream chunk is also sent with a finish
#: reason, and ``PENDING`` holds the two answers of the last chunk where they differ.
PROBE_FINISH = os.environ.get("TOKSTREAM_PARSERS_PROBE_FINISH") == "1"
PENDING: list[dict[str, Any]] = []

#: Answers tokstream gave, and vLLM parser objects built (real ones, not ours), in this process.
CALLS = 0
VLLM_PARSERS = 0


class NotServedError(AttributeError):
    """A test used a part of vLLM's parser API that has no derender counterpart."""


class AdapterError(RuntimeError):
    """A test called the streaming API in a way no stream can be (text that does not add up)."""


class TokstreamRefusedError(RuntimeError):
    """tokstream answered the derender body with an error status."""


# --- the tokstream process -------------------------------------------------------------------


class _Worker:
    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        global CALLS
        if self.proc is None or self.proc.poll() is not None:
            python = os.environ["TOKSTREAM_PYTHON"]
            self.proc = subprocess.Popen(
                [python, str(HERE / "parser_worker.py")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
            )
            atexit.register(self.close)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the tokstream worker exited ({self.proc.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise TokstreamRefusedError(answer["error"])
        CALLS += 1
        return answer

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=10)


_WORKER = _Worker()

# --- tokenizers -------------------------------------------------------------------------------

#: The fixture a parser name is served with when the test's tokenizer is not a laid-out fixture
#: (a ``MagicMock``): set by the plugin from ``parser_models.FALLBACK``, as directories.
FALLBACK_DIRS: dict[str, Path] = {}
_ENCODERS: dict[Path, Tokenizer] = {}


def _tokenizer_dir(tokenizer: Any, name: str) -> Path:
    """The laid-out model directory of the test's tokenizer, else the parser's fallback."""
    if _is_mock(tokenizer):
        return _fallback(tokenizer, name)
    for attr in ("name_or_path", "path"):
        value = getattr(tokenizer, attr, None)
        if isinstance(value, (str, os.PathLike)) and (Path(value) / "tokenizer.json").is_file():
            return Path(value).resolve()
    inner = getattr(tokenizer, "tokenizer", None)  # vLLM's wrappers keep the HF tokenizer
    if inner is not None and inner is not tokenizer:
        try:
            return _tokenizer_dir(inner, name)
        except LookupError:
            pass
    return _fallback(tokenizer, name)


def _fallback(tokenizer: Any, name: str) -> Path:
    if name in FALLBACK_DIRS:
        return FALLBACK_DIRS[name]
    raise LookupError(f"no tokenizer fixture for {tokenizer!r} (parser {name!r})")


def encode(directory: Path, text: str) -> list[int]:
    """``text`` as the fixture's ids, no special tokens added (added tokens are matched)."""
    path = (directory / "tokenizer.json").resolve()  # names laid out as one fixture share it
    if path not in _ENCODERS:
        tok = Tokenizer.from_file(str(path))
        tok.no_truncation()
        tok.no_padding()
        _ENCODERS[path] = tok
    return list(_ENCODERS[path].encode(text, add_special_tokens=False).ids)


# --- the chat request -------------------------------------------------------------------------


def _tool_dict(tool: Any) -> dict[str, Any] | None:
    """A chat request's tool from the test's: a dict, vLLM's or the Responses API's model, or a
    mock that carries ``function.name`` and ``function.parameters``."""
    if isinstance(tool, dict):
        if "function" in tool:
            return tool
        if "name" in tool:  # the Responses API's flat form
            fn = {k: tool[k] for k in ("name", "description", "parameters") if k in tool}
            return {"type": "function", "function": fn}
        return None
    dump = getattr(tool, "model_dump", None)
    if callable(dump) and not _is_mock(tool):
        return _tool_dict(dump(mode="json", exclude_none=True))
    function = getattr(tool, "function", None)
    name = getattr(function, "name", None)
    if isinstance(name, str):
        parameters = getattr(function, "parameters", None)
        fn: dict[str, Any] = {"name": name}
        if isinstance(parameters, dict):
            fn["parameters"] = parameters
        return {"type": "function", "function": fn}
    return None


def _is_mock(value: Any) -> bool:
    return type(value).__module__.startswith("unittest.mock")


def _field(request: Any, name: str) -> Any:
    """A field of the test's request, or ``None`` where a mock has not set it."""
    if request is None:
        return None
    value = getattr(request, name, None)
    return None if _is_mock(value) else value


def chat_request(
    request: Any, tools: Sequence[Any] | None, kwargs: dict[str, Any] | None, parse_tools: bool
) -> dict[str, Any]:
    """The derender body's ``chat_request`` for the test's request (see the module's doc)."""
    out: dict[str, Any] = {"model": "test-model", "messages": [{"role": "user", "content": "?"}]}
    given = [t for t in (_tool_dict(t) for t in (_field(request, "tools") or [])) if t]
    # The request's tool_choice goes with its own tools (without them vLLM defaults it to
    # "none", and a parser built with tools is called as for "auto").
    choice = _field(request, "tool_choice") if given else "auto"
    if hasattr(choice, "model_dump"):
        choice = choice.model_dump(mode="json", exclude_none=True)
    given = given or [t for t in (_tool_dict(t) for t in (tools or [])) if t]
    if parse_tools:
        out["tools"] = given or [ANY_TOOL]
        out["tool_choice"] = choice if isinstance(choice, (str, dict)) else "auto"
    parallel = _field(request, "parallel_tool_calls")
    if isinstance(parallel, bool):
        out["parallel_tool_calls"] = parallel
    template_kwargs = _field(request, "chat_template_kwargs")
    if not isinstance(template_kwargs, dict):
        template_kwargs = kwargs
    if template_kwargs:
        out["chat_template_kwargs"] = template_kwargs
    for name in ("include_reasoning", "reasoning_effort"):
        value = _field(request, name)
        if isinstance(value, (bool, str)):
            out[name] = value
    return out


# --- the derender calls -----------------------------------------------------------------------


def _choice(ids: list[int], finish: str | None) -> dict[str, Any]:
    return {"index": 0, "logprobs": None, "finish_reason": finish, "token_ids": ids}


class _Derender:
    """One parser object's conversation with tokstream: whole calls, and its one stream."""

    def __init__(self, tokenizer: Any, name: str, reasoning: str | None, tool: str | None):
        self.directory = _tokenizer_dir(tokenizer, name)
        self.reasoning, self.tool = reasoning, tool
        self.prompt: list[int] = []
        self.state: dict[str, Any] | None = None
        self.streamed_text = ""
        self.request: dict[str, Any] | None = None

    def _ask(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = _WORKER.ask(
            {
                "tokenizer": str(self.directory),
                "reasoning": self.reasoning,
                "tool": self.tool,
                "body": body,
            }
        )
        if answer["status"] != 200:
            raise TokstreamRefusedError(f"{answer['status']}: {answer['body']}")
        return answer["body"]

    def whole(self, text: str, request: dict[str, Any]) -> dict[str, Any]:
        ids = encode(self.directory, text)
        body = {
            "generate_response": {"request_id": "chatcmpl-test", "choices": [_choice(ids, "stop")]},
            "prompt_tokens": len(self.prompt),
            "prompt_token_ids": self.prompt,
            "chat_request": request,
        }
        (choice,) = self._ask(body)["choices"]
        return choice["message"]

    def delta(
        self, previous_text: str, current_text: str, delta_text: str, request: dict[str, Any]
    ) -> dict[str, Any]:
        # A parser object serves one stream. The test's text before this delta is its
        # previous_text; some tests pass "" there on every delta with the text so far in
        # current_text, and some pass "" in both (no context: the same stream goes on). No
        # text before it, after some was streamed: a new stream on the same object. Text
        # before it that was not streamed here (a test that starts a parser in the middle of an
        # output): sent first as one chunk, whose answer is not the test's.
        before: str | None = previous_text
        if not previous_text:
            known = bool(current_text) and current_text.endswith(delta_text)
            before = current_text[: len(current_text) - len(delta_text)] if known else None
        if before == "" and self.streamed_text:
            self.state, self.streamed_text = None, ""
        if before is not None and before != self.streamed_text:
            if not before.startswith(self.streamed_text):
                raise AdapterError(
                    f"previous_text {before!r} does not continue the text streamed so far "
                    f"{self.streamed_text!r}"
                )
            self._chunk(before[len(self.streamed_text) :], request)
        return self._chunk(delta_text, request)

    def finish(self) -> dict[str, Any] | None:
        """The stream's end: a chunk of no ids with a finish reason; ``None`` with no stream."""
        if self.state is None or self.request is None:
            return None
        delta = self._chunk("", self.request, "stop")
        self.state, self.streamed_text = None, ""
        return delta

    def _chunk(
        self, text: str, request: dict[str, Any], finish: str | None = None
    ) -> dict[str, Any]:
        self.request = request
        body: dict[str, Any] = {
            "stream": True,
            "generate_chunk": {
                "request_id": "chatcmpl-test",
                "choices": [_choice(encode(self.directory, text), finish)],
            },
            "stream_state": self.state,
            "chat_request": request,
        }
        if self.state is None:
            body["prompt_token_ids"] = self.prompt
        if PROBE_FINISH and finish is None:
            # Diagnosis only: what a finish on this chunk would have sent.
            probe = json.loads(json.dumps(body))
            probe["generate_chunk"]["choices"][0]["finish_reason"] = "stop"
            finished = self._ask(probe)["chunk"]["choices"][0]["delta"]
        answer = self._ask(body)
        if PROBE_FINISH and finish is None:
            sent = answer["chunk"]["choices"][0]["delta"]
            PENDING[:] = [] if finished == sent else [{"held": sent, "with a finish": finished}]
        self.state = answer["stream_state"]
        self.streamed_text += text
        (choice,) = answer["chunk"]["choices"]
        return choice["delta"]


# --- the classes the tests get ----------------------------------------------------------------

_VOCABS: dict[int, tuple[Any, dict[str, int]]] = {}

_NOT_SERVED = (
    "is part of vLLM's parser internals or engine plumbing, not the text-in, message-out API "
    "tokstream answers"
)


def _not_served(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotServedError(f"{type(self).__name__}.{name} {_NOT_SERVED}")

    method.__name__ = name
    return method


class _Adapter:
    """What our tool and reasoning parser classes share."""

    #: vLLM's registered name this class answers for (set per class by ``install``).
    parser_name: str = ""
    _derender: _Derender

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._derender.prompt = [int(i) for i in prompt_token_ids]

    adjust_initial_state_from_prompt = set_prompt_token_ids

    @functools.cached_property
    def vocab(self) -> dict[str, int]:
        # As vLLM's parsers: the tokenizer's vocabulary, read once (the tests look it up per
        # delta, and reading a 150k-entry vocabulary takes a while), here once per tokenizer.
        tok = self.model_tokenizer  # type: ignore[attr-defined]
        if _is_mock(tok):
            return tok.get_vocab()  # type: ignore[no-any-return]
        if id(tok) not in _VOCABS:
            _VOCABS[id(tok)] = (tok, tok.get_vocab())
        return _VOCABS[id(tok)][1]

    def finish_streaming(self) -> Any:
        """The end of the output (vLLM's server calls it on its engine-based parsers when the
        stream ends): what tokstream sends with the finish."""
        from vllm.entrypoints.generate.base import protocol

        delta = self._derender.finish()
        return None if delta is None else _delta_message(delta, protocol)

    def __getattr__(self, name: str) -> Any:
        # Only reached for what the class and the instance do not have: vLLM's internal state.
        raise NotServedError(f"{type(self).__name__}.{name} {_NOT_SERVED}")


def _delta_message(delta: dict[str, Any], protocol: Any) -> Any:
    calls = [
        protocol.DeltaToolCall(
            index=c["index"],
            id=c.get("id"),
            type=c.get("type"),
            function=protocol.DeltaFunctionCall(
                name=c["function"].get("name"), arguments=c["function"].get("arguments")
            ),
        )
        for c in delta.get("tool_calls") or []
    ]
    if delta.get("content") is None and delta.get("reasoning") is None and not calls:
        return None
    return protocol.DeltaMessage(
        content=delta.get("content"), reasoning=delta.get("reasoning"), tool_calls=calls
    )


def _tool_adapter(base: type, name: str, class_name: str) -> type:
    from vllm.entrypoints.generate.base import protocol

    class ToolAdapter(_Adapter, base):  # type: ignore[misc, valid-type]
        def __init__(self, tokenizer: Any, tools: Sequence[Any] | None = None, **_: Any):
            self.model_tokenizer = tokenizer
            self._tools = list(tools or [])
            self._derender = _Derender(tokenizer, self.parser_name, None, self.parser_name)

        def _request(self, request: Any) -> dict[str, Any]:
            return chat_request(request, self._tools, None, parse_tools=True)

        def extract_tool_calls(self, model_output: str, request: Any = None) -> Any:
            message = self._derender.whole(model_output, self._request(request))
            assert message.get("reasoning") is None, message
            calls = [
                protocol.ToolCall(
                    id=c["id"],
                    type="function",
                    function=protocol.FunctionCall(
                        name=c["function"]["name"], arguments=c["function"]["arguments"]
                    ),
                )
                for c in message.get("tool_calls") or []
            ]
            return protocol.ExtractedToolCallInformation(
                tools_called=bool(calls), tool_calls=calls, content=message["content"]
            )

        def extract_tool_calls_streaming(
            self,
            previous_text: str,
            current_text: str,
            delta_text: str,
            previous_token_ids: Sequence[int],
            current_token_ids: Sequence[int],
            delta_token_ids: Sequence[int],
            request: Any = None,
        ) -> Any:
            delta = self._derender.delta(
                previous_text, current_text, delta_text, self._request(request)
            )
            return _delta_message(delta, protocol)

    for member in (
        "adjust_request",
        "get_structural_tag",
        "get_remaining_unstreamed_args",
    ):
        setattr(ToolAdapter, member, _not_served(member))
    ToolAdapter.__name__ = ToolAdapter.__qualname__ = class_name
    ToolAdapter.parser_name = name
    return ToolAdapter


def _reasoning_adapter(base: type, name: str, class_name: str) -> type:
    from vllm.entrypoints.generate.base import protocol

    class ReasoningAdapter(_Adapter, base):  # type: ignore[misc, valid-type]
        def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any):
            self.model_tokenizer = tokenizer
            self._kwargs = kwargs.get("chat_template_kwargs")
            self._derender = _Derender(tokenizer, self.parser_name, self.parser_name, None)

        def extract_reasoning(self, model_output: str, request: Any = None) -> Any:
            req = chat_request(request, None, self._kwargs, parse_tools=False)
            message = self._derender.whole(model_output, req)
            assert not message.get("tool_calls"), message
            return message.get("reasoning"), message["content"]

        def extract_reasoning_streaming(
            self,
            previous_text: str,
            current_text: str,
            delta_text: str,
            previous_token_ids: Sequence[int],
            current_token_ids: Sequence[int],
            delta_token_ids: Sequence[int],
        ) -> Any:
            req = chat_request(None, None, self._kwargs, parse_tools=False)
            delta = self._derender.delta(previous_text, current_text, delta_text, req)
            return _delta_message(delta, protocol)

    for member in (
        "is_reasoning_end",
        "is_reasoning_end_streaming",
        "extract_content_ids",
        "count_reasoning_tokens",
        "adjust_request",
        "prepare_structured_tag",
        "has_engine_confirmed_reasoning_end",
    ):
        setattr(ReasoningAdapter, member, _not_served(member))
    for member in ("reasoning_start_str", "reasoning_end_str"):
        setattr(ReasoningAdapter, member, property(_not_served(member)))
    ReasoningAdapter.__name__ = ReasoningAdapter.__qualname__ = class_name
    ReasoningAdapter.parser_name = name
    return ReasoningAdapter


# --- installing them --------------------------------------------------------------------------


def _count_vllm_parsers(base: type) -> None:
    original = base.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        global VLLM_PARSERS
        VLLM_PARSERS += 1
        original(self, *args, **kwargs)

    base.__init__ = __init__  # type: ignore[method-assign]


def share_tokenizers() -> None:
    """Loads each tokenizer once a session: ``AutoTokenizer.from_pretrained`` and vLLM's
    ``get_tokenizer`` give the object an earlier call with the same arguments got."""
    import transformers
    import vllm.tokenizers
    import vllm.tokenizers.registry

    def shared(load: Any) -> Any:
        cache: dict[str, Any] = {}

        def loader(*args: Any, **kwargs: Any) -> Any:
            key = repr((args, sorted(kwargs.items())))
            if key not in cache:
                cache[key] = load(*args, **kwargs)
            return cache[key]

        return loader

    auto = transformers.AutoTokenizer.from_pretrained
    transformers.AutoTokenizer.from_pretrained = shared(auto)  # type: ignore[method-assign]
    get = shared(vllm.tokenizers.registry.get_tokenizer)
    vllm.tokenizers.get_tokenizer = get
    vllm.tokenizers.registry.get_tokenizer = get


#: vLLM's registered name each class is served under, where a class has two names.
PREFERRED = {"Glm47MoeModelToolParser": "glm47", "Glm47MoeParserReasoningAdapter": "glm47"}


def install(fallback_dirs: dict[str, Path]) -> dict[str, str]:
    """Puts our classes in place of vLLM's registered parsers; returns class name -> name."""
    from vllm.reasoning import ReasoningParser, ReasoningParserManager
    from vllm.tool_parsers import ToolParser, ToolParserManager

    FALLBACK_DIRS.update(fallback_dirs)
    served: dict[str, str] = {}
    replaced: dict[int, type] = {}
    kinds = (
        (ToolParserManager, ToolParserManager.tool_parsers, ToolParser, _tool_adapter),
        (
            ReasoningParserManager,
            ReasoningParserManager.reasoning_parsers,
            ReasoningParser,
            _reasoning_adapter,
        ),
    )
    for manager, registry, abstract, make in kinds:
        by_class: dict[tuple[str, str], list[str]] = {}
        for name, where in manager.lazy_parsers.items():
            by_class.setdefault(where, []).append(name)
        for (module_path, class_name), names in by_class.items():
            name = PREFERRED.get(class_name, names[0])
            try:
                module = importlib.import_module(module_path)
            except Exception as e:  # a module that cannot import here: its tests cannot run
                print(f"tokstream_parsers: {module_path} does not import: {e}", file=sys.stderr)
                continue
            adapter = make(abstract, name, class_name)
            adapter.__module__ = module_path
            replaced[id(getattr(module, class_name))] = adapter
            for n in names:
                registry[n] = adapter
            served[class_name] = name
        _count_vllm_parsers(abstract)
    # Every name vLLM's modules give the class (a re-export, the module defining it) is ours.
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".", 1)[0] != "vllm" or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, type) and id(value) in replaced:
                setattr(module, attr, replaced[id(value)])
    return served
