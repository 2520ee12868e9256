//! The reader against serde: it declines or reads what serde reads.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

/// The reader either declines or reads what serde reads.
fn agrees(text: &str) -> bool {
    let mut quick = super::Body::default();
    if super::body(text, &mut quick).is_none() {
        return false;
    }
    let serde = serde_json::from_str::<super::Body<'_>>(text)
        .unwrap_or_else(|e| panic!("serde refuses what the reader took ({e}): {text}"));
    assert_eq!(format!("{quick:?}"), format!("{serde:?}"), "{text}");
    true
}

const CHUNK: &str = r#"{"stream":true,"model":"m","generate_chunk":{"request_id":"gen-1","choices":[{"index":0,"logprobs":null,"finish_reason":null,"token_ids":[223, 9],"routed_experts":null}],"usage":null,"prompt_token_ids":null,"metrics":null},"stream_state":{"prev_tokens":["ĠëĶ","Ķ","a\"b\\c\u00e9\ud83d\ude00\n"],"prefix_offset":0,"read_offset":2,"role_sent":true,"logprob_context_token_ids":[1,2],"logprob_text_offset":2,"output_token_ids":[],"output_chunk_lens":[3],"tools_streamed":false,"last_tool_call_ids":["call_1"],"held_text":"","generated_tokens":4,"stopped":false,"parser":null,"future":{"x":[1,{"y":-2.5e-3}]}},"prompt_tokens":26,"chat_request":{"messages":[{"role":"user","content":"Hi \"there\" \u0041"}],"model":"m","max_tokens":512,"stop":["a","\n"],"logprobs":true,"top_logprobs":2,"chat_template_kwargs":{"enable_thinking":false}}}"#;

/// A chunk with logprobs: floats in every form the reader takes.
const LOGPROBS: &str = r#"{"stream":true,"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"token_id":7,"token":"a\"b","logprob":-0.0012345678901234567,"bytes":[97,34,98],"top_logprobs":[{"token_id":7,"logprob":-1.1920928955078125e-07,"bytes":null},{"token":"token_id:9","logprob":-9999.0,"extra":[1]},{"token_id":3,"logprob":0.0},{"token_id":4,"logprob":-0.0},{"token_id":5,"logprob":-12},{"token_id":6,"logprob":2.5E+2}]}],"refusal":null},"finish_reason":null,"token_ids":[7]}]},"stream_state":null}"#;

#[test]
fn reads_what_serde_reads() {
    let bodies = [
        CHUNK,
        LOGPROBS,
        r#"{}"#,
        " \t\r\n{ \"stream\" : false , \"model\" : null } \n",
        r#"{"generate_response":{"choices":[{"index":3,"finish_reason":"stop","stop_reason":"x","logprobs":{"content":[{"token_id":5,"logprob":-0.5,"top_logprobs":[]}]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}},"prompt_token_ids":[1,2,3],"prompt_logprobs":null,"kv_transfer_params":{"k":[true]},"output_mode":"tokens"},"completion_request":{"prompt":"x","stop":"s","stop_token_ids":[4],"ignore_eos":true,"min_tokens":2,"include_stop_str_in_output":false,"skip_special_tokens":false,"return_token_ids":true,"logprobs":2,"logprob_token_ids":[1],"tools":[{}],"tool_choice":"auto","parallel_tool_calls":true,"include_reasoning":false,"reasoning_effort":"none"}}"#,
        r#"{"generate_responses":[{"choices":[]},{"choices":[{"index":0,"token_ids":[]}]}],"prompt_token_ids":[[1],null]}"#,
        r#"{"generate_chunk":{"choices":[{"index":0,"stop_reason":7,"finish_reason":"stop"}],"metrics":{"time_to_first_token_ms":1.5}},"stream":true}"#,
        r#"{"unknown":[[[]],{},"\u0000\ud800",0,-0,1.5E+3,true,false,null],"stream_state":null}"#,
        r#"{"stream_state":{"parser":{"r":true,"h":"<"}}}"#,
    ];
    for text in bodies {
        assert!(agrees(text), "declined: {text}");
    }
}

