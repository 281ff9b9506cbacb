//! Scoped worker threads: started off the core of the thread that starts them, and joined in
//! the order they were started.

use std::thread::{Scope, ScopedJoinHandle};

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

/// The core a thread that starts workers runs on, so that each worker can leave it
/// ([`StarterCore::spawn_scoped`]).
///
/// The open and the context split their work between the calling thread and workers started
/// for the occasion, and they last a few milliseconds. Some kernels start a thread on its
/// parent's core and spread threads out only later: a VM whose kernel packs its vCPUs, such as
/// the 2-vCPU machine the benchmarks run on, kept a new thread on its parent's core for
/// 10–20 ms while the other core stood idle, so a 5 MB `check` ran on one core from start to
/// end (`docs/perf.md`, round 23). A worker started by [`StarterCore::spawn_scoped`] first
/// moves to any other core the process may use, for the rest of its life (so not for a pool
/// thread that is kept); the starting thread is not moved, but yields its core once right after
/// the start, so that a worker queued behind it gets to take that first step at once (round
/// 24). Elsewhere than on Linux, or with one core, nothing changes.
///
/// ```
/// use pi_session_store::StarterCore;
/// let sum = std::thread::scope(|scope| {
///     let worker = StarterCore::current()
///         .spawn_scoped(std::thread::Builder::new(), scope, || (0..100u64).sum::<u64>())
///         .expect("a thread");
///     let here = (100..200u64).sum::<u64>();
///     here + worker.join().unwrap()
/// });
/// assert_eq!(sum, 19_900);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StarterCore {
    /// The starting thread's core, as `sched_getcpu` gave it.
    #[cfg(target_os = "linux")]
    core: usize,
}

impl StarterCore {
    /// The core the calling thread runs on now (on Linux `sched_getcpu`, a vDSO call: no
    /// system call).
    pub fn current() -> Self {
        Self {
            #[cfg(target_os = "linux")]
            core: rustix::thread::sched_getcpu(),
        }
    }

    /// `work` on a new thread of `scope`, made by `builder` (its name, its stack), that first
    /// moves to the process's other cores (see the type), this thread yielding its core once
    /// meanwhile; the error is `builder`'s, when no thread could be made.
    pub fn spawn_scoped<'scope, T: Send + 'scope>(
        self,
        builder: std::thread::Builder,
        scope: &'scope Scope<'scope, '_>,
        work: impl FnOnce() -> T + Send + 'scope,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>> {
        let worker = builder.spawn_scoped(scope, move || {
            self.leave();
            work()
        })?;
        self.let_start();
        Ok(worker)
    }

    /// Gives this core up once, right after starting a worker: a kernel that queued the
    /// worker behind this thread runs it now, and the worker's first step moves it away
    /// ([`Self::leave`]). Without it the worker waited for this thread to block or be
    /// preempted before it could leave: up to 2.7 ms into a 5 MB file's open on the benchmarks'
    /// VM. Where the worker was started on another core, the call returns at once (unless
    /// another thread waits for this core).
    fn let_start(self) {
        #[cfg(target_os = "linux")]
        std::thread::yield_now();
    }

    /// Moves the calling thread (a worker, just started) to the cores the process may use
    /// other than the starting thread's, for the rest of its life. Nothing changes when no
    /// other core is allowed, or when the kernel does not answer or refuses: the worker then
    /// runs where the kernel puts it, as before.
    fn leave(self) {
        #[cfg(target_os = "linux")]
        {
            use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
            if self.core >= CpuSet::MAX_CPU {
                return;
            }
            let Ok(mut allowed) = sched_getaffinity(None) else {
                return;
            };
            if !allowed.is_set(self.core) || allowed.count() < 2 {
                return;
            }
            allowed.unset(self.core);
            // Refused (a seccomp filter, say): the worker stays where it is.
            let _ = sched_setaffinity(None, &allowed);
        }
    }
}

