//! `DetokStream`: one sequence's stream, owned by one thread at a time, and stepping many at
//! once with the interpreter lock released.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, intern};

use super::errors::invalid_window;
use super::ids::{id_from, ids_from, prompt_tail, push_ids};
use crate::detokenizer::Detokenizer;
use crate::error::Error;
use crate::stream::Stream;
use crate::streamset::AHEAD;
use crate::vocab::MAX_WINDOW;

/// Python strings of every id's fast-path text ([`Detokenizer::fast_text`]), made on first use
/// and shared by all streams of a detokenizer: a step whose text is one token's hands out an
/// existing `str` instead of building one (about 20 ns of a 90 ns step).
pub(super) struct TextCache {
    det: Arc<Detokenizer>,
    strings: Vec<PyOnceLock<Py<PyString>>>,
}

impl TextCache {
    pub(super) fn new(det: &Arc<Detokenizer>) -> Arc<TextCache> {
        let strings = (0..det.vocab_size()).map(|_| PyOnceLock::new()).collect();
        Arc::new(TextCache {
            det: Arc::clone(det),
            strings,
        })
    }

    /// The text of `stream`'s last step, from the cache when it is one token's.
    #[inline(always)]
    pub(super) fn output<'py>(&self, py: Python<'py>, stream: &Stream) -> Bound<'py, PyString> {
        let cached = stream.output_token().and_then(|id| self.token(py, id));
        cached.unwrap_or_else(|| text(py, stream.output()))
    }

    /// The string of `id`'s fast-path text; `None` for an id outside the vocabulary.
    #[inline(always)]
    pub(super) fn token<'py>(&self, py: Python<'py>, id: u32) -> Option<Bound<'py, PyString>> {
        let slot = self.strings.get(id as usize)?;
        let s = slot.get_or_init(py, || {
            PyString::new(py, self.det.fast_text(id).unwrap_or_default()).unbind()
        });
        Some(s.bind(py).clone())
    }

    /// Brings in what [`TextCache::output`] will read for the entries ahead of `at` of a dense
    /// step, taking each entry's id for its output token (as it is on the fast path; for the
    /// others this is only a wasted hint): the cache entry of the id `2 * AHEAD` on, and the
    /// string of the one `AHEAD` on (its entry was asked for `AHEAD` entries ago). The ids are
    /// one flat array, so looking ahead reads no stream.
    #[inline(always)]
    pub(super) fn prefetch(&self, py: Python<'_>, ids: &[u32], at: usize) {
        let slot = |k: usize| self.strings.get(*ids.get(k)? as usize);
        if let Some(far) = slot(at + 2 * AHEAD) {
            crate::hint::prefetch(far);
        }
        if let Some(s) = slot(at + AHEAD).and_then(|near| near.get(py)) {
            crate::hint::prefetch(s.as_ptr());
        }
    }
}

pub(super) fn text<'py>(py: Python<'py>, s: &str) -> Bound<'py, PyString> {
    if s.is_empty() {
        intern!(py, "").clone()
    } else {
        PyString::new(py, s)
    }
}

/// The incremental detokenizer of one sequence. Owned by one thread at a time.
#[pyclass(module = "tokstream._core", name = "DetokStream")]
pub struct PyDetokStream {
    inner: Stream,
    ids: Vec<u32>,
    cache: Arc<TextCache>,
}

impl PyDetokStream {
    pub(super) fn new(inner: Stream, cache: &Arc<TextCache>) -> PyDetokStream {
        PyDetokStream {
            inner,
            ids: Vec::new(),
            cache: Arc::clone(cache),
        }
    }
}

#[pymethods]
impl PyDetokStream {
    /// Feeds one id or a sequence of ids; returns the text they complete ("" when none).
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        if ids.is_instance_of::<PyInt>() {
            let id = id_from(ids)?;
            self.inner.step(&[id])?;
        } else {
            let mut buf = std::mem::take(&mut self.ids);
            let result =
                ids_from(ids, &mut buf).and_then(|()| Ok(self.inner.step(&buf).map(drop)?));
            self.ids = buf;
            result?;
        }
        Ok(self.cache.output(py, &self.inner))
    }

    /// Flushes what is held back (as `decode` renders it) and ends the stream.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        Ok(text(py, self.inner.finish()?))
    }

    /// vLLM's `(prev_tokens, prefix_offset, read_offset)`, rebased so `prefix_offset` is 0.
    #[getter]
    fn window<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (tokens, prefix, read) = self.inner.window();
        let list = PyList::new(py, tokens)?;
        PyTuple::new(
            py,
            [
                list.into_any(),
                prefix.into_bound_py_any(py)?,
                read.into_bound_py_any(py)?,
            ],
        )
    }

    /// Whether `finish()` was called.
    #[getter]
    fn finished(&self) -> bool {
        self.inner.is_finished()
    }

    fn __repr__(&self) -> String {
        let (tokens, _, read) = self.inner.window();
        format!(
            "DetokStream(window={}, read_offset={read}, finished={})",
            tokens.len(),
            self.inner.is_finished()
        )
    }
}

