//! A hint to the CPU: bring a cache line in ahead of a read that a loop knows it will make.

/// Asks the CPU to bring the cache line at `p` into its caches; a hint only: it reads nothing
/// the program sees and is a no-op on targets without the instruction.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only moves a line into the cache: it does not fault on any address,
    // valid or not, and changes no state the program can read (Intel SDM, "PREFETCHh").
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