/// Wakes another core for the workers a process is about to start: starts a thread that ends
/// at once, and returns without waiting for it.
///
/// The first worker a process starts runs only once a core that has stood idle wakes up. On
/// the 2-vCPU VM the benchmarks run on, that took 120 µs (the median of 40 opens of a 5 MB
/// file; a halted vCPU waits for the host to run it again), while the core woken by a thread
/// started a few hundred microseconds before was still awake and ran it within ~10 µs. A
/// program that opens a session first thing (the `pi-session` binary) calls this on its first
/// line, before it parses its arguments, when one of them names a file the open reads on
/// threads ([`crate::may_open_on_threads`]): a 5 MB `context` ended 2–3% sooner
/// (`docs/perf.md`, round 47). Not for every process: the thread costs ~50 µs of a short one
/// (a 2 KB file's `context`, 1.01 → 1.07 ms) that starts no worker. Nothing happens with one
/// allowed core or elsewhere than on Linux; a thread that cannot be started is no error (the
/// workers start when they can, as before).
///
/// ```
/// // The first line of a program's `main`; its arguments are parsed, and its session opened,
/// // after it.
/// pi_session_store::wake_another_core();
/// ```
pub fn wake_another_core() {
    #[cfg(target_os = "linux")]
    {
        let allowed = rustix::thread::sched_getaffinity(None).map_or(1, |set| set.count());
        if allowed > 1 {
            // A small stack: the thread does nothing.
            let builder = std::thread::Builder::new()
                .name("pi-session-wake".into())
                .stack_size(64 * 1024);
            drop(builder.spawn(|| {}));
        }
    }
}

/// [`StarterCore::spawn_scoped`] with a default thread, which panics when no thread can be
/// made (as `Scope::spawn`, which the store's other workers are started with).
pub(crate) fn spawn_off_core<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    core: StarterCore,
    work: impl FnOnce() -> T + Send + 'scope,
) -> ScopedJoinHandle<'scope, T> {
    core.spawn_scoped(std::thread::Builder::new(), scope, work)
        .unwrap_or_else(|e| panic!("could not start a worker thread: {e}"))
}

/// `work` of each of `items`, in order: the first on this thread, each other on a thread of
/// its own that leaves this thread's core ([`spawn_off_core`]), started before the first is
/// done here. A worker's panic is resumed here ([`join_in_order`]).
pub(crate) fn map_here_and_off_core<I: Send, T: Send>(
    items: impl IntoIterator<Item = I>,
    work: impl Fn(I) -> T + Sync,
) -> Vec<T> {
    let mut items = items.into_iter();
    let Some(first) = items.next() else {
        return Vec::new();
    };
    let work = &work;
    let mut others = items.peekable();
    if others.peek().is_none() {
        return vec![work(first)];
    }
    let core = StarterCore::current();
    std::thread::scope(|scope| {
        let workers: Vec<_> = others
            .map(|item| spawn_off_core(scope, core, move || work(item)))
            .collect();
        let mut results = Vec::with_capacity(workers.len() + 1);
        results.push(work(first));
        results.extend(join_in_order(workers));
        results
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::StarterCore;
    use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_worker_queued_behind_its_starter_runs_before_the_starter_goes_on() {
        // This thread and its workers on one core: a worker runs only when this thread gives
        // the core up (the case of a kernel that queues a new thread behind its parent).
        let mut one = CpuSet::new();
        one.set(sched_getcpu());
        if sched_setaffinity(None, &one).is_err() {
            println!("SKIPPED: this thread cannot be kept to one core");
            return;
        }
        const ROUNDS: usize = 200;
        let ran_first = (0..ROUNDS)
            .filter(|_| {
                let started = AtomicBool::new(false);
                std::thread::scope(|scope| {
                    let started = &started;
                    StarterCore::current()
                        .spawn_scoped(std::thread::Builder::new(), scope, move || {
                            started.store(true, Ordering::Release);
                        })
                        .expect("a thread");
                    // Asked before this thread waits for anything.
                    started.load(Ordering::Acquire)
                })
            })
            .count();
        // One yield lets the worker run nearly always (a scheduler may still pick the
        // starter again now and then, and more often while the other tests' threads share the
        // core: 173 of 200 in one CI run); without it, never on such a kernel. Half tells the
        // two apart with room for a busy machine.
        assert!(
            ran_first >= ROUNDS / 2,
            "the worker had run when spawn_scoped returned in {ran_first} of {ROUNDS} rounds"
        );
    }

    #[test]
    fn a_worker_leaves_the_starting_core_when_another_is_allowed() {
        let core = StarterCore::current();
        let before = sched_getaffinity(None).expect("the test thread's affinity");
        let (cpu, after) = std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    core.leave();
                    (
                        sched_getcpu(),
                        sched_getaffinity(None).expect("the worker's affinity"),
                    )
                })
                .join()
                .expect("the worker ends")
        });
        if before.is_set(core.core) && before.count() >= 2 {
            assert_ne!(cpu, core.core, "the worker runs on the starting core");
            assert!(!after.is_set(core.core));
            assert_eq!(after.count(), before.count() - 1);
        } else {
            println!("one core allowed: the worker keeps the starter's affinity");
            assert_eq!(after.count(), before.count());
        }
        // The starting thread keeps every core it had.
        let now = sched_getaffinity(None).expect("the test thread's affinity");
        assert_eq!(now.count(), before.count());
    }
}