/// Steps many streams at once, one chunk of ids each, without holding the interpreter lock.
/// Every argument is checked before any stream changes.
pub(super) fn step_batch<'py>(
    py: Python<'py>,
    det: &Arc<Detokenizer>,
    streams: &Bound<'py, PyAny>,
    chunks: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let mut refs: Vec<PyRefMut<'py, PyDetokStream>> =
        Vec::with_capacity(streams.len().unwrap_or(0));
    let mut take = |s: Bound<'py, PyAny>| -> PyResult<()> {
        let s = s
            .cast::<PyDetokStream>()
            .map_err(|_| PyTypeError::new_err("streams must be DetokStream objects"))?;
        let r = s
            .try_borrow_mut()
            .map_err(|_| PyValueError::new_err("a stream appears twice or is in use"))?;
        if !Arc::ptr_eq(r.inner.detokenizer(), det) {
            return Err(PyValueError::new_err(
                "a stream belongs to another Detokenizer",
            ));
        }
        if r.inner.is_finished() {
            return Err(Error::Finished.into());
        }
        refs.push(r);
        Ok(())
    };
    match streams.cast::<PyList>() {
        Ok(list) => list.iter().try_for_each(&mut take)?,
        Err(_) => streams.try_iter()?.try_for_each(|s| take(s?))?,
    }
    let mut ids: Vec<u32> = Vec::with_capacity(refs.len());
    let mut bounds: Vec<usize> = Vec::with_capacity(refs.len() + 1);
    bounds.push(0);
    let mut add = |c: Bound<'py, PyAny>| -> PyResult<()> {
        push_ids(&c, &mut ids)?;
        bounds.push(ids.len());
        Ok(())
    };
    match chunks.cast::<PyList>() {
        Ok(list) => list.iter().try_for_each(&mut add)?,
        Err(_) => chunks.try_iter()?.try_for_each(|c| add(c?))?,
    }
    if bounds.len() != refs.len() + 1 {
        return Err(PyValueError::new_err("streams and chunks differ in length"));
    }
    let mut inner: Vec<&mut Stream> = refs.iter_mut().map(|r| &mut r.inner).collect();
    py.detach(|| crate::step_batch(&mut inner, &ids, &bounds))?;
    PyList::new(py, refs.iter().map(|r| r.cache.output(py, &r.inner)))
}

/// A stream of `det` seeded from the last few `prompt_ids` (an int, a sequence, or none).
pub(super) fn seeded(
    det: &Arc<Detokenizer>,
    prompt_ids: Option<&Bound<'_, PyAny>>,
    skip_special_tokens: bool,
) -> PyResult<Stream> {
    let (tail, whole) = match prompt_ids {
        Some(p) if p.is_instance_of::<PyInt>() => (vec![id_from(p)?], true),
        Some(p) => prompt_tail(p)?,
        None => (Vec::new(), true),
    };
    Ok(if whole {
        Stream::new(det, &tail, skip_special_tokens)
    } else {
        Stream::from_suffix(det, &tail, skip_special_tokens)
    })
}

/// A stream of `det` continuing vLLM's window `(prev_tokens, prefix_offset, read_offset)`, with
/// the window's Python types checked.
pub(super) fn resumed(
    det: &Arc<Detokenizer>,
    prev_tokens: &Bound<'_, PyAny>,
    prefix_offset: &Bound<'_, PyAny>,
    read_offset: &Bound<'_, PyAny>,
    skip_special_tokens: bool,
) -> PyResult<Stream> {
    let offset = |o: &Bound<'_, PyAny>, name: &str| -> PyResult<usize> {
        match o.extract::<i64>() {
            Ok(v) if v >= 0 => Ok(usize::try_from(v).unwrap_or(usize::MAX)),
            _ => Err(invalid_window(format!("{name} must be a non-negative int"))),
        }
    };
    let (p, r) = (
        offset(prefix_offset, "prefix_offset")?,
        offset(read_offset, "read_offset")?,
    );
    if prev_tokens.is_instance_of::<PyString>() {
        return Err(invalid_window(
            "prev_tokens must be a list of str".to_owned(),
        ));
    }
    let n = prev_tokens
        .len()
        .map_err(|_| invalid_window("prev_tokens must be a list of str".to_owned()))?;
    if n > MAX_WINDOW {
        return Err(Error::InvalidWindow {
            reason: format!(
                "prev_tokens has {n} entries, at most {} are allowed",
                MAX_WINDOW
            ),
        }
        .into());
    }
    let mut tokens = Vec::with_capacity(n);
    for item in prev_tokens.try_iter()? {
        let item = item?;
        let s = item
            .cast::<PyString>()
            .map_err(|_| invalid_window("prev_tokens must be a list of str".to_owned()))?;
        let token = s.to_str().map_err(|_| {
            invalid_window(
                "prev_tokens entries must be valid Unicode (no lone surrogates)".to_owned(),
            )
        })?;
        tokens.push(token.to_owned());
    }
    Ok(Stream::resume(det, &tokens, p, r, skip_special_tokens)?)
}
