//! One YCSB driver for every key-value engine: the [`Engine`] adapter trait and the driver
//! loop [`drive`], used by `flashlab kv load/run` and by the `compare` benchmark alike, so
//! both measure the same way.
//!
//! Model: the driver turns each [`YcsbOp`] into engine calls (read = `get`, update and insert
//! = `put` of a value made by [`ycsb::fill_value`], read-modify-write = both, scan = `scan` of
//! up to its record count from its key, each record's key and value lent to the driver, which
//! counts the value bytes: every engine hands over each value without copying it) and times each operation into an HDR histogram, in
//! nanoseconds of the engine's clock: wall time, or the device's virtual time when the engine
//! runs on a simulated device ([`Engine::simulated_ns`]). A durable `commit` closes every
//! `commit_every` operations when the group wrote something (a group of reads has nothing to
//! make durable), and the phase ends with one when anything is left; the operation that
//! closes a group includes its commit in its latency.

use std::ops::Bound;
use std::time::Instant;
use workload::ycsb::{self, YcsbConfig, YcsbOp};

/// An operation the engine refused, with where in the phase it happened.
#[derive(Debug, thiserror::Error)]
#[error("{engine}, phase {phase}, operation {op}: {source}")]
pub struct DriveError {
    pub engine: String,
    pub phase: String,
    /// Operations of the phase done before the failing one.
    pub op: u64,
    #[source]
    pub source: EngineError,
}

/// An engine's own error, carried through the driver.
pub type EngineError = Box<dyn std::error::Error + Send + Sync>;

/// What the driver needs of a key-value engine (get / put / delete / scan / commit).
pub trait Engine {
    /// Short name for tables and JSON.
    fn name(&self) -> &str;
    /// The length of `key`'s value (the value is read, not skipped), None when absent.
    fn get(&mut self, key: &[u8]) -> Result<Option<usize>, EngineError>;
    /// Set `key` to `value` (visible to this handle at once; durable after `commit`).
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), EngineError>;
    /// Remove `key` (durable after `commit`).
    fn delete(&mut self, key: &[u8]) -> Result<(), EngineError>;
    /// Read up to `records` records in key order from `start` (inclusive), each key and value
    /// lent to `visit` (borrowed from the engine: no copy per record); how many were read.
    fn scan(
        &mut self,
        start: &[u8],
        records: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, EngineError>;
    /// Make every earlier write durable before returning.
    fn commit(&mut self) -> Result<(), EngineError>;
    /// Bytes the engine wrote to its device by its own count (None: it does not count).
    fn bytes_written(&self) -> Option<u64> {
        None
    }
    /// Bytes the engine read from its device by its own count (None: it does not count).
    fn bytes_read(&self) -> Option<u64> {
        None
    }
    /// The virtual clock of a simulated device, ns (None: the engine runs in wall time).
    fn simulated_ns(&self) -> Option<u64> {
        None
    }
}

/// One phase of one engine, measured by [`drive`].
#[derive(Clone, Debug)]
pub struct Phase {
    pub engine: String,
    pub phase: String,
    pub ops: u64,
    /// Wall seconds, or simulated seconds when the engine runs on a simulated device.
    pub seconds: f64,
    pub simulated: bool,
    pub commits: u64,
    pub reads: u64,
    pub reads_found: u64,
    pub scans: u64,
    pub scanned_records: u64,
    /// Value bytes the scans lent the driver.
    pub scanned_value_bytes: u64,
    /// Latency of each operation, ns.
    pub hist: hdrhistogram::Histogram<u64>,
    /// [`Engine::bytes_written`] during the phase.
    pub bytes_written: Option<u64>,
    /// [`Engine::bytes_read`] during the phase.
    pub bytes_read: Option<u64>,
}

impl Phase {
    pub fn ops_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ops as f64 / self.seconds
        } else {
            0.0
        }
    }
    /// The `q` quantile of the operation latency, µs.
    pub fn quantile_us(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / 1e3
    }
    pub fn bytes_written_per_op(&self) -> Option<f64> {
        self.bytes_written
            .map(|b| b as f64 / self.ops.max(1) as f64)
    }
}

/// The engine's clock: (wall start, simulated start).
struct Clock(Instant, Option<u64>);

impl Clock {
    fn start(e: &dyn Engine) -> Clock {
        Clock(Instant::now(), e.simulated_ns())
    }
    fn elapsed_ns(&self, e: &dyn Engine) -> u64 {
        match (self.1, e.simulated_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => self.0.elapsed().as_nanos() as u64,
        }
    }
}

