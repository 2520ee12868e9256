//! Python bindings (feature `python`): argument conversion, interpreter-lock policy and error
//! mapping. No semantics live here.

mod classes;
mod derender;
mod errors;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _core {
    #[pymodule_export]
    use super::classes::PyDetokStream;
    #[pymodule_export]
    use super::classes::PyDetokenizer;
    #[pymodule_export]
    use super::derender::PyDerenderer;

    #[allow(non_upper_case_globals)]
    #[pymodule_export]
    const __version__: &str = env!("CARGO_PKG_VERSION");
}
