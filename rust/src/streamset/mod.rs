//! A set of streams addressed by slot, stepped together from one flat buffer of ids.
//!
//! A frontend that holds many sequences keeps them in one [`StreamSet`]: each sequence is a slot
//! number, its ids for a step are a stretch of one flat `&[u32]`, and the step visits every
//! requested slot in one call. Each slot holds an ordinary [`Stream`], so every stream invariant
//! holds per slot: no partial character, the deltas add up to `decode`, the window is vLLM's.
//!
//! A step names its slots in one of two ways: densely (entry `i` is slot `i`) or through a list
//! of slots; either way each entry takes one id, or `counts[i]` ids when counts are given. Every
//! entry is checked (the slot holds a stream, is not finished, is not named twice, the counts add
//! up to the ids) before any stream changes, and an error names its slot.
//!
//! A step of a ready stream (settled, all of its window read) by an id with a fast-path text
//! only notes the id in the set's `pending` array: the stream itself is brought up to date by
//! whatever reads or steps it next. On that path a dense step reads three arrays (state bytes,
//! pending ids, ids) and the id's table entry per stream, and the output pass reads the pending
//! ids rather than the streams.
//!
//! Performance notes (qwen3, one id per stream and step, a 2-core shared machine, see
//! `benches/results/streamset.json`): over 1,000 live streams the pending array took a step to
//! 0.77x and 0.80x of the build before it (two builds in one process, alternating rounds), and the
//! first step of a set not stepped for a while to 0.79x; `benches/core/streamset_ratio.py` read
//! 5.94x to 6.54x a loop of `DetokStream.step`. Under callgrind, before the pending array, a
//! stream's share of a dense step was about 165 instructions: the core's step (about 50 on the fast
//! path, more for the 7.5% of ids that take the general one), the cached output string (about 27),
//! the rest checks and loops. What helped: checks that read one state byte per slot rather than
//! each stream; `Stream::step_one`, the fast path ahead of the general loop; holding the
//! interpreter lock below 256 entries (releasing and retaking it costs about 80 ns a call); a fast
//! path that reads only whether the id has a text, not the text (taking it checked its bytes, a
//! cache miss that held 37% of the dense loop's samples under perf): 0.85x to 0.89x; then the
//! pending array. What did not: noting each entry's output token in a flat array while still
//! stepping every stream, a first tight pass over the ids' table entries so their cache misses
//! overlap, and asking ahead for the streams that will take the general step.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::sync::Arc;

use crate::detokenizer::Detokenizer;
use crate::error::Error;
use crate::stream::Stream;

/// What went wrong in a [`StreamSet`] call; slot errors name their slot.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetError {
    /// The slot holds no stream (never added, or removed).
    NoStream {
        /// The slot named.
        slot: usize,
    },
    /// The slot appears twice in one step.
    Repeated {
        /// The slot named twice.
        slot: usize,
    },
    /// The slot's stream refused the call (finished, or its decoder failed).
    Stream {
        /// The stream's slot.
        slot: usize,
        /// The stream's error.
        error: Error,
    },
    /// The stream was made by another detokenizer.
    OtherDetokenizer,
    /// The step's arguments do not fit together (lengths, counts).
    Shape {
        /// Which arguments disagree, and how.
        reason: String,
    },
}