/// Run `ops` against `e` (see the module docs); `progress` hears the operations done so far
/// every 1,024 operations.
pub fn drive(
    e: &mut dyn Engine,
    phase: &str,
    ops: impl Iterator<Item = YcsbOp>,
    cfg: &YcsbConfig,
    commit_every: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Phase, DriveError> {
    let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
        .map_err(|err| fail(e, phase, 0, err.into()))?;
    let (written0, read0) = (e.bytes_written(), e.bytes_read());
    let whole = Clock::start(e);
    let mut p = Phase {
        engine: e.name().to_string(),
        phase: phase.to_string(),
        ops: 0,
        seconds: 0.0,
        simulated: e.simulated_ns().is_some(),
        commits: 0,
        reads: 0,
        reads_found: 0,
        scans: 0,
        scanned_records: 0,
        scanned_value_bytes: 0,
        hist: hist.clone(),
        bytes_written: None,
        bytes_read: None,
    };
    let mut dirty = false;
    let mut value = vec![0u8; cfg.value_bytes as usize];
    for op in ops {
        let t0 = Clock::start(e);
        let r = one_op(e, op, cfg, &mut value, &mut p).and_then(|wrote| {
            dirty |= wrote;
            let closes = commit_every > 0 && (p.ops + 1).is_multiple_of(commit_every);
            if closes && dirty {
                dirty = false;
                p.commits += 1;
                return e.commit();
            }
            Ok(())
        });
        r.map_err(|err| fail(e, phase, p.ops, err))?;
        hist.saturating_record(t0.elapsed_ns(e).max(1));
        p.ops += 1;
        if p.ops.is_multiple_of(1024) {
            progress(p.ops);
        }
    }
    if dirty {
        e.commit().map_err(|err| fail(e, phase, p.ops, err))?;
        p.commits += 1;
    }
    p.seconds = whole.elapsed_ns(e) as f64 / 1e9;
    p.hist = hist;
    let delta = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
    p.bytes_written = delta(written0, e.bytes_written());
    p.bytes_read = delta(read0, e.bytes_read());
    Ok(p)
}

/// Apply one operation; whether it wrote.
fn one_op(
    e: &mut dyn Engine,
    op: YcsbOp,
    cfg: &YcsbConfig,
    value: &mut Vec<u8>,
    p: &mut Phase,
) -> Result<bool, EngineError> {
    let name = ycsb::key_name(op.key(), cfg.key_bytes);
    let mut write = |e: &mut dyn Engine, key: u64, bytes: u32| {
        value.resize(bytes as usize, 0);
        ycsb::fill_value(value, key, p.ops);
        e.put(name.as_bytes(), value)
    };
    match op {
        YcsbOp::Read { .. } => {
            p.reads += 1;
            p.reads_found += u64::from(e.get(name.as_bytes())?.is_some());
            Ok(false)
        }
        YcsbOp::Update { key, value_bytes } | YcsbOp::Insert { key, value_bytes } => {
            write(e, key, value_bytes)?;
            Ok(true)
        }
        YcsbOp::ReadModifyWrite { key, value_bytes } => {
            p.reads += 1;
            p.reads_found += u64::from(e.get(name.as_bytes())?.is_some());
            write(e, key, value_bytes)?;
            Ok(true)
        }
        YcsbOp::Scan { records, .. } => {
            p.scans += 1;
            let mut bytes = 0u64;
            let n = e.scan(name.as_bytes(), records as usize, &mut |_, v| {
                bytes += v.len() as u64;
            })?;
            p.scanned_records += n as u64;
            p.scanned_value_bytes += bytes;
            Ok(false)
        }
    }
}

fn fail(e: &dyn Engine, phase: &str, op: u64, source: EngineError) -> DriveError {
    DriveError {
        engine: e.name().to_string(),
        phase: phase.to_string(),
        op,
        source,
    }
}

/// flashlab's key-value store as a driver engine.
impl Engine for engine::kv::Store {
    fn name(&self) -> &str {
        "flashlab"
    }
    fn get(&mut self, key: &[u8]) -> Result<Option<usize>, EngineError> {
        Ok(self.get_with(key, <[u8]>::len)?)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), EngineError> {
        Ok(engine::kv::Store::put(self, key, value)?)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), EngineError> {
        Ok(engine::kv::Store::delete(self, key)?)
    }
    fn scan(
        &mut self,
        start: &[u8],
        records: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, EngineError> {
        // Each record lent in place (no copy per key), as the other engines' cursors lend it.
        let range = (Bound::Included(start), Bound::Unbounded);
        Ok(self.scan_each(range, records, visit)?)
    }
    fn commit(&mut self) -> Result<(), EngineError> {
        engine::kv::Store::commit(self)?;
        Ok(())
    }
    fn bytes_written(&self) -> Option<u64> {
        let pager = self.pager();
        Some(pager.stats().pages_written * pager.page_bytes() as u64)
    }
    fn bytes_read(&self) -> Option<u64> {
        let pager = self.pager();
        Some(pager.stats().pages_read * pager.page_bytes() as u64)
    }
    fn simulated_ns(&self) -> Option<u64> {
        let pager = self.pager();
        (pager.device().clock_kind() == blockdev::ClockKind::Simulated).then(|| pager.now_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::kv::{Options, Store};
    use workload::ycsb::CoreWorkload;

    fn store() -> Store {
        let dev = Box::new(blockdev::MemDevice::new(4096, 4096));
        Store::open(dev, Options::default()).unwrap()
    }

    #[test]
    fn a_commit_closes_every_group_that_wrote_and_reads_find_every_record() {
        let mut s = store();
        let cfg = YcsbConfig {
            records: 300,
            operations: 300,
            value_bytes: 100,
            ..YcsbConfig::default()
        };
        let mut heard = Vec::new();
        let load = drive(
            &mut s,
            "load",
            ycsb::load(&cfg).unwrap(),
            &cfg,
            100,
            &mut |n| heard.push(n),
        )
        .unwrap();
        assert_eq!((load.ops, load.commits, load.reads), (300, 3, 0));
        assert!(load.bytes_written.unwrap() >= 300 * 100);
        let c = YcsbConfig {
            workload: CoreWorkload::C,
            ..cfg
        };
        let run = drive(&mut s, "c", ycsb::run(&c).unwrap(), &c, 100, &mut |_| {}).unwrap();
        assert_eq!((run.reads, run.reads_found, run.commits), (300, 300, 0));
        assert_eq!(run.bytes_written, Some(0));
        // 250 updates: the last group of 50 is committed at the end.
        let u = YcsbConfig {
            workload: CoreWorkload::UpdateOnly,
            operations: 250,
            ..cfg
        };
        let run = drive(
            &mut s,
            "update",
            ycsb::run(&u).unwrap(),
            &u,
            100,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(run.commits, 3);
        let e = YcsbConfig {
            workload: CoreWorkload::E,
            ..cfg
        };
        let run = drive(&mut s, "e", ycsb::run(&e).unwrap(), &e, 100, &mut |_| {}).unwrap();
        assert!(run.scans > 0 && run.scanned_records >= run.scans);
        // Every scanned record lent its whole value (100 bytes each).
        assert_eq!(run.scanned_value_bytes, run.scanned_records * 100);
        assert_eq!(run.hist.len(), 300);
    }

    /// An engine that fails its n-th put.
    struct Failing(u32);

    impl Engine for Failing {
        fn name(&self) -> &str {
            "failing"
        }
        fn get(&mut self, _: &[u8]) -> Result<Option<usize>, EngineError> {
            Ok(None)
        }
        fn put(&mut self, _: &[u8], _: &[u8]) -> Result<(), EngineError> {
            self.0 = self.0.saturating_sub(1);
            if self.0 == 0 {
                return Err("disk on fire".into());
            }
            Ok(())
        }
        fn delete(&mut self, _: &[u8]) -> Result<(), EngineError> {
            Ok(())
        }
        fn scan(
            &mut self,
            _: &[u8],
            _: usize,
            _: &mut dyn FnMut(&[u8], &[u8]),
        ) -> Result<usize, EngineError> {
            Ok(0)
        }
        fn commit(&mut self) -> Result<(), EngineError> {
            Ok(())
        }
    }

    #[test]
    fn an_engine_error_names_the_engine_phase_and_operation() {
        let cfg = YcsbConfig {
            records: 10,
            ..YcsbConfig::default()
        };
        let e = drive(
            &mut Failing(5),
            "load",
            ycsb::load(&cfg).unwrap(),
            &cfg,
            0,
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("failing") && e.contains("load") && e.contains("operation 4"),
            "{e}"
        );
        assert!(e.contains("disk on fire"), "{e}");
    }
}
