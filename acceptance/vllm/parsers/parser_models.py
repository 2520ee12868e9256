"""The tokenizers vLLM's parser tests name, and the fixture each one is laid out as.

The tests load a Hub tokenizer by name (``AutoTokenizer.from_pretrained(name)``,
``get_tokenizer(name)``); the stage lays out the closest tokenizer fixture (``fixtures/``) under
that name in the run directory, offline. Where the family's real vocabulary has its markers as
single special tokens, a derived fixture (``fixtures.DERIVED``) has them too, so a marker encodes
to one id, as with the real tokenizer; the ids themselves are the fixture's, which no test reads
as numbers it compares with the real model's.
"""

from __future__ import annotations

#: Hub name -> tokenizer fixture.
MODELS: dict[str, str] = {
    "openai-community/gpt2": "gpt2",
    # OPT's vocabulary is GPT-2's byte-level BPE.
    "facebook/opt-125m": "gpt2",
    # Qwen3's byte-level vocabulary with <think>, </think>, <tool_call>, </tool_call> as tokens.
    # Qwen3.5's vocabulary is larger, with the same markers as single tokens.
    "Qwen/Qwen3-32B": "qwen3",
    "Qwen/Qwen3-0.6B": "qwen3",
    "Qwen/Qwen3.5-397B-A17B": "qwen3",
    "Qwen/Qwen3-4B-Thinking-2507": "qwen3",
    "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8": "qwen3",
    # The R1 distills of Qwen keep Qwen's vocabulary (as the derender stage serves it).
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": "qwen3",
    # DeepSeek-V3's vocabulary, which R1 shares: <think>, </think> and the tool markers as tokens.
    "deepseek-ai/DeepSeek-V3": "deepseek-r1",
    "deepseek-ai/DeepSeek-V3.1": "deepseek-r1",
    # GLM-4.5/4.7: <think>, </think>, <tool_call>, </tool_call> and the argument markers as
    # single tokens.
    "zai-org/GLM-4.5": "glm45-derived",
    "zai-org/GLM-4.7": "glm45-derived",
    # Kimi K2: <think>, </think> and its call-section markers as single tokens.
    "moonshotai/Kimi-K2-Instruct": "kimi-k2-derived",
    "moonshotai/Kimi-K2.5": "kimi-k2-derived",
    "HCompany/Holo2-4B": "qwen3",
    "tencent/Hunyuan-A13B-Instruct": "qwen3",
    "stepfun-ai/Step-3.5-Flash": "qwen3",
    "allenai/Olmo-3-7B-Think": "gpt2",
    "meta-llama/Llama-3.2-1B-Instruct": "llama-3.2-instruct",
    "Salesforce/Llama-xLAM-2-8B-fc-r": "llama-3.2-instruct",
    "tencent/Hy3-preview": "hy-v3-derived",
    "stepfun-ai/step3": "step3-derived",
    "baidu/ERNIE-4.5-21B-A3B-Thinking": "ernie45-derived",
    "MiniMaxAI/MiniMax-M2": "minimax-m2-derived",
    "ibm-granite/granite-4.0-h-tiny": "granite4-derived",
    "ibm-granite/granite-3.1-8b-instruct": "granite-derived",
    "google/gemma-4-E2B-it": "gemma4-derived",
    "ai21labs/Jamba-tiny-dev": "jamba-derived",
    "LiquidAI/LFM2.5-1.2B-Instruct": "lfm2-derived",
}

#: vLLM parser name -> the fixture its adapter encodes with when the test's tokenizer is not a
#: laid-out one (a ``MagicMock``): the family's own markers as tokens where a derived fixture
#: has them.
FALLBACK: dict[str, str] = {
    "apertus": "apertus-derived",
    "functiongemma": "functiongemma-derived",
    "gemma4": "gemma4-derived",
    "kimi_k3": "kimi-k3-derived",
    "dots": "qwen3",
    "deepseek_v32": "deepseek-r1",
    "deepseek_v4": "deepseek-r1",
    "deepseek_v41": "deepseek-r1",
    "hunyuan_a13b": "qwen3",
    "glm47": "glm45-derived",
    "hy_v3": "hy-v3-derived",
    "minimax_m2": "minimax-m2-derived",
    "step3p5": "qwen3",
    "poolside_v1": "poolside-v1-derived",
    "seed_oss": "seed-oss-derived",
    "qwen3_coder": "qwen3",
    # The tests' mocks and fake tokenizers of K2 Horizon, MiniCPM5 and MiniMax-M3.
    "k2_horizon": "k2-horizon-derived",
    "minicpm5": "minicpm5-derived",
    "minimax_m3": "minimax-m3-derived",
    # The tests' own fake tokenizers of <think> and </think>.
    "granite_thinking_parser": "qwen3",
    "nemotron_v3": "qwen3",
}

#: config.json's model_type per base fixture (``AutoTokenizer`` reads the tokenizer's class from
#: tokenizer_config.json; the model type is only there to make the directory a model's).
MODEL_TYPE = {
    "gpt2": "gpt2",
    "qwen3": "qwen3",
    "deepseek-r1": "deepseek_v3",
    "llama-3.2-instruct": "llama",
}
