//! How deep the queries may recurse (EF "Loops": "An engine MUST NOT hang on a loop"): the stack a
//! field computation may need before the next one starts, and a counter of the levels of a
//! recursion in progress on a thread ([`DepthGuard`]), which [`crate::field`] and
//! [`crate::derived`] bound. Below every query module.

/// How much stack a field computation may need before the next one starts: a debug build's frames
/// are several times a release build's.
pub(crate) const STACK_RED_ZONE: usize = if cfg!(debug_assertions) {
    512 << 10
} else {
    128 << 10
};

/// How much stack is added at a time where it runs low.
pub(crate) const STACK_SEGMENT: usize = 8 << 20;

/// One level of a recursion counted on this thread, up to a limit (a field computation in
/// progress, [`MAX_FIELD_DEPTH`] of them; a judgement of [`crate::derived`]).
pub(crate) struct DepthGuard(&'static std::thread::LocalKey<std::cell::Cell<usize>>);

impl DepthGuard {
    /// Counts one more level of `counter`, unless `limit` are in progress.
    pub(crate) fn enter(
        counter: &'static std::thread::LocalKey<std::cell::Cell<usize>>,
        limit: usize,
    ) -> Option<DepthGuard> {
        counter.with(|d| {
            if d.get() >= limit {
                None
            } else {
                d.set(d.get() + 1);
                Some(DepthGuard(counter))
            }
        })
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        self.0.with(|d| d.set(d.get().saturating_sub(1)));
    }
}
