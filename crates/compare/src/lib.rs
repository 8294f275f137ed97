//! Side-by-side YCSB benchmark (issue 11, "Speed"): flashlab's key-value store
//! (`engine::kv::Store`) against redb and LMDB (through `heed`), on real files, in one run.
//!
//! Every engine sits behind the one adapter trait the `flashlab kv` command uses too,
//! `lab::harness::kv_bench::driver::Engine` (get / put / delete / scan / commit), and runs through its one
//! driver loop, `lab::harness::kv_bench::driver::drive` (each operation timed into an HDR histogram, a
//! durable commit closing every `commit_every` operations). [`measure`] wraps that loop with
//! the bytes written, measured two ways around each phase:
//! - **host bytes**: what the engine handed to the kernel — `wchar` of `/proc/self/io` (bytes
//!   passed to write/pwrite system calls) for redb and LMDB, and the pager's own count of
//!   pages written for flashlab, whose writes go through io_uring, which `wchar` does not see;
//! - **block bytes**: `write_bytes` of `/proc/self/io`, what the process caused to be sent
//!   to the block layer. Exact for O_DIRECT (flashlab), but for buffered writes the kernel
//!   accounts whole page-cache folios when they turn dirty (on this ext4, rewriting one
//!   4 KiB page after an fsync counts 64 KiB), so it overstates redb's and LMDB's writes.
//!
//! The redb and LMDB adapters are compiled only with the `compare` feature, so the default
//! build needs neither crate (nor LMDB's C source). The RocksDB adapter (`rocksdb` feature)
//! calls RocksDB's C API in the system library (Debian's `librocksdb-dev`), declared by hand
//! in `rocks.rs`: the `rocksdb` crate would compile RocksDB's C++ from source (minutes on two
//! cores) and needs libclang for its generated bindings. Its host bytes are `wchar` too, which
//! counts its background threads' flushes and compactions (a compaction still running when a
//! phase ends is counted in the next phase).

use anyhow::Result;
use lab::harness::kv_bench::driver::{self, Engine};
use std::path::PathBuf;
use workload::ycsb::{YcsbConfig, YcsbOp};

/// A field of `/proc/self/io` (`wchar`, `write_bytes`, ...); None where the kernel does not
/// report it.
pub fn proc_io(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    parse_proc_io(&text, field)
}

fn parse_proc_io(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| *k == field)
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// The process's CPU time (user + system, every thread), ns; None where the clock is missing.
pub fn process_cpu_ns() -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    let secs = u64::try_from(t.tv_sec).ok()?;
    let nanos = u64::try_from(t.tv_nsec).ok()?;
    (rc == 0).then(|| secs * 1_000_000_000 + nanos)
}

fn delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// Allocated bytes on disk of the given files (st_blocks × 512; absent files count 0); a
/// directory counts the files in it (RocksDB's SST and WAL files change as it runs).
pub fn allocated_bytes(files: &[PathBuf]) -> u64 {
    files.iter().map(|f| allocated_bytes_of(f)).sum()
}

fn allocated_bytes_of(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| e.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.blocks() * 512)
                    .sum()
            })
            .unwrap_or(0),
        Ok(m) => m.blocks() * 512,
        Err(_) => 0,
    }
}

/// One phase of one engine, measured.
pub struct Measured {
    /// What the driver measured (operations, latency, commits, reads).
    pub run: driver::Phase,
    /// Bytes handed to the kernel during the phase (see the crate docs; None: not reported).
    pub host_bytes: Option<u64>,
    /// `/proc/self/io` write_bytes during the phase (None: not reported by this kernel).
    pub block_bytes: Option<u64>,
    /// Allocated size of the engine's files after the phase.
    pub disk_bytes: u64,
    /// CPU time of the whole process during the phase, ns (every thread: an engine's
    /// background work too); unlike the wall time, it leaves out the time the process waited
    /// for a CPU on a loaded machine (None: no CPU clock).
    pub cpu_ns: Option<u64>,
}

impl Measured {
    pub fn host_bytes_per_op(&self) -> Option<f64> {
        self.host_bytes
            .map(|b| b as f64 / self.run.ops.max(1) as f64)
    }
    /// CPU µs per operation (see `cpu_ns`).
    pub fn cpu_us_per_op(&self) -> Option<f64> {
        self.cpu_ns
            .map(|ns| ns as f64 / 1e3 / self.run.ops.max(1) as f64)
    }
    pub fn block_bytes_per_op(&self) -> Option<f64> {
        self.block_bytes
            .map(|b| b as f64 / self.run.ops.max(1) as f64)
    }
}

