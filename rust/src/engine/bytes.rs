//! The byte engines: every id's contribution is computed once at load, and the text of a window
//! is assembled by appending bytes.
//!
//! Performance notes: a window is a handful of entries, so assembling its text costs a few
//! dozen bytes of copying per step. Both engines keep their tables in one contiguous buffer
//! indexed by offsets (one cache line for most tokens), and write through a reused scratch
//! buffer, so a warm step makes no heap allocation.

use super::parts::{Scratch, Start};
use crate::table;
use crate::vocab::Vocab;

/// GPT-2's byte-level alphabet, reversed: `table[code point]` is the byte a printable char stands
/// for. Bytes outside the printable ranges were given code points 256, 257, ... in byte order.
fn byte_level_alphabet() -> [Option<u8>; 324] {
    let direct = |b: u8| matches!(b, 33..=126 | 161..=172 | 174..=255);
    let mut table = [None; 324];
    let mut next = 256usize;
    for b in 0..=255u8 {
        if direct(b) {
            table[b as usize] = Some(b);
        } else {
            table[next] = Some(b);
            next += 1;
        }
    }
    table
}

/// Per-id bytes: the crate's one per-id table, where an id without an entry reads as empty.
#[derive(Debug)]
struct Table(table::Table<Vec<u8>>);

impl Table {
    fn with_ids(vocab: &Vocab, mut f: impl FnMut(u32, &str, &mut Vec<u8>)) -> Table {
        let t = table::Table::build(vocab.len(), |id, buf| {
            if let Some(token) = vocab.token(id) {
                f(id, token, buf);
            }
            Some(())
        });
        Table(t.unwrap_or_default())
    }

    #[inline]
    fn get(&self, id: u32) -> &[u8] {
        self.0.get(id).unwrap_or(&[])
    }
}

/// Whether `bytes` ends inside a character that more bytes could still complete.
#[inline]
fn ends_incomplete(bytes: &[u8]) -> bool {
    // The lead byte of an unfinished character is among the last three bytes.
    let tail_start = bytes.len().saturating_sub(3);
    let Some(lead) = (tail_start..bytes.len())
        .rev()
        .find(|&i| bytes[i] & 0xC0 != 0x80)
    else {
        return false;
    };
    match std::str::from_utf8(&bytes[lead..]) {
        Ok(_) => false,
        Err(e) => e.valid_up_to() == 0 && e.error_len().is_none(),
    }
}

/// Appends `bytes` as `String::from_utf8_lossy` renders them: one U+FFFD per maximal invalid
/// subsequence.
#[inline]
pub(crate) fn push_lossy(bytes: &[u8], out: &mut String) {
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

/// Byte-level BPE (GPT-2, Llama-3, Qwen, DeepSeek, Tekken): each char of a token maps through the
/// byte-level alphabet; a token with a char outside it contributes its raw UTF-8 (as the decoder
/// does for added tokens); the whole text is then decoded lossily.
#[derive(Debug)]
pub(crate) struct ByteLevel {
    table: Table,
}

impl ByteLevel {
    pub(crate) fn new(vocab: &Vocab) -> ByteLevel {
        let alphabet = byte_level_alphabet();
        let table = Table::with_ids(vocab, |_, token, out| {
            let start = out.len();
            for c in token.chars() {
                match alphabet.get(c as usize).copied().flatten() {
                    Some(b) => out.push(b),
                    None => {
                        out.truncate(start);
                        out.extend_from_slice(token.as_bytes());
                        return;
                    }
                }
            }
        });
        ByteLevel { table }
    }

    fn gather(&self, ids: &[u32], scratch: &mut Scratch) {
        scratch.bytes.clear();
        for &id in ids {
            scratch.bytes.extend_from_slice(self.table.get(id));
        }
    }

    /// The text `id` adds after text that no later id can change: its bytes, when they are
    /// complete characters on their own.
    #[inline]
    pub(crate) fn fast_text(&self, id: u32) -> Option<&str> {
        std::str::from_utf8(self.table.get(id))
            .ok()
            .filter(|t| !t.is_empty())
    }

    pub(crate) fn decode_into(&self, ids: &[u32], out: &mut String, scratch: &mut Scratch) {
        if let [id] = ids {
            // One entry: no copy through the scratch buffer.
            return push_lossy(self.table.get(*id), out);
        }
        self.gather(ids, scratch);
        push_lossy(&scratch.bytes, out);
    }

    /// Gathers the bytes of `ids` into `scratch` and tells whether they end inside a character.
    /// After text that no later byte can change, this is all a step needs: the delta is the
    /// lossy text of these bytes alone.
    #[inline]
    pub(crate) fn held_bytes(&self, ids: &[u32], scratch: &mut Scratch) -> bool {
        self.gather(ids, scratch);
        ends_incomplete(&scratch.bytes)
    }

    pub(crate) fn ends_incomplete(&self, ids: &[u32]) -> bool {
        // Only the last three bytes matter; collect them from the end, on the stack.
        let mut tail = [0u8; 3];
        let mut have = 0;
        for &id in ids.iter().rev() {
            for &b in self.table.get(id).iter().rev() {
                if have == 3 {
                    break;
                }
                have += 1;
                tail[3 - have] = b;
            }
            if have == 3 {
                break;
            }
        }
        ends_incomplete(&tail[3 - have..])
    }
}

/// How a run of byte tokens that is not valid UTF-8 is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rendering {
    /// As `ByteFallback` does: one U+FFFD per byte token of the run.
    Decode,
    /// As a stream sends it: the complete characters before the first bad or missing byte,
    /// then one U+FFFD per byte token left.
    Stream,
}

