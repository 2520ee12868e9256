"""The text every step benchmark streams: one realistic, multilingual assistant answer.

It mixes English prose, Python and JSON, Chinese, Japanese and Korean, emoji (with ZWJ sequences
and flags) and a ``<think>`` block, so that byte-level tokenizers split characters across ids and
SentencePiece tokenizers fall back to byte tokens, as real generations do. Encoded without special
tokens it gives roughly 1,000 to 2,000 ids on every benchmarked tokenizer.
"""

# ruff: noqa: RUF001
# (Full-width punctuation is the real spelling of CJK text.)

GENERATION = """<think>
The user wants a short, practical guide to streaming text from a language model, with an example
in Python, a note on Unicode, and a summary in Chinese, Japanese and Korean. Keep it friendly. 🙂
</think>

Sure! Here is a compact guide to **incremental detokenization**, the step that turns the token
ids a model emits into the text your users see, one small piece at a time.

## Why it is harder than it looks

A token is not a character. Byte-level tokenizers (GPT-2, Llama 3, Qwen) split a single emoji
such as 👨‍👩‍👧‍👦 or a CJK character like 語 into several tokens, and each of those tokens holds only
part of the UTF-8 bytes. If you decode every token on its own you print garbage like "�" and the
stream looks broken. SentencePiece models with byte fallback (Mistral, Phi-3) have the same issue
through `<0xE8>`-style byte tokens, and WordPiece models glue "##ing" onto the previous word.

The usual fix keeps a short window of recent tokens, decodes it twice (with and without the new
token), and emits the difference only when it does not end in the middle of a character.

## A minimal example

```python
from tokenizers import Tokenizer

def stream_text(tokenizer: Tokenizer, token_ids: list[int]) -> str:
    prefix_offset, read_offset = 0, 0
    tokens: list[str] = []
    out = []
    for token_id in token_ids:
        tokens.append(tokenizer.id_to_token(token_id))
        prefix = tokenizer.decoder.decode(tokens[prefix_offset:read_offset])
        text = tokenizer.decoder.decode(tokens[prefix_offset:])
        if len(text) > len(prefix) and not text.endswith("\\ufffd"):
            out.append(text[len(prefix):])
            prefix_offset, read_offset = read_offset, len(tokens)
    return "".join(out)
```

A tool call in the middle of a reply looks like this:

```json
{"name": "get_weather", "arguments": {"city": "東京", "unit": "celsius", "days": 3}}
```

and the answer might read: "Tomorrow in 東京 it will be 18 °C and sunny ☀️, on Friday 12 °C with
rain 🌧️." Prices such as €12.50, ¥1,980 and ₩15,000 should come through intact, and so should
math like ∑ x² ≤ ∞ or arrows like → and ⇒.

## Performance notes

- Two decoder runs per token cost about a microsecond each from Python; at 1,000 live requests
  and 50 tokens per second each, that is 50,000 calls a second on the serving loop.
- Batching many sequences in one call removes most of the interpreter overhead.
- Long prompts should not make the first step slower: only the last few prompt ids matter.

## 中文摘要

增量解码（incremental detokenization）把模型逐个生成的词元编号转换成用户看到的文字。字节级分词器
会把一个汉字或表情符号拆成多个词元，所以必须等字符的全部字节到齐以后再输出，否则会出现乱码“�”。
常见的做法是保留一个很短的窗口，对新旧两段文字分别解码，只输出差异部分。这样每个词元的开销是固定的，
与提示词的长度无关。在高并发的推理服务中，这一步的速度会直接影响首字延迟和整体吞吐量。

## 日本語のまとめ

インクリメンタルなデトークン化は、モデルが一つずつ生成するトークン ID を、ユーザーが読む文字列に
変換する処理です。バイトレベルのトークナイザーは「語」や絵文字 🎌 を複数のトークンに分けるため、
文字が完成するまで出力を保留しなければなりません。ストリーミング API では、この処理を毎トークン
実行するので、速さがそのまま応答性に効いてきます。

## 한국어 요약

증분 디토큰화는 모델이 하나씩 생성하는 토큰 ID를 사용자가 읽는 텍스트로 바꾸는 과정입니다.
바이트 수준 토크나이저는 한글 한 글자나 이모지 🇰🇷 를 여러 토큰으로 나누기 때문에, 글자가 완성될
때까지 출력을 미뤄야 합니다. 이렇게 하면 깨진 문자 없이 자연스럽게 스트리밍할 수 있습니다.

## Checklist ✅

1. Never emit half a character; hold the bytes back until the character is complete.
2. Flush what is held back when the sequence ends, so the total equals a one-shot decode.
3. Keep the per-token cost constant, whatever the length of the prompt or the answer.
4. Test with real tokenizers: English, code, 中文, 日本語, 한국어, and emoji like 🤖🚀🔥🎉.

That's it. Happy streaming! 🎈
"""
