//! Readers of a closed region that no template syntax describes, named by a template
//! (`"content": "reader"`, `"content_args": {"reader": NAME}`, our addition): the region's
//! text, its delimiters included, is kept until it closes and then read whole, giving its calls
//! or nothing; nothing, or a region the output cuts, leaves the text as content. Each reader is
//! a pure function of the text and the chat request.

pub(crate) mod k2;
mod minicpm5;
pub(crate) mod xml;

/// A named reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// MiniCPM5's `<function name=...><param name=...>` calls, one a region.
    MiniCpm5,
    /// K2 Horizon's `<ifm|tool_calls>` block, all of its calls or none.
    K2Horizon,
}

impl Reader {
    /// The reader of this name.
    pub(crate) fn of(name: &str) -> Option<Reader> {
        match name {
            "minicpm5" => Some(Reader::MiniCpm5),
            "k2_horizon" => Some(Reader::K2Horizon),
            _ => None,
        }
    }

    /// The calls of a closed region, `(name, arguments)` each, or `None` where it is text.
    pub(crate) fn read(self, text: &str, request: Option<&str>) -> Option<Vec<(String, String)>> {
        match self {
            Reader::MiniCpm5 => minicpm5::call(text, request.unwrap_or("{}")).map(|c| vec![c]),
            Reader::K2Horizon => k2::calls(text, request.unwrap_or("{}")),
        }
    }
}