/// Run `ops` against `e` through the shared driver, and measure the bytes it wrote (its own
/// count where it keeps one, else `wchar`) and the allocated size of `files` afterwards.
pub fn measure(
    e: &mut dyn Engine,
    files: &[PathBuf],
    phase: &str,
    ops: impl Iterator<Item = YcsbOp>,
    cfg: &YcsbConfig,
    commit_every: u64,
) -> Result<Measured> {
    let (wchar0, wb0) = (proc_io("wchar"), proc_io("write_bytes"));
    let cpu0 = process_cpu_ns();
    let run = driver::drive(e, phase, ops, cfg, commit_every, &mut |_| {})?;
    let cpu_ns = delta(cpu0, process_cpu_ns());
    let host_bytes = match run.bytes_written {
        Some(b) => Some(b),
        None => delta(wchar0, proc_io("wchar")),
    };
    Ok(Measured {
        run,
        host_bytes,
        block_bytes: delta(wb0, proc_io("write_bytes")),
        disk_bytes: allocated_bytes(files),
        cpu_ns,
    })
}

#[cfg(feature = "compare")]
pub use others::{Lmdb, Redb};

#[cfg(feature = "rocksdb")]
mod rocks;
#[cfg(feature = "rocksdb")]
pub use rocks::{Rocks, RocksConfig, RocksError};

#[cfg(feature = "compare")]
mod others {
    use anyhow::{Context, Result};
    use lab::harness::kv_bench::driver::{Engine, EngineError};
    use redb::ReadableTable;
    use std::path::Path;

    const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("usertable");

    /// redb in one file, default durability (`Immediate`: commit fsyncs). Puts of a commit
    /// group share one write transaction; reads between commits use it (to see its puts) or
    /// one read transaction kept until the next write.
    pub struct Redb {
        db: redb::Database,
        write: Option<redb::WriteTransaction>,
        read: Option<redb::ReadTransaction>,
    }

    impl Redb {
        pub fn create(path: &Path) -> Result<Redb> {
            let db = redb::Database::create(path)
                .with_context(|| format!("creating redb {}", path.display()))?;
            let w = db.begin_write()?;
            w.open_table(TABLE)?;
            w.commit()?;
            Ok(Redb {
                db,
                write: None,
                read: None,
            })
        }
    }

    impl Redb {
        fn writer(&mut self) -> Result<&redb::WriteTransaction, EngineError> {
            self.read = None;
            if self.write.is_none() {
                self.write = Some(self.db.begin_write()?);
            }
            Ok(self.write.as_ref().expect("set above"))
        }

        fn reader(&mut self) -> Result<&redb::ReadTransaction, EngineError> {
            if self.read.is_none() {
                self.read = Some(self.db.begin_read()?);
            }
            Ok(self.read.as_ref().expect("set above"))
        }
    }

    /// Lend up to `n` records of `range` to `visit`; how many.
    fn lend<'a>(
        range: redb::Range<'a, &'static [u8], &'static [u8]>,
        n: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, EngineError> {
        let mut got = 0;
        for r in range.take(n) {
            let (k, v) = r?;
            visit(k.value(), v.value());
            got += 1;
        }
        Ok(got)
    }

