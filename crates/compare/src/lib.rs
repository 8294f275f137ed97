//! Side-by-side YCSB benchmark (issue 11, "Speed"): flashlab's key-value store
//! (`engine::kv::Store`) against redb and LMDB (through `heed`), on real files, in one run.
//!
//! Every engine sits behind one adapter trait, [`Engine`] (put / get / commit / on-disk
//! bytes), and one driver loop, [`drive`], runs the YCSB operations of `workload::ycsb`
//! against it: each operation is timed into an HDR histogram, and a durable commit closes
//! every `commit_every` operations (the operation that closes a group includes its commit).
//! Bytes written are measured two ways around each phase:
//! - **host bytes**: what the engine handed to the kernel — `wchar` of `/proc/self/io` (bytes
//!   passed to write/pwrite system calls) for redb and LMDB, and the pager's own count of
//!   pages written for flashlab, whose writes go through io_uring, which `wchar` does not see;
//! - **block bytes**: `write_bytes` of `/proc/self/io`, what the process caused to be sent
//!   to the block layer. Exact for O_DIRECT (flashlab), but for buffered writes the kernel
//!   accounts whole page-cache folios when they turn dirty (on this ext4, rewriting one
//!   4 KiB page after an fsync counts 64 KiB), so it overstates redb's and LMDB's writes.
//!
//! The redb and LMDB adapters are compiled only with the `compare` feature, so the default
//! build needs neither crate (nor LMDB's C source).

use anyhow::{bail, Context, Result};
use engine::kv::{Options, Store};
use std::path::{Path, PathBuf};
use std::time::Instant;
use workload::ycsb::{self, YcsbConfig, YcsbOp};

/// What the benchmark needs of a key-value engine.
pub trait Engine {
    /// Short name for the table.
    fn name(&self) -> &'static str;
    /// Set `key` to `value` (visible to this handle's `get` at once; durable after `commit`).
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Read `key`: its value's length, or None when absent (the value is read, not skipped).
    fn get(&mut self, key: &[u8]) -> Result<Option<usize>>;
    /// Make every earlier put durable (fsync'd) before returning.
    fn commit(&mut self) -> Result<()>;
    /// The engine's files (to measure their allocated size).
    fn files(&self) -> Vec<PathBuf>;
    /// Bytes the engine has written so far by its own count, when its writes bypass the
    /// write system calls that `wchar` counts (None: measure `wchar`).
    fn bytes_written(&self) -> Option<u64> {
        None
    }
}

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

fn delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// Allocated bytes on disk of the given files (st_blocks × 512; absent files count 0).
pub fn allocated_bytes(files: &[PathBuf]) -> u64 {
    use std::os::unix::fs::MetadataExt;
    files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.blocks() * 512)
        .sum()
}

/// One phase of one engine, measured.
pub struct Phase {
    pub engine: &'static str,
    pub phase: String,
    pub ops: u64,
    pub seconds: f64,
    pub commits: u64,
    pub reads_found: u64,
    pub reads: u64,
    /// Latency of each operation in nanoseconds.
    pub hist: hdrhistogram::Histogram<u64>,
    /// Bytes handed to the kernel during the phase (see the crate docs; None: not reported).
    pub host_bytes: Option<u64>,
    /// `/proc/self/io` write_bytes during the phase (None: not reported by this kernel).
    pub block_bytes: Option<u64>,
    /// Allocated size of the engine's files after the phase.
    pub disk_bytes: u64,
}

impl Phase {
    pub fn ops_per_second(&self) -> f64 {
        self.ops as f64 / self.seconds.max(1e-9)
    }
    pub fn quantile_us(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / 1e3
    }
    pub fn host_bytes_per_op(&self) -> Option<f64> {
        self.host_bytes.map(|b| b as f64 / self.ops.max(1) as f64)
    }
    pub fn block_bytes_per_op(&self) -> Option<f64> {
        self.block_bytes.map(|b| b as f64 / self.ops.max(1) as f64)
    }
}