#[test]
fn declines_what_it_is_not_sure_of() {
    let deep = format!("{{\"x\":{}{}}}", "[".repeat(70), "]".repeat(70));
    let bodies = [
        r#"{"stream":true,"stream":true}"#, // duplicate field
        r#"{"generate_response":{"choices":[],"prompt_logprobs":[null]}}"#, // serde's
        r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"logprob":-0}]}}]}}"#,
        r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"logprob":1e400}]}}]}}"#,
        r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"logprob":1e-400}]}}]}}"#,
        r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"bytes":[256]}]}}]}}"#,
        r#"{"stre\u0061m":true}"#,                           // escaped key
        r#"{"generate_chunk":{"choices":[{"index":1.0}]}}"#, // a float for an id
        r#"{"generate_chunk":{"choices":[{"index":-1}]}}"#,  // negative
        r#"{"generate_chunk":{"choices":[{"index":4294967296}]}}"#, // beyond u32
        r#"{"generate_chunk":{"choices":[{"token_ids":[1]}]}}"#, // no index
        r#"{"generate_chunk":{"request_id":"x"}}"#,          // no choices
        r#"{"stream_state":{"prev_tokens":null}}"#,          // null for a list
        r#"{"stream_state":{"held_text":"\ud800"}}"#,        // lone surrogate
        r#"{"model":"a	b"}"#,                                // control character
        r#"{"x":01}"#,
        r#"{"x":1.}"#,
        r#"{"x":[1,]}"#,
        r#"{"x":{"a":1,}}"#,
        r#"{"x":"\q"}"#,
        r#"{"x":NaN}"#,
        r#"{"stream":true} x"#,
        r#"{"stream":true"#,
        r#"[]"#,
        &deep,
    ];
    for text in bodies {
        let mut out = super::Body::default();
        assert!(super::body(text, &mut out).is_none(), "took: {text}");
    }
}

/// The bytes a mutation puts in: JSON's punctuation and the starts of its values.
const BYTES: &[u8] = b"{}[]\",:\\ 0123456789-+.eEtfnul\"\x01\xC3\xA9";

#[test]
fn every_one_byte_edit_reads_as_serde_reads_it() {
    // Each byte of a chunk replaced, deleted, or preceded by each byte of BYTES.
    for base in [CHUNK.as_bytes(), LOGPROBS.as_bytes()] {
        let (mut took, mut declined) = (0, 0);
        for at in 0..=base.len() {
            let mut edits = vec![];
            for &b in BYTES {
                let mut e = base.to_vec();
                e.insert(at, b);
                edits.push(e);
                if at < base.len() {
                    let mut e = base.to_vec();
                    e[at] = b;
                    edits.push(e);
                }
            }
            if at < base.len() {
                let mut e = base.to_vec();
                e.remove(at);
                edits.push(e);
            }
            for e in edits {
                if let Ok(text) = std::str::from_utf8(&e) {
                    if agrees(text) {
                        took += 1;
                    } else {
                        declined += 1;
                    }
                }
            }
        }
        // Both sides are exercised: edits inside strings and numbers keep bodies valid.
        let edits = took + declined;
        assert!(
            took * 4 > edits && declined * 4 > edits,
            "took {took}, declined {declined}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn mutated_bodies_read_as_serde_reads_them(
        edits in proptest::collection::vec((0usize..900, 0usize..BYTES.len(), 0u8..3), 1..4)
    ) {
        let base = if edits.len() % 2 == 0 { CHUNK } else { LOGPROBS };
        let mut bytes = base.as_bytes().to_vec();
        for (at, b, op) in edits {
            let at = at % (bytes.len() + 1);
            match op {
                0 => bytes.insert(at, BYTES[b]),
                1 if at < bytes.len() => { bytes.remove(at); }
                _ if at < bytes.len() => bytes[at] = BYTES[b],
                _ => {}
            }
        }
        if let Ok(text) = std::str::from_utf8(&bytes) {
            agrees(text);
        }
    }
}
