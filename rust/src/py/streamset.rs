//! `StreamSet`: many streams addressed by slot, stepped from one flat buffer of ids with the
//! interpreter lock released.

use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, intern};

use super::detokenizer::PyDetokenizer;
use super::errors::invalid_window;
use super::ids::{flat_u32, type_name};
use super::stream::{TextCache, text};
use super::stream::{resumed, seeded};
use crate::stream::Stream;
use crate::streamset::{Plan, SetError, StreamSet};

/// Steps with at least this many entries or ids release the interpreter lock; below it, the
/// release and reacquisition would cost more than the lock holds other threads back (a step
/// costs 15 to 30 ns an entry; releasing and taking back the lock about 100 ns).
const DETACH_AT: usize = 256;

/// Streams of one detokenizer addressed by slot, stepped together. Owned by one thread at a time.
#[pyclass(module = "tokstream._core", name = "StreamSet")]
pub struct PyStreamSet {
    inner: StreamSet,
    cache: Arc<TextCache>,
    ids: Vec<u32>,
    counts: Vec<u32>,
    slots: Vec<u32>,
}

impl PyStreamSet {
    /// A stream from `add`'s or `reset`'s arguments: a prompt, or a wire window.
    fn new_stream(
        &self,
        prompt_ids: Option<&Bound<'_, PyAny>>,
        skip: bool,
        window: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Stream> {
        let det = self.inner.detokenizer();
        match (prompt_ids, window) {
            (Some(_), Some(_)) => Err(PyValueError::new_err("give prompt_ids or window, not both")),
            (_, Some(w)) => {
                let shape = "window must be (prev_tokens, prefix_offset, read_offset)";
                let t = w
                    .cast::<PyTuple>()
                    .map_err(|_| invalid_window(shape.to_owned()))?;
                if t.len() != 3 {
                    return Err(invalid_window(shape.to_owned()));
                }
                resumed(det, &t.get_item(0)?, &t.get_item(1)?, &t.get_item(2)?, skip)
            }
            (p, None) => seeded(det, p, skip),
        }
    }
}

#[pymethods]
impl PyStreamSet {
    #[new]
    fn py_new(detokenizer: &Bound<'_, PyDetokenizer>) -> PyStreamSet {
        let d = detokenizer.get();
        PyStreamSet {
            inner: StreamSet::new(&d.shared()),
            cache: Arc::clone(d.text_cache()),
            ids: Vec::new(),
            counts: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// Adds a stream seeded from `prompt_ids`, or continuing `window` (vLLM's
    /// `(prev_tokens, prefix_offset, read_offset)`); returns its slot, the lowest free one.
    #[pyo3(signature = (prompt_ids = None, skip_special_tokens = false, *, window = None))]
    fn add(
        &mut self,
        prompt_ids: Option<&Bound<'_, PyAny>>,
        skip_special_tokens: bool,
        window: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let stream = self.new_stream(prompt_ids, skip_special_tokens, window)?;
        self.inner.add(stream).map_err(set_error)
    }

    /// Replaces the stream in `slot` with a new one, as `add` makes it.
    #[pyo3(signature = (slot, prompt_ids = None, skip_special_tokens = false, *, window = None))]
    fn reset(
        &mut self,
        slot: &Bound<'_, PyAny>,
        prompt_ids: Option<&Bound<'_, PyAny>>,
        skip_special_tokens: bool,
        window: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let slot = slot_from(slot)?;
        if !self.inner.contains(slot) {
            return Err(set_error(SetError::NoStream { slot }));
        }
        let stream = self.new_stream(prompt_ids, skip_special_tokens, window)?;
        self.inner.reset(slot, stream).map_err(set_error)
    }

    /// Removes the stream in `slot`; a later `add` reuses the number.
    fn remove(&mut self, slot: &Bound<'_, PyAny>) -> PyResult<()> {
        let slot = slot_from(slot)?;
        self.inner.remove(slot).map(drop).map_err(set_error)
    }

    /// Steps streams, one delta each in entry order: entry `i` is slot `i` (or `slots[i]`) and
    /// takes one id (or `counts[i]`) of the flat `ids`. Every argument is checked first.
    #[pyo3(signature = (ids, counts = None, slots = None))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        counts: Option<&Bound<'py, PyAny>>,
        slots: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let PyStreamSet {
            inner,
            cache,
            ids: id_buf,
            counts: count_buf,
            slots: slot_buf,
        } = self;
        if let Some(s) = slots {
            flat_u32(s, slot_buf, "slots").map_err(|(_, e)| e)?;
        }
        if let Some(c) = counts {
            flat_u32(c, count_buf, "counts").map_err(|(_, e)| e)?;
        }
        let plan = Plan {
            slots: slots.map(|_| slot_buf.as_slice()),
            counts: counts.map(|_| count_buf.as_slice()),
        };
        if let Err((at, e)) = flat_u32(ids, id_buf, "ids") {
            return Err(match at.and_then(|k| slot_of_id(plan, k)) {
                Some(slot) => with_slot(py, e, slot),
                None => e,
            });
        }
        let ids: &[u32] = id_buf;
        let n = plan.entries(ids.len());
        if n.max(ids.len()) >= DETACH_AT {
            py.detach(|| inner.step(plan, ids)).map_err(set_error)?;
        } else {
            inner.step(plan, ids).map_err(set_error)?;
        }
        let empty = intern!(py, "");
        let inner = &*inner;
        let delta = |slot: usize| {
            let cached = inner.output_token(slot).and_then(|id| cache.token(py, id));
            cached.unwrap_or_else(|| {
                inner
                    .output(slot)
                    .map_or_else(|| empty.clone(), |s| text(py, s))
            })
        };
        if plan.slots.is_none() && plan.counts.is_none() {
            return PyList::new(
                py,
                (0..n).map(|i| {
                    cache.prefetch(py, ids, i);
                    delta(i)
                }),
            );
        }
        PyList::new(
            py,
            (0..n).map(|i| match plan.entry(i) {
                (slot, count) if count > 0 => delta(slot),
                _ => empty.clone(),
            }),
        )
    }

    /// Flushes what `slot` holds back (as `decode` renders it) and ends its stream.
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
        slot: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        let slot = slot_from(slot)?;
        let out = self.inner.finish(slot).map_err(set_error)?;
        Ok(text(py, out))
    }

