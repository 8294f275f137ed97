//! The pager: the one layer between the engine's structures and a [`BlockDevice`].
//!
//! Model: a `Pager` owns the device and
//! - accounts every device call on the device clock ([`PagerStats`]: pages read and written,
//!   read and write nanoseconds — flushes and trims count as write time);
//! - holds the engine's ONE page cache (the buffer pool, [`cache`]): frames keyed by a
//!   structure's page id, each with the page image, a decoded form (an `Rc` the structure
//!   chose, e.g. a B-tree node) or both; pins; batched misses; a replacement policy taken as a
//!   type ([`policy::Replacement`], LRU by default) and one eviction hook every evicted frame
//!   passes;
//! - optionally extends that cache onto a second device ([`Pager::with_buffer_policy`]): P3's
//!   flash extension (`flash_ext`: circular logs with a DRAM directory, checksummed copies,
//!   fallback to the database device), placed by a [`policy::BufferPolicy`];
//! - writes contiguous runs of pages ([`RunWriter`]: log tails, bulk loads);
//! - keeps double-buffered roots ([`MetaSlots`]);
//! - holds the page contract for typed pages ([`Pager::read_page`], [`Pager::write_pages`]):
//!   sealing, verified reads (seal, kind, page number) and the cache's write-through rule;
//!   a payload read as it lies in its frame's checked image ([`Pager::read_payload`],
//!   [`Pager::lend_payload`]: no decoded copy).
//!
//! The page format (header, crc32c, format version) is [`crate::page`]; `docs/format.md`
//! draws every structure's layout.
//!
//! Cache keys: a structure caches under its own page ids — device pages for structures at fixed
//! addresses (in-place tree, heap, index), node ids for structures that map nodes to pages
//! themselves (AS B-tree, BFTL). Writes ([`Pager::write`], [`Pager::write_with`],
//! [`RunWriter`]) bypass the cache: a structure that rewrites a page it caches `keep`s the new
//! decoded form first (the in-place tree writes through that way).

mod flash_ext;
mod frame_map;
mod frames;
mod meta;
mod run;
mod typed;

pub use flash_ext::FlashExtStats;
pub use frames::FrameId;
pub use meta::MetaSlots;
pub use run::RunWriter;
pub use typed::{Keep, PageForm, PageWrite};

use crate::error::EngineError;
use blockdev::{BlockDevice, Io, WriteHint};
use flash_ext::FlashExt;
use frames::PoolPolicy;
use policy::{BufferPolicy, LruPolicy, PolicyConfig, Replacement};

/// Counters of one pager: its device calls and its cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PagerStats {
    /// Cache lookups that found the page resident.
    pub hits: u64,
    /// Cache lookups that did not (each reads the page, or the structure rebuilds it).
    pub misses: u64,
    /// `submit` calls made for batched misses.
    pub batches: u64,
    pub evictions: u64,
    /// Dirty frames written back at eviction or flush.
    pub writebacks: u64,
    /// Device pages read and written (cached or not).
    pub pages_read: u64,
    pub pages_written: u64,
    /// Device time of reads, and of writes, flushes and trims, in the device clock's ns.
    pub read_ns: u64,
    pub write_ns: u64,
}

/// The device with its accounting (a field apart so frames and device borrow separately).
struct Device {
    dev: Box<dyn BlockDevice>,
    stats: PagerStats,
}

impl Device {
    fn read(&mut self, page: u64, buf: &mut [u8]) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        self.dev.read(page, buf)?;
        assert!(self.dev.now_ns() >= t0, "the device clock never runs back");
        self.stats.read_ns += self.dev.now_ns() - t0;
        self.stats.pages_read += (buf.len() / self.dev.page_bytes()) as u64;
        Ok(())
    }

    fn write(&mut self, page: u64, bytes: &[u8]) -> Result<(), EngineError> {
        self.write_hinted(page, bytes, WriteHint::NONE)
    }

    fn write_hinted(
        &mut self,
        page: u64,
        bytes: &[u8],
        hint: WriteHint,
    ) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        self.dev.write(page, bytes, hint)?;
        assert!(self.dev.now_ns() >= t0, "the device clock never runs back");
        self.stats.write_ns += self.dev.now_ns() - t0;
        self.stats.pages_written += (bytes.len() / self.dev.page_bytes()) as u64;
        Ok(())
    }

    fn submit_writes(&mut self, batch: &mut [Io<'_>]) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        let r = self.dev.submit(batch);
        assert!(self.dev.now_ns() >= t0, "the device clock never runs back");
        self.stats.write_ns += self.dev.now_ns() - t0;
        r?;
        let pb = self.dev.page_bytes();
        for io in batch.iter() {
            if let Io::Write { buf, .. } = io {
                self.stats.pages_written += (buf.len() / pb) as u64;
            }
        }
        Ok(())
    }

    /// Read each `(page, buffer)` of `reads`: all in one `submit` (`depth` None), or through
    /// `read_pipelined` with `depth` in flight (one batch in the stats either way).
    fn submit_reads(
        &mut self,
        reads: &mut [(u64, &mut [u8])],
        depth: Option<usize>,
    ) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        let r = match depth {
            Some(depth) => self.dev.read_pipelined(reads, depth),
            None => {
                let mut batch: Vec<Io> = reads
                    .iter_mut()
                    .map(|(page, buf)| Io::Read { page: *page, buf })
                    .collect();
                self.dev.submit(&mut batch)
            }
        };
        assert!(self.dev.now_ns() >= t0, "the device clock never runs back");
        self.stats.read_ns += self.dev.now_ns() - t0;
        self.stats.batches += 1;
        r?;
        self.stats.pages_read += reads.len() as u64;
        Ok(())
    }

    fn timed_write_op(
        &mut self,
        op: impl FnOnce(&mut dyn BlockDevice) -> Result<(), blockdev::DevError>,
    ) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        let r = op(self.dev.as_mut());
        assert!(self.dev.now_ns() >= t0, "the device clock never runs back");
        self.stats.write_ns += self.dev.now_ns() - t0;
        Ok(r?)
    }
}