impl SetError {
    /// The slot the error is about, if it is about one.
    pub fn slot(&self) -> Option<usize> {
        match self {
            SetError::NoStream { slot }
            | SetError::Repeated { slot }
            | SetError::Stream { slot, .. } => Some(*slot),
            SetError::OtherDetokenizer | SetError::Shape { .. } => None,
        }
    }
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::NoStream { slot } => write!(f, "slot {slot} holds no stream"),
            SetError::Repeated { slot } => write!(f, "slot {slot} appears twice in one step"),
            SetError::Stream { slot, error } => write!(f, "slot {slot}: {error}"),
            SetError::OtherDetokenizer => f.write_str("the stream belongs to another Detokenizer"),
            SetError::Shape { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for SetError {}

/// Streams of one detokenizer, addressed by slot. Not shared: one owner steps it.
#[derive(Debug)]
pub struct StreamSet {
    det: Arc<Detokenizer>,
    slots: Vec<Option<Stream>>,
    /// Per slot, [`EMPTY`], [`LIVE`] or [`FINISHED`], with [`READY`] and [`SKIP`]: a step's
    /// checks and its fast path read these bytes rather than every stream.
    state: Vec<u8>,
    /// Per slot, the entry of a fast step not yet applied to the stream ([`Stream::apply_fast`]),
    /// or [`NONE`]: a dense step over ready streams writes here and leaves the streams alone.
    /// Whatever reads or steps a stream applies its pending entry first.
    pending: Vec<u32>,
    /// Empty slots below `slots.len()`, lowest first, so numbers stay dense.
    free: BinaryHeap<Reverse<usize>>,
    live: usize,
    /// `seen[slot] == epoch` when the slot was named earlier in the current step.
    seen: Vec<u32>,
    epoch: u32,
}

/// How many streams ahead a dense step asks the CPU for the id's table entry (and the Python
/// layer for the cached strings): far enough for the lines to arrive while the streams between
/// are stepped. Over 1,000 streams a step cost 50 ns a stream with each stream on its own ids
/// and 15 to 18 ns with one id for all, so most of it was waiting on memory; the entries and
/// strings asked ahead took the median from 32.2 to 29.2 ns (ten runs each, alternating). 16 or
/// 32 ahead were no faster than 8. Asking for the streams that will take the general step
/// (those not ready, or whose id has no fast-path text) and their buffers was slower (1.02x to
/// 1.18x), since a ready stream's step no longer reads its stream.
pub(crate) const AHEAD: usize = 8;

const EMPTY: u8 = 0;
const LIVE: u8 = 1;
const FINISHED: u8 = 2;
/// The bits of a state byte that say empty, live or finished.
const KIND: u8 = 3;
/// The stream is [`Stream::fast_ready`]: an id with a fast-path text steps it by the id alone.
const READY: u8 = 4;
/// The stream leaves skipped special tokens out of its window.
const SKIP: u8 = 8;
/// No pending entry.
const NONE: u32 = u32::MAX;

fn state_of(stream: &Stream) -> u8 {
    let kind = if stream.is_finished() { FINISHED } else { LIVE };
    let ready = if stream.fast_ready() { READY } else { 0 };
    let skip = if stream.skips_special() { SKIP } else { 0 };
    kind | ready | skip
}

/// How a step's entries map to slots and ids.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// Entry `i` steps `slots[i]`; `None`: entry `i` steps slot `i`.
    pub slots: Option<&'a [u32]>,
    /// Entry `i` takes `counts[i]` ids; `None`: one id each.
    pub counts: Option<&'a [u32]>,
}

impl Plan<'_> {
    /// Number of entries the plan has for `ids` ids.
    pub fn entries(&self, ids: usize) -> usize {
        match (self.slots, self.counts) {
            (Some(s), _) => s.len(),
            (None, Some(c)) => c.len(),
            (None, None) => ids,
        }
    }

    /// Slot and id count of entry `i`.
    #[inline]
    pub fn entry(&self, i: usize) -> (usize, usize) {
        let slot = match self.slots {
            Some(s) => s.get(i).map_or(usize::MAX, |&v| v as usize),
            None => i,
        };
        let count = match self.counts {
            Some(c) => c.get(i).map_or(0, |&v| v as usize),
            None => 1,
        };
        (slot, count)
    }
}

impl StreamSet {
    /// An empty set for streams of `det`.
    pub fn new(det: &Arc<Detokenizer>) -> StreamSet {
        StreamSet {
            det: Arc::clone(det),
            slots: Vec::new(),
            state: Vec::new(),
            pending: Vec::new(),
            free: BinaryHeap::new(),
            live: 0,
            seen: Vec::new(),
            epoch: 0,
        }
    }

    /// The detokenizer every stream of the set runs on.
    pub fn detokenizer(&self) -> &Arc<Detokenizer> {
        &self.det
    }

    /// Number of streams held (finished ones included).
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the set holds no stream.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// One more than the highest slot number in use (0 when empty).
    pub fn slot_end(&self) -> usize {
        self.slots.len()
    }

    /// Puts `stream` in the lowest empty slot and returns that slot.
    pub fn add(&mut self, stream: Stream) -> Result<usize, SetError> {
        self.check_det(&stream)?;
        let slot = match self.free.pop() {
            Some(Reverse(slot)) => slot,
            None => {
                self.slots.push(None);
                self.state.push(EMPTY);
                self.pending.push(NONE);
                self.seen.push(0);
                self.slots.len() - 1
            }
        };
        if let (Some(place), Some(state), Some(pending)) = (
            self.slots.get_mut(slot),
            self.state.get_mut(slot),
            self.pending.get_mut(slot),
        ) {
            *state = state_of(&stream);
            *pending = NONE;
            *place = Some(stream);
        }
        self.live += 1;
        Ok(slot)
    }