/// Run `ops` against `e`, timing each; a commit closes every `commit_every` operations that
/// wrote something (a group without writes has nothing to make durable), and the phase ends
/// with a commit.
pub fn drive(
    e: &mut dyn Engine,
    phase: &str,
    ops: impl Iterator<Item = YcsbOp>,
    cfg: &YcsbConfig,
    commit_every: u64,
) -> Result<Phase> {
    let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
        .context("histogram bounds")?;
    let (own0, wchar0, wb0) = (e.bytes_written(), proc_io("wchar"), proc_io("write_bytes"));
    let wall0 = Instant::now();
    let (mut n, mut commits, mut reads, mut found) = (0u64, 0u64, 0u64, 0u64);
    let mut dirty = false;
    let mut value = vec![0u8; cfg.value_bytes as usize];
    for op in ops {
        let t0 = Instant::now();
        let name = ycsb::key_name(op.key(), cfg.key_bytes);
        let mut write = |e: &mut dyn Engine, key: u64, bytes: u32| -> Result<()> {
            value.resize(bytes as usize, 0);
            ycsb::fill_value(&mut value, key, n);
            e.put(name.as_bytes(), &value)
        };
        match op {
            YcsbOp::Read { .. } => {
                reads += 1;
                found += u64::from(e.get(name.as_bytes())?.is_some());
            }
            YcsbOp::Update { key, value_bytes } | YcsbOp::Insert { key, value_bytes } => {
                write(e, key, value_bytes)?;
                dirty = true;
            }
            YcsbOp::ReadModifyWrite { key, value_bytes } => {
                reads += 1;
                found += u64::from(e.get(name.as_bytes())?.is_some());
                write(e, key, value_bytes)?;
                dirty = true;
            }
            YcsbOp::Scan { .. } => {
                bail!("phase {phase}: scans are not part of this benchmark (workloads load, a, b, c, update)")
            }
        }
        n += 1;
        if commit_every > 0 && n.is_multiple_of(commit_every) && dirty {
            e.commit()?;
            commits += 1;
            dirty = false;
        }
        hist.saturating_record((t0.elapsed().as_nanos() as u64).max(1));
    }
    if dirty {
        e.commit()?;
        commits += 1;
    }
    let seconds = wall0.elapsed().as_secs_f64();
    let host_bytes = match own0 {
        Some(_) => delta(own0, e.bytes_written()),
        None => delta(wchar0, proc_io("wchar")),
    };
    let block_bytes = delta(wb0, proc_io("write_bytes"));
    Ok(Phase {
        engine: e.name(),
        phase: phase.to_string(),
        ops: n,
        seconds,
        commits,
        reads_found: found,
        reads,
        hist,
        host_bytes,
        block_bytes,
        disk_bytes: allocated_bytes(&e.files()),
    })
}

/// flashlab's store in a file (O_DIRECT unless `opts.buffered`).
pub struct Flashlab {
    store: Store,
    path: PathBuf,
}

impl Flashlab {
    pub fn open(path: &Path, opts: Options) -> Result<Flashlab> {
        let store =
            Store::open_path(path, opts).with_context(|| format!("opening {}", path.display()))?;
        Ok(Flashlab {
            store,
            path: path.to_path_buf(),
        })
    }
}

impl Engine for Flashlab {
    fn name(&self) -> &'static str {
        "flashlab"
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.store.put(key, value)?)
    }
    fn get(&mut self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.store.get(key)?.map(|v| v.len()))
    }
    fn commit(&mut self) -> Result<()> {
        self.store.commit()?;
        Ok(())
    }
    fn files(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }
    fn bytes_written(&self) -> Option<u64> {
        let pager = self.store.pager();
        Some(pager.stats().pages_written * pager.page_bytes() as u64)
    }
}

#[cfg(feature = "compare")]
pub use others::{Lmdb, Redb};

#[cfg(feature = "compare")]
mod others {
    use super::Engine;
    use anyhow::{Context, Result};
    use redb::ReadableTable;
    use std::path::{Path, PathBuf};

    const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("usertable");

