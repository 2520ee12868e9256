//! The reader against serde: it declines or reads what serde reads.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

/// The reader either declines or reads what serde reads.
fn agrees(text: &str) -> bool {
    let mut quick = super::Body::default();
    if super::body(text, &mut quick).is_none() {
        return false;
    }
    let mut serde = serde_json::from_str::<super::Body<'_>>(text)
        .unwrap_or_else(|e| panic!("serde refuses what the reader took ({e}): {text}"));
    crate::wire::input::take_request_text(&mut serde, text.as_bytes());
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

/// An object the reader reads field by field: where it sits in a body (`@`), the members it
/// needs besides the one under test, and a value for each field that is not the default.
struct Hand {
    name: &'static str,
    fields: fn() -> &'static [&'static str],
    at: &'static str,
    needs: &'static [(&'static str, &'static str)],
    samples: &'static [(&'static str, &'static str)],
    /// Fields whose values the reader hands back to serde by declining the body.
    declines: &'static [&'static str],
}

use crate::wire::fields;
use crate::wire::input::{
    Body, Choice, Generate, LogprobEntry, LogprobToken, Logprobs, Request, State,
};

const HANDS: &[Hand] = &[
    Hand {
        name: "Body",
        fields: fields::of::<Body<'static>>,
        at: "@",
        needs: &[],
        samples: &[
            ("stream", "true"),
            ("model", r#""m""#),
            ("generate_response", r#"{"choices":[]}"#),
            ("generate_responses", r#"[{"choices":[]}]"#),
            ("generate_chunk", r#"{"choices":[]}"#),
            ("stream_state", "{}"),
            ("prompt_tokens", "3"),
            ("prompt_token_ids", "[1,2]"),
            ("chat_request", "{}"),
            ("completion_request", "{}"),
        ],
        declines: &[],
    },
    Hand {
        name: "Generate",
        fields: fields::of::<Generate<'static>>,
        at: r#"{"generate_chunk":@}"#,
        needs: &[("choices", "[]")],
        samples: &[
            ("request_id", r#""r""#),
            ("choices", r#"[{"index":0}]"#),
            ("usage", r#"{"prompt_tokens":1}"#),
            ("prompt_token_ids", "[1]"),
            ("prompt_logprobs", r#"[null,{"5":{"logprob":-1.5}}]"#),
            ("kv_transfer_params", r#"{"a":1}"#),
            ("output_mode", r#""tokens""#),
            ("metrics", r#"{"time_to_first_token_ms":1.5}"#),
        ],
        declines: &["prompt_logprobs"],
    },
    Hand {
        name: "Choice",
        fields: fields::of::<Choice<'static>>,
        at: r#"{"generate_chunk":{"choices":[@]}}"#,
        needs: &[("index", "0")],
        samples: &[
            ("index", "2"),
            ("logprobs", r#"{"content":[]}"#),
            ("finish_reason", r#""stop""#),
            ("stop_reason", "7"),
            ("token_ids", "[1]"),
        ],
        declines: &[],
    },
    Hand {
        name: "Logprobs",
        fields: fields::of::<Logprobs<'static>>,
        at: r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":@}]}}"#,
        needs: &[],
        samples: &[("content", "[]")],
        declines: &[],
    },
    Hand {
        name: "LogprobEntry",
        fields: fields::of::<LogprobEntry<'static>>,
        at: r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[@]}}]}}"#,
        needs: &[],
        samples: &[
            ("token_id", "7"),
            ("token", r#""a""#),
            ("logprob", "-0.5"),
            ("bytes", "[97]"),
            ("top_logprobs", "[]"),
        ],
        declines: &[],
    },
    Hand {
        name: "LogprobToken",
        fields: fields::of::<LogprobToken<'static>>,
        at: r#"{"generate_chunk":{"choices":[{"index":0,"logprobs":{"content":[{"top_logprobs":[@]}]}}]}}"#,
        needs: &[],
        samples: &[
            ("token_id", "7"),
            ("token", r#""a""#),
            ("logprob", "-0.5"),
            ("bytes", "[97]"),
        ],
        declines: &[],
    },
    Hand {
        name: "State",
        fields: fields::of::<State>,
        at: r#"{"stream_state":@}"#,
        needs: &[],
        samples: &[
            ("prev_tokens", r#"["a"]"#),
            ("prefix_offset", "1"),
            ("read_offset", "2"),
            ("role_sent", "true"),
            ("logprob_context_token_ids", "[1]"),
            ("logprob_text_offset", "3"),
            ("output_token_ids", "[4]"),
            ("output_chunk_lens", "[1]"),
            ("tools_streamed", "true"),
            ("last_tool_call_ids", r#"["c"]"#),
            ("held_text", r#""h""#),
            ("generated_tokens", "5"),
            ("stopped", "true"),
            ("parser", r#"{"r":true,"h":"<"}"#),
        ],
        declines: &[],
    },
    Hand {
        name: "Request",
        fields: fields::of::<Request<'static>>,
        at: r#"{"chat_request":@}"#,
        needs: &[],
        samples: &[
            ("stop", r#""s""#),
            ("stop_token_ids", "[4]"),
            ("ignore_eos", "true"),
            ("min_tokens", "2"),
            ("include_stop_str_in_output", "true"),
            ("skip_special_tokens", "false"),
            ("return_token_ids", "true"),
            ("logprobs", "true"),
            ("top_logprobs", "2"),
            ("logprob_token_ids", "[1]"),
            ("tools", "[{}]"),
            ("tool_choice", r#""auto""#),
            ("parallel_tool_calls", "false"),
            ("include_reasoning", "false"),
            ("chat_template_kwargs", r#"{"enable_thinking":false}"#),
            ("reasoning_effort", r#""none""#),
        ],
        declines: &[],
    },
];

fn serde_debug(text: &str) -> String {
    let mut body = serde_json::from_str::<Body<'_>>(text).unwrap();
    crate::wire::input::take_request_text(&mut body, text.as_bytes());
    format!("{body:?}")
}

/// Every field serde declares for an object read by hand is read by the reader, so a field
/// added to a struct and forgotten in its reader fails here rather than reading as absent; and
/// no object has more fields than `Seen` has bits.
#[test]
fn every_declared_field_is_read_by_hand() {
    for hand in HANDS {
        let declared = (hand.fields)();
        assert!(!declared.is_empty(), "{}: no fields read", hand.name);
        assert!(
            declared.len() <= 32,
            "{}: more fields than Seen holds",
            hand.name
        );
        for (field, _) in hand.samples {
            assert!(
                declared.contains(field),
                "{}.{field}: not declared",
                hand.name
            );
        }
        let object = |field: Option<(&str, &str)>| {
            let mut members: Vec<String> = hand
                .needs
                .iter()
                .filter(|(k, _)| field.is_none_or(|(f, _)| f != *k))
                .map(|(k, v)| format!("\"{k}\":{v}"))
                .collect();
            if let Some((k, v)) = field {
                members.push(format!("\"{k}\":{v}"));
            }
            hand.at.replace('@', &format!("{{{}}}", members.join(",")))
        };
        let without = serde_debug(&object(None));
        for field in declared {
            let Some(&(_, value)) = hand.samples.iter().find(|(k, _)| k == field) else {
                panic!("{}.{field}: give it a sample value here", hand.name);
            };
            let text = object(Some((field, value)));
            assert_ne!(
                serde_debug(&text),
                without,
                "{}.{field}: the sample is the default",
                hand.name
            );
            let mut quick = Body::default();
            let took = super::body(&text, &mut quick).is_some();
            if hand.declines.contains(field) {
                assert!(!took, "{}.{field}: read by hand: {text}", hand.name);
            } else {
                assert!(agrees(&text), "{}.{field}: declined: {text}", hand.name);
            }
        }
    }
}

/// The chat request's text is taken in the body's one read, as written.
#[test]
fn the_chat_request_text_is_taken_as_written() {
    let mut quick = super::Body::default();
    super::body(CHUNK, &mut quick).unwrap();
    let at = CHUNK.find(r#""chat_request":"#).unwrap() + r#""chat_request":"#.len();
    let raw = quick.chat_request.as_ref().and_then(|r| r.raw).unwrap();
    assert_eq!(raw, &CHUNK[at..CHUNK.len() - 1]);
    assert!(raw.starts_with(r#"{"messages":"#) && raw.ends_with('}'));
}
