//! One loop thread's counters, and their snapshot in the JSON shape of
//! `tokstream.metrics.Metrics.snapshot()`, so the host renders every thread's sum in one place.

use std::fmt::Write;

/// A histogram: per-bucket counts (not cumulative) over fixed upper bounds, sum and count.
#[derive(Debug, Clone)]
pub(crate) struct Histogram {
    counts: Vec<u64>,
    total: f64,
    count: u64,
}

impl Histogram {
    fn new(bounds: usize) -> Histogram {
        Histogram {
            counts: vec![0; bounds + 1],
            total: 0.0,
            count: 0,
        }
    }

    fn observe(&mut self, bounds: &[f64], value: f64) {
        // The first bucket whose bound is at least the value (Python's `bisect_left`).
        let at = bounds.partition_point(|&b| b < value);
        if let Some(n) = self.counts.get_mut(at) {
            *n += 1;
        }
        self.total += value;
        self.count += 1;
    }

    fn write(&self, out: &mut String) {
        out.push_str("{\"counts\":[");
        for (i, n) in self.counts.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{n}");
        }
        let total = if self.total.is_finite() {
            self.total
        } else {
            0.0
        };
        let _ = write!(out, "],\"total\":{total:?},\"count\":{}}}", self.count);
    }
}

/// The histogram bounds, given by the host (the same as its own metrics').
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    /// Seconds, for request and chunk durations.
    pub latency: Vec<f64>,
    /// Bytes, for the returned stream state.
    pub bytes: Vec<f64>,
}

/// The endpoints requests are counted under.
pub(crate) const ENDPOINTS: [&str; 6] = [
    "chat",
    "completions",
    "health",
    "models",
    "metrics",
    "other",
];

/// One thread's counters.
#[derive(Debug, Clone)]
pub(crate) struct Metrics {
    requests: Vec<(usize, u16, u64)>,
    errors: Vec<(&'static str, u64)>,
    tokens: u64,
    request_seconds: Vec<Option<Histogram>>,
    chunk_seconds: Histogram,
    state_bytes: Histogram,
}

impl Metrics {
    pub(crate) fn new(bounds: &Bounds) -> Metrics {
        Metrics {
            requests: Vec::new(),
            errors: Vec::new(),
            tokens: 0,
            request_seconds: vec![None; ENDPOINTS.len()],
            chunk_seconds: Histogram::new(bounds.latency.len()),
            state_bytes: Histogram::new(bounds.bytes.len()),
        }
    }

    /// One answered request of `endpoint` (an index into [`ENDPOINTS`]).
    pub(crate) fn record(&mut self, bounds: &Bounds, endpoint: usize, status: u16, seconds: f64) {
        match self
            .requests
            .iter_mut()
            .find(|(e, s, _)| *e == endpoint && *s == status)
        {
            Some(entry) => entry.2 += 1,
            None => self.requests.push((endpoint, status, 1)),
        }
        if let Some(slot) = self.request_seconds.get_mut(endpoint) {
            slot.get_or_insert_with(|| Histogram::new(bounds.latency.len()))
                .observe(&bounds.latency, seconds);
        }
    }

    /// One refusal, by reason.
    pub(crate) fn error(&mut self, reason: &'static str) {
        match self.errors.iter_mut().find(|(r, _)| *r == reason) {
            Some(entry) => entry.1 += 1,
            None => self.errors.push((reason, 1)),
        }
    }

    /// A derendered answer: its tokens, and for a stream chunk its time and state size.
    pub(crate) fn derendered(&mut self, bounds: &Bounds, tokens: u64, state: u64, seconds: f64) {
        self.tokens += tokens;
        if state > 0 {
            self.chunk_seconds.observe(&bounds.latency, seconds);
            self.state_bytes.observe(&bounds.bytes, state as f64);
        }
    }

    /// The snapshot, as JSON.
    pub(crate) fn write(&self, out: &mut String) {
        out.push_str("{\"requests\":[");
        for (i, (e, s, n)) in self.requests.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "[\"{}\",{s},{n}]", ENDPOINTS[*e]);
        }
        out.push_str("],\"errors\":{");
        for (i, (r, n)) in self.errors.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "\"{r}\":{n}");
        }
        let _ = write!(out, "}},\"tokens\":{},\"request_seconds\":{{", self.tokens);
        let mut first = true;
        for (e, h) in self.request_seconds.iter().enumerate() {
            if let Some(h) = h {
                if !first {
                    out.push(',');
                }
                first = false;
                let _ = write!(out, "\"{}\":", ENDPOINTS[e]);
                h.write(out);
            }
        }
        out.push_str("},\"chunk_seconds\":");
        self.chunk_seconds.write(out);
        out.push_str(",\"state_bytes\":");
        self.state_bytes.write(out);
        out.push('}');
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_is_json_with_every_count() {
        let bounds = Bounds {
            latency: vec![0.001, 0.01],
            bytes: vec![100.0],
        };
        let mut m = Metrics::new(&bounds);
        m.record(&bounds, 0, 200, 0.001);
        m.record(&bounds, 0, 200, 0.5);
        m.record(&bounds, 5, 404, 0.0);
        m.error("not_found");
        m.derendered(&bounds, 3, 150, 0.002);
        let mut out = String::new();
        m.write(&mut out);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v["requests"],
            serde_json::json!([["chat", 200, 2], ["other", 404, 1]])
        );
        assert_eq!(
            v["request_seconds"]["chat"]["counts"],
            serde_json::json!([1, 0, 1])
        );
        assert_eq!(v["errors"]["not_found"], 1);
        assert_eq!(v["tokens"], 3);
        assert_eq!(v["state_bytes"]["counts"], serde_json::json!([0, 1]));
        assert_eq!(v["chunk_seconds"]["count"], 1);
    }
}
