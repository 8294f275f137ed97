//! Independent runs on several cores, results in input order: `reproduce --jobs N`.
//!
//! [`map`] / [`try_map`] run a closure over a list of independent jobs (configurations,
//! policies, cache sizes, whole experiments) and return the results in the order of the
//! list, so a report built from them is the same as a serial run's: every job carries its
//! own inputs (its seed derived as a serial run derives it), nothing flows between jobs.
//!
//! One [`Jobs`] budget is shared by every level of nesting (`reproduce all` runs experiments
//! in parallel, each of which runs its configurations in parallel): at most `limit` threads
//! work at once in total. The thread that calls [`map`] always works on the list itself (it
//! already holds a slot of the budget); helper threads take a free slot for each job and give
//! it back after, so a slot freed anywhere is picked up by whichever list still has jobs.
//! A caller whose list has no job left to take lends its own slot while it waits for its
//! helpers, and takes one back before it returns.
//! With `limit` 1, or a list of one job, nothing is spawned: the jobs run on the caller's
//! thread one after another, exactly as a serial loop would.
//!
//! The budget also carries the run's [`Cancel`] token: once it is set, no new job starts (at
//! any level) and the list returns [`Interrupted`] (`map`) or its error type's conversion of
//! it (`try_map`), after the jobs in flight have returned.
//!
//! A panic in a job is carried to the caller (with its message) after the other threads
//! have stopped; with [`try_map`] the first error in list order is returned, and helpers stop
//! taking new jobs after any error (jobs before it in the list have all been taken already,
//! so the error returned is the one a serial run would have stopped at).

use crate::watch::{Cancel, Interrupted};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How many threads may work at once, and the run's stop flag, shared by every run made with
/// (a clone of) it.
#[derive(Clone)]
pub struct Jobs {
    limit: usize,
    /// Slots free for helper threads (the first thread of the whole run holds one of its own).
    free: Arc<(Mutex<usize>, Condvar)>,
    cancel: Cancel,
}

impl Jobs {
    /// A budget of `limit` threads (at least 1).
    pub fn new(limit: usize) -> Jobs {
        let limit = limit.max(1);
        Jobs {
            limit,
            free: Arc::new((Mutex::new(limit - 1), Condvar::new())),
            cancel: Cancel::new(),
        }
    }

    /// The same budget, stopped by `cancel` (clones made before keep their own token).
    pub fn with_cancel(self, cancel: Cancel) -> Jobs {
        Jobs { cancel, ..self }
    }

    /// A budget of `limit` threads with the same stop flag as `self`.
    pub fn resized(&self, limit: usize) -> Jobs {
        Jobs::new(limit).with_cancel(self.cancel.clone())
    }

    /// The run's stop flag: checked before every job of [`map`] and [`try_map`].
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// One thread per core of this machine.
    pub fn cores() -> Jobs {
        Jobs::new(cores())
    }

    /// The budget's size (`--jobs`).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Take a slot, waiting while none is free; `None` once `give_up` says so.
    fn acquire(&self, give_up: impl Fn() -> bool) -> Option<Slot<'_>> {
        let (lock, cv) = &*self.free;
        let mut free = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if give_up() {
                return None;
            }
            if *free > 0 {
                *free -= 1;
                return Some(Slot(self));
            }
            // A timed wait: the list's last job may be taken by its caller without a notify.
            free = cv
                .wait_timeout(free, Duration::from_millis(20))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Jobs {
    /// Give the calling thread's own share to the budget while it only waits.
    fn lend(&self) {
        let (lock, cv) = &*self.free;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        cv.notify_one();
    }

    /// Take back a share given by [`Jobs::lend`], waiting for one to be free: then the
    /// threads at work are again at most `limit`.
    fn reclaim(&self) {
        std::mem::forget(
            self.acquire(|| false)
                .expect("acquire gives up only when asked"),
        );
    }
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs::cores()
    }
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Jobs({})", self.limit)
    }
}