    /// The window of `slot`'s stream: vLLM's `(prev_tokens, prefix_offset, read_offset)`.
    fn window<'py>(
        &mut self,
        py: Python<'py>,
        slot: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let slot = slot_from(slot)?;
        let (tokens, prefix, read) = self.inner.get(slot).map_err(set_error)?.window();
        PyTuple::new(
            py,
            [
                PyList::new(py, tokens)?.into_any(),
                prefix.into_bound_py_any(py)?,
                read.into_bound_py_any(py)?,
            ],
        )
    }

    /// Whether `slot`'s stream was finished.
    fn finished(&self, slot: &Bound<'_, PyAny>) -> PyResult<bool> {
        let slot = slot_from(slot)?;
        self.inner.is_finished(slot).map_err(set_error)
    }

    /// The slots that hold a stream, in order.
    #[getter]
    fn slots(&self) -> Vec<usize> {
        (0..self.inner.slot_end())
            .filter(|&s| self.inner.contains(s))
            .collect()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, slot: &Bound<'_, PyAny>) -> bool {
        slot_from(slot).is_ok_and(|s| self.inner.contains(s))
    }

    fn __repr__(&self) -> String {
        format!(
            "StreamSet(streams={}, slot_end={})",
            self.inner.len(),
            self.inner.slot_end()
        )
    }
}

/// A slot number argument: an int (anything with `__index__`); negative ones hold no stream.
fn slot_from(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    match obj.extract::<i64>() {
        Ok(v) => usize::try_from(v).map_err(|_| no_slot(&v.to_string())),
        Err(_) if obj.is_instance_of::<PyInt>() => Err(no_slot(&obj.to_string())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "a slot must be an int, not {}",
            type_name(obj)
        ))),
    }
}

#[cold]
fn no_slot(shown: &str) -> PyErr {
    PyIndexError::new_err(format!("slot {shown} holds no stream"))
}

/// The slot whose chunk holds flat id `k`.
fn slot_of_id(plan: Plan<'_>, k: usize) -> Option<usize> {
    let Some(counts) = plan.counts else {
        return Some(plan.entry(k).0).filter(|&s| s != usize::MAX);
    };
    let mut end = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        end += u64::from(c);
        if (k as u64) < end {
            return Some(plan.entry(i).0).filter(|&s| s != usize::MAX);
        }
    }
    None
}

/// A core set error as the exception a caller catches; slot errors carry `slot`.
#[cold]
fn set_error(e: SetError) -> PyErr {
    Python::attach(|py| {
        let slot = e.slot();
        let err = match &e {
            SetError::NoStream { .. } => PyIndexError::new_err(e.to_string()),
            SetError::Stream { error, .. } => {
                let base = PyErr::from(error.clone());
                retyped(py, &base, e.to_string()).unwrap_or(base)
            }
            SetError::Repeated { .. } | SetError::OtherDetokenizer | SetError::Shape { .. } => {
                PyValueError::new_err(e.to_string())
            }
        };
        if let Some(slot) = slot {
            // An attribute for code that handles the error; the message names the slot too.
            let _ = err.value(py).setattr(intern!(py, "slot"), slot);
        }
        err
    })
}

/// An error like `err` (same type) with `message`.
fn retyped(py: Python<'_>, err: &PyErr, message: String) -> Option<PyErr> {
    let value = err.get_type(py).call1((message,)).ok()?;
    Some(PyErr::from_value(value))
}

/// `err` (an argument error about an id of `slot`) with the slot named.
fn with_slot(py: Python<'_>, err: PyErr, slot: usize) -> PyErr {
    let message = format!("slot {slot}: {}", err.value(py));
    let err = retyped(py, &err, message).unwrap_or(err);
    let _ = err.value(py).setattr(intern!(py, "slot"), slot);
    err
}
