//! The derenderer binding: one call per HTTP body, the interpreter lock released for big ones.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use super::detokenizer::PyDetokenizer;
use super::parser::PyParser;
use crate::parse::{ChatParser, select_parser};
use crate::wire::{Derenderer, PARSER_STATES, Reply, replays_by_name};

/// Bodies at least this long are derendered without the interpreter lock, so other threads (an
/// event loop) run meanwhile; small ones are faster with it held.
const DETACH_BYTES: usize = 16 * 1024;

/// The derender HTTP contract over JSON bodies (see `tokstream.Derenderer`).
#[pyclass(frozen, module = "tokstream._core", name = "Derenderer")]
pub struct PyDerenderer {
    inner: Derenderer,
    /// A Python parser is on: derenders run attached to the interpreter.
    #[cfg_attr(not(feature = "front"), allow(dead_code))]
    user: bool,
}

impl PyDerenderer {
    /// The core derenderer (the HTTP front serves it).
    #[cfg_attr(not(feature = "front"), allow(dead_code))]
    pub(crate) fn wire(&self) -> &Derenderer {
        &self.inner
    }

    /// Whether a Python parser is on.
    #[cfg_attr(not(feature = "front"), allow(dead_code))]
    pub(crate) fn has_user_parser(&self) -> bool {
        self.user
    }

    fn reply(&self, py: Python<'_>, path: &str, body: &[u8]) -> Reply {
        if body.len() >= DETACH_BYTES {
            py.detach(|| self.inner.handle_json(path, body))
        } else {
            self.inner.handle_json(path, body)
        }
    }
}

#[pymethods]
impl PyDerenderer {
    #[new]
    #[pyo3(signature = (
        detokenizer,
        served_model_name,
        eos_token_ids = Vec::new(),
        max_model_len = None,
        reasoning_parser = None,
        tool_parser = None,
        parser_state = "resumable",
        user_parser = None,
        response_template = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        detokenizer: &PyDetokenizer,
        served_model_name: String,
        eos_token_ids: Vec<u32>,
        max_model_len: Option<usize>,
        reasoning_parser: Option<&str>,
        tool_parser: Option<&str>,
        parser_state: &str,
        user_parser: Option<Py<PyAny>>,
        response_template: Option<&str>,
    ) -> PyResult<Self> {
        let replay = replays_by_name(parser_state).map_err(PyValueError::new_err)?;
        let det = detokenizer.shared();
        let user = user_parser.is_some();
        let parser: Option<Arc<dyn ChatParser>> = match user_parser {
            Some(adapter) => Some(Arc::new(PyParser::new(adapter))),
            None => select_parser(&det, reasoning_parser, tool_parser, response_template)
                .map_err(PyValueError::new_err)?,
        };
        Ok(PyDerenderer {
            inner: Derenderer::new(det, served_model_name, eos_token_ids, max_model_len)
                .with_parser(parser, replay),
            user,
        })
    }

    /// The built-in reasoning parser's name, if one is on.
    #[getter]
    fn reasoning_parser(&self) -> Option<&'static str> {
        self.inner.parser().and_then(|p| p.reasoning_name())
    }

    /// The built-in tool parser's name, if one is on.
    #[getter]
    fn tool_parser(&self) -> Option<&'static str> {
        self.inner.parser().and_then(|p| p.tool_name())
    }

    /// `"replay"` or `"resumable"`.
    #[getter]
    fn parser_state(&self) -> &'static str {
        PARSER_STATES[usize::from(self.inner.replays())]
    }

    /// The model name responses carry when a request names none.
    #[getter]
    fn served_model_name(&self) -> &str {
        self.inner.served_model_name()
    }

    /// The ids whose ending of a choice is not detokenized.
    #[getter]
    fn eos_token_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.eos_token_ids())
    }

    /// The bound on token lists in a body, if any.
    #[getter]
    fn max_model_len(&self) -> Option<usize> {
        self.inner.max_model_len()
    }

    /// Answers one `POST` body to `path`: `(status, JSON body)`. Never raises for bad input.
    fn handle_json<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        body: &[u8],
    ) -> (u16, Bound<'py, PyBytes>) {
        let reply = self.reply(py, path, body);
        (reply.status, PyBytes::new(py, &reply.body))
    }

    /// `handle_json` with figures for metrics: `(status, body, tokens, state_bytes)`.
    fn handle_json_stats<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        body: &[u8],
    ) -> (u16, Bound<'py, PyBytes>, u64, u64) {
        let reply = self.reply(py, path, body);
        (
            reply.status,
            PyBytes::new(py, &reply.body),
            reply.tokens,
            reply.state_bytes,
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "Derenderer(served_model_name={:?}, eos_token_ids={:?}, max_model_len={:?})",
            self.inner.served_model_name(),
            self.inner.eos_token_ids(),
            self.inner.max_model_len()
        )
    }
}
