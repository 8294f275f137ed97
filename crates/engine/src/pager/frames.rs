//! The pager's page cache (the buffer pool): frames, pins, batched misses, replacement.
//!
//! Model: at most `capacity` unpinned frames stay resident (0 allowed: a frame then lives only
//! while pinned). A fetched page is pinned until `unpin`; only unpinned frames are evicted, in
//! the order the replacement policy chooses; when every frame is pinned the cache grows past
//! its capacity for the moment and shrinks back as pins are released. The policy hears of a
//! reference when it ends — `admit` at a new frame's first release, `touch` at later ones —
//! so LRU orders frames by last release. Lookups of decoded forms (`load`, `cached`, `keep`)
//! are references without a pin. `fetch_many` pins a set of pages and reads
//! all its misses in ONE `submit`; if the batch fails, nothing it pinned stays pinned.
//! Every frame that leaves passes through [`Pager::evict`]: a dirty frame is written back, then
//! the policy's [`Placement`] sends its image to the flash extension (`flash_ext`) or out. A
//! miss takes the page's flash copy, if any, before it makes room (the order of P3 and of
//! [`policy::BufferSim`]), and tells the policy where the page came from ([`Source`]). A frame there holds its page image (`image`: fetched or
//! loaded pages), a decoded form only (kept by a structure whose newer version is not yet on
//! the device — the AS B-tree's buffered nodes, BFTL's rebuilt nodes), or both.
//! Invariants: a key is in at most one frame; pinned frames are never evicted; the policy
//! tracks exactly the resident frames that were released at least once.

#[path = "images.rs"]
mod images;
#[path = "read_ahead.rs"]
mod read_ahead;

use super::frame_map::FrameMap;
use super::{Device, PageForm, Pager};
use crate::error::EngineError;
use crate::page::{PageKind, HEADER_BYTES};
use blockdev::PageBuf;
use policy::{BufferPolicy, LogId, Placement, Replacement, Source};
pub(super) use read_ahead::ReadAhead;
use std::any::Any;
use std::collections::HashMap;
use std::rc::Rc;

pub type FrameId = usize;

/// A frame's device page when it has none (a decoded form the structure built itself).
const NO_PAGE: u64 = u64::MAX;
/// A frame's policy handle when the policy gave none.
const NO_HANDLE: u32 = u32::MAX;

/// Laid out for a hit: the fields a cached lookup reads come first, in the frame's first
/// cache line (frames are cache-line aligned) — the key, the decoded form, the image's
/// buffer and whether the image is checked — so a hit on a form or on a checked image waits
/// for this one line before the bytes it serves; the write-back fields after.
#[repr(C, align(64))]
struct Frame {
    key: u64,
    decoded: Option<Rc<dyn Any>>,
    /// The page image (allocated on first use, aligned for direct reads; valid while `image`).
    data: PageBuf,
    pins: u32,
    /// The policy's handle to the key's entry, if it gives one (`NO_HANDLE`: touch by key).
    handle: u32,
    /// The payload's length in bytes when `checked`.
    payload_len: u32,
    /// The image passed the typed layer's checks as a page of this kind (seal, page number,
    /// version; `typed.rs`) — read and verified, or sealed by this pager — so its payload is
    /// served as it lies ([`Pager::lend_payload`]). Cleared whenever the image changes or
    /// leaves.
    checked: Option<PageKind>,
    /// The policy tracks this key (the frame was released at least once).
    admitted: bool,
    image: bool,
    dirty: bool,
    /// The device page the image was read from and is written back to.
    page: u64,
    /// Where the image was read from (the policy admits flash read-backs to its `Am`).
    source: Source,
}

/// The replacement policy a pool holds: any [`Replacement`], or a [`BufferPolicy`], which also
/// places victims on the flash extension.
pub(super) enum PoolPolicy {
    Plain(Box<dyn Replacement<u64>>),
    Buffer(Box<BufferPolicy<u64>>),
}

