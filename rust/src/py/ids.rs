//! Token ids from Python arguments: one int or a sequence of ints, checked before use. An "int"
//! is anything with `__index__` (numpy's integer scalars among them), and a sequence anything
//! iterable (lists, tuples, generators), for single ids, chunks and prompts alike. A
//! one-dimensional buffer (`bytes`, `array('I')`, a numpy array) is read by its item type, the
//! same for `Stream` and `StreamSet`: bytes are native-endian uint32, four bytes an id.

use pyo3::buffer::{ElementType, PyUntypedBuffer};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
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
    } else if PyUntypedBuffer::get(obj).is_ok_and(|b| b.dimensions() == 1) {
        // A buffer (bytes, array('I'), a numpy array) is read as `StreamSet` reads one: by its
        // item type, bytes as native-endian uint32.
        let mut read = Vec::new();
        flat_u32(obj, &mut read, "token ids").map_err(|(_, e)| e)?;
        out.extend(read);
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

/// Reads a flat sequence of non-negative ints into `out`: a 1-D integer buffer (array('I'),
/// numpy arrays of any integer type; `bytes` and other byte buffers as native-endian uint32),
/// else any iterable of ints. Ids past `u32` become `u32::MAX` (no token), as in `step`. On
/// error, the index of the offending item when there is one.
pub(super) fn flat_u32(
    obj: &Bound<'_, PyAny>,
    out: &mut Vec<u32>,
    what: &str,
) -> Result<(), (Option<usize>, PyErr)> {
    out.clear();
    let py = obj.py();
    if let Ok(list) = obj.cast::<PyList>() {
        out.reserve(list.len());
        for (k, item) in list.iter().enumerate() {
            out.push(id_from(&item).map_err(|e| (Some(k), e))?);
        }
        return Ok(());
    }
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyInt>() {
        let msg = format!(
            "{what} must be a sequence or buffer of ints, not {}",
            type_name(obj)
        );
        return Err((None, PyTypeError::new_err(msg)));
    }
    let Ok(buf) = PyUntypedBuffer::get(obj) else {
        return iterate(obj, out, what);
    };
    let plain = |e: PyErr| (None, e);
    if buf.item_count() == 0 {
        // An empty buffer's pointer may be anything, aligned or not.
        return Ok(());
    }
    if buf
        .buf_ptr()
        .cast::<u8>()
        .align_offset(buf.item_size().max(1))
        != 0
    {
        // Misaligned items (a slice of a byte buffer): read them one by one.
        drop(buf);
        return iterate(obj, out, what);
    }
    if buf.dimensions() != 1 {
        let msg = format!("{what} must be one-dimensional, not {}-D", buf.dimensions());
        return Err((None, PyValueError::new_err(msg)));
    }
    match ElementType::from_format(buf.format()) {
        ElementType::UnsignedInteger { bytes: 4 } => {
            let typed = buf.as_typed::<u32>().map_err(plain)?;
            match typed.as_slice(py) {
                Some(cells) => out.extend(cells.iter().map(|c| c.get())),
                None => *out = typed.to_vec(py).map_err(plain)?,
            }
        }
        ElementType::UnsignedInteger { bytes: 1 } => {
            let raw = buf
                .as_typed::<u8>()
                .and_then(|b| b.to_vec(py))
                .map_err(plain)?;
            if raw.len() % 4 != 0 {
                let msg = format!(
                    "{what} as bytes are native-endian uint32: {} bytes is not a multiple of 4",
                    raw.len()
                );
                return Err((None, PyValueError::new_err(msg)));
            }
            out.extend(
                raw.chunks_exact(4)
                    .map(|c| u32::from_ne_bytes(c.try_into().unwrap_or_default())),
            );
        }
        ElementType::UnsignedInteger { bytes: 8 } => {
            let v = buf
                .as_typed::<u64>()
                .and_then(|b| b.to_vec(py))
                .map_err(plain)?;
            out.extend(v.iter().map(|&x| u32::try_from(x).unwrap_or(u32::MAX)));
        }
        ElementType::UnsignedInteger { bytes: 2 } => {
            let v = buf
                .as_typed::<u16>()
                .and_then(|b| b.to_vec(py))
                .map_err(plain)?;
            out.extend(v.iter().map(|&x| u32::from(x)));
        }
        ElementType::SignedInteger { bytes } if matches!(bytes, 1 | 2 | 4 | 8) => {
            let v: Vec<i64> = match bytes {
                1 => signed::<i8>(&buf, py),
                2 => signed::<i16>(&buf, py),
                4 => signed::<i32>(&buf, py),
                _ => signed::<i64>(&buf, py),
            }
            .map_err(plain)?;
            for (k, &x) in v.iter().enumerate() {
                if x < 0 {
                    return Err((Some(k), Error::NegativeTokenId { id: x }.into()));
                }
                out.push(u32::try_from(x).unwrap_or(u32::MAX));
            }
        }
        _ => {
            let msg = format!(
                "{what} must hold integers, not buffer format {:?}",
                buf.format().to_string_lossy()
            );
            return Err((None, PyTypeError::new_err(msg)));
        }
    }
    // Released here, where the lock is known to be held (a plain drop would check for it).
    buf.release(py);
    Ok(())
}

/// The slow path of [`flat_u32`]: any iterable of ints, item by item.
fn iterate(
    obj: &Bound<'_, PyAny>,
    out: &mut Vec<u32>,
    what: &str,
) -> Result<(), (Option<usize>, PyErr)> {
    let items = obj.try_iter().map_err(|_| {
        let msg = format!(
            "{what} must be a sequence or buffer of ints, not {}",
            type_name(obj)
        );
        (None, PyTypeError::new_err(msg))
    })?;
    for (k, item) in items.enumerate() {
        let item = item.map_err(|e| (Some(k), e))?;
        out.push(id_from(&item).map_err(|e| (Some(k), e))?);
    }
    Ok(())
}

fn signed<T>(buf: &PyUntypedBuffer, py: Python<'_>) -> PyResult<Vec<i64>>
where
    T: pyo3::buffer::Element + Into<i64>,
{
    Ok(buf
        .as_typed::<T>()?
        .to_vec(py)?
        .into_iter()
        .map(Into::into)
        .collect())
}

pub(super) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}