/// The cores this process may use (1 if unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A held slot of a [`Jobs`] budget, given back on drop.
struct Slot<'a>(&'a Jobs);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let (lock, cv) = &*self.0.free;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        cv.notify_one();
    }
}

/// `f` over every item, up to `jobs` at once; the results in the items' order, or
/// [`Interrupted`] once the budget's stop flag is set.
pub fn map<T, R, F>(jobs: &Jobs, items: Vec<T>, f: F) -> Result<Vec<R>, Interrupted>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    try_map(jobs, items, |t| Ok::<R, Interrupted>(f(t)))
}

/// `f` over every item, up to `jobs` at once: the results in the items' order, or the first
/// error in that order (no new job starts after an error, nor once the budget's stop flag is
/// set: the job that would have started returns [`Interrupted`] instead).
pub fn try_map<T, R, E, F>(jobs: &Jobs, items: Vec<T>, f: F) -> Result<Vec<R>, E>
where
    T: Send,
    R: Send,
    E: Send + From<Interrupted>,
    F: Fn(T) -> Result<R, E> + Sync,
{
    let n = items.len();
    let f = |t: T| -> Result<R, E> {
        jobs.cancel.check()?;
        f(t)
    };
    if jobs.limit == 1 || n <= 1 {
        return items.into_iter().map(f).collect();
    }
    let run = Run {
        items: items.into_iter().map(|t| Mutex::new(Some(t))).collect(),
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        results: (0..n).map(|_| Mutex::new(None)).collect(),
        panic: Mutex::new(None),
    };
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..jobs.limit.min(n))
            .map(|_| {
                s.spawn(|| {
                    while let Some(_slot) = jobs.acquire(|| run.exhausted()) {
                        if !run.work_one(&f) {
                            break;
                        }
                    }
                })
            })
            .collect();
        while run.work_one(&f) {}
        // Nothing left to take here: while this thread waits for its helpers' last jobs, its
        // share of the budget goes to a list nested in one of them (was: that core idled, so
        // an experiment left running alone in `reproduce all` got one thread to the end).
        jobs.lend();
        let joined: Vec<_> = helpers.into_iter().map(|h| h.join()).collect();
        jobs.reclaim();
        for j in joined {
            if let Err(p) = j {
                resume_unwind(p);
            }
        }
    });
    if let Some(p) = run.panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
        resume_unwind(p);
    }
    let mut out = Vec::with_capacity(n);
    for r in run.results {
        match r.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => return Err(e),
            // Not taken: only after an error or a panic, which are returned above or earlier.
            None => unreachable!("job not run though no job failed"),
        }
    }
    Ok(out)
}

