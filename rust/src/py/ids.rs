//! Token ids from Python arguments: one int or a sequence of ints, checked before use. An "int"
//! is anything with `__index__` (numpy's integer scalars among them), and a sequence anything
//! iterable (lists, tuples, generators, numpy arrays), for single ids, chunks and prompts alike.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};

use crate::error::Error;
use crate::stream::SEED_IDS;

/// An id as the core takes it: negative is an error, beyond `u32` is "no such token".
pub(super) fn id_from(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    match obj.extract::<i64>() {
        Ok(v) if v < 0 => Err(Error::NegativeTokenId { id: v }.into()),
        Ok(v) => Ok(u32::try_from(v).unwrap_or(u32::MAX)),
        // Past i64 either way (a Python int or numpy's uint64): the sign decides.
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            // The int `__index__` gives (rare: only ids past i64 get here).
            let int = obj.py().import("operator")?.call_method1("index", (obj,))?;
            if int.lt(0)? {
                return Err(Error::NegativeTokenId { id: i64::MIN }.into());
            }
            Ok(u32::MAX)
        }
        Err(_) => Err(PyTypeError::new_err(format!(
            "token ids must be ints, not {}",
            obj.get_type().name()?
        ))),
    }
}

/// `ids`: one int or a sequence of ints, appended to `out`; every id is checked before any is
/// used.
pub(super) fn push_ids(obj: &Bound<'_, PyAny>, out: &mut Vec<u32>) -> PyResult<()> {
    if obj.is_instance_of::<PyInt>() {
        out.push(id_from(obj)?);
    } else if let Ok(list) = obj.cast::<PyList>() {
        let n = list.len();
        if n == 1 {
            // One id a step is the common case; skip the iterator.
            out.push(id_from(&list.get_item(0)?)?);
            return Ok(());
        }
        out.reserve(n);
        for item in list.iter() {
            out.push(id_from(&item)?);
        }
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        for item in tuple.iter() {
            out.push(id_from(&item)?);
        }
    } else if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("token ids must be ints, not str"));
    } else {
        match obj.try_iter() {
            Ok(items) => {
                for item in items {
                    out.push(id_from(&item?)?);
                }
            }
            // Not iterable: one id if it is an int (numpy's integer scalars are not iterable).
            Err(_) => out.push(id_from(obj)?),
        }
    }
    Ok(())
}

/// [`push_ids`] into a cleared buffer.
pub(super) fn ids_from(obj: &Bound<'_, PyAny>, out: &mut Vec<u32>) -> PyResult<()> {
    out.clear();
    push_ids(obj, out)
}

/// The last [`SEED_IDS`] ids of a prompt, read without touching the rest of it, and whether
/// they are surely the whole prompt (fewer than [`SEED_IDS`]: a client sending a suffix sends
/// that many).
pub(super) fn prompt_tail(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<u32>, bool)> {
    let mut tail = Vec::with_capacity(SEED_IDS);
    let len = if let Ok(list) = obj.cast::<PyList>() {
        let len = list.len();
        for i in len.saturating_sub(SEED_IDS)..len {
            tail.push(id_from(&list.get_item(i)?)?);
        }
        len
    } else if let Ok(len) = obj.len() {
        for i in len.saturating_sub(SEED_IDS)..len {
            tail.push(id_from(&obj.get_item(i)?)?);
        }
        len
    } else {
        // No length (a generator): read it all, as `step` does, keeping the last ids.
        let mut all = Vec::new();
        push_ids(obj, &mut all)?;
        tail.extend_from_slice(
            all.get(all.len().saturating_sub(SEED_IDS)..)
                .unwrap_or_default(),
        );
        all.len()
    };
    Ok((tail, len < SEED_IDS))
}
