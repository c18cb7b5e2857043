//! Data parallelism on a persistent pool of spinning worker threads: a
//! parallel step starts in about a microsecond, against tens for a
//! general-purpose pool that sleeps between jobs (a decoded token takes
//! ~150 steps). Workers spin for about a millisecond after a step, then
//! park until the next one. One pool per process, shared by every model.
//!
//! The pool has `AGON_THREADS` threads in all (the caller and the workers;
//! one means no worker and every step on the caller), or one per CPU the
//! process may use when that variable is unset.
//!
//! This module, like the SIMD kernels, allows `unsafe`: a step's closure
//! borrows the caller's stack, and the workers reach it through a pointer
//! whose lifetime the compiler cannot see. The caller does not return (nor
//! unwind) before every worker has signalled that it is done with it.
#![allow(unsafe_code)]

use std::any::Any;
use std::cell::Cell;
use std::hint::spin_loop;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::thread::Thread;

/// Spins before a worker parks (about a millisecond).
const SPIN_LIMIT: u32 = 25_000;

/// A step's work as every participant calls it.
type Job<'a> = dyn Fn() + Sync + 'a;

/// One worker's signals, on its own cache line.
#[repr(align(64))]
struct Slot {
    /// The generation of the step to run, stored by the caller.
    go: AtomicUsize,
    /// The generation last finished, stored by the worker.
    done: AtomicUsize,
}

struct Shared {
    slots: Box<[Slot]>,
    threads: OnceLock<Box<[Thread]>>,
    /// The current step's closure: a `*const &Job` on the caller's stack,
    /// valid while its step runs.
    job: AtomicPtr<()>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// The process's pool.
struct Pool {
    shared: Arc<Shared>,
    /// Serializes callers; holds the last generation.
    generation: Mutex<usize>,
    /// Tells the workers to end (when a pool other than the process's is dropped).
    stop: Arc<AtomicBool>,
}

thread_local! {
    /// Set on the workers and on a caller during its step: a nested
    /// parallel step runs inline instead of waiting on itself.
    static IN_STEP: Cell<bool> = const { Cell::new(false) };
}

static POOL: LazyLock<Pool> = LazyLock::new(|| Pool::new(configured_threads()));

/// Compute threads for the in-process models: `AGON_THREADS`, else one per
/// CPU the process may use (read once).
pub(crate) fn configured_threads() -> usize {
    static THREADS: LazyLock<usize> = LazyLock::new(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        threads_from(std::env::var("AGON_THREADS").ok().as_deref(), cpus)
    });
    *THREADS
}

/// The threads `AGON_THREADS` asks for (`value`), else `cpus`; a value that
/// is not a positive whole number is named in a warning and not used.
fn threads_from(value: Option<&str>, cpus: usize) -> usize {
    match value.map(|v| (v, v.trim().parse::<usize>())) {
        None => cpus,
        Some((_, Ok(n))) if n > 0 => n,
        Some((v, _)) => {
            tracing::warn!(
                "agon-local: AGON_THREADS={v:?} is not a positive whole number; using {cpus} threads (one per CPU)"
            );
            cpus
        }
    }
}

fn record_panic(shared: &Shared, payload: Box<dyn Any + Send>) {
    let mut slot = shared.panic.lock().unwrap_or_else(|p| p.into_inner());
    slot.get_or_insert(payload);
}

fn worker(shared: Arc<Shared>, index: usize, stop: Arc<AtomicBool>) {
    IN_STEP.with(|f| f.set(true));
    let slot = &shared.slots[index];
    let mut seen = 0usize;
    loop {
        let mut spins = 0u32;
        loop {
            let go = slot.go.load(Ordering::Acquire);
            if go != seen {
                seen = go;
                break;
            }
            if stop.load(Ordering::Relaxed) {
                return;
            }
            spins += 1;
            if spins < SPIN_LIMIT {
                spin_loop();
            } else {
                // An unpark before this park makes it return at once.
                std::thread::park();
                spins = 0;
            }
        }
        let job = shared
            .job
            .load(Ordering::Acquire)
            .cast_const()
            .cast::<&Job<'static>>();
        // SAFETY: the caller stored a pointer to a live `&Job` before this
        // generation's `go` (released, acquired above) and keeps both alive
        // until this worker's `done` reaches this generation.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*job)() }));
        if let Err(payload) = result {
            record_panic(&shared, payload);
        }
        slot.done.store(seen, Ordering::Release);
    }
}

