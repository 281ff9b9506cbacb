//! Parts of a branch read on several threads and taken in their order on this one
//! ([`read_parts_in_turn`]).
//!
//! The thread that takes the parts reads them too. With a thread of its own for each core
//! besides it, the taking thread shared a core with a reader: woken by a part sent, it was put
//! on the sender's core and waited there behind the other reader while a core stood idle
//! (`perf sched` of the 100k chain's `context`: a core idle ~16% of the reading), and the
//! readers, one part ahead, waited for it. Now there are as many threads as cores (this one
//! included): no thread waits for a core, and a part not read yet is read by whichever of them
//! is free.

use std::sync::mpsc;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::error::{Error, Result};

/// The reader number [`read_parts_in_turn`] gives its own thread (its helpers are `1..`).
pub(crate) const TAKER: usize = 0;

/// Reads `parts` (positions of a branch, in order) on up to `threads` threads, this one
/// included (`read`, given the part and the number of the thread reading it: [`TAKER`] for
/// this one), and takes each in order on this one (`take`). What `take` is done with (it may
/// hold a part back and give up an earlier one) goes back to the thread that read it
/// (`reader_of`) to be freed there, where it was allocated (that thread's next part reuses the
/// memory). The first error, of a read or of `take`, ends the walk. [`walk_parts_in_turn`]
/// with a walk that takes every part.
pub(crate) fn read_parts_in_turn<T: Send, E: From<Error>>(
    parts: &[&[usize]],
    threads: usize,
    read: impl Fn(&[usize], usize) -> Result<T> + Sync,
    reader_of: impl Fn(&T) -> usize,
    mut take: impl FnMut(T) -> std::result::Result<Option<T>, E>,
) -> std::result::Result<(), E> {
    walk_parts_in_turn(parts, threads, read, reader_of, |turns| {
        while let Some(part) = turns.next() {
            if let Some(done_with) = take(part?)? {
                turns.done_with(done_with);
            }
        }
        Ok(())
    })
}

/// Starts reading `parts` (positions of a branch, in order) on up to `threads` threads, this
/// one included (`read`, given the part and the number of the thread reading it: [`TAKER`]
/// for this one), and runs `walk` here, which takes the parts in order ([`InTurn::next`]),
/// after work of its own if it has any: the other threads read the first parts meanwhile. A
/// part is read by the first thread free to, never more than [`AHEAD_PER_THREAD`] parts a
/// thread past the next one to take; this thread reads one while the next part to take is
/// being read elsewhere. What the walk is done with goes back to the thread that read it
/// (`reader_of`, [`InTurn::done_with`]). When `walk` returns, however it does (an error, or
/// before it took every part), the other threads stop after the part each is reading.
pub(crate) fn walk_parts_in_turn<T: Send, R, E>(
    parts: &[&[usize]],
    threads: usize,
    read: impl Fn(&[usize], usize) -> Result<T> + Sync,
    reader_of: impl Fn(&T) -> usize,
    walk: impl FnOnce(&mut InTurn<'_, T>) -> std::result::Result<R, E>,
) -> std::result::Result<R, E>
where
    E: From<Error>,
{
    let helpers = threads.clamp(1, parts.len().max(1)) - 1;
    let turns = Turns::new(parts.len(), helpers);
    let (turns, read) = (&turns, &read);
    std::thread::scope(|scope| {
        // Whatever ends this walk, the helpers stop (and the scope can join them).
        let _stop = StopOnDrop(turns);
        let mut to_free = Vec::with_capacity(helpers);
        for helper in 1..=helpers {
            let (done, freed) = mpsc::channel::<T>();
            let builder = std::thread::Builder::new().name("pi-session-read".into());
            pi_session_store::StarterCore::current()
                .spawn_scoped(builder, scope, move || {
                    while let Some(at) = turns.claim_ahead() {
                        drop(freed.try_iter().collect::<Vec<_>>());
                        let mut slot = Unfilled { turns, at };
                        let part = parts.get(at).copied().unwrap_or_default();
                        slot.fill(read(part, helper));
                    }
                })
                .map_err(|e| Error::io("could not start a thread that reads the branch", e))?;
            to_free.push(done);
        }
        walk(&mut InTurn {
            turns,
            parts,
            read,
            reader_of: &reader_of,
            to_free,
            next: 0,
        })
    })
}

/// The parts of [`walk_parts_in_turn`], taken in order on the walking thread.
pub(crate) struct InTurn<'a, T> {
    turns: &'a Turns<T>,
    parts: &'a [&'a [usize]],
    read: &'a (dyn Fn(&[usize], usize) -> Result<T> + Sync),
    reader_of: &'a dyn Fn(&T) -> usize,
    /// Where what the walk is done with goes, for each helper (`1..`).
    to_free: Vec<mpsc::Sender<T>>,
    /// The next part to take.
    next: usize,
}