/// The shared state of one [`try_map`].
struct Run<T, R, E> {
    items: Vec<Mutex<Option<T>>>,
    next: AtomicUsize,
    failed: AtomicBool,
    results: Vec<Mutex<Option<Result<R, E>>>>,
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl<T, R, E> Run<T, R, E> {
    fn exhausted(&self) -> bool {
        self.failed.load(Ordering::Relaxed) || self.next.load(Ordering::Relaxed) >= self.items.len()
    }

    /// Take the next job and run it; false when there was none to take.
    fn work_one(&self, f: &(impl Fn(T) -> Result<R, E> + Sync)) -> bool {
        if self.failed.load(Ordering::Relaxed) {
            return false;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let Some(cell) = self.items.get(i) else {
            return false;
        };
        let item = cell.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(item) = item else {
            unreachable!("job {i} taken twice")
        };
        match catch_unwind(AssertUnwindSafe(|| f(item))) {
            Ok(r) => {
                if r.is_err() {
                    self.failed.store(true, Ordering::Relaxed);
                }
                *self.results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            }
            Err(p) => {
                self.failed.store(true, Ordering::Relaxed);
                self.panic
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(p);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_input_order_at_any_budget() {
        for limit in [1, 2, 3, 8] {
            let jobs = Jobs::new(limit);
            // Later items finish first: order must come from the index, not completion.
            let out = map(&jobs, (0..20u64).collect(), |i| {
                std::thread::sleep(Duration::from_millis(20 - i));
                i * i
            });
            assert_eq!(out, Ok((0..20u64).map(|i| i * i).collect::<Vec<_>>()));
        }
    }

    #[test]
    fn the_first_error_in_list_order_is_returned() {
        let jobs = Jobs::new(4);
        let out = try_map(&jobs, (0..50u32).collect(), |i| match i {
            7 | 30 => Err(Failed::At(i)),
            _ => Ok(i),
        });
        assert_eq!(out, Err(Failed::At(7)));
    }

    #[derive(Debug, PartialEq)]
    enum Failed {
        At(u32),
        Interrupted,
    }

    impl From<Interrupted> for Failed {
        fn from(_: Interrupted) -> Failed {
            Failed::Interrupted
        }
    }

    #[test]
    fn a_set_cancel_token_stops_the_list_and_every_nested_one() {
        for limit in [1, 3] {
            let jobs = Jobs::new(limit);
            let ran = AtomicUsize::new(0);
            let out = try_map(&jobs, (0..40u32).collect(), |i| {
                if i == 5 {
                    jobs.cancel().cancel();
                }
                ran.fetch_add(1, Ordering::SeqCst);
                let inner = map(&jobs, vec![1, 2], |x| x)?;
                Ok::<_, Failed>(inner.len() as u32 + i)
            });
            assert_eq!(out, Err(Failed::Interrupted), "at limit {limit}");
            let ran = ran.load(Ordering::SeqCst);
            assert!(
                (6..=6 + limit).contains(&ran),
                "{ran} jobs ran at limit {limit}"
            );
        }
        let resized = Jobs::new(2).with_cancel(Cancel::new());
        resized.cancel().cancel();
        assert_eq!(map(&resized.resized(4), vec![1], |x| x), Err(Interrupted));
        assert_eq!(map(&Jobs::new(4), vec![1], |x| x), Ok(vec![1]));
    }

    #[test]
    fn nested_runs_never_exceed_the_budget() {
        let jobs = Jobs::new(3);
        let busy = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let leaf = |_: u32| {
            let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(5));
            busy.fetch_sub(1, Ordering::SeqCst);
        };
        let sums = map(&jobs, (0..4u32).collect(), |_| {
            map(&jobs, (0..6u32).collect(), leaf).map_or(0, |v| v.len())
        });
        assert_eq!(sums, Ok(vec![6; 4]));
        let peak = peak.load(Ordering::SeqCst);
        assert!((1..=3).contains(&peak), "peak {peak} threads at once");
    }

    /// The caller's list runs out while a helper's job still runs a nested list: the caller's
    /// share goes to that nested list, which then runs two at a time.
    #[test]
    fn a_caller_with_nothing_left_lends_its_share_to_a_nested_list() {
        let jobs = Jobs::new(2);
        let busy = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let leaf = |_: u32| {
            let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(50));
            busy.fetch_sub(1, Ordering::SeqCst);
        };
        // Item 0 (the caller's, taken at once) is long enough for the helper to take item 1.
        let out = map(&jobs, vec![0u32, 1], |i| match i {
            0 => std::thread::sleep(Duration::from_millis(200)),
            _ => {
                map(&jobs, (0..8u32).collect(), leaf).expect("not cancelled");
            }
        });
        assert_eq!(out, Ok(vec![(), ()]));
        assert_eq!(
            peak.load(Ordering::SeqCst),
            2,
            "the nested list never ran two at once"
        );
        // The budget is whole again: a later list still runs at most two at once.
        peak.store(0, Ordering::SeqCst);
        map(&jobs, (0..6u32).collect(), leaf).expect("not cancelled");
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_panic_reaches_the_caller_with_its_message() {
        let jobs = Jobs::new(2);
        let caught = catch_unwind(|| {
            map(&jobs, (0..6u32).collect(), |i| {
                assert!(i != 3, "job three broke");
                i
            })
        });
        let p = caught.expect_err("the panic is carried");
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert!(msg.contains("job three broke"), "{msg}");
    }
}
