//! Per-id strings in one contiguous buffer plus offsets: the layout of every per-id table (token
//! strings, an engine's standalone texts, a byte engine's bytes). Building one is a single pass
//! over the ids; reading one is two offset loads and a slice, with no per-entry allocation.

/// A buffer entries are appended to: `String` (text entries) or `Vec<u8>` (byte entries).
pub(crate) trait Buffer: Default {
    type Entry: ?Sized;
    fn len(&self) -> usize;
    fn entry(&self, start: usize, end: usize) -> Option<&Self::Entry>;
}

impl Buffer for String {
    type Entry = str;
    #[inline]
    fn len(&self) -> usize {
        self.len()
    }
    #[inline]
    fn entry(&self, start: usize, end: usize) -> Option<&str> {
        self.get(start..end)
    }
}

impl Buffer for Vec<u8> {
    type Entry = [u8];
    #[inline]
    fn len(&self) -> usize {
        self.len()
    }
    #[inline]
    fn entry(&self, start: usize, end: usize) -> Option<&[u8]> {
        self.get(start..end)
    }
}

/// One entry per id, contiguous.
#[derive(Debug, Default, Clone)]
pub(crate) struct Table<B> {
    buf: B,
    /// `offsets[id]..offsets[id + 1]` is the entry of `id`.
    offsets: Vec<u32>,
}

impl<B: Buffer> Table<B> {
    /// A table of `n` ids whose entries `fill` appends, id by id; `None` when `fill` fails on an
    /// id (or the buffer outgrows 4 GiB).
    pub(crate) fn build(n: usize, mut fill: impl FnMut(u32, &mut B) -> Option<()>) -> Option<Self> {
        let mut t = Table {
            buf: B::default(),
            offsets: Vec::with_capacity(n + 1),
        };
        t.offsets.push(0);
        for id in 0..n as u32 {
            fill(id, &mut t.buf)?;
            t.offsets.push(u32::try_from(t.buf.len()).ok()?);
        }
        Some(t)
    }

    /// The entry of `id`; `None` outside the table.
    #[inline]
    pub(crate) fn get(&self, id: u32) -> Option<&B::Entry> {
        let i = id as usize;
        let (start, end) = (*self.offsets.get(i)?, *self.offsets.get(i + 1)?);
        self.buf.entry(start as usize, end as usize)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_and_failures_stop_the_build() {
        let words = ["a", "", "中文"];
        let t: Table<String> = Table::build(3, |id, buf: &mut String| {
            buf.push_str(words[id as usize]);
            Some(())
        })
        .unwrap();
        assert_eq!((0..3).map(|i| t.get(i).unwrap()).collect::<Vec<_>>(), words);
        assert_eq!(t.get(3), None);
        let failed: Option<Table<Vec<u8>>> = Table::build(3, |id, _| (id < 2).then_some(()));
        assert!(failed.is_none());
    }
}