impl Pool {
    fn new(threads: usize) -> Self {
        let workers = threads.saturating_sub(1);
        let shared = Arc::new(Shared {
            slots: (0..workers)
                .map(|_| Slot {
                    go: AtomicUsize::new(0),
                    done: AtomicUsize::new(0),
                })
                .collect(),
            threads: OnceLock::new(),
            job: AtomicPtr::new(std::ptr::null_mut()),
            panic: Mutex::new(None),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::with_capacity(workers);
        for index in 0..workers {
            let (for_worker, stop_worker) = (Arc::clone(&shared), Arc::clone(&stop));
            let spawned = std::thread::Builder::new()
                .name(format!("agon-pool-{index}"))
                .spawn(move || worker(for_worker, index, stop_worker));
            match spawned {
                Ok(handle) => handles.push(handle.thread().clone()),
                Err(e) => {
                    // Fewer workers than asked: stop these and start as many
                    // as did start (the steps still run, slower).
                    tracing::warn!("agon-local: starting pool worker {index}: {e}");
                    stop.store(true, Ordering::Relaxed);
                    handles.iter().for_each(Thread::unpark);
                    return Self::new(index + 1);
                }
            }
        }
        let _ = shared.threads.set(handles.into_boxed_slice());
        Self {
            shared,
            generation: Mutex::new(0),
            stop,
        }
    }

    fn workers(&self) -> usize {
        self.shared.slots.len()
    }

    /// Runs `job` on every worker and on the calling thread, and returns
    /// when all have finished (re-raising the first panic of any of them).
    fn run(&self, job: &Job<'_>) {
        if self.workers() == 0 || IN_STEP.with(Cell::get) {
            job();
            return;
        }
        let mut generation = self.generation.lock().unwrap_or_else(|p| p.into_inner());
        *generation = generation.wrapping_add(1);
        let current = *generation;
        // Read by this generation's workers only; `finish` (below, dropped
        // on return and on unwind) waits until every one of them is done.
        let job_ref: &Job<'_> = job;
        let pointer: *const &Job<'_> = &job_ref;
        self.shared
            .job
            .store(pointer.cast_mut().cast::<()>(), Ordering::Release);
        let threads = self.shared.threads.get().map_or(&[][..], |t| &t[..]);
        for (slot, thread) in self.shared.slots.iter().zip(threads) {
            slot.go.store(current, Ordering::Release);
            thread.unpark();
        }
        let finish = Finish {
            shared: &self.shared,
            generation: current,
        };
        IN_STEP.with(|f| f.set(true));
        let own = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        drop(finish);
        let worker_panic = self
            .shared
            .panic
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(generation);
        if let Err(payload) = own {
            std::panic::resume_unwind(payload);
        }
        if let Some(payload) = worker_panic {
            std::panic::resume_unwind(payload);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(threads) = self.shared.threads.get() {
            threads.iter().for_each(Thread::unpark);
        }
    }
}

/// Waits, when dropped, until every worker has finished a step.
struct Finish<'a> {
    shared: &'a Shared,
    generation: usize,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        for slot in self.shared.slots.iter() {
            while slot.done.load(Ordering::Acquire) != self.generation {
                spin_loop();
            }
        }
        self.shared
            .job
            .store(std::ptr::null_mut(), Ordering::Release);
        IN_STEP.with(|f| f.set(false));
    }
}

/// Threads taking part in a parallel step (the workers and the caller).
pub(crate) fn threads() -> usize {
    POOL.workers() + 1
}

/// Calls `f` for every range of `0..n_items`, spread over the pool in
/// about eight pieces per thread taken from a shared cursor (a fast thread
/// takes a straggler's share instead of waiting for it).
fn for_each_range(n_items: usize, f: impl Fn(Range<usize>) + Sync) {
    if n_items == 0 {
        return;
    }
    let chunk = n_items.div_ceil(threads() * 8).max(1);
    let cursor = AtomicUsize::new(0);
    POOL.run(&|| {
        loop {
            let start = cursor.fetch_add(chunk, Ordering::Relaxed);
            if start >= n_items {
                break;
            }
            f(start..n_items.min(start + chunk));
        }
    });
}

/// Calls `f(offset, chunk)` for every `chunk`-sized piece of `out` (the last
/// may be shorter), spread over the pool; `offset` is the piece's index in `out`.
pub(crate) fn for_each_chunk<F>(out: &mut [f32], chunk: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync,
{
    let chunk = chunk.max(1);
    if out.len() <= chunk {
        f(0, out);
        return;
    }
    // Each piece behind its own (never contended) lock: the pool hands out
    // indices to a shared closure, and this is how a piece is lent mutably.
    let pieces: Vec<Mutex<&mut [f32]>> = out.chunks_mut(chunk).map(Mutex::new).collect();
    for_each_range(pieces.len(), |range| {
        for index in range {
            let mut piece = match pieces[index].lock() {
                Ok(piece) => piece,
                Err(poisoned) => poisoned.into_inner(),
            };
            f(index * chunk, &mut piece);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agon_threads_is_read_and_a_bad_value_falls_back_to_the_cpus() {
        assert_eq!(threads_from(None, 2), 2);
        assert_eq!(threads_from(Some(" 3 "), 2), 3);
        assert_eq!(threads_from(Some("0"), 2), 2);
        assert_eq!(threads_from(Some("two"), 2), 2);
    }

    #[test]
    fn every_piece_is_visited_once_with_its_offset() {
        let mut out = vec![0.0f32; 1000];
        for_each_chunk(&mut out, 64, |offset, piece| {
            for (i, v) in piece.iter_mut().enumerate() {
                *v += (offset + i) as f32;
            }
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == i as f32));
    }

    /// A pool of its own with two workers, whatever this machine has.
    #[test]
    fn every_participant_runs_a_step_and_a_panic_reaches_the_caller() {
        let pool = Pool::new(3);
        assert_eq!(pool.workers(), 2);
        for _ in 0..1000 {
            let calls = AtomicUsize::new(0);
            pool.run(&|| {
                calls.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(calls.load(Ordering::Relaxed), 3);
        }
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.run(&|| {
                let name = std::thread::current().name().map(str::to_owned);
                if name.is_some_and(|n| n.starts_with("agon-pool")) {
                    panic!("a worker's panic");
                }
            });
        }));
        assert!(caught.is_err());
        // The pool still works after a panic, and a nested step runs inline.
        let calls = AtomicUsize::new(0);
        pool.run(&|| {
            POOL.run(&|| {
                calls.fetch_add(1, Ordering::Relaxed);
            });
        });
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }
}