    impl Engine for Redb {
        fn name(&self) -> &str {
            "redb"
        }
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), EngineError> {
            self.writer()?.open_table(TABLE)?.insert(key, value)?;
            Ok(())
        }
        fn delete(&mut self, key: &[u8]) -> Result<(), EngineError> {
            self.writer()?.open_table(TABLE)?.remove(key)?;
            Ok(())
        }
        fn get(&mut self, key: &[u8]) -> Result<Option<usize>, EngineError> {
            if let Some(w) = &self.write {
                let t = w.open_table(TABLE)?;
                return Ok(t.get(key)?.map(|v| v.value().len()));
            }
            let t = self.reader()?.open_table(TABLE)?;
            let found = t.get(key)?.map(|v| v.value().len());
            Ok(found)
        }
        fn scan(
            &mut self,
            start: &[u8],
            records: usize,
            visit: &mut dyn FnMut(&[u8], &[u8]),
        ) -> Result<usize, EngineError> {
            if let Some(w) = &self.write {
                let t = w.open_table(TABLE)?;
                return lend(t.range(start..)?, records, visit);
            }
            let t = self.reader()?.open_table(TABLE)?;
            lend(t.range(start..)?, records, visit)
        }
        fn commit(&mut self) -> Result<(), EngineError> {
            if let Some(w) = self.write.take() {
                w.commit()?;
            }
            Ok(())
        }
    }

    /// LMDB through heed, in a directory (`data.mdb`), default flags (commit fsyncs).
    /// The environment is leaked for the process's lifetime so that transactions can be
    /// kept across calls (heed ties them to a borrow of the environment).
    pub struct Lmdb {
        env: &'static heed::Env,
        db: heed::Database<heed::types::Bytes, heed::types::Bytes>,
        write: Option<heed::RwTxn<'static>>,
        read: Option<heed::RoTxn<'static>>,
    }

    impl Lmdb {
        pub fn create(dir: &Path, map_bytes: usize) -> Result<Lmdb> {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            // SAFETY: heed's contract — the environment's files are not opened twice in this
            // process nor modified by anything else while open; the directory is our own.
            let env = unsafe { heed::EnvOpenOptions::new().map_size(map_bytes).open(dir) }
                .with_context(|| format!("opening LMDB {}", dir.display()))?;
            let env: &'static heed::Env = Box::leak(Box::new(env));
            let mut w = env.write_txn()?;
            let db = env.create_database(&mut w, None)?;
            w.commit()?;
            Ok(Lmdb {
                env,
                db,
                write: None,
                read: None,
            })
        }
    }

    impl Lmdb {
        fn writer(&mut self) -> Result<&mut heed::RwTxn<'static>, EngineError> {
            self.read = None;
            if self.write.is_none() {
                self.write = Some(self.env.write_txn()?);
            }
            Ok(self.write.as_mut().expect("set above"))
        }

        fn reader(&mut self) -> Result<&heed::RoTxn<'static>, EngineError> {
            if self.read.is_none() {
                self.read = Some(self.env.read_txn()?);
            }
            Ok(self.read.as_ref().expect("set above"))
        }
    }

    impl Engine for Lmdb {
        fn name(&self) -> &str {
            "lmdb"
        }
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), EngineError> {
            let db = self.db;
            db.put(self.writer()?, key, value)?;
            Ok(())
        }
        fn delete(&mut self, key: &[u8]) -> Result<(), EngineError> {
            let db = self.db;
            db.delete(self.writer()?, key)?;
            Ok(())
        }
        fn get(&mut self, key: &[u8]) -> Result<Option<usize>, EngineError> {
            if let Some(w) = &self.write {
                return Ok(self.db.get(w, key)?.map(|v| v.len()));
            }
            let db = self.db;
            Ok(db.get(self.reader()?, key)?.map(|v| v.len()))
        }
        fn scan(
            &mut self,
            start: &[u8],
            records: usize,
            visit: &mut dyn FnMut(&[u8], &[u8]),
        ) -> Result<usize, EngineError> {
            use std::ops::Bound;
            let range = (Bound::Included(start), Bound::Unbounded);
            let db = self.db;
            let mut got = 0;
            if let Some(w) = &self.write {
                for r in db.range(w, &range)?.take(records) {
                    let (k, v) = r?;
                    visit(k, v);
                    got += 1;
                }
                return Ok(got);
            }
            for r in db.range(self.reader()?, &range)?.take(records) {
                let (k, v) = r?;
                visit(k, v);
                got += 1;
            }
            Ok(got)
        }
        fn commit(&mut self) -> Result<(), EngineError> {
            if let Some(w) = self.write.take() {
                w.commit()?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::kv::{Options, Store};
    use workload::ycsb::{self, CoreWorkload};

    #[test]
    fn write_bytes_parses_proc_io() {
        let text =
            "rchar: 1\nwchar: 2\nread_bytes: 0\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_proc_io(text, "write_bytes"), Some(8192));
        assert_eq!(parse_proc_io(text, "wchar"), Some(2));
        assert_eq!(parse_proc_io(text, "cancelled_write_bytes"), Some(0));
        assert_eq!(parse_proc_io("rchar: 1\n", "write_bytes"), None);
    }

    /// Held by every test that runs an engine: host bytes are the process's `/proc/self/io`
    /// counters, which another test's writes, run on a parallel test thread, would add to
    /// (redb's and LMDB's load wrote 537 KB into RocksDB's phase C once).
    static ENGINE_RUN: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// One engine-running test at a time in this process (see [`ENGINE_RUN`]); a test that
    /// panicked leaves the lock poisoned, which the next one takes anyway.
    fn one_engine_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        ENGINE_RUN.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn small_run(e: &mut dyn Engine, files: &[PathBuf]) -> Vec<Measured> {
        let base = YcsbConfig {
            records: 300,
            operations: 300,
            value_bytes: 100,
            ..YcsbConfig::default()
        };
        let load = ycsb::load(&base).unwrap();
        let mut out = vec![measure(e, files, "load", load, &base, 100).unwrap()];
        for w in [CoreWorkload::A, CoreWorkload::C, CoreWorkload::E] {
            let cfg = YcsbConfig {
                workload: w,
                ..base
            };
            let run = ycsb::run(&cfg).unwrap();
            out.push(measure(e, files, w.name(), run, &cfg, 100).unwrap());
        }
        out
    }

    #[test]
    fn driver_runs_load_and_reads_find_every_record_on_flashlab() {
        let _one = one_engine_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            file_pages: 4096,
            ..Options::default()
        };
        let path = dir.path().join("f.db");
        let mut e = Store::open_path(&path, opts).unwrap();
        let phases = small_run(&mut e, std::slice::from_ref(&path));
        assert_eq!(phases[0].run.ops, 300);
        assert_eq!(phases[0].run.commits, 3);
        assert_eq!(phases[0].run.reads, 0);
        // C reads only loaded keys: every one is found, and there is nothing to commit.
        assert_eq!(phases[2].run.reads, 300);
        assert_eq!(phases[2].run.reads_found, 300);
        assert_eq!(phases[2].run.commits, 0);
        assert!(phases[0].disk_bytes > 0);
        // The load wrote at least its 300 values of 100 bytes; C wrote nothing.
        assert!(phases[0].host_bytes.unwrap() >= 300 * 100);
        assert_eq!(phases[2].host_bytes, Some(0));
        assert!(phases[3].run.scanned_records > 0);
        let e_run = &phases[3].run;
        assert_eq!(e_run.scanned_value_bytes, e_run.scanned_records * 100);
        // Committed data survives a reopen.
        drop(e);
        let mut e = Store::open_path(&path, opts).unwrap();
        let key = ycsb::key_name(YcsbConfig::default().key_of(0), 0);
        assert_eq!(Engine::get(&mut e, key.as_bytes()).unwrap(), Some(100));
    }

    #[test]
    #[cfg_attr(
        not(feature = "rocksdb"),
        ignore = "needs --features rocksdb and librocksdb-dev (scripts/setup-rocksdb)"
    )]
    fn rocksdb_finds_every_record_and_keeps_its_commits() {
        #[cfg(not(feature = "rocksdb"))]
        eprintln!("skipped: built without --features rocksdb");
        #[cfg(feature = "rocksdb")]
        {
            let _one = one_engine_at_a_time();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("rocks");
            let cfg = RocksConfig {
                block_cache_bytes: 1 << 20,
            };
            let mut e = Rocks::create(&path, cfg).unwrap();
            let phases = small_run(&mut e, std::slice::from_ref(&path));
            assert_eq!(phases[0].run.commits, 3);
            assert_eq!(phases[2].run.reads_found, 300);
            // RocksDB's host bytes are the process's `wchar`, which also counts the test
            // harness's own lines ("test … ok", ~70 bytes each) written while this test runs
            // beside the others (at most the other three tests' lines; no other engine runs
            // meanwhile: `one_engine_at_a_time`): C writes no record, so it stays under 10
            // records' worth, where the load writes 300 (≥ 30,000 bytes).
            let c_bytes = phases[2].host_bytes.expect("wchar is readable here");
            assert!(c_bytes < 1_000, "C writes no record: {c_bytes} bytes");
            assert!(
                phases[0].host_bytes.unwrap() >= 300 * 100,
                "the WAL holds the load"
            );
            assert!(phases[3].run.scanned_records > 0);
            let e_run = &phases[3].run;
            assert_eq!(e_run.scanned_value_bytes, e_run.scanned_records * 100);
            assert!(phases[0].disk_bytes > 0);
            // Uncommitted puts are seen by this handle, committed ones survive a reopen,
            // and the uncommitted one does not.
            let key = ycsb::key_name(YcsbConfig::default().key_of(0), 0);
            e.put(b"zz-uncommitted", b"1").unwrap();
            assert_eq!(Engine::get(&mut e, b"zz-uncommitted").unwrap(), Some(1));
            assert_eq!(e.scan(b"zz-", 10, &mut |_, _| {}).unwrap(), 1);
            drop(e);
            let mut e = Rocks::create(&path, cfg).unwrap();
            assert_eq!(Engine::get(&mut e, key.as_bytes()).unwrap(), Some(100));
            assert_eq!(Engine::get(&mut e, b"zz-uncommitted").unwrap(), None);
        }
    }

    #[cfg(feature = "compare")]
    #[test]
    fn the_other_engines_find_every_record() {
        let _one = one_engine_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let mut engines: Vec<Box<dyn Engine>> = vec![
            Box::new(Redb::create(&dir.path().join("r.redb")).unwrap()),
            Box::new(Lmdb::create(&dir.path().join("lmdb"), 64 << 20).unwrap()),
        ];
        for e in &mut engines {
            let phases = small_run(e.as_mut(), &[]);
            assert_eq!(phases[2].run.reads_found, 300, "{}", e.name());
            let e_run = &phases[3].run;
            assert!(e_run.scanned_records > 0, "{}", e.name());
            assert_eq!(
                e_run.scanned_value_bytes,
                e_run.scanned_records * 100,
                "{} lends every value whole",
                e.name()
            );
        }
    }
}