pub struct Pager {
    io: Device,
    page_bytes: usize,
    /// A page buffer for uncached reads.
    scratch: Vec<u8>,
    frames: frames::Frames,
    /// The flash extension of the cache, if any.
    ext: Option<FlashExt>,
    /// The newest version a typed page read may carry: the durable commit its structure
    /// declared ([`Pager::limit_versions`]), raised by every version this pager writes
    /// (u64::MAX, no limit, until a structure declares one).
    version_max: u64,
    /// Windows of reads started ahead of their use ([`Pager::fetch_ahead`]).
    ahead: frames::ReadAhead,
}

impl Pager {
    /// A pager over `dev` whose cache holds `capacity_pages` unpinned frames (0 allowed: a
    /// frame then lives only while pinned), with LRU replacement.
    pub fn new(dev: Box<dyn BlockDevice>, capacity_pages: usize) -> Pager {
        Pager::with_policy(dev, capacity_pages, Box::new(LruPolicy::new()))
    }

    /// A pager whose cache replaces by `policy`.
    pub fn with_policy(
        dev: Box<dyn BlockDevice>,
        capacity_pages: usize,
        policy: Box<dyn Replacement<u64>>,
    ) -> Pager {
        Pager::build(dev, capacity_pages, PoolPolicy::Plain(policy), None)
    }

    /// A pager whose cache holds `config.size_pages` unpinned frames under P3's buffer policy
    /// `config.kind`; the extended policies (`lru-ext`, `2q-ext`, `2q-flash`) keep evicted
    /// pages on `flash` (at least `config.ext_pages` pages of the database's page size).
    pub fn with_buffer_policy(
        dev: Box<dyn BlockDevice>,
        config: &PolicyConfig,
        flash: Option<Box<dyn BlockDevice>>,
    ) -> Result<Pager, EngineError> {
        let policy = BufferPolicy::new(config).map_err(|e| EngineError::Config {
            field: "buffer policy",
            value: config.kind.name().into(),
            reason: e.reason,
        })?;
        let ext = match (flash, config.kind.is_extended()) {
            (Some(flash), true) => Some(FlashExt::new(
                flash,
                policy.log_capacities(),
                policy.log_order(),
                dev.page_bytes(),
            )?),
            (None, true) => {
                return Err(EngineError::Config {
                    field: "flash extension device",
                    value: "none".into(),
                    reason: format!(
                        "policy {} keeps pages on flash; give it a device",
                        config.kind.name()
                    ),
                })
            }
            (_, false) => None,
        };
        Ok(Pager::build(
            dev,
            config.size_pages,
            PoolPolicy::Buffer(Box::new(policy)),
            ext,
        ))
    }

    fn build(
        dev: Box<dyn BlockDevice>,
        capacity_pages: usize,
        policy: PoolPolicy,
        ext: Option<FlashExt>,
    ) -> Pager {
        let page_bytes = dev.page_bytes();
        assert!(page_bytes > 0, "a device of pages");
        Pager {
            io: Device {
                dev,
                stats: PagerStats::default(),
            },
            page_bytes,
            scratch: vec![0; page_bytes],
            frames: frames::Frames::new(capacity_pages, policy),
            ext,
            version_max: u64::MAX,
            ahead: frames::ReadAhead::default(),
        }
    }