impl PoolPolicy {
    fn get(&mut self) -> &mut dyn Replacement<u64> {
        match self {
            PoolPolicy::Plain(p) => p.as_mut(),
            PoolPolicy::Buffer(p) => p.as_mut(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            PoolPolicy::Plain(p) => p.name(),
            PoolPolicy::Buffer(p) => p.name(),
        }
    }

    /// Where `victim` goes; call before `forget`.
    fn placement(&self, victim: &u64) -> Placement {
        match self {
            PoolPolicy::Plain(_) => Placement::Out,
            PoolPolicy::Buffer(p) => p.placement(victim),
        }
    }

    fn warm_handles(&self, handles: &[u32]) {
        match self {
            PoolPolicy::Plain(p) => p.warm_handles(handles),
            PoolPolicy::Buffer(p) => p.warm_handles(handles),
        }
    }

    fn admit_from(&mut self, key: u64, source: Source) {
        match self {
            PoolPolicy::Plain(p) => p.admit(key),
            PoolPolicy::Buffer(p) => p.admit_from(key, source),
        }
    }
}

pub(super) struct Frames {
    capacity: usize,
    slots: Vec<Frame>,
    free: Vec<FrameId>,
    map: FrameMap,
    policy: PoolPolicy,
}

impl Frames {
    pub(super) fn new(capacity: usize, policy: PoolPolicy) -> Frames {
        Frames {
            capacity,
            slots: Vec::new(),
            free: Vec::new(),
            map: FrameMap::default(),
            policy,
        }
    }

    pub(super) fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// The unpinned frame the policy evicts next.
    fn victim(&mut self) -> Option<FrameId> {
        let (map, slots) = (&self.map, &self.slots);
        let key = self
            .policy
            .get()
            .victim(&mut |k| map.get(k).is_some_and(|f| slots[f].pins == 0))?;
        let f = self.map.get(key);
        assert!(
            f.is_some_and(|f| self.slots[f].pins == 0),
            "the policy's victim {key} is a resident, unpinned frame"
        );
        f
    }

    /// A reference to `f` ended: the policy learns of it.
    fn released(&mut self, f: FrameId) {
        let fr = &mut self.slots[f];
        if fr.admitted {
            // The handle saves the policy its own lookup of the key (a hit's biggest cost
            // after the frame's).
            match fr.handle {
                NO_HANDLE => self.policy.get().touch(fr.key),
                h => self.policy.get().touch_handle(fr.key, h),
            }
        } else {
            fr.admitted = true;
            self.policy.admit_from(fr.key, fr.source);
            fr.handle = self.policy.get().handle(fr.key).unwrap_or(NO_HANDLE);
        }
    }

    /// A reference without a pin (a decoded lookup): ends at once unless the frame is pinned.
    fn referenced(&mut self, f: FrameId) {
        if self.slots[f].pins == 0 {
            self.released(f);
        }
    }

    /// Undo frames taken for a failed read.
    fn release(&mut self, frames: &[FrameId]) {
        for &f in frames {
            assert_ne!(
                self.map.get(self.slots[f].key),
                Some(f),
                "a released frame is unmapped"
            );
            self.slots[f].pins = 0;
            self.free.push(f);
        }
    }
}

impl Pager {
    pub fn contains(&self, key: u64) -> bool {
        self.frames.map.get(key).is_some()
    }
    pub fn pinned_count(&self) -> usize {
        let fr = &self.frames;
        fr.map.values().filter(|&f| fr.slots[f].pins > 0).count()
    }
    pub fn resident(&self) -> usize {
        self.frames.map.len()
    }
    /// Unpinned frames the cache keeps.
    pub fn cache_pages(&self) -> usize {
        self.frames.capacity
    }
    /// Keep `pages` unpinned frames from now on (a smaller cache evicts at once).
    pub fn set_cache_pages(&mut self, pages: usize) {
        self.frames.capacity = pages;
        self.shrink();
    }

    pub fn data(&self, f: FrameId) -> &[u8] {
        let fr = &self.frames.slots[f];
        assert!(fr.pins > 0, "frame {f} read while unpinned");
        assert!(fr.image, "frame {f} (key {}) holds no page image", fr.key);
        &fr.data
    }

