//! A Python user parser as a core [`ChatParser`]: the core drives it like the built-in ones,
//! calling the Python adapter (`tokstream.parsers.UserParser`) under the interpreter lock at the
//! start of a choice and at the end of each chunk.

use pyo3::prelude::*;

use crate::parse::{ChatParser, Context, Delta, ParseError, ParseState, Session};

/// `tokstream.parsers.UserParser`: `start(request_json, prompt_ids, whole)` gives a session or
/// the message of a request it cannot take; a session's `chunk(text, ids, last)` gives
/// `(content, reasoning, [(index, name, arguments)])`.
#[derive(Debug)]
pub(crate) struct PyParser {
    adapter: Py<PyAny>,
}

impl PyParser {
    pub(crate) fn new(adapter: Py<PyAny>) -> PyParser {
        PyParser { adapter }
    }
}

/// An exception raised by the user's code is the parser's failure.
fn failed(py: Python<'_>, e: &PyErr) -> ParseError {
    let kind = e
        .get_type(py)
        .name()
        .map_or_else(|_| "Exception".to_owned(), |n| n.to_string());
    ParseError::Parser {
        message: format!("the parser raised {kind}: {}", e.value(py)),
    }
}

impl ChatParser for PyParser {
    fn start<'s>(&'s self, cx: &Context<'_>) -> Result<Box<dyn Session + 's>, ParseError> {
        Python::attach(|py| {
            let args = (cx.request.unwrap_or("null"), cx.prompt.to_vec(), cx.whole);
            let answer = self
                .adapter
                .bind(py)
                .call_method1("start", args)
                .map_err(|e| failed(py, &e))?;
            if let Ok(message) = answer.extract::<String>() {
                return Err(ParseError::Request {
                    message,
                    param: Some("chat_request".to_owned()),
                });
            }
            Ok(Box::new(PySession {
                session: answer.unbind(),
                text: String::new(),
            }) as Box<dyn Session + 's>)
        })
    }

    fn needs_request(&self) -> bool {
        true
    }
}

/// One choice's user parser: text gathered per chunk, handed over when the chunk ends.
struct PySession {
    session: Py<PyAny>,
    text: String,
}

type ChunkAnswer = (
    Option<String>,
    Option<String>,
    Vec<(u32, Option<String>, String)>,
);

impl Session for PySession {
    fn feed(&mut self, text: &str, _id: Option<u32>, _out: &mut Delta) {
        self.text.push_str(text);
    }

    fn end_chunk(&mut self, ids: &[u32], last: bool, out: &mut Delta) -> Result<(), ParseError> {
        let text = std::mem::take(&mut self.text);
        let (content, reasoning, calls) = Python::attach(|py| {
            let session = self.session.bind(py);
            session
                .call_method1("chunk", (text, ids.to_vec(), last))
                .and_then(|a| a.extract::<ChunkAnswer>())
                .map_err(|e| failed(py, &e))
        })?;
        out.content.push_str(content.as_deref().unwrap_or_default());
        out.reasoning
            .push_str(reasoning.as_deref().unwrap_or_default());
        for (index, name, arguments) in calls {
            if let Some(name) = name {
                out.start_call(index, name);
            }
            if !arguments.is_empty() {
                out.push_arguments(index, &arguments);
            }
        }
        Ok(())
    }

    fn into_state(self: Box<Self>) -> Option<ParseState> {
        None
    }
}
