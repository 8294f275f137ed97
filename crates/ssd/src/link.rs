//! The device's host link and DRAM write cache (timing only).

use crate::config::Timing;
use crate::queue::HostQueue;
use crate::types::SimTime;

/// The device's host interface: the link that carries each request's command and data, and
/// the controller's DRAM write cache (see [`Timing`]: `host_mb_per_s`,
/// `t_cmd_ns`, `write_cache_pages`, `t_write_ack_ns`). With none of them (the default) every method returns the
/// time it is given, so devices without them keep their timings exactly.
///
/// Model: the link serves requests one at a time in the order the device sees them, busy
/// `t_cmd_ns` plus the request's bytes at the link rate; a write crosses it before its pages
/// are programmed, a read after its pages are sensed. A write page takes a cache slot (freed
/// when its program ends) once its data is in; the write completes when every page has a slot,
/// plus the controller's acknowledgement time (`t_write_ack_ns`, which holds nothing).
#[derive(Clone, Debug)]
pub(crate) struct HostInterface {
    link_ps_per_byte: u64,
    t_cmd_ns: u64,
    t_write_ack_ns: u64,
    link_free_ns: u64,
    cache: Option<HostQueue>,
}

impl HostInterface {
    pub fn new(t: &Timing) -> HostInterface {
        let on = t.enabled && t.host_mb_per_s > 0.0;
        HostInterface {
            // 10^6 bytes per second per MB/s: 10^6 / rate picoseconds per byte.
            link_ps_per_byte: if on {
                (1e6 / t.host_mb_per_s).round() as u64
            } else {
                0
            },
            t_cmd_ns: if on { t.t_cmd_ns } else { 0 },
            t_write_ack_ns: if t.enabled { t.t_write_ack_ns } else { 0 },
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
    #[inline]
    pub fn write_in(&mut self, at: SimTime, bytes: u64) -> SimTime {
        self.link(at, bytes)
    }

    /// When a read whose pages are sensed by `sensed` has its data at the host.
    pub fn read_out(&mut self, sensed: SimTime, bytes: u64) -> SimTime {
        self.link(sensed, bytes)
    }

    /// When a write whose pages all have their slots (or, without a cache, are programmed)
    /// by `stored` is acknowledged to the host.
    #[inline]
    pub fn write_acked(&self, stored: SimTime) -> SimTime {
        SimTime(stored.0.saturating_add(self.t_write_ack_ns))
    }

    /// Whether requests cross a link that takes time (else [`HostInterface::write_in`] and
    /// [`HostInterface::read_out`] return the time they are given).
    #[inline]
    pub fn has_link(&self) -> bool {
        self.link_ps_per_byte != 0
    }

    /// The controller's acknowledgement time of a write, ns ([`HostInterface::write_acked`]).
    #[inline]
    pub fn write_ack_ns(&self) -> u64 {
        self.t_write_ack_ns
    }

    /// Whether the device has a write cache (else [`HostInterface::page_slot`] and
    /// [`HostInterface::page_done`] return the time they are given).
    #[inline]
    pub fn has_cache(&self) -> bool {
        self.cache.is_some()
    }

    /// When a write page whose data is in at `data_in` may be programmed (a cache slot).
    #[inline]
    pub fn page_slot(&mut self, data_in: SimTime) -> SimTime {
        match &mut self.cache {
            Some(c) => c.issue_time(data_in),
            None => data_in,
        }
    }

    /// When the write of a page given its slot at `slot` and programmed by `programmed`
    /// completes for the host: at its slot with a cache, at its program without.
    #[inline]
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
        let mut t = crate::config::SsdConfig::preset("mlc-sata-2010")
            .unwrap()
            .timing;
        (t.host_mb_per_s, t.t_cmd_ns, t.write_cache_pages) = (mb, cmd, cache);
        t
    }

    #[test]
    fn a_write_is_acknowledged_its_ack_time_after_it_is_stored() {
        let mut t = timing(0.0, 0, 4);
        assert_eq!(HostInterface::new(&t).write_acked(SimTime(70)), SimTime(70));
        t.t_write_ack_ns = 60_000;
        let h = HostInterface::new(&t);
        assert_eq!(h.write_acked(SimTime(70)), SimTime(60_070));
        t.enabled = false;
        assert_eq!(HostInterface::new(&t).write_acked(SimTime(70)), SimTime(70));
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
}