    /// The frame's bytes for writing; the page is written back when evicted or flushed.
    pub fn data_mut(&mut self, f: FrameId) -> &mut [u8] {
        let fr = &mut self.frames.slots[f];
        assert!(fr.pins > 0, "frame {f} written while unpinned");
        assert!(fr.image, "frame {f} (key {}) holds no page image", fr.key);
        fr.dirty = true;
        fr.decoded = None;
        fr.checked = None;
        if let Some(ext) = self.ext.as_mut() {
            // Never a copy while resident (a miss takes it), but a rewrite must not leave one.
            ext.invalidate(fr.page, 1);
        }
        &mut fr.data
    }

    fn pin_hit(&mut self, f: FrameId) {
        assert!(
            self.frames.slots[f].pins < u32::MAX,
            "pins of frame {f} overflow"
        );
        self.frames.slots[f].pins += 1;
        self.io.stats.hits += 1;
    }

    /// A frame for `key` (not yet filled, not yet in the map), pinned once; evicts an
    /// unpinned frame first if the cache is full.
    fn take_frame(&mut self, key: u64, page: u64) -> Result<FrameId, EngineError> {
        if self.frames.map.len() >= self.frames.capacity {
            if let Some(victim) = self.frames.victim() {
                self.evict(victim)?;
            }
        }
        assert!(
            self.frames.map.get(key).is_none(),
            "key {key} is in at most one frame"
        );
        let fr = &mut self.frames;
        let f = match fr.free.pop() {
            Some(f) => f,
            None => {
                fr.slots.push(Frame {
                    key,
                    page,
                    data: PageBuf::default(),
                    image: false,
                    decoded: None,
                    checked: None,
                    payload_len: 0,
                    pins: 0,
                    dirty: false,
                    admitted: false,
                    handle: NO_HANDLE,
                    source: Source::Disk,
                });
                fr.slots.len() - 1
            }
        };
        let s = &mut fr.slots[f];
        (s.key, s.page, s.pins, s.dirty, s.image, s.admitted) = (key, page, 1, false, false, false);
        s.handle = NO_HANDLE;
        (s.decoded, s.checked) = (None, None);
        s.source = Source::Disk;
        if s.data.len() != self.page_bytes && page != NO_PAGE {
            s.data.resize(self.page_bytes);
        }
        Ok(f)
    }

    /// The one way out of the cache: a dirty frame is written back first (on failure it stays
    /// resident and the error is returned); then, if the policy places it on a flash log and
    /// it holds a page image, the image is appended there; then the frame is forgotten and
    /// freed.
    fn evict(&mut self, f: FrameId) -> Result<(), EngineError> {
        let fr = &mut self.frames.slots[f];
        assert_eq!(
            fr.pins, 0,
            "frame {f} (key {}) evicted while pinned",
            fr.key
        );
        if fr.dirty {
            write_back(&mut self.io, fr)?;
        }
        let key = fr.key;
        if let (Placement::Log(log), Some(ext)) =
            (self.frames.policy.placement(&key), self.ext.as_mut())
        {
            if fr.image && fr.page != NO_PAGE {
                ext.put(log, fr.page, &fr.data);
            }
        }
        (fr.decoded, fr.checked) = (None, None);
        (fr.image, fr.admitted, fr.handle) = (false, false, NO_HANDLE);
        self.frames.policy.get().forget(key);
        self.frames.map.remove(key);
        self.frames.free.push(f);
        self.io.stats.evictions += 1;
        Ok(())
    }

    /// Pin `page`, reading it if it is not resident. (`fetch` and `fetch_many` serve keys that
    /// are device pages; a key a structure `keep`s decoded-only is not fetched.)
    pub fn fetch(&mut self, page: u64) -> Result<FrameId, EngineError> {
        if let Some(f) = self.frames.map.get(page) {
            self.pin_hit(f);
            return Ok(f);
        }
        let flash = self.take_flash_copy(page);
        let f = self.take_frame(page, page)?;
        if let Err(e) = self.fill(f, page, flash) {
            self.frames.release(&[f]);
            return Err(e);
        }
        self.frames.slots[f].image = true;
        self.frames.map.insert(page, f);
        self.io.stats.misses += 1;
        assert_eq!(
            self.frames.slots[f].pins, 1,
            "a fetched frame comes pinned once"
        );
        Ok(f)
    }

