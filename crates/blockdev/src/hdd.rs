//! `HddModel`: a hard disk's timing over an in-memory store, on a virtual clock.
//!
//! Model: one actuator, addresses laid out linearly from the outer edge. An access costs seek +
//! rotational latency + transfer, except that an access starting exactly where the previous
//! one ended streams on (transfer only: the next sectors pass under the head). Seek time grows
//! with the square root of the distance travelled, `settle + k * sqrt(distance / capacity)`
//! (zero for no movement), with `k` chosen so that the mean over uniformly random pairs of
//! positions is `avg_seek_ns` (E[sqrt|U1 - U2|] = 8/15). Rotational latency is its expected
//! value, half a revolution — not an angular-position model — so runs repeat exactly and a
//! random access costs its mean. A batch ([`BlockDevice::submit`]) is served in elevator order:
//! ascending addresses from the head's position, then wrapping to the lowest; one actuator
//! means no overlap, but the sort shortens seeks and merges adjacent pages into streaming.
//! Defaults (15 000 rpm: 2 ms half revolution; 0.1 ms settle; 0.6 ms average seek; 150 MB/s)
//! give 2.63 ms per random 4 KiB access and 150 MB/s sequential.

use crate::{
    submit_all, BlockDevice, ClockKind, DevError, DevStats, Io, MemDevice, PageNo, WriteHint,
};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HddConfig {
    /// Spindle speed; rotational latency is half a revolution (default 15 000: 2 ms).
    pub rpm: f64,
    /// Head settle time, the cost of the shortest seek (default 0.1 ms).
    pub settle_ns: u64,
    /// Mean seek time between uniformly random positions, settle included (default 0.6 ms;
    /// a 7 200 rpm desktop disk is about 8.5 ms with `rpm` = 7200).
    pub avg_seek_ns: u64,
    /// Media transfer rate in MB/s (10^6 bytes; default 150).
    pub transfer_mb_per_s: f64,
}

impl Default for HddConfig {
    fn default() -> Self {
        HddConfig {
            rpm: 15_000.0,
            settle_ns: 100_000,
            avg_seek_ns: 600_000,
            transfer_mb_per_s: 150.0,
        }
    }
}

impl HddConfig {
    pub fn validate(&self) -> Result<(), DevError> {
        let bad = |field: &'static str, value: String, reason: &str| {
            Err(DevError::Config {
                field,
                value,
                reason: reason.into(),
            })
        };
        if !(self.rpm.is_finite() && self.rpm > 0.0) {
            return bad("rpm", self.rpm.to_string(), "must be > 0");
        }
        if !(self.transfer_mb_per_s.is_finite() && self.transfer_mb_per_s > 0.0) {
            return bad(
                "transfer_mb_per_s",
                self.transfer_mb_per_s.to_string(),
                "must be > 0",
            );
        }
        if self.avg_seek_ns < self.settle_ns {
            return bad(
                "avg_seek_ns",
                self.avg_seek_ns.to_string(),
                "must be at least settle_ns",
            );
        }
        Ok(())
    }

    /// Mean time of a random single-page access: the model's target (for reports and tests).
    pub fn mean_random_access_ns(&self, page_bytes: usize) -> f64 {
        self.avg_seek_ns as f64 + self.half_rotation_ns() + self.transfer_ns(page_bytes)
    }

    /// Seek time over `fraction` (0..=1) of the address range.
    fn seek_ns(&self, fraction: f64) -> f64 {
        // E[sqrt(|U1 - U2|)] = 8/15 for independent uniform positions.
        let k = (self.avg_seek_ns - self.settle_ns) as f64 * 15.0 / 8.0;
        self.settle_ns as f64 + k * fraction.sqrt()
    }

    fn half_rotation_ns(&self) -> f64 {
        30e9 / self.rpm
    }

    fn transfer_ns(&self, bytes: usize) -> f64 {
        bytes as f64 * 1e3 / self.transfer_mb_per_s
    }
}

pub struct HddModel {
    cfg: HddConfig,
    store: MemDevice,
    head: u64,
    now_ns: u64,
    batches: u64,
}

impl HddModel {
    pub fn new(
        cfg: HddConfig,
        capacity_pages: u64,
        page_bytes: usize,
    ) -> Result<HddModel, DevError> {
        cfg.validate()?;
        Ok(HddModel {
            cfg,
            store: MemDevice::new(page_bytes, capacity_pages),
            head: 0,
            now_ns: 0,
            batches: 0,
        })
    }