impl<T> InTurn<'_, T> {
    /// The next part, in order (`None` after the last): read by a helper, or here when no
    /// thread has claimed it yet; while a helper reads it, this thread reads a later part if
    /// it may, else waits.
    pub(crate) fn next(&mut self) -> Option<Result<T>> {
        let at = self.next;
        if at >= self.parts.len() {
            return None;
        }
        self.next += 1;
        let (parts, read) = (self.parts, self.read);
        Some(self.turns.next_to_take(at, |other| {
            let part = parts.get(other).copied().unwrap_or_default();
            read(part, TAKER)
        }))
    }

    /// `part`, which the walk is done with, handed back to the thread that read it, to be
    /// freed there (here if that thread has ended, or read it here).
    pub(crate) fn done_with(&self, part: T) {
        let reader = (self.reader_of)(&part);
        if let Some(done) = reader.checked_sub(1).and_then(|at| self.to_free.get(at)) {
            drop(done.send(part));
        }
    }
}

/// How far past the next part to take a part may be read: each thread about two parts ahead,
/// as when each reader kept one part ready while it read the next.
const AHEAD_PER_THREAD: usize = 2;

/// The state [`read_parts_in_turn`]'s threads share.
struct Turns<T> {
    state: Mutex<State<T>>,
    /// Signalled when a part is read, a part is taken, or the walk stops.
    changed: Condvar,
    /// How far past the next part to take a part may be claimed.
    ahead: usize,
}

struct State<T> {
    /// The first part no thread has claimed.
    next: usize,
    /// The next part to take.
    taken: usize,
    /// The parts read and not taken yet, by number.
    read: Vec<Option<Result<T>>>,
    /// The walk ended: no more parts are claimed.
    stopped: bool,
    /// How many threads wait on the condition variable ([`Turns::wait`]): a change no thread
    /// waits for is not signalled ([`Turns::signal_change`]; a signal is a system call each
    /// time, waiter or not: two a part).
    waiting: usize,
}