    /// Pin every page of `pages` (one pin per entry, in order; a repeated page pins the same
    /// frame again), reading all misses in one batch.
    pub fn fetch_many(&mut self, pages: &[u64]) -> Result<Vec<FrameId>, EngineError> {
        self.fetch_many_at(pages, None)
    }

    /// [`Pager::fetch_many`] with the misses read `depth` at a time through
    /// [`blockdev::BlockDevice::read_pipelined`]: kept `depth` in flight on a device that
    /// [`Pager::pipelines_reads`] (straight into the frames, no copy, on a file), in awaited
    /// batches of `depth` on others.
    pub fn fetch_many_queued(
        &mut self,
        pages: &[u64],
        depth: usize,
    ) -> Result<Vec<FrameId>, EngineError> {
        self.fetch_many_at(pages, Some(depth.max(1)))
    }

    fn fetch_many_at(
        &mut self,
        pages: &[u64],
        depth: Option<usize>,
    ) -> Result<Vec<FrameId>, EngineError> {
        // Pin resident pages first so that making room for the misses cannot evict them.
        let mut out: Vec<Option<FrameId>> = Vec::with_capacity(pages.len());
        let mut missing = Vec::new();
        for &p in pages {
            match self.frames.map.get(p) {
                Some(f) => {
                    self.pin_hit(f);
                    out.push(Some(f));
                }
                None => {
                    missing.push(p);
                    out.push(None);
                }
            }
        }
        missing.sort_unstable();
        missing.dedup();
        if let Err(e) = self.read_batch(&missing, depth) {
            for f in out.iter().flatten() {
                self.unpin(*f);
            }
            return Err(e);
        }
        // New frames came pinned once: the first entry of each takes that pin.
        let mut first_use: HashMap<u64, bool> = missing.iter().map(|&p| (p, true)).collect();
        let mut frames = Vec::with_capacity(pages.len());
        for (&p, f) in pages.iter().zip(out) {
            let f = match f {
                Some(f) => f,
                None => {
                    let Some(f) = self.frames.map.get(p) else {
                        unreachable!("page {p} was read into a frame above")
                    };
                    match first_use.get_mut(&p) {
                        Some(first) if *first => *first = false,
                        _ => self.pin_hit(f),
                    }
                    f
                }
            };
            frames.push(f);
        }
        assert_eq!(frames.len(), pages.len(), "one frame per page asked for");
        Ok(frames)
    }

    /// Read the pages of `pages` that are not resident in one batch and leave them cached,
    /// unpinned, for the reads that follow (a scan's data pages); at most a quarter of the
    /// cache at once. Each page read counts as a miss here and as a hit when it is used.
    pub fn prefetch(&mut self, pages: &[u64]) -> Result<(), EngineError> {
        let room = (self.frames.capacity / 4).max(1);
        let mut missing: Vec<u64> = pages
            .iter()
            .copied()
            .filter(|&p| self.frames.map.get(p).is_none())
            .collect();
        missing.sort_unstable();
        missing.dedup();
        missing.truncate(room);
        self.read_batch(&missing, None)?;
        for p in missing {
            let f = self.frames.map.get(p).expect("read into a frame above");
            self.unpin(f);
        }
        Ok(())
    }