    /// Charge the access of `pages` pages at `page` and move the head past them.
    fn access(&mut self, page: PageNo, pages: u64) {
        let cap = self.store.capacity_pages().max(1) as f64;
        let mut t = self
            .cfg
            .transfer_ns(pages as usize * self.store.page_bytes());
        if page != self.head {
            let d = page.abs_diff(self.head) as f64 / cap;
            t += self.cfg.seek_ns(d) + self.cfg.half_rotation_ns();
        }
        self.now_ns += t.round() as u64;
        self.head = page + pages;
    }

    fn io_page(io: &Io<'_>) -> PageNo {
        match io {
            Io::Read { page, .. } | Io::Write { page, .. } => *page,
        }
    }
}

impl BlockDevice for HddModel {
    fn page_bytes(&self) -> usize {
        self.store.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.store.capacity_pages()
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        self.store.read(page, buf)?;
        self.access(page, (buf.len() / self.page_bytes()) as u64);
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.store.write(page, buf, hint)?;
        self.access(page, (buf.len() / self.page_bytes()) as u64);
        Ok(())
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.batches += 1;
        let head = self.head;
        let mut order: Vec<usize> = (0..batch.len()).collect();
        // Elevator: ascending from the head, then the rest ascending.
        order.sort_by_key(|&i| {
            let p = Self::io_page(&batch[i]);
            (p < head, p)
        });
        submit_all(order, |i| match &mut batch[i] {
            Io::Read { page, buf } => self.read(*page, buf),
            Io::Write { page, buf, hint } => self.write(*page, buf, *hint),
        })
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        self.store.trim(page, pages)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.store.flush()
    }
    fn now_ns(&self) -> u64 {
        self.now_ns
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
    fn stats(&self) -> DevStats {
        DevStats {
            batches: self.batches,
            ..self.store.stats()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_access_time_is_near_the_configured_mean() {
        let cfg = HddConfig::default();
        let mut d = HddModel::new(cfg, 1 << 20, 4096).unwrap();
        let mut x = 1u64;
        let mut buf = vec![0u8; 4096];
        let n = 20_000;
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            d.read((x >> 20) % (1 << 20), &mut buf).unwrap();
        }
        let mean = d.now_ns() as f64 / n as f64;
        let want = cfg.mean_random_access_ns(4096);
        assert!((mean - want).abs() / want < 0.05, "{mean} vs {want}");
        assert!(
            (2.4e6..2.9e6).contains(&want),
            "default is about 2.6 ms: {want}"
        );
    }

    #[test]
    fn sequential_access_streams_at_the_transfer_rate() {
        let mut d = HddModel::new(HddConfig::default(), 1 << 16, 4096).unwrap();
        let buf = vec![0u8; 256 * 4096];
        for i in 0..64 {
            d.write(i * 256, &buf, WriteHint::NONE).unwrap();
        }
        let mb_s = (64 * 256 * 4096) as f64 / d.now_ns() as f64 * 1e3;
        assert!(mb_s > 140.0, "{mb_s} MB/s");
    }

    #[test]
    fn a_batch_is_served_in_elevator_order_and_beats_the_same_ios_one_by_one() {
        let pages: Vec<u64> = (0..64u64).map(|i| (i * 7919) % 4096).collect();
        let mut one = HddModel::new(HddConfig::default(), 4096, 4096).unwrap();
        let mut buf = vec![0u8; 4096];
        for &p in &pages {
            one.read(p, &mut buf).unwrap();
        }
        let mut batched = HddModel::new(HddConfig::default(), 4096, 4096).unwrap();
        let mut bufs = vec![vec![0u8; 4096]; pages.len()];
        let mut batch: Vec<Io> = pages
            .iter()
            .zip(bufs.iter_mut())
            .map(|(&page, buf)| Io::Read { page, buf })
            .collect();
        batched.submit(&mut batch).unwrap();
        assert_eq!(batched.stats().batches, 1);
        assert_eq!(batched.stats().read_ios, 64);
        // Sorted, the seeks are short: ~settle each instead of ~avg_seek.
        assert!(
            batched.now_ns() < one.now_ns() * 9 / 10,
            "{} vs {}",
            batched.now_ns(),
            one.now_ns()
        );
        assert_eq!(batched.head, *pages.iter().max().unwrap() + 1);
    }

    #[test]
    fn invalid_settings_name_the_field() {
        let cfg = HddConfig {
            avg_seek_ns: 10,
            ..HddConfig::default()
        };
        assert!(matches!(
            cfg.validate(),
            Err(DevError::Config {
                field: "avg_seek_ns",
                ..
            })
        ));
        let cfg = HddConfig {
            rpm: 0.0,
            ..HddConfig::default()
        };
        assert!(HddModel::new(cfg, 8, 4096).is_err());
    }
}