    /// Replaces the stream in `slot` (which must hold one) with `stream`.
    pub fn reset(&mut self, slot: usize, stream: Stream) -> Result<(), SetError> {
        self.check_det(&stream)?;
        match (
            self.slots.get_mut(slot),
            self.state.get_mut(slot),
            self.pending.get_mut(slot),
        ) {
            (Some(Some(s)), Some(state), Some(pending)) => {
                *state = state_of(&stream);
                *pending = NONE;
                *s = stream;
                Ok(())
            }
            _ => Err(SetError::NoStream { slot }),
        }
    }

    /// Takes the stream out of `slot`; the slot number is reused by a later [`StreamSet::add`].
    pub fn remove(&mut self, slot: usize) -> Result<Stream, SetError> {
        self.apply_pending(slot);
        let stream = self
            .slots
            .get_mut(slot)
            .and_then(Option::take)
            .ok_or(SetError::NoStream { slot })?;
        if let Some(state) = self.state.get_mut(slot) {
            *state = EMPTY;
        }
        self.live -= 1;
        // Trailing empty slots are dropped, so the dense form's length stays short.
        if slot + 1 == self.slots.len() {
            while matches!(self.slots.last(), Some(None)) {
                self.slots.pop();
                self.state.pop();
                self.pending.pop();
                self.seen.pop();
            }
            let end = self.slots.len();
            self.free.retain(|&Reverse(s)| s < end);
        } else {
            self.free.push(Reverse(slot));
        }
        Ok(stream)
    }

    /// The stream in `slot` (its last fast step applied: see [`StreamSet::output`] for a read
    /// that leaves the stream alone).
    pub fn get(&mut self, slot: usize) -> Result<&Stream, SetError> {
        self.apply_pending(slot);
        self.slots
            .get(slot)
            .and_then(Option::as_ref)
            .ok_or(SetError::NoStream { slot })
    }

    /// Whether `slot` holds a stream.
    pub fn contains(&self, slot: usize) -> bool {
        self.state.get(slot).is_some_and(|&s| s & KIND != EMPTY)
    }

    /// Whether the stream in `slot` was finished.
    pub fn is_finished(&self, slot: usize) -> Result<bool, SetError> {
        match self.state.get(slot).map(|&s| s & KIND) {
            Some(LIVE) => Ok(false),
            Some(FINISHED) => Ok(true),
            _ => Err(SetError::NoStream { slot }),
        }
    }

    /// The text of the last step or `finish` of the stream in `slot` ([`Stream::output`]);
    /// `None` when the slot is empty.
    #[inline]
    pub fn output(&self, slot: usize) -> Option<&str> {
        match self.output_token(slot) {
            Some(id) => Some(self.det.fast_text(id).unwrap_or_default()),
            None => Some(self.slots.get(slot)?.as_ref()?.output()),
        }
    }

    /// When that text is exactly one id's fast-path text, that id ([`Stream::output_token`]).
    #[inline]
    pub fn output_token(&self, slot: usize) -> Option<u32> {
        match self.pending.get(slot) {
            Some(&id) if id != NONE => Some(id),
            _ => self.slots.get(slot)?.as_ref()?.output_token(),
        }
    }

    /// Applies the fast step `slot` still owes its stream, if any.
    #[inline]
    fn apply_pending(&mut self, slot: usize) {
        if let (Some(p), Some(Some(stream))) =
            (self.pending.get_mut(slot), self.slots.get_mut(slot))
        {
            take_pending(stream, p);
        }
    }

    /// Flushes the stream in `slot` and ends it (it stays in its slot until removed or reset).
    pub fn finish(&mut self, slot: usize) -> Result<&str, SetError> {
        self.apply_pending(slot);
        let (Some(Some(stream)), Some(state)) =
            (self.slots.get_mut(slot), self.state.get_mut(slot))
        else {
            return Err(SetError::NoStream { slot });
        };
        *state = FINISHED;
        stream
            .finish()
            .map_err(|error| SetError::Stream { slot, error })
    }