impl<T> Turns<T> {
    fn new(parts: usize, helpers: usize) -> Self {
        let mut read = Vec::new();
        read.resize_with(parts, || None);
        Self {
            state: Mutex::new(State {
                next: 0,
                taken: 0,
                read,
                stopped: false,
                waiting: 0,
            }),
            changed: Condvar::new(),
            ahead: AHEAD_PER_THREAD * (helpers + 1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A thread that panicked holding the lock left the state whole: each change is one
        // assignment.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'g>(&self, mut state: MutexGuard<'g, State<T>>) -> MutexGuard<'g, State<T>> {
        state.waiting += 1;
        let mut state = self
            .changed
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
        state.waiting -= 1;
        state
    }

    /// Signals a change made under `state` to the threads waiting for one, if any (counted
    /// under the lock: a thread about to wait holds it until it waits).
    fn signal_change(&self, state: MutexGuard<'_, State<T>>) {
        let waiting = state.waiting > 0;
        drop(state);
        if waiting {
            self.changed.notify_all();
        }
    }

    /// The next part no thread has claimed, claimed, unless every part is or it runs
    /// [`Self::ahead`] past the next to take (or the walk has stopped).
    fn claim(&self, state: &mut State<T>) -> Option<usize> {
        let free = !state.stopped
            && state.next < state.read.len()
            && state.next < state.taken + self.ahead;
        free.then(|| {
            state.next += 1;
            state.next - 1
        })
    }

    /// A helper's next part, claimed ([`Self::claim`]), waiting while it may not claim one;
    /// `None` when every part is claimed or the walk has stopped.
    fn claim_ahead(&self) -> Option<usize> {
        let mut state = self.lock();
        loop {
            if state.stopped || state.next >= state.read.len() {
                return None;
            }
            if let Some(at) = self.claim(&mut state) {
                return Some(at);
            }
            state = self.wait(state);
        }
    }

    /// Part `at` (the next to take), read: by a helper, or here (`read`) when no thread has
    /// claimed it; while a helper reads it, this thread reads a later part if it may claim one
    /// ([`Self::claim`]), else waits.
    fn next_to_take(&self, at: usize, read: impl Fn(usize) -> Result<T>) -> Result<T> {
        let mut state = self.lock();
        let part = loop {
            if let Some(part) = state.read.get_mut(at).and_then(Option::take) {
                break part;
            }
            if let Some(claimed) = self.claim(&mut state) {
                drop(state);
                let part = read(claimed);
                state = self.lock();
                if claimed == at {
                    break part;
                }
                if let Some(slot) = state.read.get_mut(claimed) {
                    *slot = Some(part);
                }
                continue;
            }
            state = self.wait(state);
        };
        state.taken = at + 1;
        self.signal_change(state);
        part
    }

    /// Part `at`, read: kept for the taker.
    fn fill(&self, at: usize, part: Result<T>) {
        let mut state = self.lock();
        if let Some(slot) = state.read.get_mut(at) {
            *slot = Some(part);
        }
        self.signal_change(state);
    }

    fn stop(&self) {
        let mut state = self.lock();
        state.stopped = true;
        self.signal_change(state);
    }
}

/// Stops the walk when [`read_parts_in_turn`] returns, however it does.
struct StopOnDrop<'t, T>(&'t Turns<T>);

impl<T> Drop for StopOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// A part a helper claimed and has not filled: filled with an error if the helper unwinds
/// before it does, so that the taker waiting for it does not wait forever.
struct Unfilled<'t, T> {
    turns: &'t Turns<T>,
    at: usize,
}

impl<T> Unfilled<'_, T> {
    fn fill(&mut self, part: Result<T>) {
        self.turns.fill(self.at, part);
        self.at = usize::MAX;
    }
}

