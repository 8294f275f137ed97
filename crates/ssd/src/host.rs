//! The host side of the device: at most `host_queue_depth` requests in flight.
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

/// The device's host interface: the link that carries each request's command and data, and
/// the controller's DRAM write cache (see [`crate::config::Timing`]: `host_mb_per_s`,
/// `t_cmd_ns`, `write_cache_pages`). With none of them (the default) every method returns the
/// time it is given, so devices without them keep their timings exactly.
///
/// Model: the link serves requests one at a time in the order the device sees them, busy
/// `t_cmd_ns` plus the request's bytes at the link rate; a write crosses it before its pages
/// are programmed, a read after its pages are sensed. A write page takes a cache slot (freed
/// when its program ends) once its data is in; the write completes when every page has a slot.
#[derive(Clone, Debug)]
pub(crate) struct HostInterface {
    link_ps_per_byte: u64,
    t_cmd_ns: u64,
    link_free_ns: u64,
    cache: Option<HostQueue>,
}

impl HostInterface {
    pub fn new(t: &crate::config::Timing) -> HostInterface {
        let on = t.enabled && t.host_mb_per_s > 0.0;
        HostInterface {
            // 10^6 bytes per second per MB/s: 10^6 / rate picoseconds per byte.
            link_ps_per_byte: if on {
                (1e6 / t.host_mb_per_s).round() as u64
            } else {
                0
            },
            t_cmd_ns: if on { t.t_cmd_ns } else { 0 },
            link_free_ns: 0,
            cache: (t.enabled && t.write_cache_pages > 0)
                .then(|| HostQueue::new(t.write_cache_pages)),
        }
    }

    /// Occupy the link from `ready` for one request of `bytes`; returns when it is done.
    fn link(&mut self, ready: SimTime, bytes: u64) -> SimTime {
        if self.link_ps_per_byte == 0 {
            return ready;
        }
        let busy = self.t_cmd_ns + (bytes * self.link_ps_per_byte).div_ceil(1000);
        let start = ready.0.max(self.link_free_ns);
        self.link_free_ns = start.saturating_add(busy);
        SimTime(self.link_free_ns)
    }

    /// When a write of `bytes` issued at `at` has its data in the device.
    pub fn write_in(&mut self, at: SimTime, bytes: u64) -> SimTime {
        self.link(at, bytes)
    }

    /// When a read whose pages are sensed by `sensed` has its data at the host.
    pub fn read_out(&mut self, sensed: SimTime, bytes: u64) -> SimTime {
        self.link(sensed, bytes)
    }

    /// When a write page whose data is in at `data_in` may be programmed (a cache slot).
    pub fn page_slot(&mut self, data_in: SimTime) -> SimTime {
        match &mut self.cache {
            Some(c) => c.issue_time(data_in),
            None => data_in,
        }
    }

    /// When the write of a page given its slot at `slot` and programmed by `programmed`
    /// completes for the host: at its slot with a cache, at its program without.
    pub fn page_done(&mut self, slot: SimTime, programmed: SimTime) -> SimTime {
        match &mut self.cache {
            Some(c) => {
                c.complete(programmed);
                slot
            }
            None => programmed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(mb: f64, cmd: u64, cache: u32) -> crate::config::Timing {
        let mut t = crate::SsdConfig::preset("mlc-sata-2010").unwrap().timing;
        (t.host_mb_per_s, t.t_cmd_ns, t.write_cache_pages) = (mb, cmd, cache);
        t
    }

    #[test]
    fn without_a_link_or_cache_the_interface_takes_no_time() {
        let mut h = HostInterface::new(&timing(0.0, 5000, 0));
        assert_eq!(h.write_in(SimTime(7), 1 << 20), SimTime(7));
        assert_eq!(h.read_out(SimTime(9), 4096), SimTime(9));
        let s = h.page_slot(SimTime(3));
        assert_eq!((s, h.page_done(s, SimTime(50))), (SimTime(3), SimTime(50)));
    }

    #[test]
    fn the_link_serves_one_request_at_a_time() {
        // 100 MB/s: 4096 bytes take 40.96 us; plus 10 us per command.
        let mut h = HostInterface::new(&timing(100.0, 10_000, 0));
        assert_eq!(h.write_in(SimTime(0), 4096), SimTime(50_960));
        assert_eq!(h.read_out(SimTime(0), 4096), SimTime(101_920));
        assert_eq!(h.read_out(SimTime(200_000), 0), SimTime(210_000));
    }

    #[test]
    fn a_write_cache_acknowledges_until_it_is_full() {
        let mut h = HostInterface::new(&timing(0.0, 0, 2));
        let done: Vec<SimTime> = (0..3)
            .map(|_| {
                let s = h.page_slot(SimTime(0));
                h.page_done(s, SimTime(1000 + s.0))
            })
            .collect();
        assert_eq!(done, [SimTime(0), SimTime(0), SimTime(1000)]);
    }

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