    /// redb in one file, default durability (`Immediate`: commit fsyncs). Puts of a commit
    /// group share one write transaction; reads between commits use it (to see its puts) or
    /// one read transaction kept until the next write.
    pub struct Redb {
        db: redb::Database,
        write: Option<redb::WriteTransaction>,
        read: Option<redb::ReadTransaction>,
        path: PathBuf,
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
                path: path.to_path_buf(),
            })
        }
    }

    impl Engine for Redb {
        fn name(&self) -> &'static str {
            "redb"
        }
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
            self.read = None;
            if self.write.is_none() {
                self.write = Some(self.db.begin_write()?);
            }
            let Some(w) = self.write.as_ref() else {
                unreachable!("set above")
            };
            w.open_table(TABLE)?.insert(key, value)?;
            Ok(())
        }
        fn get(&mut self, key: &[u8]) -> Result<Option<usize>> {
            if let Some(w) = &self.write {
                let t = w.open_table(TABLE)?;
                return Ok(t.get(key)?.map(|v| v.value().len()));
            }
            if self.read.is_none() {
                self.read = Some(self.db.begin_read()?);
            }
            let Some(r) = self.read.as_ref() else {
                unreachable!("set above")
            };
            let t = r.open_table(TABLE)?;
            let found = t.get(key)?.map(|v| v.value().len());
            Ok(found)
        }
        fn commit(&mut self) -> Result<()> {
            if let Some(w) = self.write.take() {
                w.commit()?;
            }
            Ok(())
        }
        fn files(&self) -> Vec<PathBuf> {
            vec![self.path.clone()]
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
        dir: PathBuf,
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
                dir: dir.to_path_buf(),
            })
        }
    }

    impl Engine for Lmdb {
        fn name(&self) -> &'static str {
            "lmdb"
        }
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
            self.read = None;
            if self.write.is_none() {
                self.write = Some(self.env.write_txn()?);
            }
            let Some(w) = self.write.as_mut() else {
                unreachable!("set above")
            };
            self.db.put(w, key, value)?;
            Ok(())
        }
        fn get(&mut self, key: &[u8]) -> Result<Option<usize>> {
            if let Some(w) = &self.write {
                return Ok(self.db.get(w, key)?.map(|v| v.len()));
            }
            if self.read.is_none() {
                self.read = Some(self.env.read_txn()?);
            }
            let Some(r) = self.read.as_ref() else {
                unreachable!("set above")
            };
            Ok(self.db.get(r, key)?.map(|v| v.len()))
        }
        fn commit(&mut self) -> Result<()> {
            if let Some(w) = self.write.take() {
                w.commit()?;
            }
            Ok(())
        }
        fn files(&self) -> Vec<PathBuf> {
            vec![self.dir.join("data.mdb"), self.dir.join("lock.mdb")]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::ycsb::CoreWorkload;

    #[test]
    fn write_bytes_parses_proc_io() {
        let text =
            "rchar: 1\nwchar: 2\nread_bytes: 0\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_proc_io(text, "write_bytes"), Some(8192));
        assert_eq!(parse_proc_io(text, "wchar"), Some(2));
        assert_eq!(parse_proc_io(text, "cancelled_write_bytes"), Some(0));
        assert_eq!(parse_proc_io("rchar: 1\n", "write_bytes"), None);
    }

    fn small_run(e: &mut dyn Engine) -> Vec<Phase> {
        let base = YcsbConfig {
            records: 300,
            operations: 300,
            value_bytes: 100,
            ..YcsbConfig::default()
        };
        let mut out = vec![drive(e, "load", ycsb::load(&base).unwrap(), &base, 100).unwrap()];
        for w in [CoreWorkload::A, CoreWorkload::C] {
            let cfg = YcsbConfig {
                workload: w,
                ..base
            };
            out.push(drive(e, w.name(), ycsb::run(&cfg).unwrap(), &cfg, 100).unwrap());
        }
        out
    }

    #[test]
    fn driver_runs_load_and_reads_find_every_record_on_flashlab() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            file_pages: 4096,
            ..Options::default()
        };
        let mut e = Flashlab::open(&dir.path().join("f.db"), opts).unwrap();
        let phases = small_run(&mut e);
        assert_eq!(phases[0].ops, 300);
        assert_eq!(phases[0].commits, 3);
        assert_eq!(phases[0].reads, 0);
        // C reads only loaded keys: every one is found, and there is nothing to commit.
        assert_eq!(phases[2].reads, 300);
        assert_eq!(phases[2].reads_found, 300);
        assert_eq!(phases[2].commits, 0);
        assert!(phases[0].disk_bytes > 0);
        // The load wrote at least its 300 values of 100 bytes; C wrote nothing.
        assert!(phases[0].host_bytes.unwrap() >= 300 * 100);
        assert_eq!(phases[2].host_bytes, Some(0));
        // Committed data survives a reopen.
        drop(e);
        let mut e = Flashlab::open(&dir.path().join("f.db"), opts).unwrap();
        let key = ycsb::key_name(YcsbConfig::default().key_of(0), 0);
        assert_eq!(e.get(key.as_bytes()).unwrap(), Some(100));
    }

    #[cfg(feature = "compare")]
    #[test]
    fn the_other_engines_find_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut engines: Vec<Box<dyn Engine>> = vec![
            Box::new(Redb::create(&dir.path().join("r.redb")).unwrap()),
            Box::new(Lmdb::create(&dir.path().join("lmdb"), 64 << 20).unwrap()),
        ];
        for e in &mut engines {
            let phases = small_run(e.as_mut());
            assert_eq!(phases[2].reads_found, 300, "{}", e.name());
        }
    }
}