    /// Bring what the lookups of `spots` — (page, byte offset in its payload) — will read
    /// into the CPU's cache, all at once: each resident page's frame, its decoded form and the
    /// payload's 64 bytes from the offset (a document's head and key), from the checked image
    /// where the frame holds one. Each stage is a loop of
    /// loads independent of one another, so their cache misses overlap, where one lookup after
    /// another waits for each miss in turn (frame, then form, then payload; the replacement
    /// policy warms the entries its touches read). A hint: no
    /// reference, no counter, no read; pages not resident, forms not of type `T` and offsets
    /// past the payload are skipped.
    pub fn warm<T: PageForm>(&self, spots: &[(u64, usize)]) {
        /// Spots per round (on the stack: no allocation).
        const ROUND: usize = 16;
        let fr = &self.frames;
        let mut sum = 0u64;
        for round in spots.chunks(ROUND) {
            let mut found = [(0 as FrameId, 0usize); ROUND];
            let mut n = 0;
            for &(p, at) in round {
                if let Some(f) = fr.map.get(p) {
                    found[n] = (f, at);
                    n += 1;
                }
            }
            let found = &found[..n];
            for &(f, _) in found {
                sum = sum.wrapping_add(fr.slots[f].key);
            }
            let mut handles = [NO_HANDLE; ROUND];
            for (h, &(f, _)) in handles.iter_mut().zip(found) {
                *h = fr.slots[f].handle;
            }
            fr.policy.warm_handles(&handles[..n]);
            for &(f, _) in found {
                if let Some(d) = &fr.slots[f].decoded {
                    sum = sum.wrapping_add(Rc::strong_count(d) as u64);
                }
            }
            for &(f, at) in found {
                let s = &fr.slots[f];
                let image = s
                    .checked
                    .is_some()
                    .then(|| &s.data[HEADER_BYTES..HEADER_BYTES + s.payload_len as usize]);
                let form = || s.decoded.as_ref()?.downcast_ref::<T>()?.payload();
                if let Some(b) = image.or_else(form) {
                    let last = b.len().saturating_sub(1);
                    for i in [at.min(last), at.saturating_add(63).min(last)] {
                        sum = sum.wrapping_add(u64::from(b.get(i).copied().unwrap_or(0)));
                    }
                }
            }
        }
        std::hint::black_box(sum);
    }

    /// `page`'s flash copy, taken out of the extension into the scratch buffer: the log it came
    /// from, or None (no extension, no copy, or a copy lost: then the database device serves).
    fn take_flash_copy(&mut self, page: u64) -> Option<LogId> {
        self.ext.as_mut()?.take(page, &mut self.scratch)
    }

    /// Fill new frame `f` with device page `page`: from the scratch buffer when `flash` says
    /// it holds the page's flash copy, otherwise from the database device.
    fn fill(&mut self, f: FrameId, page: u64, flash: Option<LogId>) -> Result<(), EngineError> {
        let fr = &mut self.frames.slots[f];
        assert_eq!(
            fr.data.len(),
            self.page_bytes,
            "a frame filled holds a page"
        );
        match flash {
            Some(log) => {
                fr.data.copy_from_slice(&self.scratch);
                fr.source = Source::Log(log);
                Ok(())
            }
            None => self.io.read(page, &mut fr.data),
        }
    }

    /// Read `missing` (distinct, not resident) into new frames: flash copies first (before
    /// room is made, as P3 orders it), the rest from the database device with one `submit`;
    /// each new frame ends pinned once (`depth`: [`Device::submit_reads`]). On error no new
    /// frame remains.
    fn read_batch(&mut self, missing: &[u64], depth: Option<usize>) -> Result<(), EngineError> {
        if missing.is_empty() {
            return Ok(());
        }
        let mut flash: Vec<Option<(LogId, Vec<u8>)>> = Vec::with_capacity(missing.len());
        for &p in missing {
            let copy = self
                .take_flash_copy(p)
                .map(|log| (log, self.scratch.clone()));
            flash.push(copy);
        }
        let mut new_frames = Vec::with_capacity(missing.len());
        for &p in missing {
            match self.take_frame(p, p) {
                Ok(f) => new_frames.push(f),
                Err(e) => {
                    self.frames.release(&new_frames);
                    return Err(e);
                }
            }
        }
        let slots = &mut self.frames.slots;
        let mut disk: Vec<(u64, FrameId, PageBuf)> = Vec::with_capacity(missing.len());
        for ((&p, &f), copy) in missing.iter().zip(&new_frames).zip(flash) {
            let fr = &mut slots[f];
            fr.image = true;
            match copy {
                Some((log, bytes)) => {
                    fr.data.copy_from_slice(&bytes);
                    fr.source = Source::Log(log);
                }
                None => disk.push((p, f, std::mem::take(&mut fr.data))),
            }
        }
        let r = if disk.is_empty() {
            Ok(())
        } else {
            let mut reads: Vec<(u64, &mut [u8])> = disk
                .iter_mut()
                .map(|(page, _, buf)| (*page, &mut buf[..]))
                .collect();
            self.io.submit_reads(&mut reads, depth)
        };
        for (_, f, b) in disk {
            slots[f].data = b;
        }
        if let Err(e) = r {
            self.frames.release(&new_frames);
            return Err(e);
        }
        assert_eq!(new_frames.len(), missing.len(), "a frame per missing page");
        for (&p, &f) in missing.iter().zip(&new_frames) {
            self.frames.map.insert(p, f);
        }
        self.io.stats.misses += new_frames.len() as u64;
        Ok(())
    }