/// SentencePiece with byte fallback (Llama-2, Mistral, Phi-3; Gemma without `Strip`): a `<0xNN>`
/// token is one byte; other tokens are their text with `▁` as a space. A run of byte tokens that
/// is valid UTF-8 as a whole is that text, otherwise one U+FFFD per byte token. `Strip` then
/// removes up to `strip` leading spaces of the whole text.
#[derive(Debug)]
pub(crate) struct Pieces {
    table: Table,
    /// `is_byte[id]`: the entry is a single raw byte (a `<0xNN>` token).
    is_byte: Vec<bool>,
    strip: usize,
}

/// `<0xNN>` as `ByteFallback` parses it.
fn fallback_byte(token: &str) -> Option<u8> {
    if token.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
        u8::from_str_radix(token.get(3..5)?, 16).ok()
    } else {
        None
    }
}

impl Pieces {
    pub(crate) fn new(vocab: &Vocab, strip: usize) -> Pieces {
        let mut is_byte = vec![false; vocab.len()];
        let table = Table::with_ids(vocab, |id, token, out| {
            let piece = token.replace('\u{2581}', " ");
            match fallback_byte(&piece) {
                Some(b) => {
                    if let Some(slot) = is_byte.get_mut(id as usize) {
                        *slot = true;
                    }
                    out.push(b);
                }
                None => out.extend_from_slice(piece.as_bytes()),
            }
        });
        Pieces {
            table,
            is_byte,
            strip,
        }
    }

    /// Whether `Strip` removes leading spaces.
    pub(crate) fn strips(&self) -> bool {
        self.strip > 0
    }

    #[inline]
    fn is_byte(&self, id: u32) -> bool {
        self.is_byte.get(id as usize).copied().unwrap_or(false)
    }

    /// A finished run of byte tokens as `rendering` shows it (see [`Rendering`]).
    fn flush_run(run: &[u8], rendering: Rendering, out: &mut String) {
        if run.is_empty() {
            return;
        }
        match std::str::from_utf8(run) {
            Ok(s) => out.push_str(s),
            Err(e) => {
                let kept = match rendering {
                    Rendering::Decode => 0,
                    Rendering::Stream => e.valid_up_to(),
                };
                let valid = run.get(..kept).unwrap_or_default();
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                let rest = run.len() - kept;
                out.extend(std::iter::repeat_n(char::REPLACEMENT_CHARACTER, rest));
            }
        }
    }

    /// The text a text piece adds after a non-empty prefix (whose leading space `Strip` already
    /// had its chance at); `None` for byte tokens, whose run may join the prefix's.
    #[inline]
    pub(crate) fn fast_text(&self, id: u32) -> Option<&str> {
        if self.is_byte(id) {
            return None;
        }
        std::str::from_utf8(self.table.get(id))
            .ok()
            .filter(|t| !t.is_empty())
    }

