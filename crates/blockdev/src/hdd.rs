//! `HddModel`: a hard disk's timing over an in-memory store, on a virtual clock.
//!
//! Model: one actuator. An access costs seek + rotational latency + transfer, except that an
//! access starting exactly where the previous one ended streams on (transfer only). Seek time
//! grows with the square root of the distance travelled: `settle + (full_stroke - settle) *
//! sqrt(distance / capacity)` (zero for no movement); rotational latency is its expected value,
//! half a revolution (deterministic, so runs repeat exactly). A batch is served in elevator
//! order: ascending addresses from the head's position, then wrapping to the lowest.
//! Defaults (15 000 rpm, 0.1 ms settle, 1.1 ms full stroke, 150 MB/s) give about 2.6 ms per
//! random 4 KiB access and 150 MB/s sequential.

use crate::{BlockDevice, ClockKind, DevError, DevStats, Io, MemDevice, PageNo, WriteHint};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HddConfig {
    pub rpm: f64,
    pub settle_ns: u64,
    pub full_stroke_ns: u64,
    pub transfer_mb_per_s: f64,
}

impl Default for HddConfig {
    fn default() -> Self {
        HddConfig {
            rpm: 15_000.0,
            settle_ns: 100_000,
            full_stroke_ns: 1_100_000,
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
        if self.full_stroke_ns < self.settle_ns {
            return bad(
                "full_stroke_ns",
                self.full_stroke_ns.to_string(),
                "must be at least settle_ns",
            );
        }
        Ok(())
    }

    /// Mean time of a random single-page access (for reports).
    pub fn mean_random_access_ns(&self, page_bytes: usize) -> f64 {
        // E[sqrt(|U1 - U2|)] = 8/15 for independent uniform positions.
        self.settle_ns as f64
            + (self.full_stroke_ns - self.settle_ns) as f64 * 8.0 / 15.0
            + self.half_rotation_ns()
            + self.transfer_ns(page_bytes)
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
            let c = &self.cfg;
            t += c.settle_ns as f64 + (c.full_stroke_ns - c.settle_ns) as f64 * d.sqrt();
            t += c.half_rotation_ns();
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
        let head = self.head;
        let mut order: Vec<usize> = (0..batch.len()).collect();
        // Elevator: ascending from the head, then the rest ascending.
        order.sort_by_key(|&i| {
            let p = Self::io_page(&batch[i]);
            (p < head, p)
        });
        let mut first_err = None;
        for i in order {
            let r = match &mut batch[i] {
                Io::Read { page, buf } => self.read(*page, buf),
                Io::Write { page, buf, hint } => self.write(*page, buf, *hint),
            };
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
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
        self.store.stats()
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
}