    pub fn unpin(&mut self, f: FrameId) {
        let fr = &mut self.frames.slots[f];
        assert!(fr.pins > 0, "unpinning frame {f} that is not pinned");
        fr.pins -= 1;
        if fr.pins > 0 {
            return;
        }
        self.frames.released(f);
        self.shrink();
    }

    /// Evict unpinned frames while more than `capacity` are resident. A failed write-back
    /// leaves its frame resident; the error shows again at the next flush.
    fn shrink(&mut self) {
        while self.frames.map.len() > self.frames.capacity {
            let Some(victim) = self.frames.victim() else {
                break;
            };
            if self.evict(victim).is_err() {
                break;
            }
        }
    }

    /// The decoded form of `key` if a frame holds one of type `T` (a hit, referenced);
    /// otherwise a miss and `None`.
    pub fn cached<T: Any>(&mut self, key: u64) -> Option<Rc<T>> {
        let hit = self.frames.map.get(key).and_then(|f| {
            let d = self.frames.slots[f].decoded.clone()?;
            Some((f, d.downcast::<T>().ok()?))
        });
        match hit {
            Some((f, d)) => {
                self.io.stats.hits += 1;
                self.frames.referenced(f);
                Some(d)
            }
            None => {
                self.io.stats.misses += 1;
                None
            }
        }
    }

    /// `key`'s decoded form of type `T` lent to `f`, if a frame holds one: a hit that borrows
    /// the form in place (no pin, no reference count taken or dropped; the borrow ends with
    /// `f`, before anything can evict or rewrite the frame). Counted and referenced only when
    /// `f` accepts the form (Some); None: not resident, not a `T`, or refused by `f` — nothing
    /// counted, the caller takes the loading path.
    pub(super) fn lend_cached<T: Any, R>(
        &mut self,
        key: u64,
        f: impl FnOnce(&T) -> Option<R>,
    ) -> Option<R> {
        let fi = self.frames.map.get(key)?;
        let fr = &self.frames.slots[fi];
        assert_eq!(fr.key, key, "a mapped frame holds its key");
        let r = f(fr.decoded.as_deref()?.downcast_ref::<T>()?)?;
        self.io.stats.hits += 1;
        self.frames.referenced(fi);
        Some(r)
    }

    /// A hit on `key` that the caller served from a decoded form of it it holds (a handle it
    /// kept to the form the cache lent it): counted and referenced as [`Pager::lend_cached`]
    /// counts and references its hits, so the replacement policy sees the same hits in the
    /// same order. A key no longer resident counts nothing (its form was evicted; the caller
    /// holds it from before).
    pub fn touch(&mut self, key: u64) {
        if let Some(fi) = self.frames.map.get(key) {
            assert_eq!(
                self.frames.slots[fi].key, key,
                "a mapped frame holds its key"
            );
            self.io.stats.hits += 1;
            self.frames.referenced(fi);
        }
    }

