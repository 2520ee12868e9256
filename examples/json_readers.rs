//! The derender body's readers, timed side by side on the same bodies (`benches/derender/
//! json_readers.py` writes the bodies and reads what this prints).
//!
//! For each body file (a chat derender body for `MODEL`), per call:
//!
//! - `handle_json`: `Derenderer::handle_json`, the whole answer, with today's reader;
//! - `hand`: the hand reader alone (`wire/quick/`), into the body's types;
//! - `serde_json`: serde_json alone, borrowed, into the same types (the reader's fallback);
//! - `serde_json skip`, `sonic-rs skip`, `simd-json skip`: each library reading the body as
//!   `serde::de::IgnoredAny`, validating it and keeping nothing. Neither sonic-rs nor simd-json
//!   can read the body's types as they are (both refuse serde_json's `RawValue`, which several
//!   fields borrow), so their skip is a lower bound on what a typed read of theirs would cost.
//!   simd-json parses in place: its time includes copying the body into a buffer it may change.
//! - `sonic-rs typed`: sonic-rs into [`sonic::Body`], the derender body's types as sonic-rs can
//!   read them (the same fields and value types, sonic-rs's `LazyValue` where the body borrows
//!   serde_json's `RawValue`, and a raw value for the few unions the body's types read by hand).
//!   These types are this measurement's only: the body's types live in `wire/input.rs`.
//!
//! The readers take turns, `ROUNDS` rounds each of `MILLIS` milliseconds per reader; the figure
//! is the median of the rounds' nanoseconds per call. It prints one JSON object a body.
//!
//! ```text
//! json_readers TOKENIZER_JSON MODEL ROUNDS MILLIS BODY_FILE...
//! ```

use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::IgnoredAny;
use tokstream::{__readers, CHAT_PATH, Derenderer, Detokenizer};

type Reader<'a> = Box<dyn FnMut() -> bool + 'a>;

