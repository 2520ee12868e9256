//! The HTTP front binding: `tokstream serve` starts it on a socket Python has bound, then waits
//! (without the interpreter lock) while the front's threads serve, and drains it on SIGTERM.

use std::os::fd::{BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::derender::PyDerenderer;
use crate::front::{
    Bounds, Front, Listener, LogFormat, LogLevel, LogOptions, Options, Render, Runner,
};
use crate::limits;

/// The front serving a `Derenderer` on a listening socket (see `tokstream.launch`).
#[pyclass(frozen, module = "tokstream._core", name = "Front")]
pub struct PyFront {
    inner: Front,
}

fn seconds(name: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| PyValueError::new_err(format!("{name} must be a number of seconds >= 0")))
}

#[pymethods]
impl PyFront {
    #[new]
    #[pyo3(signature = (
        derenderer, fd, models, render, *, unix = false, threads = 1,
        header_timeout = limits::HEADER_TIMEOUT.as_secs_f64(),
        body_timeout = limits::BODY_TIMEOUT.as_secs_f64(),
        keep_alive_timeout = limits::KEEP_ALIVE_TIMEOUT.as_secs_f64(),
        send_timeout = limits::SEND_TIMEOUT.as_secs_f64(),
        max_header_bytes = limits::MAX_HEADER_BYTES, max_body_bytes = limits::MAX_BODY_BYTES,
        max_connections = limits::MAX_CONNECTIONS, offload_bytes = limits::OFFLOAD_BYTES,
        latency_bounds = Vec::new(), bytes_bounds = Vec::new(),
        log_level = "info", log_format = "text", access_log = false,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        derenderer: &PyDerenderer,
        fd: RawFd,
        models: Vec<u8>,
        render: Py<PyAny>,
        unix: bool,
        threads: usize,
        header_timeout: f64,
        body_timeout: f64,
        keep_alive_timeout: f64,
        send_timeout: f64,
        max_header_bytes: usize,
        max_body_bytes: usize,
        max_connections: usize,
        offload_bytes: usize,
        latency_bounds: Vec<f64>,
        bytes_bounds: Vec<f64>,
        log_level: &str,
        log_format: &str,
        access_log: bool,
    ) -> PyResult<Self> {
        let level = LogLevel::of(log_level).ok_or_else(|| {
            PyValueError::new_err(format!(
                "log_level must be debug, info, warning, error or critical, not {log_level:?}"
            ))
        })?;
        let format = match log_format {
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "log_format must be \"text\" or \"json\", not {log_format:?}"
                )));
            }
        };
        if fd < 0 {
            return Err(PyValueError::new_err(
                "fd must be an open socket's descriptor",
            ));
        }
        // SAFETY: the caller's socket object owns `fd` and keeps it open for this call; it is
        // duplicated at once, so the front owns its own descriptor from here on.
        let owned = unsafe { BorrowedFd::borrow_raw(fd) }
            .try_clone_to_owned()
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        let listener = if unix {
            Listener::Unix(std::os::unix::net::UnixListener::from(owned))
        } else {
            Listener::Tcp(std::net::TcpListener::from(owned))
        };
        let opts = Options {
            threads: threads.max(1),
            header_timeout: seconds("header_timeout", header_timeout)?,
            body_timeout: seconds("body_timeout", body_timeout)?,
            keep_alive_timeout: seconds("keep_alive_timeout", keep_alive_timeout)?,
            send_timeout: seconds("send_timeout", send_timeout)?,
            max_header_bytes,
            max_body_bytes,
            max_connections: max_connections.max(1),
            offload_bytes,
            bounds: Bounds {
                latency: latency_bounds,
                bytes: bytes_bounds,
            },
            log: LogOptions {
                level,
                format,
                access: access_log,
            },
        };
        let render: Render = Arc::new(move |snapshots: &str| {
            Python::attach(|py| {
                let answer = render.bind(py).call1((snapshots,));
                match answer {
                    Ok(a) => match a.cast::<PyBytes>() {
                        Ok(b) => b.as_bytes().to_vec(),
                        Err(_) => b"# the metrics renderer did not return bytes\n".to_vec(),
                    },
                    Err(_) => b"# the metrics renderer failed\n".to_vec(),
                }
            })
        });
        // A Python parser's sessions are made and dropped during a derender: attach for it.
        let runner: Option<Runner> = derenderer
            .has_user_parser()
            .then(|| Arc::new(|run: &mut dyn FnMut()| Python::attach(|_| run())) as Runner);
        let wire = derenderer.wire().clone();
        let inner = Front::start(listener, wire, opts, models, render, runner)
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        Ok(PyFront { inner })
    }

    /// Stops accepting, closes idle connections and gives requests in flight `grace` seconds.
    fn drain(&self, grace: f64) -> PyResult<()> {
        self.inner.drain(seconds("grace", grace)?);
        Ok(())
    }

    /// Waits up to `timeout` seconds (the interpreter lock released) for the front to end
    /// after a drain; true once they have.
    fn wait(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        let timeout = seconds("timeout", timeout)?;
        Ok(py.detach(|| self.inner.wait(timeout)))
    }

    /// Whether a large derender is still running on the pool.
    #[getter]
    fn busy(&self) -> bool {
        self.inner.busy()
    }

    /// Every thread's counters, a JSON array of `tokstream.metrics.Metrics` snapshots.
    fn snapshot(&self) -> String {
        self.inner.snapshot()
    }
}