    /// The flash extension's counters (None without one).
    pub fn flash_stats(&self) -> Option<FlashExtStats> {
        self.ext.as_ref().map(FlashExt::stats)
    }
    /// The flash extension's device.
    pub fn flash_device(&self) -> Option<&dyn BlockDevice> {
        self.ext.as_ref().map(FlashExt::device)
    }
    /// The flash extension's device, for fault injection: a write here bypasses the
    /// directory (the next read-back of that slot must fail its checksum).
    pub fn flash_device_mut(&mut self) -> Option<&mut dyn BlockDevice> {
        self.ext.as_mut().map(FlashExt::device_mut)
    }
    /// The flash page holding a copy of device page `page`, if any.
    pub fn flash_page_of(&self, page: u64) -> Option<u64> {
        self.ext.as_ref()?.flash_page_of(page)
    }
    /// Pages on the flash extension now.
    pub fn flash_pages(&self) -> usize {
        self.ext.as_ref().map_or(0, FlashExt::len)
    }
    /// Check the flash extension's invariants (panics with what is broken).
    pub fn check_flash(&self) {
        if let Some(ext) = &self.ext {
            ext.check();
        }
    }
    /// Both devices back (the database's, the flash extension's); as [`Pager::into_device`].
    pub fn into_devices(self) -> (Box<dyn BlockDevice>, Option<Box<dyn BlockDevice>>) {
        (self.io.dev, self.ext.map(FlashExt::into_device))
    }

    pub fn page_bytes(&self) -> usize {
        self.page_bytes
    }
    pub fn capacity_pages(&self) -> u64 {
        self.io.dev.capacity_pages()
    }
    /// Whether the device keeps `depth` reads in flight across a whole
    /// [`Pager::fetch_many_queued`] (a file through io_uring) rather than awaiting batches.
    pub fn pipelines_reads(&self) -> bool {
        self.io.dev.pipelines_reads()
    }
    pub fn device(&self) -> &dyn BlockDevice {
        self.io.dev.as_ref()
    }
    /// The device's clock, in ns.
    pub fn now_ns(&self) -> u64 {
        self.io.dev.now_ns()
    }
    /// The device back; dirty frames not yet flushed are dropped (as a power cut would).
    pub fn into_device(mut self) -> Box<dyn BlockDevice> {
        self.cancel_reads();
        self.io.dev
    }
    pub fn stats(&self) -> PagerStats {
        self.io.stats
    }
    /// The replacement policy's name (`lru`, ...).
    pub fn policy_name(&self) -> &'static str {
        self.frames.policy_name()
    }

    /// Read device page `page` past the cache; the bytes stay valid until the next call.
    pub fn read_uncached(&mut self, page: u64) -> Result<&[u8], EngineError> {
        self.io.read(page, &mut self.scratch)?;
        assert_eq!(self.scratch.len(), self.page_bytes, "one page read");
        Ok(&self.scratch)
    }

    /// Write whole pages (`bytes` is a multiple of the page size) from `page` on, past the
    /// cache.
    pub fn write(&mut self, page: u64, bytes: &[u8]) -> Result<(), EngineError> {
        self.write_hinted(page, bytes, WriteHint::NONE)
    }

    /// [`Pager::write`] carrying a write hint (a data type's stream, e.g. the KV store's).
    pub fn write_hinted(
        &mut self,
        page: u64,
        bytes: &[u8],
        hint: WriteHint,
    ) -> Result<(), EngineError> {
        self.invalidate_flash(page, (bytes.len() / self.page_bytes) as u64);
        self.io.write_hinted(page, bytes, hint)
    }

    /// Write several runs of whole pages, (first page, bytes), all in flight at once (one
    /// `submit`), each carrying `hint`; past the cache.
    pub fn write_runs_hinted(
        &mut self,
        runs: &[(u64, &[u8])],
        hint: WriteHint,
    ) -> Result<(), EngineError> {
        for &(page, bytes) in runs {
            assert!(
                !bytes.is_empty() && bytes.len().is_multiple_of(self.page_bytes),
                "a run of whole pages at page {page}"
            );
            self.invalidate_flash(page, (bytes.len() / self.page_bytes) as u64);
        }
        let mut batch: Vec<Io<'_>> = runs
            .iter()
            .map(|&(page, buf)| Io::Write { page, buf, hint })
            .collect();
        self.io.submit_writes(&mut batch)
    }

    /// Pages from `page` on get a newer version than any flash copy: drop the copies.
    fn invalidate_flash(&mut self, page: u64, pages: u64) {
        if let Some(ext) = self.ext.as_mut() {
            ext.invalidate(page, pages);
        }
    }

    /// Encode one page into a scratch buffer with `encode` and write it at `page`, past the
    /// cache.
    pub fn write_with(
        &mut self,
        page: u64,
        encode: impl FnOnce(&mut [u8]),
    ) -> Result<(), EngineError> {
        encode(&mut self.scratch);
        assert_eq!(self.scratch.len(), self.page_bytes, "one page encoded");
        self.invalidate_flash(page, 1);
        self.io.write(page, &self.scratch)
    }

    /// Make every write before this call durable.
    pub fn flush(&mut self) -> Result<(), EngineError> {
        self.io.timed_write_op(|d| d.flush())
    }

    /// Tell the device `pages` pages from `page` on hold nothing any more.
    pub fn trim(&mut self, page: u64, pages: u64) -> Result<(), EngineError> {
        self.invalidate_flash(page, pages);
        self.io.timed_write_op(|d| d.trim(page, pages))
    }
}

#[cfg(test)]
mod tests;