    /// Steps every entry of `plan` with its stretch of `ids`, in order; each stepped stream's
    /// text is then its [`Stream::output`]. An entry with a count of 0 leaves its slot alone
    /// (it may be empty or finished). Every entry is checked before any stream changes.
    pub fn step(&mut self, plan: Plan<'_>, ids: &[u32]) -> Result<(), SetError> {
        self.check(plan, ids)?;
        let StreamSet {
            det,
            slots,
            state,
            pending,
            ..
        } = self;
        let det = &**det;
        if plan.slots.is_none() && plan.counts.is_none() {
            // The common shape, one id for each of slots 0..n: no per-entry plan to read, and a
            // ready stream is stepped in its state byte and pending entry alone.
            for (slot, &id) in ids.iter().enumerate() {
                if let Some(&ahead) = ids.get(slot + AHEAD) {
                    det.prefetch(ahead);
                }
                step_entry(det, slots, state, pending, slot, std::slice::from_ref(&id))?;
            }
            return Ok(());
        }
        let mut at = 0;
        for i in 0..plan.entries(ids.len()) {
            let (slot, count) = plan.entry(i);
            if count == 0 {
                continue;
            }
            let chunk = ids.get(at..at + count).unwrap_or_default();
            at += count;
            step_entry(det, slots, state, pending, slot, chunk)?;
        }
        Ok(())
    }

    /// The checks of [`StreamSet::step`], before anything changes.
    fn check(&mut self, plan: Plan<'_>, ids: &[u32]) -> Result<(), SetError> {
        let n = plan.entries(ids.len());
        if let (Some(s), Some(c)) = (plan.slots, plan.counts) {
            if s.len() != c.len() {
                return Err(SetError::Shape {
                    reason: format!("{} slots but {} counts", s.len(), c.len()),
                });
            }
        }
        let total = match plan.counts {
            Some(c) => c.iter().map(|&v| v as u64).sum::<u64>(),
            None => n as u64,
        };
        if total != ids.len() as u64 {
            return Err(SetError::Shape {
                reason: match plan.counts {
                    Some(_) => format!("the counts add up to {total}, but {} ids", ids.len()),
                    None => format!("{n} slots take one id each, but {} ids", ids.len()),
                },
            });
        }
        if plan.slots.is_none() && plan.counts.is_none() {
            // Dense: slots 0..n, each stepped; a quick scan of the state bytes, then the culprit.
            let ok = self
                .state
                .get(..n)
                .is_some_and(|s| s.iter().all(|&b| b & KIND == LIVE));
            if ok {
                return Ok(());
            }
        }
        if plan.slots.is_some() {
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch == 0 {
                // The stamps wrapped: clear them so an old step's stamp cannot match.
                self.seen.iter_mut().for_each(|s| *s = 0);
                self.epoch = 1;
            }
        }
        for i in 0..n {
            let (slot, count) = plan.entry(i);
            if plan.slots.is_some() {
                match self.seen.get_mut(slot) {
                    Some(seen) if *seen == self.epoch => return Err(SetError::Repeated { slot }),
                    Some(seen) => *seen = self.epoch,
                    None => return Err(SetError::NoStream { slot }),
                }
            }
            if count == 0 {
                continue;
            }
            match self.state.get(slot).map(|&s| s & KIND) {
                Some(LIVE) => {}
                Some(FINISHED) => {
                    return Err(SetError::Stream {
                        slot,
                        error: Error::Finished,
                    });
                }
                _ => return Err(SetError::NoStream { slot }),
            }
        }
        Ok(())
    }

    fn check_det(&self, stream: &Stream) -> Result<(), SetError> {
        if Arc::ptr_eq(stream.detokenizer(), &self.det) {
            Ok(())
        } else {
            Err(SetError::OtherDetokenizer)
        }
    }
}

/// Steps `slot` by `ids`: a ready stream given one id with a fast-path text only has the id
/// noted as pending; any other step applies the pending entry, steps the stream and brings its
/// state byte up to date (also when the step fails).
#[inline(always)]
fn step_entry(
    det: &Detokenizer,
    slots: &mut [Option<Stream>],
    state: &mut [u8],
    pending: &mut [u32],
    slot: usize,
    ids: &[u32],
) -> Result<(), SetError> {
    let (Some(st), Some(p)) = (state.get_mut(slot), pending.get_mut(slot)) else {
        return Ok(());
    };
    if let ([id], true) = (ids, *st & READY != 0) {
        if let Some((entry, true)) = det.lookup(*id, *st & SKIP != 0) {
            *p = entry;
            return Ok(());
        }
    }
    let Some(Some(stream)) = slots.get_mut(slot) else {
        return Ok(());
    };
    take_pending(stream, p);
    let done = match ids {
        [id] => stream.step_one(*id),
        _ => stream.step(ids).map(drop),
    };
    *st = state_of(stream);
    done.map_err(|error| SetError::Stream { slot, error })
}

/// Applies `stream`'s pending entry `p`, if any, and clears it.
#[inline]
fn take_pending(stream: &mut Stream, p: &mut u32) {
    if *p != NONE {
        stream.apply_fast(*p);
        *p = NONE;
    }
}

#[cfg(test)]
mod tests;
