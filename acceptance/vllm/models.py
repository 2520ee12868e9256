"""The models vLLM's derender tests name, and the tokenizer fixture each one is served with.

The tests download a model's tokenizer by name; the acceptance stage serves the closest of the
project's tokenizer fixtures (``fixtures/``) instead, laid out in the run directory under the
model's name (so ``get_tokenizer(name)`` in the tests and ``tokstream serve`` read the same
files), with a minimal ``config.json`` of ours carrying the two values that matter here: the
model type and ``max_position_embeddings``, which vLLM takes as ``max_model_len``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    fixture: str
    model_type: str
    max_position_embeddings: int
    why: str


MODELS: dict[str, Model] = {
    # vllm 0.33.0 tests/entrypoints/scale_out/derender/test_derender.py, MODEL_NAME (and
    # test_derender_stream.py): a tiny random Llama with Llama-2's SentencePiece tokenizer; the
    # tests assert its max_model_len of 2048 and its Metaspace leading-space rule.
    "hmellor/tiny-random-LlamaForCausalLM": Model(
        fixture="mistral-7b-v0.1",
        model_type="llama",
        max_position_embeddings=2048,
        why="Llama-2-style SentencePiece BPE, 32,000 ids, byte fallback and the same "
        "Replace/ByteFallback/Fuse/Strip decoder; no chat template, so the render front uses "
        "a plain [INST] turn",
    ),
    # PARSER_MODEL of both files: its tokenizer is Qwen2.5's byte-level vocabulary with
    # DeepSeek's chat template, <think>/</think> and the hermes tags as single tokens.
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": Model(
        fixture="qwen3",
        model_type="qwen2",
        max_position_embeddings=131072,
        why="the same Qwen2 byte-level vocabulary, with <think>, </think>, <tool_call> and "
        "</tool_call> single tokens; its chat template is Qwen3's, which only changes the "
        "rendered prompt",
    ),
}
