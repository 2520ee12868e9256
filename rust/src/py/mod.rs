//! Python bindings (feature `python`): argument conversion, interpreter-lock policy and error
//! mapping. No semantics live here; the constants the Python layer needs are the core's,
//! exported as they are.

mod derender;
mod detokenizer;
mod errors;
#[cfg(feature = "front")]
mod front;
mod ids;
mod parser;
mod stream;
mod streamset;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _core {
    use pyo3::prelude::*;
    use pyo3::types::{PyBytes, PyTuple};

    #[pymodule_export]
    use super::derender::PyDerenderer;
    #[pymodule_export]
    use super::detokenizer::PyDetokenizer;
    #[cfg(feature = "front")]
    #[pymodule_export]
    use super::front::PyFront;
    #[pymodule_export]
    use super::stream::PyDetokStream;
    #[pymodule_export]
    use super::streamset::PyStreamSet;

    #[allow(non_upper_case_globals)]
    #[pymodule_export]
    const __version__: &str = env!("CARGO_PKG_VERSION");

    #[pymodule_export]
    const CHAT_PATH: &str = crate::wire::CHAT_PATH;
    #[pymodule_export]
    const COMPLETION_PATH: &str = crate::wire::COMPLETION_PATH;
    #[pymodule_export]
    const MAX_WINDOW: usize = crate::vocab::MAX_WINDOW;
    #[pymodule_export]
    const LOGPROB_CONTEXT: usize = crate::logprobs::CONTEXT;
    #[pymodule_export]
    const LOGPROB_FLOOR: f64 = crate::wire::LOGPROB_FLOOR;
    #[pymodule_export]
    const MAX_CHOICES: usize = crate::wire::MAX_CHOICES;
    #[pymodule_export]
    const MAX_TOP_LOGPROBS: usize = crate::wire::MAX_TOP_LOGPROBS;

    // The HTTP server's defaults (`crate::limits`).
    #[pymodule_export]
    const DEFAULT_HEADER_TIMEOUT: f64 = crate::limits::HEADER_TIMEOUT.as_secs_f64();
    #[pymodule_export]
    const DEFAULT_BODY_TIMEOUT: f64 = crate::limits::BODY_TIMEOUT.as_secs_f64();
    #[pymodule_export]
    const DEFAULT_KEEP_ALIVE_TIMEOUT: f64 = crate::limits::KEEP_ALIVE_TIMEOUT.as_secs_f64();
    #[pymodule_export]
    const DEFAULT_SEND_TIMEOUT: f64 = crate::limits::SEND_TIMEOUT.as_secs_f64();
    #[pymodule_export]
    const DEFAULT_MAX_HEADER_BYTES: usize = crate::limits::MAX_HEADER_BYTES;
    #[pymodule_export]
    const DEFAULT_MAX_BODY_BYTES: usize = crate::limits::MAX_BODY_BYTES;
    #[pymodule_export]
    const DEFAULT_MAX_CONNECTIONS: usize = crate::limits::MAX_CONNECTIONS;
    #[pymodule_export]
    const DEFAULT_OFFLOAD_BYTES: usize = crate::limits::OFFLOAD_BYTES;
    #[pymodule_export]
    const LINGER: f64 = crate::limits::LINGER.as_secs_f64();
    #[pymodule_export]
    const LINGER_BYTES: usize = crate::limits::LINGER_BYTES;

    /// The OpenAI error object of a status, as the derender endpoints answer it.
    ///
    /// Args:
    ///     status: The HTTP status (its error type name follows from it).
    ///     message: What is wrong.
    ///     param: The field it is about, if one.
    #[pyfunction]
    #[pyo3(signature = (status, message, param = None))]
    fn error_body<'py>(
        py: Python<'py>,
        status: u16,
        message: &str,
        param: Option<&str>,
    ) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &crate::wire::error_body(status, message, param))
    }

    /// The OpenAI error type name of an HTTP status (``"BadRequestError"`` for 400).
    ///
    /// Args:
    ///     status: The HTTP status.
    #[pyfunction]
    fn error_type(status: u16) -> &'static str {
        crate::wire::error_type(status)
    }

    /// A built-in response template's JSON text, or ``None`` for a name that is not one.
    ///
    /// Args:
    ///     name: One of ``TEMPLATES``.
    #[pyfunction]
    fn builtin_template(name: &str) -> Option<&'static str> {
        crate::parse::builtin_json(name)
    }

    /// Why vLLM's parser name ``name`` is not served here, or ``None`` for a name that is not
    /// refused (one that is served, or an unknown one).
    ///
    /// Args:
    ///     kind: ``"tool"`` or ``"reasoning"``.
    ///     name: A parser name.
    ///
    /// Raises:
    ///     ValueError: ``kind`` is neither.
    #[pyfunction]
    fn parser_refusal(kind: &str, name: &str) -> PyResult<Option<String>> {
        use crate::parse::Kind;
        let kind = match kind {
            "tool" => Kind::Tool,
            "reasoning" => Kind::Reasoning,
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "kind must be \"tool\" or \"reasoning\", not {kind:?}"
                )));
            }
        };
        Ok(crate::parse::parser_refusal(kind, name))
    }

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        let py = m.py();
        m.add(
            "REASONING_PARSERS",
            PyTuple::new(py, crate::parse::REASONING_PARSERS)?,
        )?;
        m.add(
            "TOOL_PARSERS",
            PyTuple::new(py, crate::parse::TOOL_PARSERS)?,
        )?;
        m.add("TEMPLATES", PyTuple::new(py, crate::parse::TEMPLATES)?)?;
        use crate::parse::{Kind, accepted_names};
        m.add(
            "REASONING_NAMES",
            PyTuple::new(py, accepted_names(Kind::Reasoning))?,
        )?;
        m.add("TOOL_NAMES", PyTuple::new(py, accepted_names(Kind::Tool))?)?;
        m.add("AUTO_NAMES", PyTuple::new(py, crate::parse::auto_names())?)?;
        m.add(
            "PARSER_STATES",
            PyTuple::new(py, crate::wire::PARSER_STATES)?,
        )?;
        // Both from the state's one declaration (`wire::state_keys`).
        let keys = crate::wire::state_keys();
        let vllm = &keys[..crate::wire::VLLM_STATE_KEY_COUNT.min(keys.len())];
        m.add("VLLM_STATE_KEYS", PyTuple::new(py, vllm)?)?;
        m.add("STATE_KEYS", PyTuple::new(py, keys)?)?;
        Ok(())
    }
}