    /// Whether `ids` render to a non-empty raw text (before `Strip`).
    pub(crate) fn has_text(&self, ids: &[u32]) -> bool {
        ids.iter().any(|&id| !self.table.get(id).is_empty())
    }

    /// How many leading entries render as one U+FFFD each because of what came before the
    /// window: continuation bytes of a character begun before a cut window, or every byte of a
    /// run that was already invalid before the window.
    fn lead(&self, ids: &[u32], start: Start) -> usize {
        let continues = |id: u32| self.is_byte(id);
        match start {
            Start::Exact => 0,
            Start::Cut => ids
                .iter()
                .take_while(|&&id| {
                    continues(id) && self.table.get(id).first().is_some_and(|b| b & 0xC0 == 0x80)
                })
                .count(),
            Start::InvalidRun => ids.iter().take_while(|&&id| continues(id)).count(),
        }
    }

    pub(crate) fn decode_into(
        &self,
        ids: &[u32],
        start: Start,
        out: &mut String,
        scratch: &mut Scratch,
    ) {
        self.render(ids, start, Rendering::Decode, false, out, scratch);
    }

    /// The text a stream shows for `ids`: like [`Self::decode_into`], except that a run that is
    /// not valid UTF-8 keeps the complete characters before its first bad or missing byte, then
    /// has one U+FFFD per byte token left. `decode` turns the whole run into U+FFFD, also the
    /// characters a stream already sent before the run went wrong; those stand, so whatever
    /// the chunking, the stream's text is this one.
    pub(crate) fn stream_text_into(
        &self,
        ids: &[u32],
        start: Start,
        out: &mut String,
        scratch: &mut Scratch,
    ) {
        self.render(ids, start, Rendering::Stream, false, out, scratch);
    }

    /// The text a prompt tail shows once more ids may follow: like [`Self::decode_into`], except
    /// that a trailing run that is valid so far keeps its complete characters (`decode` would turn
    /// the whole unfinished run into U+FFFD). Those characters belong to the prompt, so a stream
    /// seeded from it starts its output at the character the generated ids complete.
    pub(crate) fn prompt_text_into(
        &self,
        ids: &[u32],
        start: Start,
        out: &mut String,
        scratch: &mut Scratch,
    ) {
        self.render(ids, start, Rendering::Decode, true, out, scratch);
    }

    fn render(
        &self,
        ids: &[u32],
        start: Start,
        rendering: Rendering,
        open_tail: bool,
        out: &mut String,
        scratch: &mut Scratch,
    ) {
        let begin = out.len();
        let lead = self.lead(ids, start);
        out.extend(std::iter::repeat_n(char::REPLACEMENT_CHARACTER, lead));
        scratch.bytes.clear();
        for &id in &ids[lead..] {
            let b = self.table.get(id);
            if self.is_byte(id) {
                scratch.bytes.extend_from_slice(b);
                continue;
            }
            if !scratch.bytes.is_empty() {
                Self::flush_run(&scratch.bytes, rendering, out);
                scratch.bytes.clear();
            }
            // Table entries of text pieces were copied from a `str`.
            out.push_str(std::str::from_utf8(b).unwrap_or_default());
        }
        match std::str::from_utf8(&scratch.bytes) {
            Err(e) if open_tail && e.error_len().is_none() => {
                let valid = scratch.bytes.get(..e.valid_up_to()).unwrap_or_default();
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
            }
            _ => Self::flush_run(&scratch.bytes, rendering, out),
        }
        let spaces = out
            .get(begin..)
            .unwrap_or_default()
            .bytes()
            .take(self.strip)
            .take_while(|&b| b == b' ')
            .count();
        out.replace_range(begin..begin + spaces, "");
    }