fn main() {
    if let Err(e) = run() {
        let _ = writeln!(std::io::stderr(), "json_readers: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [tokenizer, model, rounds, millis, files @ ..] = args.as_slice() else {
        return Err("usage: json_readers TOKENIZER_JSON MODEL ROUNDS MILLIS BODY_FILE...".into());
    };
    let rounds: usize = rounds.parse().map_err(|e| format!("ROUNDS: {e}"))?;
    let millis: u64 = millis.parse().map_err(|e| format!("MILLIS: {e}"))?;
    let json = std::fs::read_to_string(tokenizer).map_err(|e| format!("{tokenizer}: {e}"))?;
    let det = Detokenizer::from_json(&json).map_err(|e| e.to_string())?;
    let derenderer = Derenderer::new(Arc::new(det), model.as_str(), Vec::new(), None);
    let mut out = std::io::stdout().lock();
    for file in files {
        let body = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        let line = measure(&derenderer, &body, rounds, Duration::from_millis(millis));
        writeln!(out, "{}", line.replace("FILE", &json_string(file))).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn readers<'a>(
    derenderer: &'a Derenderer,
    body: &'a [u8],
    scratch: &'a mut Vec<u8>,
) -> Vec<(&'static str, Reader<'a>)> {
    vec![
        (
            "handle_json",
            Box::new(move || derenderer.handle_json(CHAT_PATH, body).status == 200),
        ),
        ("hand", Box::new(move || __readers::by_hand(body))),
        ("serde_json", Box::new(move || __readers::by_serde(body))),
        (
            "sonic-rs typed",
            Box::new(move || sonic_rs::from_slice::<sonic::Body<'_>>(body).is_ok()),
        ),
        (
            "serde_json skip",
            Box::new(move || serde_json::from_slice::<IgnoredAny>(body).is_ok()),
        ),
        (
            "sonic-rs skip",
            Box::new(move || sonic_rs::from_slice::<IgnoredAny>(body).is_ok()),
        ),
        (
            "simd-json skip",
            Box::new(move || {
                scratch.clear();
                scratch.extend_from_slice(body);
                simd_json::serde::from_slice::<IgnoredAny>(scratch).is_ok()
            }),
        ),
    ]
}

/// One body's line: every reader's median nanoseconds per call and whether it took the body.
fn measure(derenderer: &Derenderer, body: &[u8], rounds: usize, per: Duration) -> String {
    let mut scratch = Vec::with_capacity(body.len());
    let mut readers = readers(derenderer, body, &mut scratch);
    let took: Vec<bool> = readers.iter_mut().map(|(_, read)| read()).collect();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); readers.len()];
    for _ in 0..rounds.max(1) {
        for (k, (_, read)) in readers.iter_mut().enumerate() {
            times[k].push(per_call(read, per));
        }
    }
    let fields: Vec<String> = readers
        .iter()
        .zip(times.iter_mut().zip(&took))
        .map(|((name, _), (t, ok))| format!("\"{name}\":{{\"ns\":{:.1},\"took\":{ok}}}", median(t)))
        .collect();
    format!(
        "{{\"file\":FILE,\"bytes\":{},{}}}",
        body.len(),
        fields.join(",")
    )
}

/// Nanoseconds per call of `read`, run in batches for about `per`.
fn per_call(read: &mut Reader<'_>, per: Duration) -> f64 {
    let mut batch = 1u64;
    loop {
        let start = Instant::now();
        for _ in 0..batch {
            black_box(read());
        }
        let took = start.elapsed();
        if took >= per || batch >= 1 << 30 {
            return took.as_nanos() as f64 / batch as f64;
        }
        batch *= 2;
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into())
}

/// The derender body's types as sonic-rs reads them (see the module's notes). Their fields are
/// read only to be timed.
#[allow(dead_code)]
mod sonic {
    use std::borrow::Cow;

    use serde::Deserialize;
    use serde::de::IgnoredAny;
    use sonic_rs::LazyValue;
    use tokstream::ParseState;

    #[derive(Deserialize)]
    pub struct Body<'a> {
        #[serde(default)]
        pub stream: Option<bool>,
        #[serde(default, borrow)]
        pub model: Option<Cow<'a, str>>,
        #[serde(default, borrow)]
        pub generate_response: Option<Generate<'a>>,
        #[serde(default, borrow)]
        pub generate_responses: Option<Vec<Generate<'a>>>,
        #[serde(default, borrow)]
        pub generate_chunk: Option<Generate<'a>>,
        #[serde(default)]
        pub stream_state: Option<State>,
        #[serde(default, borrow)]
        pub prompt_tokens: Option<LazyValue<'a>>,
        #[serde(default, borrow)]
        pub prompt_token_ids: Option<LazyValue<'a>>,
        #[serde(default, borrow)]
        pub chat_request: Option<Request<'a>>,
        #[serde(default, borrow)]
        pub completion_request: Option<Request<'a>>,
    }

    #[derive(Deserialize)]
    pub struct Generate<'a> {
        #[serde(default, borrow)]
        pub request_id: Option<Cow<'a, str>>,
        #[serde(borrow)]
        pub choices: Vec<Choice<'a>>,
        #[serde(default, borrow)]
        pub usage: Option<LazyValue<'a>>,
        #[serde(default)]
        pub prompt_token_ids: Option<Vec<u32>>,
        #[serde(default, borrow)]
        pub prompt_logprobs: Option<LazyValue<'a>>,
        #[serde(default, borrow)]
        pub kv_transfer_params: Option<LazyValue<'a>>,
        #[serde(default, borrow)]
        pub output_mode: Option<Cow<'a, str>>,
        #[serde(default, borrow)]
        pub metrics: Option<LazyValue<'a>>,
    }

    #[derive(Deserialize)]
    pub struct Choice<'a> {
        pub index: u32,
        #[serde(default, borrow)]
        pub logprobs: Option<Logprobs<'a>>,
        #[serde(default, borrow)]
        pub finish_reason: Option<Cow<'a, str>>,
        #[serde(default, borrow)]
        pub stop_reason: Option<LazyValue<'a>>,
        #[serde(default)]
        pub token_ids: Option<Vec<u32>>,
    }

    #[derive(Deserialize)]
    pub struct Logprobs<'a> {
        #[serde(default, borrow)]
        pub content: Option<Vec<Entry<'a>>>,
    }

    #[derive(Deserialize)]
    pub struct Entry<'a> {
        #[serde(default)]
        pub token_id: Option<u32>,
        #[serde(default, borrow)]
        pub token: Option<Cow<'a, str>>,
        #[serde(default)]
        pub logprob: Option<f64>,
        #[serde(default)]
        pub bytes: Option<Vec<u8>>,
        #[serde(default, borrow)]
        pub top_logprobs: Option<Vec<Token<'a>>>,
    }

    #[derive(Deserialize)]
    pub struct Token<'a> {
        #[serde(default)]
        pub token_id: Option<u32>,
        #[serde(default, borrow)]
        pub token: Option<Cow<'a, str>>,
        #[serde(default)]
        pub logprob: Option<f64>,
        #[serde(default)]
        pub bytes: Option<Vec<u8>>,
    }

    #[derive(Deserialize, Default)]
    #[serde(default)]
    pub struct State {
        pub prev_tokens: Vec<String>,
        pub prefix_offset: u64,
        pub read_offset: u64,
        pub role_sent: bool,
        pub logprob_context_token_ids: Vec<u32>,
        pub logprob_text_offset: u64,
        pub output_token_ids: Vec<u32>,
        pub output_chunk_lens: Vec<u64>,
        pub tools_streamed: bool,
        pub last_tool_call_ids: Vec<String>,
        pub held_text: String,
        pub generated_tokens: u64,
        pub stopped: bool,
        pub parser: Option<ParseState>,
    }

    #[derive(Deserialize)]
    pub struct Request<'a> {
        #[serde(default, borrow)]
        pub stop: Option<LazyValue<'a>>,
        #[serde(default)]
        pub stop_token_ids: Option<Vec<u32>>,
        #[serde(default)]
        pub ignore_eos: Option<bool>,
        #[serde(default)]
        pub min_tokens: Option<u64>,
        #[serde(default)]
        pub include_stop_str_in_output: Option<bool>,
        #[serde(default)]
        pub skip_special_tokens: Option<bool>,
        #[serde(default)]
        pub return_token_ids: Option<bool>,
        #[serde(default, borrow)]
        pub logprobs: Option<LazyValue<'a>>,
        #[serde(default)]
        pub top_logprobs: Option<i64>,
        #[serde(default)]
        pub logprob_token_ids: Option<Vec<IgnoredAny>>,
        #[serde(default)]
        pub tools: Option<Vec<IgnoredAny>>,
        #[serde(default, borrow)]
        pub tool_choice: Option<LazyValue<'a>>,
        #[serde(default)]
        pub parallel_tool_calls: Option<bool>,
        #[serde(default)]
        pub include_reasoning: Option<bool>,
        #[serde(default, borrow)]
        pub chat_template_kwargs: Option<LazyValue<'a>>,
        #[serde(default, borrow)]
        pub reasoning_effort: Option<LazyValue<'a>>,
    }
}
