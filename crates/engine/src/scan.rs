//! Index range scans over the heap: the paper's baseline, its batched asynchronous method,
//! and two variants beyond the paper. All modes return the same rows in index (key) order.
//!
//! The scan descends the secondary index to the leaf holding `lo` and walks leaves by their
//! right-sibling links, yielding (key, record id) for keys in `lo..=hi` (index nodes come
//! through the pager's cache, kept decoded beside their page). Then, per mode:
//! - `Sync`: fetch each record's heap page through the pager's cache, one synchronous read per
//!   miss (PostgreSQL's index scan; P2's baseline).
//! - `Batched(n)`: take the next record ids until `n` of their pages are not cached (or `4n`
//!   ids), pin their pages with one `fetch_many_queued` (all misses submitted at once:
//!   overlapping dies/channels on the simulated SSD), produce the rows, unpin; repeat (P2's
//!   method, n = 50; P2 takes exactly 50 ids, so its waves shrink by the pages already cached —
//!   ours keep `n` reads in flight). On a file (io_uring) the reads outlive a batch: batches'
//!   reads are started ahead ([`Pager::fetch_ahead`]) up to `8n` missed pages (at most half the
//!   cache) beyond the batch whose rows are being produced, `n` kept in flight, a new read
//!   issued as each completes, straight into the frames; the queue never drains between
//!   batches: fio's `--iodepth=n` over the whole scan.
//! - `Sorted(n)`: as batched, but each batch's pages are de-duplicated and read in ascending
//!   order (a bitmap-heap-scan flavour): fewer reads when records share pages, and an elevator
//!   order that helps disks.
//! - `Adaptive { max }`: batched, starting at 8; after each batch the time per missed page
//!   (device clock) is compared with the previous batch's: if it did not rise by more than
//!   10 % the batch doubles (up to `max`), else it halves — the batch grows while the device
//!   keeps up.
//!
//! When each wins: on a device with internal parallelism (SSD, io_uring queue) batched and
//! sorted beat sync roughly by the device's effective queue depth; sorted wins further when
//! many qualifying records share pages (high selectivity) or on a disk; sync is as good only
//! when every page is already cached. Adaptive avoids picking a batch size per device.
//! Pins are always released, also when a batch fails (the error is returned). Every mode
//! checks a heap page (crc, kind, record count) once per read of it, not once per row: the
//! check is kept beside the frame's image ([`Pager::checked_form`]) until the image changes.

use crate::btree::node::{Node, NO_NODE};
use crate::error::{EngineError, Fault, Structure};
use crate::heap::{check_page, Database, RecordId};
use crate::pager::{FrameId, Pager};
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanMode {
    Sync,
    Batched(usize),
    Sorted(usize),
    Adaptive { max: usize },
}

impl ScanMode {
    pub fn name(self) -> &'static str {
        match self {
            ScanMode::Sync => "sync",
            ScanMode::Batched(_) => "batched",
            ScanMode::Sorted(_) => "sorted",
            ScanMode::Adaptive { .. } => "adaptive",
        }
    }
}

/// Walks the index leaves for keys in `lo..=hi`.
struct LeafCursor {
    leaf: Option<Rc<Node>>,
    pos: usize,
    hi: u64,
}

/// Index node at `page` (a node's id is its page).
fn load_node(pool: &mut Pager, page: u64) -> Result<Rc<Node>, EngineError> {
    pool.load(page, page, |b| crate::btree::decode_node(b, page, page))
}

impl LeafCursor {
    fn new(pool: &mut Pager, db: &Database, lo: u64, hi: u64) -> Result<LeafCursor, EngineError> {
        let mut node = load_node(pool, db.root)?;
        while !node.leaf {
            let child = node.vals[node.child_index(lo)];
            node = load_node(pool, child)?;
        }
        let pos = node.keys.partition_point(|&k| k < lo);
        Ok(LeafCursor {
            leaf: (lo <= hi).then_some(node),
            pos,
            hi,
        })
    }

