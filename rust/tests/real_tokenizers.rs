//! Streams on the project's real tokenizers (`fixtures/`) against the `tokenizers` crate's
//! one-shot `decode`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod fixtures;

use std::sync::Arc;

use tokenizers::Tokenizer;
use tokstream::{Detokenizer, EngineKind};

const TEXT: &str = "Hello world!  Two  spaces. 中文测试，标点。 삥뽕빵 한국어 ภาษาไทย မြန်မာ \
    नमस्ते مرحبا 👨‍👩‍👧‍👦 🇯🇵 def f(x):\n    return x  # done";

const NAMES: [(&str, EngineKind); 10] = [
    ("gpt2", EngineKind::ByteLevel),
    ("llama-3.2-instruct", EngineKind::ByteLevel),
    ("qwen3", EngineKind::ByteLevel),
    ("deepseek-r1", EngineKind::ByteLevel),
    ("mistral-nemo-tekken", EngineKind::ByteLevel),
    ("mistral-7b-v0.1", EngineKind::SentencePiece),
    ("mistral-7b-instruct-v0.3", EngineKind::SentencePiece),
    ("phi-3-mini", EngineKind::SentencePiece),
    ("bert-all-minilm-l6-v2", EngineKind::Windowed),
    ("t5-small", EngineKind::Windowed),
];

fn stream_text(
    det: &Arc<Detokenizer>,
    prompt: &[u32],
    ids: &[u32],
    chunk: usize,
    skip: bool,
) -> String {
    let mut s = tokstream::Stream::new(det, prompt, skip);
    let mut out = String::new();
    for c in ids.chunks(chunk) {
        out.push_str(s.step(c).unwrap());
        assert!(s.window_len() <= 32);
    }
    out.push_str(s.finish().unwrap());
    out
}

#[test]
fn every_tokenizer_streams_its_decode() {
    for (name, kind) in NAMES {
        let json = fixtures::tokenizer_json(name);
        let mut tok: Tokenizer = json.parse().unwrap();
        tok.with_padding(None);
        tok.with_truncation(None).unwrap();
        let det = Arc::new(Detokenizer::from_json(&json).unwrap());
        assert_eq!(det.engine(), kind, "{name}");
        let ids = tok.encode(TEXT, false).unwrap().get_ids().to_vec();
        for skip in [false, true] {
            let whole = tok.decode(&ids, skip).unwrap();
            assert_eq!(det.decode(&ids, skip).unwrap(), whole, "{name}");
            for chunk in [1, 2, 3, 16] {
                assert_eq!(
                    stream_text(&det, &[], &ids, chunk, skip),
                    whole,
                    "{name} chunk {chunk}"
                );
            }
            // Prompt cuts where the prompt's text is a prefix of the whole text.
            for cut in 1..ids.len() {
                let head = tok.decode(&ids[..cut], skip).unwrap();
                if let Some(rest) = whole.strip_prefix(head.as_str()) {
                    let got = stream_text(&det, &ids[..cut], &ids[cut..], 1, skip);
                    assert_eq!(got, rest, "{name} cut {cut}");
                }
            }
        }
    }
}

/// C1's one exception: a byte-fallback run that is not valid UTF-8 keeps its complete characters
/// before the first bad or missing byte, then one U+FFFD per byte token left, for every chunking
/// (a stream may have sent those characters already). `decode` stays the crate's.
#[test]
fn byte_fallback_run_keeps_its_complete_characters() {
    let json = fixtures::tokenizer_json("phi-3-mini");
    let tok: Tokenizer = json.parse().unwrap();
    let det = Arc::new(Detokenizer::from_json(&json).unwrap());
    let bytes = |data: &[u8]| -> Vec<u32> {
        data.iter()
            .map(|b| tok.token_to_id(&format!("<0x{b:02X}>")).unwrap())
            .collect()
    };
    let world = tok.token_to_id("\u{2581}world").unwrap();
    let cases: [(Vec<u32>, &str); 4] = [
        (bytes(b"\xE8\x88\x87\xE7"), "與\u{FFFD}"),
        (
            bytes(b"\xE8\x88\x87\xF0\x9F\x98"),
            "與\u{FFFD}\u{FFFD}\u{FFFD}",
        ),
        (
            [bytes(b"\xEC\x84\xAC\xE1"), vec![world]].concat(),
            "섬\u{FFFD} world",
        ),
        (
            bytes(b"\x95\xEB\xB9\xB5"),
            "\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}",
        ),
    ];
    for (ids, want) in cases {
        for chunk in 1..=ids.len() {
            assert_eq!(
                stream_text(&det, &[], &ids, chunk, false),
                want,
                "chunk {chunk}"
            );
        }
        assert_eq!(
            det.decode(&ids, false).unwrap(),
            tok.decode(&ids, false).unwrap()
        );
    }
}
