//! Scoped worker threads joined in the order they were started.

use std::thread::ScopedJoinHandle;

/// The results of `workers`, in order; a worker's panic is resumed on the calling thread (a
/// bug, reported as such, never a silently missing part).
pub(crate) fn join_in_order<T>(workers: Vec<ScopedJoinHandle<'_, T>>) -> Vec<T> {
    workers
        .into_iter()
        .map(|worker| {
            worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .collect()
}
