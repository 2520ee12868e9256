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
