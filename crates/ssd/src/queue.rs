//! A queue of at most `qd` requests in flight: the host's queue (see [`crate::host::HostPort`])
//! and the device's write cache slots (see `crate::link`).
//!
//! Model: requests are issued in order; a request is issued at its arrival time, or — when
//! `qd` requests are already in flight — when the earliest of them completes. At depth 1 a
//! closed-loop host issues each request when the previous one completes. Latency reported
//! by the device is issue to completion (queueing in the host is not included).

use crate::types::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Debug)]
pub struct HostQueue {
    qd: usize,
    floor: SimTime,
    in_flight: BinaryHeap<Reverse<u64>>,
    /// Depth 1 (a closed loop): the one request in flight's completion, without the heap.
    in_flight_one: Option<u64>,
}

impl HostQueue {
    pub fn new(qd: u32) -> HostQueue {
        HostQueue::starting_at(qd, SimTime::ZERO)
    }

    /// An empty queue whose clock starts at `t` (no request issues before it).
    pub fn starting_at(qd: u32, t: SimTime) -> HostQueue {
        assert!(qd >= 1, "queue depth must be at least 1");
        HostQueue {
            qd: qd as usize,
            floor: t,
            // Grows with the requests really in flight; a huge depth allocates nothing up front.
            in_flight: BinaryHeap::with_capacity((qd as usize).min(1024) + 1),
            in_flight_one: None,
        }
    }

    /// The most requests in flight at once.
    #[inline]
    pub fn depth(&self) -> u32 {
        self.qd as u32
    }

    /// Depth 1, after requests that arrived at time zero were each issued when the one
    /// before completed (as [`HostQueue::issue_time`] and [`HostQueue::complete`] in turn
    /// leave it, for a caller that kept the loop's times itself): the last was issued at
    /// `last_at` and completes at `done` (`None`: it did not complete).
    pub(crate) fn end_closed_loop(&mut self, last_at: SimTime, done: Option<SimTime>) {
        assert!(
            self.qd == 1 && self.in_flight_one.is_none() && last_at >= self.floor,
            "a closed loop at depth {} issued at {last_at:?} before {:?}",
            self.qd,
            self.floor
        );
        assert!(
            done.is_none_or(|d| d >= last_at),
            "completion {done:?} before issue {last_at:?}"
        );
        self.floor = last_at;
        self.in_flight_one = done.map(|d| d.0);
    }

    /// When a request arriving at `arrival` is issued to the device.
    #[inline]
    pub fn issue_time(&mut self, arrival: SimTime) -> SimTime {
        let mut t = arrival.max(self.floor);
        if self.qd == 1 {
            // Issued when the one request in flight (if any) has completed.
            if let Some(done) = self.in_flight_one.take() {
                t = t.max(SimTime(done));
            }
            self.floor = t;
            return t;
        }
        // Requests finished by the arrival free their slots.
        while self.in_flight.peek().is_some_and(|r| r.0 <= t.0) {
            self.in_flight.pop();
        }
        if self.in_flight.len() >= self.qd {
            let Reverse(first_done) = self.in_flight.pop().expect("queue is full");
            t = t.max(SimTime(first_done));
        }
        // Issue order is arrival order: nothing issues before the previous issue.
        self.floor = t;
        t
    }

    /// The request issued last completes at `done`.
    #[inline]
    pub fn complete(&mut self, done: SimTime) {
        if self.qd == 1 {
            self.in_flight_one = Some(done.0);
            return;
        }
        self.in_flight.push(Reverse(done.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_one_is_closed_loop() {
        let mut q = HostQueue::new(1);
        assert_eq!(q.issue_time(SimTime(0)), SimTime(0));
        q.complete(SimTime(100));
        assert_eq!(q.issue_time(SimTime(0)), SimTime(100));
        q.complete(SimTime(150));
        assert_eq!(q.issue_time(SimTime(400)), SimTime(400));
    }

    #[test]
    fn depth_n_issues_when_the_earliest_completes() {
        let mut q = HostQueue::new(2);
        assert_eq!(q.issue_time(SimTime(0)), SimTime(0));
        q.complete(SimTime(300));
        assert_eq!(q.issue_time(SimTime(0)), SimTime(0));
        q.complete(SimTime(100));
        assert_eq!(q.issue_time(SimTime(0)), SimTime(100));
        q.complete(SimTime(500));
        assert_eq!(q.issue_time(SimTime(0)), SimTime(300));
    }

    #[test]
    fn starting_at_sets_a_floor() {
        let mut q = HostQueue::starting_at(4, SimTime(1000));
        assert_eq!(q.issue_time(SimTime(5)), SimTime(1000));
    }
}