    /// The trailing run of byte tokens after the lead entries, gathered into `scratch`; `None`
    /// when the entries do not end with one.
    fn trailing_run<'s>(
        &self,
        ids: &[u32],
        start: Start,
        scratch: &'s mut Scratch,
    ) -> Option<&'s [u8]> {
        let ids = &ids[self.lead(ids, start)..];
        let run_len = ids.iter().rev().take_while(|&&id| self.is_byte(id)).count();
        if run_len == 0 {
            return None;
        }
        scratch.bytes.clear();
        for &id in &ids[ids.len() - run_len..] {
            scratch.bytes.extend_from_slice(self.table.get(id));
        }
        Some(&scratch.bytes)
    }

    pub(crate) fn ends_incomplete(&self, ids: &[u32], start: Start, scratch: &mut Scratch) -> bool {
        // Only a trailing run of byte tokens can be unfinished, and only while it is valid so far.
        match self.trailing_run(ids, start, scratch) {
            Some(run) => std::str::from_utf8(run).is_err_and(|e| e.error_len().is_none()),
            None => false,
        }
    }

    /// Whether a window beginning in `start` must carry a byte that cannot start a character
    /// ahead of it on the wire: a resumed window starts as [`Start::Cut`], where leading
    /// continuation bytes belong to a character begun before the window, but here they are part
    /// of a run already invalid ([`Start::InvalidRun`], or a run that opens with a continuation
    /// byte after a clean boundary), in which every byte is U+FFFD.
    pub(crate) fn needs_poison(&self, window: &[u32], start: Start) -> bool {
        let continuation = |id: u32| {
            self.is_byte(id) && self.table.get(id).first().is_some_and(|b| b & 0xC0 == 0x80)
        };
        match start {
            Start::InvalidRun => window.first().is_none_or(|&id| self.is_byte(id)),
            Start::Exact => window.first().is_some_and(|&id| continuation(id)),
            Start::Cut => false,
        }
    }

    /// The start state of a window that begins right after `dropped` (which began in `start`).
    pub(crate) fn start_after(
        &self,
        dropped: &[u32],
        start: Start,
        scratch: &mut Scratch,
    ) -> Start {
        if start == Start::InvalidRun && self.lead(dropped, start) == dropped.len() {
            return Start::InvalidRun;
        }
        if start == Start::Cut && self.lead(dropped, start) == dropped.len() {
            return Start::Cut;
        }
        match self.trailing_run(dropped, start, scratch) {
            None => Start::Exact,
            Some(run) => match std::str::from_utf8(run) {
                Ok(_) => Start::Exact,
                Err(e) if e.error_len().is_some() => Start::InvalidRun,
                Err(_) => Start::Cut,
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn alphabet_round_trip() {
        let a = byte_level_alphabet();
        let get = |c: char| a.get(c as usize).copied().flatten();
        assert_eq!(get('A'), Some(b'A'));
        assert_eq!(get('Ġ'), Some(b' '));
        assert_eq!(get('Ċ'), Some(b'\n'));
        assert_eq!(get('ä'), Some(0xE4));
        assert_eq!(get('中'), None);
    }

    #[test]
    fn incomplete_tails() {
        assert!(ends_incomplete(&[0xE4, 0xB8]));
        assert!(ends_incomplete(b"ab\xE4"));
        assert!(!ends_incomplete("中".as_bytes()));
        assert!(!ends_incomplete(&[0xE4, 0x41]));
        assert!(!ends_incomplete(&[0x80]));
        assert!(!ends_incomplete(&[0xE0, 0x80])); // E0 needs A0..BF next: already invalid
        assert!(ends_incomplete(&[0xF0, 0x9F, 0x98]));
        assert!(!ends_incomplete(&[]));
    }

    #[test]
    fn lossy_matches_std() {
        for bytes in [
            &b"\xE4\xB8\x41"[..],
            b"\xF0\x9F",
            b"ok\x80\x80z",
            b"\xED\xA0\x80",
        ] {
            let mut s = String::new();
            push_lossy(bytes, &mut s);
            assert_eq!(s, String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn fallback_byte_parse() {
        assert_eq!(fallback_byte("<0xE4>"), Some(0xE4));
        assert_eq!(fallback_byte("<0xe4>"), Some(0xE4));
        assert_eq!(fallback_byte("<0xZZ>"), None);
        assert_eq!(fallback_byte("<0xE4"), None);
    }
}
