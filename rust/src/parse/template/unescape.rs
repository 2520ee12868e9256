//! MiniCPM-V's newlines: its tokenizer decodes some newlines as the two characters `\` and
//! `n`, and vLLM's `minicpmv` parser turns them back in reasoning and content (never in call
//! arguments), except in code and math. In our words, scanning left to right:
//!
//! - Inside a span, text is copied as written up to the span's closing marker. A backtick opens
//!   a span (three a fenced one, closed by three; one an inline one, closed by one), `$$` and
//!   `$` open math spans closed by themselves, `\(` and `\[` open spans closed by `\)` and `\]`.
//! - Outside a span, a run of two or more backslashes is copied as written; a single backslash
//!   before `r\n` (four characters), `n` or `r` is one newline; before anything else it is
//!   copied.
//!
//! A stream holds back what the next text could change (a trailing backslash or backslash run,
//! `\r`, `\r\`, one or two backticks, one `$`, a trailing part of the open span's closing
//! marker), so its text adds up to the whole text's; all of it goes out at the end.

use serde::{Deserialize, Serialize};

/// The spans' closing markers, by the number the state keeps.
const CLOSES: [&str; 6] = ["```", "`", "$$", "$", "\\)", "\\]"];

/// One text's scanner: the open span and the text held back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Unescape {
    /// The open span's closing marker, as 1 + its index in `CLOSES` (0: none).
    #[serde(rename = "s", default, skip_serializing_if = "is_zero")]
    span: u8,
    /// Text held back until the next text decides it.
    #[serde(rename = "p", default, skip_serializing_if = "String::is_empty")]
    pending: String,
    /// The text sent ends in a backslash run too long to hold: backslashes that follow go on
    /// with it.
    #[serde(rename = "r", default, skip_serializing_if = "std::ops::Not::not")]
    run: bool,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// Most bytes held back: a backslash run is held whole while it may still grow.
pub(crate) const MAX_PENDING: usize = 256;

impl Unescape {
    fn close(&self) -> Option<&'static str> {
        CLOSES.get(usize::from(self.span).checked_sub(1)?).copied()
    }

    fn open(&mut self, marker: &str) {
        self.span = CLOSES
            .iter()
            .position(|&c| c == marker)
            .and_then(|i| u8::try_from(i + 1).ok())
            .unwrap_or(0);
    }

    /// Whether a carried state is one the scanner could have written.
    pub(crate) fn check(&self) -> Result<(), String> {
        crate::parse::carry::carried("held escape", self.pending.len(), MAX_PENDING + 4)?;
        if usize::from(self.span) > CLOSES.len() {
            return Err("an unknown span in the carried escape state".to_owned());
        }
        Ok(())
    }

    /// `text`, newlines recovered, into `out`; at the end (`last`) nothing is held back.
    pub(crate) fn feed(&mut self, text: &str, last: bool, out: &mut String) {
        let joined = std::mem::take(&mut self.pending) + text;
        let text = joined.as_str();
        let mut i = 0;
        if std::mem::take(&mut self.run) {
            let run = text.len() - text.trim_start_matches('\\').len();
            out.push_str(text.get(..run).unwrap_or_default());
            i = run;
            self.run = run == text.len() && run > 0;
        }
        let hold = |this: &mut Unescape, rest: &str| this.pending.push_str(rest);
        while let Some(rest) = text.get(i..).filter(|r| !r.is_empty()) {
            if let Some(close) = self.close() {
                if rest.starts_with(close) {
                    out.push_str(close);
                    i += close.len();
                    self.span = 0;
                    continue;
                }
                if !last && close.starts_with(rest) && rest.len() < MAX_PENDING {
                    hold(self, rest);
                    return;
                }
                let c = rest.chars().next().unwrap_or_default();
                out.push(c);
                i += c.len_utf8();
                continue;
            }
            let c = rest.chars().next().unwrap_or_default();
            match c {
                '`' => {
                    if !last && (rest == "`" || rest == "``") {
                        hold(self, rest);
                        return;
                    }
                    let marker = if rest.starts_with("```") { "```" } else { "`" };
                    out.push_str(marker);
                    i += marker.len();
                    self.open(marker);
                }
                '$' => {
                    if !last && rest == "$" {
                        hold(self, rest);
                        return;
                    }
                    let marker = if rest.starts_with("$$") { "$$" } else { "$" };
                    out.push_str(marker);
                    i += marker.len();
                    self.open(marker);
                }
                '\\' => {
                    let run = rest.len() - rest.trim_start_matches('\\').len();
                    if run > 1 {
                        if !last && run == rest.len() && run < MAX_PENDING {
                            hold(self, rest);
                            return;
                        }
                        out.push_str(rest.get(..run).unwrap_or_default());
                        i += run;
                        self.run = !last && run == rest.len();
                        continue;
                    }
                    if !last && matches!(rest, "\\" | "\\r" | "\\r\\") {
                        hold(self, rest);
                        return;
                    }
                    let (emit, step, span) = if rest.starts_with("\\r\\n") {
                        ("\n", 4, None)
                    } else if rest.starts_with("\\n") || rest.starts_with("\\r") {
                        ("\n", 2, None)
                    } else if rest.starts_with("\\(") {
                        ("\\(", 2, Some("\\)"))
                    } else if rest.starts_with("\\[") {
                        ("\\[", 2, Some("\\]"))
                    } else {
                        ("\\", 1, None)
                    };
                    out.push_str(emit);
                    i += step;
                    if let Some(close) = span {
                        self.open(close);
                    }
                }
                c => {
                    out.push(c);
                    i += c.len_utf8();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str) -> String {
        let mut out = String::new();
        Unescape::default().feed(text, true, &mut out);
        out
    }

    #[test]
    fn newlines_outside_code_and_math() {
        assert_eq!(whole("a\\nb\\r\\nc\\rd"), "a\nb\nc\nd");
        assert_eq!(
            whole("keep \\\\n and \\t and \\u00e9"),
            "keep \\\\n and \\t and \\u00e9"
        );
        assert_eq!(
            whole("`x\\ny` and ```\nprint('a\\nb')\n```\\n"),
            "`x\\ny` and ```\nprint('a\\nb')\n```\n"
        );
        assert_eq!(
            whole("$a\\nb$ $$c\\nd$$ \\(e\\nf\\) \\[g\\nh\\]\\n"),
            "$a\\nb$ $$c\\nd$$ \\(e\\nf\\) \\[g\\nh\\]\n"
        );
    }

    #[test]
    fn a_run_too_long_to_hold_goes_on_in_the_next_text() {
        let run = "\\".repeat(MAX_PENDING + 10);
        let mut u = Unescape::default();
        let mut out = String::new();
        u.feed(&run, false, &mut out);
        u.feed("\\n", true, &mut out);
        assert_eq!(out, format!("{run}\\n"));
    }

    #[test]
    fn any_cut_gives_the_whole_answer() {
        let text = "C:\\new `co\\nde` $$m\\n$$ \\\\\\n x\\r\\ny \\(p\\np\\) end\\";
        let want = whole(text);
        for (at, _) in text.char_indices() {
            for (bt, _) in text.char_indices().filter(|&(b, _)| b >= at) {
                let mut u = Unescape::default();
                let mut out = String::new();
                for piece in [&text[..at], &text[at..bt], &text[bt..]] {
                    u.feed(piece, false, &mut out);
                    u = serde_json::from_str(&serde_json::to_string(&u).unwrap_or_default())
                        .unwrap_or_default();
                }
                u.feed("", true, &mut out);
                assert_eq!(out, want, "cut at {at}, {bt}");
            }
        }
    }
}
