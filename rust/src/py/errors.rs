//! Core errors -> the exception hierarchy of `tokstream.errors`.

use pyo3::PyErr;

pyo3::import_exception!(tokstream.errors, InvalidTokenIdError);
pyo3::import_exception!(tokstream.errors, InvalidWindowError);
pyo3::import_exception!(tokstream.errors, StreamFinishedError);
pyo3::import_exception!(tokstream.errors, TokenizerLoadError);
pyo3::import_exception!(tokstream.errors, DecodeError);

impl From<crate::Error> for PyErr {
    #[cold]
    fn from(e: crate::Error) -> PyErr {
        let msg = e.to_string();
        match e {
            crate::Error::NegativeTokenId { .. } => InvalidTokenIdError::new_err(msg),
            crate::Error::Finished => StreamFinishedError::new_err(msg),
            crate::Error::InvalidWindow { .. } => InvalidWindowError::new_err(msg),
            crate::Error::Load { .. } => TokenizerLoadError::new_err(msg),
            crate::Error::Decode { .. } => DecodeError::new_err(msg),
        }
    }
}

/// A window that is not even shaped like one (wrong types).
#[cold]
pub(crate) fn invalid_window(msg: String) -> PyErr {
    InvalidWindowError::new_err(msg)
}
