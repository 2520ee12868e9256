//! A connection's unread input: the bytes read from its socket that no request has taken yet.
//!
//! Taking a request's head or body moves a start offset; the unread bytes are moved down to the
//! start only when more are read, so requests that arrived together (pipelined) are taken with
//! no copy each. Before, each head and each body taken moved all the bytes behind it down.

/// Bytes read and not yet taken, `data[start..]`.
#[derive(Debug, Default)]
pub(super) struct InBuf {
    data: Vec<u8>,
    start: usize,
}

impl InBuf {
    /// The unread bytes.
    #[inline]
    pub(super) fn bytes(&self) -> &[u8] {
        self.data.get(self.start..).unwrap_or_default()
    }

    pub(super) fn len(&self) -> usize {
        self.data.len() - self.start
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes the first `n` unread bytes (all of them, when fewer are there).
    #[inline]
    pub(super) fn consume(&mut self, n: usize) {
        self.start = self.start.saturating_add(n).min(self.data.len());
        if self.start == self.data.len() {
            // All taken: the room is reused from its start, with nothing to move.
            self.data.clear();
            self.start = 0;
        }
    }

    /// Appends bytes read from the socket.
    pub(super) fn extend(&mut self, bytes: &[u8]) {
        self.compact();
        self.data.extend_from_slice(bytes);
    }

    /// Room for `n` unread bytes in all, so a body of known length is not grown by doubling.
    /// Nothing moves when the buffer has the room already (as it has for a body that came in
    /// with its head).
    pub(super) fn reserve_for(&mut self, n: usize) {
        if self.data.capacity() - self.start >= n {
            return;
        }
        self.compact();
        self.data.reserve(n.saturating_sub(self.data.len()));
    }

    /// Takes the first `n` unread bytes as a buffer of their own (the whole buffer, with no
    /// copy, when they are all there is).
    pub(super) fn take(&mut self, n: usize) -> Vec<u8> {
        self.compact();
        if n >= self.data.len() {
            return std::mem::take(&mut self.data);
        }
        let rest = self.data.split_off(n);
        std::mem::replace(&mut self.data, rest)
    }

    /// Drops the unread bytes and the buffer's room.
    pub(super) fn release(&mut self) {
        *self = InBuf::default();
    }

    /// Moves the unread bytes down to the start of the buffer.
    fn compact(&mut self) {
        if self.start > 0 {
            self.data.drain(..self.start);
            self.start = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InBuf;

    #[test]
    fn takes_move_an_offset_and_reads_append_after_what_is_left() {
        let mut b = InBuf::default();
        b.extend(b"GET / HTTP/1.1\r\n\r\nPOST");
        b.consume(18);
        assert_eq!(b.bytes(), b"POST");
        assert_eq!(b.len(), 4);
        b.extend(b" /x");
        assert_eq!(b.bytes(), b"POST /x");
        assert_eq!(b.take(4), b"POST".to_vec());
        assert_eq!(b.bytes(), b" /x");
        b.consume(100);
        assert!(b.is_empty());
        b.extend(b"abc");
        b.consume(1);
        assert_eq!(b.take(10), b"bc".to_vec());
        assert!(b.is_empty());
        b.extend(b"0123456789");
        b.consume(2);
        let room = b.data.capacity();
        b.reserve_for(8);
        assert_eq!(
            (b.start, b.data.capacity()),
            (2, room),
            "the room was there: nothing moves"
        );
        b.reserve_for(room);
        assert_eq!(b.start, 0);
        assert!(b.data.capacity() >= room);
        assert_eq!(b.bytes(), b"23456789");
        b.release();
        assert!(b.is_empty());
    }
}
