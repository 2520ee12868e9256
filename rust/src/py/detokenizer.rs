//! `Detokenizer`: frozen, shared by threads.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::ids::{id_from, ids_from};
use super::stream::{PyDetokStream, TextCache, resumed, seeded};
use crate::detokenizer::Detokenizer;
use crate::error::Error;
use crate::stream::Stream;

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

    /// The Python strings of the detokenizer's one-token texts, shared by its streams.
    pub(super) fn text_cache(&self) -> &Arc<TextCache> {
        &self.cache
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
        let inner = seeded(&self.inner, prompt_ids, skip_special_tokens)?;
        Ok(PyDetokStream::new(inner, &self.cache))
    }

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
        Ok(py.detach(move || {
            Stream::replay_texts(&det, &prompt, &ids, &chunk_lens, skip_special_tokens)
        })?)
    }

    /// Continues a stream from vLLM's `(prev_tokens, prefix_offset, read_offset)`.
    #[pyo3(signature = (prev_tokens, prefix_offset, read_offset, skip_special_tokens = false))]
    fn resume(
        &self,
        prev_tokens: &Bound<'_, PyAny>,
        prefix_offset: &Bound<'_, PyAny>,
        read_offset: &Bound<'_, PyAny>,
        skip_special_tokens: bool,
    ) -> PyResult<PyDetokStream> {
        let inner = resumed(
            &self.inner,
            prev_tokens,
            prefix_offset,
            read_offset,
            skip_special_tokens,
        )?;
        Ok(PyDetokStream::new(inner, &self.cache))
    }

    /// Steps many streams at once, one chunk of ids each, without holding the interpreter lock.
    /// Every argument is checked before any stream changes.
    fn step_batch<'py>(
        &self,
        py: Python<'py>,
        streams: &Bound<'py, PyAny>,
        chunks: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        super::stream::step_batch(py, &self.inner, streams, chunks)
    }

    fn __repr__(&self) -> String {
        format!(
            "Detokenizer(engine={:?}, vocab_size={})",
            self.inner.engine().as_str(),
            self.inner.vocab_size()
        )
    }
}
