//! Read-priority scheduling on a die (`timing.read_priority`): the operations booked on each
//! die's timeline, so that a host read can be served ahead of the programs, copies and erases
//! queued there, waiting only for the one operation running when it arrives.
//!
//! Model (the controller's "read priority scheduling", RPS, of Wu & He, "Reducing SSD read
//! latency via NAND flash program and erase suspension", FAST 2012, and MQSim's out-of-order
//! transaction scheduler, which serves a die's user-read queue before its write, GC and erase
//! queues): an operation once started on a die runs to its end (no suspension; that is
//! `timing.reads_suspend_programs`); a read arriving at `t` starts when the operation running
//! at `t` ends (or at `t` if the die is idle), after the die's earlier reads; every operation
//! queued behind it starts later by the read's time, as far as the die stays busy (an idle gap
//! absorbs the delay). A copy-back run of GC copies is a run of equal operations: a read waits
//! only for the copy in progress.
//!
//! What it does not move: a delayed program's completion already handed to the host's write
//! cache slot (the cache frees that slot as booked), and the channel transfers booked for the
//! queued programs (the read's own transfer still waits for the channel).
//!
//! Invariants (asserted): the booked operations of a die are sorted by start and do not
//! overlap; each has a positive period that divides into its length at most once per page.
//! Memory is bounded: operations that ended before the latest read's arrival are dropped, and
//! at most [`BOOKED_MAX`] are kept per die (the oldest dropped first).

use std::collections::VecDeque;

/// The most operations kept per die: far more than a die ever has queued (a write cache of a
/// few thousand pages over its dies, plus a GC burst), so dropping the oldest changes nothing
/// a read can see unless a host books work far ahead of its reads.
pub(crate) const BOOKED_MAX: usize = 4096;

/// One operation (or a run of `len / period_ns` equal ones) on a die's timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Booked {
    start_ns: u64,
    end_ns: u64,
    /// The length of one operation of the run (`end - start` for a single one).
    period_ns: u64,
    /// A host read (placed ahead of the queue), not a program, copy or erase.
    read: bool,
}

impl Booked {
    /// When the operation running at `t` (start <= t < end) ends.
    fn op_end_after(&self, t: u64) -> u64 {
        let done = (t - self.start_ns).div_ceil(self.period_ns);
        self.start_ns
            .saturating_add(done.saturating_mul(self.period_ns))
            .min(self.end_ns)
    }
}

/// The booked operations of every die (see the module's model).
#[derive(Clone, Debug)]
pub(crate) struct DieQueues {
    per_die: Vec<VecDeque<Booked>>,
    /// The latest time a read arrived at (any die): bookings that ended by then are dropped.
    /// Not a booking's own time: GC books copies one after another far ahead of the host, and
    /// the reads that arrive meanwhile must still find them.
    horizon_ns: u64,
}

impl DieQueues {
    pub fn new(dies: usize) -> DieQueues {
        DieQueues {
            per_die: vec![VecDeque::new(); dies],
            horizon_ns: 0,
        }
    }

    /// Forget every booking (the flash falls idle).
    pub fn clear(&mut self) {
        self.per_die.iter_mut().for_each(VecDeque::clear);
        self.horizon_ns = 0;
    }

    /// Die `die` runs `ops` equal operations of `period_ns` each from `start_ns`, after
    /// everything already booked there.
    pub fn book(&mut self, die: usize, start_ns: u64, period_ns: u64, ops: u64) {
        if ops == 0 || period_ns == 0 {
            return;
        }
        let q = &mut self.per_die[die];
        prune(q, self.horizon_ns);
        let end_ns = start_ns.saturating_add(period_ns.saturating_mul(ops));
        if let Some(last) = q.back() {
            assert!(
                start_ns >= last.end_ns,
                "die {die}: an operation booked at {start_ns} ns overlaps one ending at {} ns",
                last.end_ns
            );
        }
        if q.len() == BOOKED_MAX {
            q.pop_front();
        }
        q.push_back(Booked {
            start_ns,
            end_ns,
            period_ns,
            read: false,
        });
    }