    /// `key`'s decoded form: from the cache, or read from device page `page` and `decode`d
    /// (then kept beside the page image). A page that fails to decode is not kept.
    pub fn load<T: Any>(
        &mut self,
        key: u64,
        page: u64,
        decode: impl FnOnce(&[u8]) -> Result<T, EngineError>,
    ) -> Result<Rc<T>, EngineError> {
        if let Some(f) = self.frames.map.get(key) {
            self.io.stats.hits += 1;
            let fr = &mut self.frames.slots[f];
            let d = match fr.decoded.clone().and_then(|d| d.downcast::<T>().ok()) {
                Some(d) => d,
                None => {
                    assert!(
                        fr.image,
                        "frame of key {key} holds neither image nor a {}",
                        std::any::type_name::<T>()
                    );
                    let d = Rc::new(decode(&fr.data)?);
                    fr.decoded = Some(d.clone());
                    d
                }
            };
            self.frames.referenced(f);
            return Ok(d);
        }
        self.io.stats.misses += 1;
        let flash = self.take_flash_copy(page);
        let f = self.take_frame(key, page)?;
        let d = match self
            .fill(f, page, flash)
            .and_then(|_| decode(&self.frames.slots[f].data))
        {
            Ok(d) => Rc::new(d),
            Err(e) => {
                self.frames.release(&[f]);
                return Err(e);
            }
        };
        let fr = &mut self.frames.slots[f];
        fr.image = true;
        fr.decoded = Some(d.clone());
        self.frames.map.insert(key, f);
        self.unpin(f);
        Ok(d)
    }

    /// Keep `value` as `key`'s current decoded form (a newer version than any image: the
    /// structure writes it later, if ever).
    pub fn keep<T: Any>(&mut self, key: u64, value: Rc<T>) -> Result<(), EngineError> {
        if let Some(f) = self.frames.map.get(key) {
            let fr = &mut self.frames.slots[f];
            assert!(!fr.dirty, "key {key} kept over a dirty page image");
            fr.decoded = Some(value);
            (fr.image, fr.checked) = (false, None);
            self.frames.referenced(f);
            return Ok(());
        }
        if self.frames.capacity == 0 {
            return Ok(());
        }
        let f = self.take_frame(key, NO_PAGE)?;
        self.frames.slots[f].decoded = Some(value);
        self.frames.map.insert(key, f);
        self.unpin(f);
        Ok(())
    }

    /// Drop `key`'s frame (image and decoded form) without writing it back: the structure
    /// rewrote the page past the cache, so what the frame holds is stale. Cheaper than
    /// `keep`ing a form the structure would replace at once. Nothing happens when `key` is not
    /// resident.
    pub fn discard(&mut self, key: u64) {
        let Some(f) = self.frames.map.get(key) else {
            return;
        };
        let fr = &mut self.frames.slots[f];
        assert_eq!(fr.pins, 0, "key {key} discarded while pinned");
        assert!(!fr.dirty, "key {key} discarded over a dirty page image");
        (fr.decoded, fr.checked) = (None, None);
        (fr.image, fr.admitted, fr.handle) = (false, false, NO_HANDLE);
        self.frames.policy.get().forget(key);
        self.frames.map.remove(key);
        self.frames.free.push(f);
    }

    /// Write back every dirty frame and flush the device.
    pub fn flush_all(&mut self) -> Result<(), EngineError> {
        for f in 0..self.frames.slots.len() {
            let fr = &mut self.frames.slots[f];
            if fr.dirty && self.frames.map.get(fr.key) == Some(f) {
                write_back(&mut self.io, fr)?;
            }
        }
        self.flush()
    }

    /// Drop every unpinned frame (dirty ones are written back): a cold cache.
    pub fn clear(&mut self) -> Result<(), EngineError> {
        while let Some(f) = self.frames.victim() {
            self.evict(f)?;
        }
        assert_eq!(
            self.resident(),
            self.pinned_count(),
            "only pinned frames stay"
        );
        Ok(())
    }
}

fn write_back(io: &mut Device, fr: &mut Frame) -> Result<(), EngineError> {
    assert!(
        fr.image && fr.page != NO_PAGE,
        "a dirty frame holds a device page's image"
    );
    io.write(fr.page, &fr.data)?;
    fr.dirty = false;
    io.stats.writebacks += 1;
    Ok(())
}
