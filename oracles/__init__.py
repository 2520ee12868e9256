"""The plain-Python references the suites compare tokstream against, and the samples they share.

- ``vllm_reference``: vLLM's incremental detokenization algorithm, written out in plain Python.
- ``derender_reference``: a derender built the way vLLM's is, on that algorithm.
- ``parser_reference``: plain-Python reasoning and hermes tool-call parsers, and a replaying chat
  derender on them.
- ``corpus``: the text samples (prose, code, CJK, emoji, markers) encoded per tokenizer.

Tests check tokstream against them and benchmarks time them beside it, so they live here, beside
``fixtures/``, where both may import them (``pythonpath`` in ``pyproject.toml``): neither suite
reaches into the other.
"""
