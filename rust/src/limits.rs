//! The HTTP server's limits and their defaults: the front's (`front::Options::default`), which
//! `tokstream serve` reads through `_core`.

use std::time::Duration;

/// A connection's request line and headers must arrive within this (then 408, or closed).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's body may stop arriving for this long (then 408).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// An idle keep-alive connection stays open this long after its last answer.
pub const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(5);
/// An answer may wait this long for a client that does not read it (then the connection is
/// closed).
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request line and headers, in all (431 above it, never buffered).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Largest request body (413 above it): an 8,000-token whole response with 20 alternatives per
/// logprob position is about 10 MB.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
/// Open connections a worker serves; more are answered 503.
pub const MAX_CONNECTIONS: usize = 2048;
/// Bodies at least this long are derendered off the connections' loop.
pub const OFFLOAD_BYTES: usize = 64 * 1024;
/// How long a refused connection is drained for before it is closed, so the client reads its
/// answer instead of a reset.
pub const LINGER: Duration = Duration::from_secs(2);
/// How many bytes a refused connection is drained of, at most (see [`LINGER`]).
pub const LINGER_BYTES: usize = 256 * 1024;