    /// The next qualifying (key, record id), following right-sibling links.
    fn next(&mut self, pool: &mut Pager) -> Result<Option<(u64, RecordId)>, EngineError> {
        loop {
            let Some(leaf) = &self.leaf else {
                return Ok(None);
            };
            if self.pos < leaf.keys.len() {
                let (k, v) = (leaf.keys[self.pos], leaf.vals[self.pos]);
                self.pos += 1;
                if k > self.hi {
                    self.leaf = None;
                    return Ok(None);
                }
                return Ok(Some((k, RecordId::decode(v))));
            }
            if leaf.next == NO_NODE {
                self.leaf = None;
                return Ok(None);
            }
            let next = leaf.next;
            self.leaf = Some(load_node(pool, next)?);
            self.pos = 0;
        }
    }

    /// Entries until `n` distinct heap pages of them are not cached (at most `4n` entries).
    fn take_misses(
        &mut self,
        pool: &mut Pager,
        n: usize,
    ) -> Result<Vec<(u64, RecordId)>, EngineError> {
        let mut v = Vec::with_capacity(n);
        let mut missing: Vec<u64> = Vec::with_capacity(n);
        while missing.len() < n && v.len() < 4 * n {
            let Some(e) = self.next(pool)? else { break };
            let page = e.1.page;
            if !pool.contains(page) && !missing.contains(&page) {
                missing.push(page);
            }
            v.push(e);
        }
        Ok(v)
    }

    fn take(&mut self, pool: &mut Pager, n: usize) -> Result<Vec<(u64, RecordId)>, EngineError> {
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            match self.next(pool)? {
                Some(e) => v.push(e),
                None => break,
            }
        }
        Ok(v)
    }
}

/// Read one record from a pinned frame and check it is the one the index promised.
/// The page is checked once per read of it, not once per row ([`Pager::checked_form`]).
fn record(
    pool: &mut Pager,
    f: FrameId,
    key: u64,
    rid: RecordId,
) -> Result<(u64, u64), EngineError> {
    let (page, buf) = pool.checked_form(f, |b| check_page(b, rid.page))?;
    let (k, id) = page.record(buf, rid.page, rid.slot)?;
    if k != key {
        return Err(EngineError::corrupt(
            Structure::HeapPage,
            rid.page,
            Fault::Id {
                what: "record key (as the index says)",
                expected: key,
                found: k,
            },
        ));
    }
    Ok((k, id))
}

/// Rows produced between two looks at the reads running ahead ([`Pager::poll_reads`]).
const ROWS_PER_POLL: usize = 8;

