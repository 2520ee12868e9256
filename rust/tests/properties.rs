//! Property tests on synthetic tokenizers (no files needed): a stream's deltas plus `finish()`
//! equal the one-shot decode for any ids and chunking, windows stay bounded, and no input panics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use proptest::prelude::*;
use tokstream::{Detokenizer, EngineKind};

/// A byte-level vocabulary of every single byte plus multi-byte pieces that split characters.
fn byte_level_json() -> String {
    let alphabet: Vec<char> = (0u32..=255)
        .map(|b| {
            let direct = matches!(b, 33..=126 | 161..=172 | 174..=255);
            if direct {
                char::from_u32(b).unwrap()
            } else {
                let n = (0..b)
                    .filter(|x| !matches!(x, 33..=126 | 161..=172 | 174..=255))
                    .count();
                char::from_u32(256 + n as u32).unwrap()
            }
        })
        .collect();
    let mut vocab: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
    for piece in ["中", "文", "👍", "Ġhello", "Ġworld"] {
        let bytes = piece.as_bytes();
        let mapped: String = if piece.starts_with('Ġ') {
            piece.to_owned()
        } else {
            bytes.iter().map(|&b| alphabet[b as usize]).collect()
        };
        vocab.push(mapped.clone());
        // A piece that ends inside the character.
        let cut: String = mapped
            .chars()
            .take(mapped.chars().count().saturating_sub(1).max(1))
            .collect();
        if !vocab.contains(&cut) {
            vocab.push(cut);
        }
    }
    let entries: Vec<String> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}: {i}", serde_json_string(t)))
        .collect();
    let n = vocab.len();
    format!(
        r#"{{"version":"1.0","truncation":null,"padding":null,
        "added_tokens":[{{"id":{n},"content":"<|end|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}}],
        "normalizer":null,"pre_tokenizer":null,"post_processor":null,
        "decoder":{{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}},
        "model":{{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,
        "end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,
        "vocab":{{{}}},"merges":[]}}}}"#,
        entries.join(",")
    )
}

/// A SentencePiece byte-fallback vocabulary: `<0x00>`..`<0xFF>` and a few pieces.
fn sentencepiece_json() -> String {
    let mut vocab: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
    vocab.extend((0..=255u32).map(|b| format!("<0x{b:02X}>")));
    vocab.extend(["▁hello", "▁world", "▁", "ab", "中"].map(String::from));
    let entries: Vec<String> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}: {i}", serde_json_string(t)))
        .collect();
    format!(
        r#"{{"version":"1.0","truncation":null,"padding":null,
        "added_tokens":[{{"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}}],
        "normalizer":null,"pre_tokenizer":null,"post_processor":null,
        "decoder":{{"type":"Sequence","decoders":[{{"type":"Replace","pattern":{{"String":"▁"}},"content":" "}},
            {{"type":"ByteFallback"}},{{"type":"Fuse"}},{{"type":"Strip","content":" ","start":1,"stop":0}}]}},
        "model":{{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,
        "end_of_word_suffix":null,"fuse_unk":true,"byte_fallback":true,"ignore_merges":false,
        "vocab":{{{}}},"merges":[]}}}}"#,
        entries.join(",")
    )
}

fn serde_json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn run(det: &Arc<Detokenizer>, ids: &[u32], chunks: &[usize], skip: bool) -> String {
    let mut s = tokstream::Stream::new(det, &[], skip);
    let mut out = String::new();
    let mut i = 0;
    for &n in chunks.iter().cycle() {
        if i >= ids.len() {
            break;
        }
        let end = (i + n).min(ids.len());
        out.push_str(s.step(&ids[i..end]).unwrap());
        assert!(s.window_len() <= 32, "window grew to {}", s.window_len());
        i = end;
    }
    out.push_str(s.finish().unwrap());
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Byte-level text is local, so the stream is exact for any ids, valid UTF-8 or not.
    #[test]
    fn byte_level_stream_equals_decode(
        ids in prop::collection::vec(0u32..300, 0..64),
        chunks in prop::collection::vec(1usize..6, 1..4),
        skip in any::<bool>(),
    ) {
        let det = Arc::new(Detokenizer::from_json(&byte_level_json()).unwrap());
        prop_assert_eq!(det.engine(), EngineKind::ByteLevel);
        prop_assert_eq!(run(&det, &ids, &chunks, skip), det.decode(&ids, skip).unwrap());
    }

    /// SentencePiece is exact whenever byte runs are valid UTF-8 (ids from encoding real text);
    /// any ids at all must not panic and keep the window bounded.
    #[test]
    fn sentencepiece_valid_text_equals_decode(
        text in "[a-c中文 é👍]{0,24}",
        chunks in prop::collection::vec(1usize..6, 1..4),
        junk in prop::collection::vec(0u32..300, 0..48),
    ) {
        let json = sentencepiece_json();
        let det = Arc::new(Detokenizer::from_json(&json).unwrap());
        prop_assert_eq!(det.engine(), EngineKind::SentencePiece);
        let tok: tokenizers::Tokenizer = json.parse().unwrap();
        let ids = tok.encode(text.as_str(), false).unwrap().get_ids().to_vec();
        prop_assert_eq!(run(&det, &ids, &chunks, false), tok.decode(&ids, false).unwrap());
        let _ = run(&det, &junk, &chunks, false);
    }

    /// Hostile windows are refused with an error or resumed; stepping them never panics.
    #[test]
    fn resume_never_panics(
        tokens in prop::collection::vec(prop_oneof![Just("<0xE4>"), Just("▁hello"), Just(""), Just("zz"), Just("<s>")], 0..40),
        prefix in 0usize..50,
        read in 0usize..50,
        ids in prop::collection::vec(any::<u32>(), 0..20),
    ) {
        let det = Arc::new(Detokenizer::from_json(&sentencepiece_json()).unwrap());
        match tokstream::Stream::resume(&det, &tokens, prefix, read, false) {
            Ok(mut s) => {
                prop_assert!(prefix <= read && read <= tokens.len());
                prop_assert!(!tokens.contains(&"zz"));
                s.step(&ids).unwrap();
                s.finish().unwrap();
                prop_assert!(s.step(&[1]).is_err());
            }
            Err(e) => {
                let is_window_error = matches!(e, tokstream::Error::InvalidWindow { .. });
                prop_assert!(is_window_error);
            }
        }
    }
}
