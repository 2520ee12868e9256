//! `Detokenizer` (frozen, shared by threads) and `DetokStream` (one owner).

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, intern};

use super::errors::invalid_window;
use crate::{Detokenizer, Error, SEED_IDS, Stream};

/// An id as the core takes it: negative is an error, beyond `u32` is "no such token".
fn id_from(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    match obj.extract::<i64>() {
        Ok(v) if v < 0 => Err(Error::NegativeTokenId { id: v }.into()),
        Ok(v) => Ok(u32::try_from(v).unwrap_or(u32::MAX)),
        Err(e) => {
            if !obj.is_instance_of::<PyInt>() {
                return Err(PyTypeError::new_err("token ids must be ints"));
            }
            if obj.lt(0)? {
                return Err(Error::NegativeTokenId { id: i64::MIN }.into());
            }
            drop(e);
            Ok(u32::MAX)
        }
    }
}

/// `ids`: one int or a sequence of ints, appended to `out`; every id is checked before any is
/// used.
fn push_ids(obj: &Bound<'_, PyAny>, out: &mut Vec<u32>) -> PyResult<()> {
    if obj.is_instance_of::<PyInt>() {
        out.push(id_from(obj)?);
    } else if let Ok(list) = obj.cast::<PyList>() {
        let n = list.len();
        if n == 1 {
            // One id a step is the common case; skip the iterator.
            out.push(id_from(&list.get_item(0)?)?);
            return Ok(());
        }
        out.reserve(n);
        for item in list.iter() {
            out.push(id_from(&item)?);
        }
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        for item in tuple.iter() {
            out.push(id_from(&item)?);
        }
    } else if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("token ids must be ints, not str"));
    } else {
        for item in obj.try_iter()? {
            out.push(id_from(&item?)?);
        }
    }
    Ok(())
}

/// [`push_ids`] into a cleared buffer.
fn ids_from(obj: &Bound<'_, PyAny>, out: &mut Vec<u32>) -> PyResult<()> {
    out.clear();
    push_ids(obj, out)
}

/// The last [`SEED_IDS`] ids of a prompt, read without touching the rest of it, and whether
/// they are surely the whole prompt (fewer than [`SEED_IDS`]: a client sending a suffix sends
/// that many).
fn prompt_tail(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<u32>, bool)> {
    let mut tail = Vec::with_capacity(SEED_IDS);
    let len = if let Ok(list) = obj.cast::<PyList>() {
        let len = list.len();
        for i in len.saturating_sub(SEED_IDS)..len {
            tail.push(id_from(&list.get_item(i)?)?);
        }
        len
    } else {
        let len = obj.len()?;
        for i in len.saturating_sub(SEED_IDS)..len {
            tail.push(id_from(&obj.get_item(i)?)?);
        }
        len
    };
    Ok((tail, len < SEED_IDS))
}

/// Python strings of every id's fast-path text ([`Detokenizer::fast_text`]), made on first use
/// and shared by all streams of a detokenizer: a step whose text is one token's hands out an
/// existing `str` instead of building one (about 20 ns of a 90 ns step).
struct TextCache {
    det: Arc<Detokenizer>,
    strings: Vec<PyOnceLock<Py<PyString>>>,
}

impl TextCache {
    fn new(det: &Arc<Detokenizer>) -> Arc<TextCache> {
        let strings = (0..det.vocab_size()).map(|_| PyOnceLock::new()).collect();
        Arc::new(TextCache {
            det: Arc::clone(det),
            strings,
        })
    }

    /// The text of `stream`'s last step, from the cache when it is one token's.
    #[inline]
    fn output<'py>(&self, py: Python<'py>, stream: &Stream) -> Bound<'py, PyString> {
        let cached = stream.output_token().and_then(|id| {
            let slot = self.strings.get(id as usize)?;
            let s = slot.get_or_init(py, || {
                PyString::new(py, self.det.fast_text(id).unwrap_or_default()).unbind()
            });
            Some(s.bind(py).clone())
        });
        cached.unwrap_or_else(|| text(py, stream.output()))
    }
}

fn text<'py>(py: Python<'py>, s: &str) -> Bound<'py, PyString> {
    if s.is_empty() {
        intern!(py, "").clone()
    } else {
        PyString::new(py, s)
    }
}