/// Produce a batch's rows from its pinned frames (`frame_of(i)` for entry i), then unpin all;
/// every [`ROWS_PER_POLL`] rows the reads running ahead are polled (none run: a no-op).
fn emit(
    pool: &mut Pager,
    batch: &[(u64, RecordId)],
    frames: &[FrameId],
    frame_of: impl Fn(usize) -> FrameId,
    out: &mut Vec<(u64, u64)>,
) -> Result<(), EngineError> {
    let mut r = Ok(());
    for (i, &(k, rid)) in batch.iter().enumerate() {
        if i % ROWS_PER_POLL == ROWS_PER_POLL - 1 {
            pool.poll_reads();
        }
        match record(pool, frame_of(i), k, rid) {
            Ok(row) => out.push(row),
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    for &f in frames {
        pool.unpin(f);
    }
    r
}

/// Batches of `n` reads a pipelined window spans (see [`window_misses`]).
const WINDOW_BATCHES: usize = 8;

/// Distinct missed pages a batched scan takes at once with `n` reads in flight: `n` (P2's
/// batch, each awaited) unless the device keeps its queue full across a call
/// ([`Pager::pipelines_reads`]); then `WINDOW_BATCHES * n`, at most half the cache (the window's
/// pages stay pinned until its rows are produced), so the queue drains once per window rather
/// than once per `n` reads.
fn window_misses(pool: &Pager, n: usize) -> usize {
    if !pool.pipelines_reads() {
        return n;
    }
    (WINDOW_BATCHES * n).min(pool.cache_pages() / 2).max(n)
}

/// Every (key, id) with `lo <= key <= hi`, in key order.
pub fn range_scan(
    pool: &mut Pager,
    db: &Database,
    lo: u64,
    hi: u64,
    mode: ScanMode,
) -> Result<Vec<(u64, u64)>, EngineError> {
    let mut cur = LeafCursor::new(pool, db, lo, hi)?;
    let mut out = Vec::new();
    match mode {
        ScanMode::Sync => {
            while let Some((k, rid)) = cur.next(pool)? {
                let f = pool.fetch(rid.page)?;
                let r = record(pool, f, k, rid);
                pool.unpin(f);
                out.push(r?);
            }
        }
        ScanMode::Batched(n) if pool.pipelines_reads() => {
            let r = batched_ahead(pool, &mut cur, n.max(1), &mut out);
            if r.is_err() {
                pool.cancel_reads();
            }
            r?;
        }
        ScanMode::Batched(n) => {
            let (n, window) = (n.max(1), window_misses(pool, n.max(1)));
            loop {
                let batch = cur.take_misses(pool, window)?;
                if batch.is_empty() {
                    break;
                }
                let pages: Vec<u64> = batch.iter().map(|e| e.1.page).collect();
                let frames = pool.fetch_many_queued(&pages, n)?;
                emit(pool, &batch, &frames, |i| frames[i], &mut out)?;
            }
        }
        ScanMode::Sorted(n) => loop {
            let batch = cur.take(pool, n.max(1))?;
            if batch.is_empty() {
                break;
            }
            let mut pages: Vec<u64> = batch.iter().map(|e| e.1.page).collect();
            pages.sort_unstable();
            pages.dedup();
            let frames = pool.fetch_many(&pages)?;
            let frame_of =
                |i: usize| frames[pages.binary_search(&batch[i].1.page).expect("page fetched")];
            emit(pool, &batch, &frames, frame_of, &mut out)?;
        },
        ScanMode::Adaptive { max } => adaptive(pool, &mut cur, max.max(1), &mut out)?,
    }
    Ok(out)
}

/// The batched scan with reads running ahead: batches of `n` missed pages, their reads started
/// up to [`window_misses`] missed pages beyond the batch whose rows are being produced.
fn batched_ahead(
    pool: &mut Pager,
    cur: &mut LeafCursor,
    n: usize,
    out: &mut Vec<(u64, u64)>,
) -> Result<(), EngineError> {
    let ahead_misses = window_misses(pool, n);
    // Batches started and not yet produced, with the misses each started.
    let mut started: std::collections::VecDeque<(Vec<(u64, RecordId)>, usize)> = Default::default();
    let (mut misses_ahead, mut exhausted) = (0, false);
    loop {
        while !exhausted && misses_ahead < ahead_misses {
            let batch = cur.take_misses(pool, n)?;
            exhausted = batch.is_empty();
            if exhausted {
                break;
            }
            let pages: Vec<u64> = batch.iter().map(|e| e.1.page).collect();
            let m0 = pool.stats().misses;
            pool.fetch_ahead(&pages, n)?;
            let m = (pool.stats().misses - m0) as usize;
            misses_ahead += m;
            started.push_back((batch, m));
        }
        let Some((batch, m)) = started.pop_front() else {
            break;
        };
        let frames = pool.fetch_next()?.expect("a window per batch started");
        misses_ahead -= m;
        emit(pool, &batch, &frames, |i| frames[i], out)?;
    }
    assert_eq!(pool.windows_ahead(), 0, "every window started was produced");
    Ok(())
}

fn adaptive(
    pool: &mut Pager,
    cur: &mut LeafCursor,
    max: usize,
    out: &mut Vec<(u64, u64)>,
) -> Result<(), EngineError> {
    let mut n = 8.min(max);
    let mut last_per_miss: Option<f64> = None;
    loop {
        let batch = cur.take(pool, n)?;
        if batch.is_empty() {
            return Ok(());
        }
        let pages: Vec<u64> = batch.iter().map(|e| e.1.page).collect();
        let (t0, m0) = (pool.now_ns(), pool.stats().misses);
        let frames = pool.fetch_many(&pages)?;
        let (dt, misses) = (pool.now_ns() - t0, pool.stats().misses - m0);
        emit(pool, &batch, &frames, |i| frames[i], out)?;
        if misses > 0 {
            let per_miss = dt as f64 / misses as f64;
            n = match last_per_miss {
                Some(prev) if per_miss > 1.1 * prev => (n / 2).max(1),
                _ => (n * 2).min(max),
            };
            last_per_miss = Some(per_miss);
        }
    }
}