    /// A host read of `t_read_ns` arriving at `now_ns` on die `die`: when its sense starts,
    /// with the operations queued behind it delayed. Returns (start, the die's new busy-until).
    pub fn read(&mut self, die: usize, now_ns: u64, t_read_ns: u64) -> (u64, u64) {
        self.horizon_ns = self.horizon_ns.max(now_ns);
        let q = &mut self.per_die[die];
        prune(q, now_ns);
        // The first operation still running or queued at `now` (prune left only those).
        let (start_ns, at) = match q.front().copied() {
            Some(op) if op.start_ns <= now_ns => {
                let cut = op.op_end_after(now_ns);
                if cut < op.end_ns {
                    // A run of copies: the read goes between the copy in progress and the next.
                    q[0].end_ns = cut;
                    let rest = Booked {
                        start_ns: cut,
                        ..op
                    };
                    q.insert(1, rest);
                }
                (cut, 1)
            }
            _ => (now_ns, 0),
        };
        // Earlier reads already placed ahead of the queue go first.
        let (start_ns, at) = after_reads(q, start_ns, at);
        let end_ns = start_ns.saturating_add(t_read_ns);
        q.insert(
            at,
            Booked {
                start_ns,
                end_ns,
                period_ns: t_read_ns.max(1),
                read: true,
            },
        );
        shift_after(q, at + 1, end_ns);
        if q.len() > BOOKED_MAX {
            q.pop_front();
        }
        (start_ns, q.back().map_or(end_ns, |b| b.end_ns))
    }
}

/// Drop the operations that ended by `now_ns`.
fn prune(q: &mut VecDeque<Booked>, now_ns: u64) {
    while q.front().is_some_and(|b| b.end_ns <= now_ns) {
        q.pop_front();
    }
}

/// Skip over the reads placed from `start_ns` on, back to back (they arrived earlier and are
/// served first, in arrival order): the start and position for a read after them.
fn after_reads(q: &VecDeque<Booked>, mut start_ns: u64, mut at: usize) -> (u64, usize) {
    while let Some(b) = q.get(at) {
        if b.start_ns != start_ns || !b.read {
            break;
        }
        start_ns = b.end_ns;
        at += 1;
    }
    (start_ns, at)
}

/// Operations from index `from` on start no earlier than `free_ns` (the die is busy until
/// then): each is pushed back as far as needed, and the push stops at the first that need not
/// move (an idle gap took the delay).
fn shift_after(q: &mut VecDeque<Booked>, from: usize, mut free_ns: u64) {
    for b in q.iter_mut().skip(from) {
        if b.start_ns >= free_ns {
            break;
        }
        let by = free_ns - b.start_ns;
        b.start_ns = free_ns;
        b.end_ns = b.end_ns.saturating_add(by);
        free_ns = b.end_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROG: u64 = 700;
    const READ: u64 = 100;

    /// Die 0 with three programs booked back to back from time 0.
    fn three_programs() -> DieQueues {
        let mut q = DieQueues::new(2);
        for i in 0..3 {
            q.book(0, i * PROG, PROG, 1);
        }
        q
    }

    #[test]
    fn a_read_on_an_idle_die_starts_at_once() {
        let mut q = three_programs();
        assert_eq!(q.read(1, 50, READ), (50, 150));
    }

    #[test]
    fn a_read_waits_for_the_running_program_only_and_delays_the_queued_ones() {
        let mut q = three_programs();
        // Program 0 runs until 700; programs 1 and 2 (700..2100) move back by the read.
        assert_eq!(q.read(0, 300, READ), (PROG, 3 * PROG + READ));
        // A second read at the same time follows the first, ahead of the programs still queued.
        assert_eq!(q.read(0, 300, READ), (PROG + READ, 3 * PROG + 2 * READ));
    }

    #[test]
    fn a_read_goes_between_the_copies_of_a_gc_run() {
        let mut q = DieQueues::new(1);
        q.book(0, 0, PROG, 10);
        // Copy 2 of 10 (1400..2100) is in progress at 1500.
        assert_eq!(q.read(0, 1500, READ), (3 * PROG, 10 * PROG + READ));
        // The run's remaining copies follow the read.
        assert_eq!(
            q.read(0, 2 * PROG + READ + 1, READ),
            (3 * PROG + READ, 10 * PROG + 2 * READ)
        );
    }

    #[test]
    fn an_idle_gap_absorbs_the_delay() {
        let mut q = DieQueues::new(1);
        q.book(0, 0, PROG, 1);
        q.book(0, PROG + 2 * READ, PROG, 1);
        // The read (700..800) ends before the second program's start: nothing moves.
        assert_eq!(q.read(0, 10, READ), (PROG, 2 * PROG + 2 * READ));
    }

    #[test]
    fn ended_operations_are_dropped_and_the_queue_is_bounded() {
        let mut q = DieQueues::new(1);
        for i in 0..(BOOKED_MAX as u64 + 10) {
            q.book(0, i * PROG, PROG, 1);
        }
        assert_eq!(q.per_die[0].len(), BOOKED_MAX);
        q.read(0, (BOOKED_MAX as u64 + 9) * PROG + 1, READ);
        assert_eq!(q.per_die[0].len(), 2, "the last program and the read");
    }
}
