//! The CPU priority of the embedder's background work: a memory writer's
//! batches and the recalls done ahead of their turns run on threads that
//! lower their own priority, so that on a busy CPU the steps a debate
//! waits on (its next prompt, its model's answer, the store's appends)
//! run first.
//!
//! The one call here is `setpriority(2)`; this module may hold `unsafe`
//! code for it (the crate denies `unsafe` elsewhere, see Cargo.toml).
#![allow(unsafe_code)]

/// The nice value of a background thread: 10, a tenth of the CPU share
/// of a thread at the default 0 when both want a core, and all of it when
/// nothing else does (19, the lowest, measured no better in `cargo xtask
/// bench debate`, and would starve behind any busy process).
pub(crate) const BACKGROUND_NICE: i32 = 10;

/// Lowers the calling thread's priority to [`BACKGROUND_NICE`]. On Linux a
/// nice value belongs to a thread, so only this thread is affected (call
/// it on a thread of one's own: an unprivileged thread cannot raise its
/// priority again). Elsewhere, and where the call is refused, nothing
/// changes: the work runs at the caller's priority.
pub(crate) fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority takes plain integers and touches no memory
        // of this process; with `who = 0` Linux applies it to the calling
        // thread.
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICE) };
    }
}

/// The calling thread's nice value (Linux), for the tests.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn this_thread_nice() -> i32 {
    // SAFETY: as above; getpriority reads the calling thread's value.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_thread_runs_at_the_background_nice_and_its_caller_does_not() {
        let before = this_thread_nice();
        let inside = std::thread::spawn(|| {
            lower_this_thread();
            this_thread_nice()
        })
        .join()
        .expect("the thread ran");
        assert_eq!(inside, BACKGROUND_NICE.max(before));
        assert_eq!(this_thread_nice(), before);
    }
}