impl<T> Drop for Unfilled<'_, T> {
    fn drop(&mut self) {
        if self.at != usize::MAX {
            self.turns.fill(
                self.at,
                Err(Error::invalid_input(
                    "a thread reading the branch ended early (a bug)",
                )),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{AHEAD_PER_THREAD, TAKER, read_parts_in_turn, walk_parts_in_turn};
    use crate::error::Error;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Parts of one position each, `0..n`.
    fn parts(n: usize) -> Vec<Vec<usize>> {
        (0..n).map(|at| vec![at]).collect()
    }

    #[test]
    fn parts_are_taken_in_order_whoever_reads_them() {
        for threads in 1..=4 {
            for n in [1, 2, 3, 7, 40] {
                let owned = parts(n);
                let parts: Vec<&[usize]> = owned.iter().map(Vec::as_slice).collect();
                let readers = Mutex::new(Vec::new());
                let mut taken = Vec::new();
                let walked = read_parts_in_turn(
                    &parts,
                    threads,
                    |part, by| {
                        readers.lock().unwrap().push(by);
                        Ok((part[0], by))
                    },
                    |&(_, by)| by,
                    |(at, by)| {
                        taken.push(at);
                        Ok::<_, Error>(Some((at, by)))
                    },
                );
                assert!(walked.is_ok(), "{threads} threads, {n} parts");
                assert_eq!(taken, (0..n).collect::<Vec<_>>(), "{threads} threads");
                let readers = readers.into_inner().unwrap();
                assert_eq!(readers.len(), n, "each part read once");
                assert!(
                    readers.iter().all(|&by| by < threads.min(n)),
                    "{readers:?} with {threads} threads"
                );
                if threads == 1 {
                    assert!(readers.iter().all(|&by| by == TAKER));
                }
            }
        }
    }

    #[test]
    fn a_failed_read_ends_the_walk_with_its_error() {
        for threads in 1..=3 {
            let owned = parts(30);
            let parts: Vec<&[usize]> = owned.iter().map(Vec::as_slice).collect();
            let mut taken = Vec::new();
            let walked = read_parts_in_turn(
                &parts,
                threads,
                |part, _| match part[0] {
                    11 => Err(Error::invalid_input("part 11 is bad")),
                    at => Ok(at),
                },
                |_| TAKER,
                |at| {
                    taken.push(at);
                    Ok::<_, Error>(None)
                },
            );
            let error = walked.expect_err("the bad part ends the walk");
            assert!(error.to_string().contains("part 11 is bad"), "{error}");
            assert_eq!(taken, (0..11).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn a_failed_take_stops_the_readers() {
        for threads in 1..=3 {
            let owned = parts(500);
            let parts: Vec<&[usize]> = owned.iter().map(Vec::as_slice).collect();
            let read = Mutex::new(0usize);
            let walked = read_parts_in_turn(
                &parts,
                threads,
                |part, _| {
                    *read.lock().unwrap() += 1;
                    Ok(part[0])
                },
                |_| TAKER,
                |at| match at {
                    // Time for the helpers to read as far ahead as they may.
                    3 => {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        Err(Error::invalid_input("took enough"))
                    }
                    _ => Ok::<_, Error>(None),
                },
            );
            assert!(walked.is_err());
            // No part is read more than two a thread past the last taken (part 3), and none
            // after the walk ends.
            let read = read.into_inner().unwrap();
            assert!(
                read <= 4 + 2 * threads,
                "{read} parts read with {threads} threads"
            );
        }
    }

    #[test]
    fn a_reader_that_panics_is_an_error_not_a_hang() {
        let owned = parts(2);
        let parts: Vec<&[usize]> = owned.iter().map(Vec::as_slice).collect();
        let helper_started = AtomicBool::new(false);
        let walked = std::panic::catch_unwind(|| {
            read_parts_in_turn(
                &parts,
                2,
                |part, by| {
                    if by != TAKER {
                        helper_started.store(true, Ordering::SeqCst);
                        panic!("a reader's bug");
                    }
                    // This thread reads one part and leaves the other to the helper.
                    while !helper_started.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    Ok(part[0])
                },
                |_| TAKER,
                |_| Ok::<_, Error>(None),
            )
        });
        // The helper's part is filled with an error (the walk does not wait for it forever)
        // and its panic reaches the caller when the scope joins it.
        assert!(walked.is_err());
    }

    /// The other threads read the first parts while the walk does work of its own before it
    /// takes one (a head built and sent); it then takes every part in order, and a walk that
    /// stops early stops the readers, which read no further than they may ahead.
    #[test]
    fn parts_are_read_while_the_walk_works_before_taking_them() {
        let owned = parts(40);
        let parts: Vec<&[usize]> = owned.iter().map(Vec::as_slice).collect();
        for stop_after in [None, Some(2)] {
            let read = Mutex::new(Vec::new());
            let walked = walk_parts_in_turn(
                &parts,
                2,
                |part, by| {
                    read.lock().unwrap().push((part[0], by));
                    Ok((part[0], by))
                },
                |&(_, by)| by,
                |turns| {
                    // The work before the first part: done once the helper has read ahead
                    // as far as it may (or after 10 s, when the check below fails).
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                    while read.lock().unwrap().len() < 2 * AHEAD_PER_THREAD
                        && std::time::Instant::now() < deadline
                    {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    let before = read.lock().unwrap().clone();
                    let mut taken = Vec::new();
                    while let Some(part) = turns.next() {
                        let (at, by) = part?;
                        taken.push(at);
                        turns.done_with((at, by));
                        if Some(taken.len()) == stop_after {
                            break;
                        }
                    }
                    Ok::<_, Error>((before, taken))
                },
            );
            let (before, taken) = walked.unwrap();
            assert_eq!(
                before,
                (0..2 * AHEAD_PER_THREAD)
                    .map(|at| (at, 1))
                    .collect::<Vec<_>>(),
                "the helper reads the first parts, in order, before any is taken"
            );
            let read = read.into_inner().unwrap();
            match stop_after {
                None => {
                    assert_eq!(taken, (0..40).collect::<Vec<_>>());
                    assert_eq!(read.len(), 40, "each part read once");
                }
                Some(stop) => {
                    assert_eq!(taken, (0..stop).collect::<Vec<_>>());
                    assert!(read.len() <= stop + 2 * AHEAD_PER_THREAD, "{read:?}");
                }
            }
        }
    }
}