/// A tokenizer's detokenization tables and engine. Immutable; share one across threads.
#[pyclass(frozen, module = "tokstream._core", name = "Detokenizer")]
pub struct PyDetokenizer {
    inner: Arc<Detokenizer>,
    cache: Arc<TextCache>,
    configs: Configs,
}

/// The JSON configs found beside a loaded `tokenizer.json`.
#[derive(Default)]
struct Configs {
    tokenizer: Option<String>,
    generation: Option<String>,
}

impl PyDetokenizer {
    /// The shared core detokenizer.
    pub(crate) fn shared(&self) -> Arc<Detokenizer> {
        Arc::clone(&self.inner)
    }

    fn load(py: Python<'_>, json: String, configs: Configs) -> PyResult<Self> {
        let det = Arc::new(py.detach(move || Detokenizer::from_json(&json))?);
        Ok(PyDetokenizer {
            cache: TextCache::new(&det),
            inner: det,
            configs,
        })
    }
}

#[pymethods]
impl PyDetokenizer {
    /// Loads a `tokenizer.json`, or a directory holding one (and `tokenizer_config.json`,
    /// `generation_config.json`).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let read = |p: &std::path::Path| {
            std::fs::read_to_string(p).map_err(|e| Error::Load {
                reason: format!("{}: {e}", p.display()),
            })
        };
        let file = if path.is_dir() {
            path.join("tokenizer.json")
        } else {
            path
        };
        let beside = |name: &str| -> PyResult<Option<String>> {
            let p = file.with_file_name(name);
            Ok(if p.is_file() { Some(read(&p)?) } else { None })
        };
        let configs = Configs {
            tokenizer: beside("tokenizer_config.json")?,
            generation: beside("generation_config.json")?,
        };
        Self::load(py, read(&file)?, configs)
    }

    /// Loads a tokenizer by the name a user gives: a `tokenizer.json`, a model directory or a
    /// Hugging Face model id, resolved by `tokstream.config.resolve` (the hub cache only when
    /// `HF_HUB_OFFLINE=1`), then read as `from_file` does.
    #[staticmethod]
    #[pyo3(signature = (name, revision = None))]
    fn from_pretrained(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        revision: Option<&str>,
    ) -> PyResult<Self> {
        let config = py.import(intern!(py, "tokstream.config"))?;
        let found = config.call_method1(intern!(py, "resolve"), (name, revision))?;
        let file: PathBuf = found.getattr(intern!(py, "tokenizer"))?.extract()?;
        Self::from_file(py, file)
    }

    /// Loads `tokenizer.json` text.
    #[staticmethod]
    fn from_str(py: Python<'_>, json: String) -> PyResult<Self> {
        Self::load(py, json, Configs::default())
    }

    /// Loads the tables of a `tokenizers.Tokenizer`.
    #[staticmethod]
    fn from_tokenizer(py: Python<'_>, tokenizer: &Bound<'_, PyAny>) -> PyResult<Self> {
        let json: String = tokenizer.call_method0(intern!(py, "to_str"))?.extract()?;
        Self::load(py, json, Configs::default())
    }

    /// Number of id slots (largest id + 1); larger ids contribute nothing.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// The engine chosen at load: "bytelevel", "sentencepiece" or "windowed".
    #[getter]
    fn engine(&self) -> &'static str {
        self.inner.engine().as_str()
    }

    /// The text of `tokenizer_config.json` beside the loaded file, if there was one.
    #[getter]
    fn tokenizer_config(&self) -> Option<&str> {
        self.configs.tokenizer.as_deref()
    }

    /// The text of `generation_config.json` beside the loaded file, if there was one.
    #[getter]
    fn generation_config(&self) -> Option<&str> {
        self.configs.generation.as_deref()
    }

    /// The id of a token string, if it is in the vocabulary.
    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The whole text of `ids`, as `tokenizers`' `decode` gives it.
    #[pyo3(signature = (ids, skip_special_tokens = false))]
    fn decode(&self, ids: &Bound<'_, PyAny>, skip_special_tokens: bool) -> PyResult<String> {
        let mut buf = Vec::new();
        ids_from(ids, &mut buf)?;
        Ok(self.inner.decode(&buf, skip_special_tokens)?)
    }

    /// Token strings as vLLM carries them; skipped specials are left out, unknown ids give "".
    #[pyo3(signature = (ids, skip_special_tokens = false))]
    fn convert_ids_to_tokens(
        &self,
        ids: &Bound<'_, PyAny>,
        skip_special_tokens: bool,
    ) -> PyResult<Vec<String>> {
        let mut buf = Vec::new();
        ids_from(ids, &mut buf)?;
        let tokens = self.inner.convert_ids_to_tokens(&buf, skip_special_tokens);
        Ok(tokens.into_iter().map(str::to_owned).collect())
    }

    /// The logprob string of `token_id` as vLLM reports it, corrected with up to 4 preceding
    /// sampled ids (`context`) when it is part of a split character; `""` when it cannot be.
    #[pyo3(signature = (token_id, context = None))]
    fn logprob_token(
        &self,
        token_id: &Bound<'_, PyAny>,
        context: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let id = id_from(token_id)?;
        let mut ctx = Vec::new();
        if let Some(c) = context {
            ids_from(c, &mut ctx)?;
        }
        Ok(self.inner.logprob_token(id, &ctx)?)
    }

    /// A new stream, seeded from the last few `prompt_ids`.
    #[pyo3(signature = (prompt_ids = None, skip_special_tokens = false))]
    fn stream(
        &self,
        prompt_ids: Option<&Bound<'_, PyAny>>,
        skip_special_tokens: bool,
    ) -> PyResult<PyDetokStream> {
        let (tail, whole) = match prompt_ids {
            Some(p) if p.is_instance_of::<PyInt>() => (vec![id_from(p)?], true),
            Some(p) => prompt_tail(p)?,
            None => (Vec::new(), true),
        };
        let inner = if whole {
            self.inner.stream(&tail, skip_special_tokens)
        } else {
            self.inner.stream_from_suffix(&tail, skip_special_tokens)
        };
        Ok(PyDetokStream {
            inner,
            ids: Vec::new(),
            cache: Arc::clone(&self.cache),
        })
    }

    /// Continues a stream from vLLM's `(prev_tokens, prefix_offset, read_offset)`.
    /// The text of each historical chunk of an output (a replay buffer), in one call.
    #[pyo3(signature = (prompt_ids, output_ids, chunk_lens, skip_special_tokens = false))]
    fn replay_texts(
        &self,
        py: Python<'_>,
        prompt_ids: &Bound<'_, PyAny>,
        output_ids: &Bound<'_, PyAny>,
        chunk_lens: Vec<usize>,
        skip_special_tokens: bool,
    ) -> PyResult<Vec<String>> {
        let mut prompt = Vec::new();
        ids_from(prompt_ids, &mut prompt)?;
        let mut ids = Vec::new();
        ids_from(output_ids, &mut ids)?;
        let det = Arc::clone(&self.inner);
        Ok(py.detach(move || det.replay_texts(&prompt, &ids, &chunk_lens, skip_special_tokens))?)
    }

    #[pyo3(signature = (prev_tokens, prefix_offset, read_offset, skip_special_tokens = false))]
    fn resume(
        &self,
        prev_tokens: &Bound<'_, PyAny>,
        prefix_offset: &Bound<'_, PyAny>,
        read_offset: &Bound<'_, PyAny>,
        skip_special_tokens: bool,
    ) -> PyResult<PyDetokStream> {
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
        if n > crate::MAX_WINDOW {
            return Err(Error::InvalidWindow {
                reason: format!(
                    "prev_tokens has {n} entries, at most {} are allowed",
                    crate::MAX_WINDOW
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
            tokens.push(s.to_str()?.to_owned());
        }
        Ok(PyDetokStream {
            inner: self.inner.resume(&tokens, p, r, skip_special_tokens)?,
            ids: Vec::new(),
            cache: Arc::clone(&self.cache),
        })
    }

    /// Steps many streams at once, one chunk of ids each, without holding the interpreter lock.
    /// Every argument is checked before any stream changes.
    fn step_batch<'py>(
        &self,
        py: Python<'py>,
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
            if !Arc::ptr_eq(r.inner.detokenizer(), &self.inner) {
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
        PyList::new(py, refs.iter().map(|r| self.cache.output(py, &r.inner)))
    }

    fn __repr__(&self) -> String {
        format!(
            "Detokenizer(engine={:?}, vocab_size={})",
            self.inner.engine().as_str(),
            self.inner.vocab_size()
        )
    }
}

/// The incremental detokenizer of one sequence. Owned by one thread at a time.
#[pyclass(module = "tokstream._core", name = "DetokStream")]
pub struct PyDetokStream {
    inner: Stream,
    ids: Vec<u32>,
    cache: Arc<TextCache>,
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
