//! The trace-driven mechanism for [`BufferPolicy`]: a main buffer of `size_pages` frames and the
//! policy's flash logs, driven one page reference at a time. It moves no data: it counts the
//! moves (disk and flash reads and writes) and reports each one, so that a test (or a pool that
//! does real I/O) can follow every page.
//!
//! One reference, in this order:
//! 1. resident in main: a hit (`touch`; a write makes the frame dirty);
//! 2. otherwise a miss; if a flash log holds the page it is an extended hit: one flash read, and
//!    the flash copy is dropped; else one disk read (a write miss reads the page too);
//! 3. if main is full: the policy's victim leaves main — one disk write if dirty — and goes
//!    where [`BufferPolicy::placement`] says: out, or appended to a flash log (one flash write;
//!    the log's oldest page leaves flash if the log was full; flash copies are always clean);
//! 4. the page is admitted from where it was read.
//!
//! Invariants (`check`): main holds at most `size_pages` pages, each log at most its capacity,
//! no page is both in main and on flash, nor in two logs, and the policy tracks exactly the
//! resident pages. Pages left dirty in main at the end are not written back (not counted).

use crate::buffer_policy::logs_for;
use crate::{
    BufferPolicy, FlashLog, LogId, Placement, PolicyConfig, PolicyError, Replacement, Source,
};
use rustc_hash::FxHashMap;

/// What a run did, in page moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub references: u64,
    pub writes: u64,
    /// Main-buffer hits.
    pub hits: u64,
    /// Main-buffer misses (extended hits included).
    pub misses: u64,
    /// Misses found on flash.
    pub ext_hits: u64,
    pub disk_reads: u64,
    pub disk_writes: u64,
    pub flash_reads: u64,
    pub flash_writes: u64,
    /// Pages that left a full flash log to make room.
    pub flash_displaced: u64,
}

impl Counts {
    /// Main hits / references (0 for an empty trace).
    pub fn hit_ratio(&self) -> f64 {
        ratio(self.hits, self.references)
    }
    /// Extended hits / main misses (0 without misses).
    pub fn ext_hit_ratio(&self) -> f64 {
        ratio(self.ext_hits, self.misses)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// How a reference was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Hit,
    /// Read from `slot` of flash log `log`.
    ExtHit {
        log: LogId,
        slot: u32,
    },
    /// Read from disk.
    Miss,
}

/// A page that left main to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eviction {
    pub page: u64,
    /// Written to disk on the way out.
    pub dirty: bool,
    pub to: Placement,
    /// The flash slot it was written to (with `Placement::Log`).
    pub slot: Option<u32>,
    /// The page that left the full log for it.
    pub displaced: Option<u64>,
}

/// Everything one reference did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub outcome: Outcome,
    pub eviction: Option<Eviction>,
}

/// See the module docs.
pub struct BufferSim {
    policy: BufferPolicy<u64>,
    size_pages: usize,
    /// Resident pages -> dirty.
    frames: FxHashMap<u64, bool>,
    logs: Vec<FlashLog<u64>>,
    counts: Counts,
}

impl BufferSim {
    pub fn new(config: &PolicyConfig) -> Result<BufferSim, PolicyError> {
        let policy = BufferPolicy::new(config)?;
        let logs = logs_for(&policy);
        let mut frames = FxHashMap::default();
        frames.reserve(config.size_pages.min(1 << 20));
        Ok(BufferSim {
            policy,
            size_pages: config.size_pages,
            frames,
            logs,
            counts: Counts::default(),
        })
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    pub fn policy(&self) -> &BufferPolicy<u64> {
        &self.policy
    }

    pub fn logs(&self) -> &[FlashLog<u64>] {
        &self.logs
    }

    /// Is `page` resident in main, and dirty?
    pub fn resident(&self, page: u64) -> Option<bool> {
        self.frames.get(&page).copied()
    }

    /// Reference `page` (a write if `write`).
    #[inline]
    pub fn reference(&mut self, page: u64, write: bool) -> Access {
        self.counts.references += 1;
        self.counts.writes += write as u64;
        if let Some(dirty) = self.frames.get_mut(&page) {
            *dirty |= write;
            self.counts.hits += 1;
            self.policy.touch(page);
            return Access {
                outcome: Outcome::Hit,
                eviction: None,
            };
        }
        self.miss(page, write)
    }

    fn miss(&mut self, page: u64, write: bool) -> Access {
        self.counts.misses += 1;
        let (outcome, source) = self.read_in(page);
        let eviction = if self.frames.len() >= self.size_pages {
            Some(self.evict())
        } else {
            None
        };
        self.frames.insert(page, write);
        self.policy.admit_from(page, source);
        Access { outcome, eviction }
    }

    fn read_in(&mut self, page: u64) -> (Outcome, Source) {
        for (i, log) in self.logs.iter_mut().enumerate() {
            if let Some(slot) = log.remove(&page) {
                self.counts.ext_hits += 1;
                self.counts.flash_reads += 1;
                let log = LogId(i as u8);
                return (Outcome::ExtHit { log, slot }, Source::Log(log));
            }
        }
        self.counts.disk_reads += 1;
        (Outcome::Miss, Source::Disk)
    }

    fn evict(&mut self) -> Eviction {
        let page = self
            .policy
            .victim(&mut |_| true)
            .expect("a full main buffer has a victim");
        let to = self.policy.placement(&page);
        self.policy.forget(page);
        let dirty = self
            .frames
            .remove(&page)
            .expect("the policy's victim is resident");
        self.counts.disk_writes += dirty as u64;
        let (mut slot, mut displaced) = (None, None);
        if let Placement::Log(log) = to {
            let a = self.logs[log.0 as usize].append(page);
            self.counts.flash_writes += 1;
            self.counts.flash_displaced += a.displaced.is_some() as u64;
            (slot, displaced) = (Some(a.slot), a.displaced);
        }
        Eviction {
            page,
            dirty,
            to,
            slot,
            displaced,
        }
    }

    /// Check the invariants (module docs); panics with what is broken.
    pub fn check(&self) {
        assert!(self.frames.len() <= self.size_pages, "main over its size");
        assert_eq!(
            self.policy.len(),
            self.frames.len(),
            "policy and frames disagree"
        );
        for (i, log) in self.logs.iter().enumerate() {
            log.check();
            for (page, _) in log.iter() {
                assert!(
                    !self.frames.contains_key(&page),
                    "page {page} both in main and on flash"
                );
                for other in &self.logs[i + 1..] {
                    assert!(!other.contains(&page), "page {page} in two logs");
                }
            }
        }
        let c = &self.counts;
        assert_eq!(
            c.hits + c.misses,
            c.references,
            "hits + misses != references"
        );
        assert!(c.ext_hits <= c.misses, "more extended hits than misses");
    }
}
