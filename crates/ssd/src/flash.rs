//! The NAND array: blocks of pages programmed in order, erased whole, per-die and per-channel
//! busy timelines on a virtual clock, the data each page holds, and the layer's `Stats`.
//!
//! Mechanism only: which page to program or which block to erase is the FTL's choice.
//! Invariants (asserted, kept in release): pages of a block are programmed strictly in
//! order (`page == write_pointer`); a page is programmed at most once per erase.
//!
//! Timing: a program transfers the page over the die's channel (channel busy), then programs it
//! on the die (die busy); a read senses on the die, then transfers over the channel; an erase
//! occupies only the die. Every operation starts no earlier than the later of the issue time and
//! the resource's busy-until time, so read/write interference and GC stalls emerge from contention.
//! Time saturates at `u64::MAX` ns instead of wrapping; the device turns that into an error.

use crate::config::{DataMode, SsdConfig};
use crate::die_queue::DieQueues;
use crate::live::LivePages;
use crate::stats::Stats;
use crate::types::{BlockId, DieId, PageWrite, Ppn, SimTime};

/// Tag of a page that holds no host data (never programmed since erase).
pub const TAG_EMPTY: u64 = u64::MAX;

/// A tag's class is its top byte (`tag >> TAG_CLASS_SHIFT`): a host that writes tagged pages
/// (`Command::WriteTags`) can have GC copies counted per class
/// ([`Flash::copies_by_tag_class`]), e.g. per workload flow.
pub const TAG_CLASS_SHIFT: u32 = 56;

/// How blocks and pages are numbered: the NAND array's shape, derived once from the config's
/// [`crate::config::Geometry`]. Its one copy lives in [`Flash`]; FTLs and their indexes read
/// it from there (`flash.layout`) rather than keeping their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub ppb: u32,
    pub blocks_per_die: u32,
    pub dies: u32,
    pub channels: u32,
}

impl Layout {
    pub fn new(cfg: &SsdConfig) -> Layout {
        Layout {
            ppb: cfg.geometry.pages_per_block,
            blocks_per_die: cfg.blocks_per_die(),
            dies: cfg.dies(),
            channels: cfg.geometry.channels,
        }
    }
    #[inline]
    pub fn total_blocks(&self) -> u32 {
        self.dies * self.blocks_per_die
    }
    #[inline]
    pub fn total_pages(&self) -> u64 {
        self.total_blocks() as u64 * self.ppb as u64
    }
    /// The die of global block `block`.
    #[inline]
    pub fn die_of(&self, block: u32) -> u32 {
        block / self.blocks_per_die
    }
    /// The global ids of die `die`'s blocks.
    #[inline]
    pub fn blocks_of_die(&self, die: u32) -> std::ops::Range<u32> {
        die * self.blocks_per_die..(die + 1) * self.blocks_per_die
    }
    /// Physical page `off` of `block`.
    #[inline]
    pub fn page(&self, block: u32, off: u32) -> u64 {
        block as u64 * self.ppb as u64 + off as u64
    }
    /// (logical block, offset) of a logical page, for block-mapped schemes.
    #[inline]
    pub fn split(&self, lpn: u64) -> (u32, u32) {
        (
            (lpn / self.ppb as u64) as u32,
            (lpn % self.ppb as u64) as u32,
        )
    }
}

/// Division of `u32`s by a divisor fixed at construction, by one widening multiply instead of
/// a hardware divide (Lemire, Kaser & Kurz, "Faster remainder by direct computation", 2019:
/// exact for every `u32` numerator with `m = floor(2^64 / d) + 1`). The page FTL divides on
/// every write (page -> block, block -> die) by numbers that are not powers of two (384 pages
/// per block), where a divide costs tens of cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DivU32 {
    m: u64,
    d: u32,
    /// All ones when `d` is 1 (whose `m`, 2^64, wraps to 0), else 0: `div` adds `n & one`,
    /// so it has no branch on the divisor.
    one: u32,
}

impl DivU32 {
    pub fn new(d: u32) -> DivU32 {
        assert!(d > 0, "division by zero");
        DivU32 {
            m: (u64::MAX / d as u64).wrapping_add(1),
            d,
            one: if d == 1 { u32::MAX } else { 0 },
        }
    }
    /// `n / d`.
    #[inline(always)]
    pub fn div(self, n: u32) -> u32 {
        ((self.m as u128 * n as u128) >> 64) as u32 + (n & self.one)
    }
    /// `n % d`.
    #[cfg(test)]
    pub fn rem(self, n: u32) -> u32 {
        n - self.div(n) * self.d
    }
    /// `n / d` for a `u64` numerator: by the multiply when it fits in `u32`, else a divide.
    #[inline(always)]
    pub fn div_u64(self, n: u64) -> u64 {
        match u32::try_from(n) {
            Ok(n) => self.div(n) as u64,
            Err(_) => n / self.d as u64,
        }
    }
}

/// A block [`Flash::program_next`] has just programmed a page of, to be timed
/// ([`Flash::time_placed`]). Made only there, so its block is one of the flash's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Programmed(u32);

impl Programmed {
    /// The block programmed.
    #[inline(always)]
    pub(crate) fn block(self) -> BlockId {
        BlockId(self.0)
    }
}

#[derive(Clone, Debug)]
pub struct Flash {
    pub(crate) layout: Layout,
    /// Division by pages per block, blocks per die and channels without a divide: the timing
    /// model maps every program to its die and channel.
    per_block: DivU32,
    per_die: DivU32,
    /// Each die's channel (`die % channels`), looked up on every timed program and read
    /// instead of computed.
    channel_of_die: Box<[u32]>,
    /// Each block's die and that die's channel, looked up on every timed program of a host
    /// page instead of a division and a second lookup. One entry per block (as
    /// `write_pointer`), each indexing `die_free_ns` and `channel_free_ns` (asserted in
    /// [`Flash::new`]; none of these boxed tables changes length), which lets
    /// [`Flash::time_placed`] skip all three bound checks. At most 65,536 dies (validated):
    /// both numbers fit 16 bits, 4 bytes a block.
    place_of_block: Box<[(u16, u16)]>,
    timing: bool,
    t_read_ns: u64,
    t_prog_ns: u64,
    t_erase_ns: u64,
    xfer_ns: u64,
    /// `timing.reads_suspend_programs`: reads keep their own per-die timeline
    /// (`die_read_free_ns`) and push a running program or erase back instead of waiting for it.
    reads_suspend: bool,
    write_pointer: Box<[u32]>,
    erase_count: Vec<u32>,
    /// A tag per page (empty with `data = "none"`).
    tags: Vec<u64>,
    /// With `data = "none"` (no tags to tell): pages below their block's write pointer that
    /// were skipped unprogrammed (block-mapped schemes place pages at their offset).
    skipped: Option<LivePages>,
    payloads: Option<Vec<Option<Box<[u8]>>>>,
    die_free_ns: Box<[u64]>,
    /// When each die's last read ends (used only with `reads_suspend`).
    die_read_free_ns: Vec<u64>,
    /// `timing.read_priority` (without `reads_suspend`): the operations booked on each die,
    /// so a read goes ahead of those queued (see [`DieQueues`]).
    die_queues: Option<DieQueues>,
    channel_free_ns: Box<[u64]>,
    /// GC copies per tag class since counting was turned on (empty: not counted).
    copies_by_tag_class: Vec<u64>,
    /// The SSD layer's counters; FTLs add merges, copies and translation I/O here.
    pub(crate) stats: Stats,
}

impl Flash {
    pub(crate) fn new(cfg: &SsdConfig) -> Flash {
        let g = &cfg.geometry;
        let blocks = cfg.total_blocks() as usize;
        let pages = cfg.physical_pages() as usize;
        let xfer_ns = (g.page_bytes as f64 * 1e3 / cfg.timing.channel_mb_per_s).round() as u64;
        let flash = Flash {
            layout: Layout::new(cfg),
            per_block: DivU32::new(g.pages_per_block),
            per_die: DivU32::new(cfg.blocks_per_die()),
            channel_of_die: (0..cfg.dies()).map(|d| d % g.channels).collect(),
            place_of_block: (0..blocks as u32)
                .map(|b| {
                    let die = b / cfg.blocks_per_die();
                    let place = (die, die % g.channels);
                    let fits = |n: u32| u16::try_from(n).expect("at most 65,536 dies (validated)");
                    (fits(place.0), fits(place.1))
                })
                .collect(),
            timing: cfg.timing.enabled,
            t_read_ns: cfg.timing.t_read_ns,
            t_prog_ns: cfg.timing.t_prog_ns,
            t_erase_ns: cfg.timing.t_erase_ns,
            xfer_ns,
            reads_suspend: cfg.timing.reads_suspend_programs,
            write_pointer: vec![0; blocks].into(),
            erase_count: vec![0; blocks],
            tags: match cfg.ftl.data {
                DataMode::None => Vec::new(),
                DataMode::Tags | DataMode::Payloads => crate::hugevec::filled(pages, TAG_EMPTY),
            },
            skipped: (cfg.ftl.data == DataMode::None).then(|| LivePages::new(pages as u64)),
            payloads: (cfg.ftl.data == DataMode::Payloads).then(|| vec![None; pages]),
            die_free_ns: vec![0; cfg.dies() as usize].into(),
            die_read_free_ns: vec![0; cfg.dies() as usize],
            die_queues: (cfg.timing.enabled
                && cfg.timing.read_priority
                && !cfg.timing.reads_suspend_programs)
                .then(|| DieQueues::new(cfg.dies() as usize)),
            channel_free_ns: vec![0; g.channels as usize].into(),
            copies_by_tag_class: Vec::new(),
            stats: Stats::default(),
        };
        // What `time_placed`'s unchecked indexing rests on.
        assert!(
            flash.place_of_block.len() == flash.write_pointer.len(),
            "a place per block"
        );
        assert!(
            flash.place_of_block.iter().all(|&(die, ch)| {
                (die as usize) < flash.die_free_ns.len()
                    && (ch as usize) < flash.channel_free_ns.len()
            }),
            "a block placed beyond the dies or channels"
        );
        flash
    }

    pub fn total_blocks(&self) -> u32 {
        self.layout.total_blocks()
    }
    pub fn total_pages(&self) -> u64 {
        self.layout.total_pages()
    }
    pub fn pages_per_block(&self) -> u32 {
        self.layout.ppb
    }
    pub fn has_payloads(&self) -> bool {
        self.payloads.is_some()
    }
    /// Whether the flash keeps a tag per page (`data` is not `"none"`).
    pub fn has_tags(&self) -> bool {
        !self.tags.is_empty()
    }
    /// Whether a page's copy moves anything (a tag, a payload): only then does a copy need
    /// the offsets of its source pages ([`Flash::copy_run`]).
    #[inline]
    pub(crate) fn keeps_data(&self) -> bool {
        self.has_tags() || self.payloads.is_some()
    }
    pub fn timing_enabled(&self) -> bool {
        self.timing
    }

    #[inline]
    pub fn block_of(&self, ppn: Ppn) -> BlockId {
        BlockId(self.per_block.div_u64(ppn.0) as u32)
    }
    #[inline]
    pub fn page_in_block(&self, ppn: Ppn) -> u32 {
        (ppn.0 - self.per_block.div_u64(ppn.0) * self.layout.ppb as u64) as u32
    }
    #[inline]
    pub fn ppn(&self, block: BlockId, page: u32) -> Ppn {
        Ppn(block.0 as u64 * self.layout.ppb as u64 + page as u64)
    }
    #[inline]
    pub fn die_of(&self, block: BlockId) -> DieId {
        DieId(self.per_die.div(block.0))
    }
    #[inline]
    fn channel_of(&self, die: DieId) -> usize {
        self.channel_of_die[die.0 as usize] as usize
    }

    /// Next page to program in `block` (== pages_per_block when the block is full).
    #[inline]
    pub fn write_pointer(&self, block: BlockId) -> u32 {
        self.write_pointer[block.0 as usize]
    }
    #[inline]
    pub fn is_full(&self, block: BlockId) -> bool {
        self.write_pointer(block) == self.layout.ppb
    }
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    /// The tag stored at `ppn` (TAG_EMPTY if not programmed since its block's erase, or if
    /// the device keeps no tags: see [`Flash::has_tags`]).
    pub fn tag(&self, ppn: Ppn) -> u64 {
        self.tags.get(ppn.0 as usize).copied().unwrap_or(TAG_EMPTY)
    }
    /// Count GC copies per tag class (see [`TAG_CLASS_SHIFT`]) for classes `0..classes` from
    /// now on (copies of other classes are not counted). Needs tags (`data` not `"none"`).
    pub fn count_copies_by_tag_class(&mut self, classes: usize) {
        assert!(self.has_tags(), "counting copies per tag class needs tags");
        self.copies_by_tag_class = vec![0; classes];
    }
    /// GC copies per tag class since [`Flash::count_copies_by_tag_class`].
    pub fn copies_by_tag_class(&self) -> &[u64] {
        &self.copies_by_tag_class
    }
    /// Count the `n` copies just made to `dst0..`: off the hot path (only a host that asked
    /// for per-class counts pays for it).
    #[cold]
    #[inline(never)]
    fn count_run_copies(&mut self, dst0: usize, n: usize) {
        for j in 0..n {
            self.count_copy(self.tags[dst0 + j]);
        }
    }

    #[inline]
    fn count_copy(&mut self, tag: u64) {
        if let Some(c) = self
            .copies_by_tag_class
            .get_mut((tag >> TAG_CLASS_SHIFT) as usize)
        {
            *c += 1;
        }
    }

    /// Whether `ppn` holds data programmed since its block's erase.
    pub fn programmed(&self, ppn: Ppn) -> bool {
        match &self.skipped {
            None => self.tags[ppn.0 as usize] != TAG_EMPTY,
            Some(skipped) => {
                self.page_in_block(ppn) < self.write_pointer(self.block_of(ppn))
                    && !skipped.get(ppn.0)
            }
        }
    }
    /// The payload stored at `ppn`, in payload mode.
    pub fn payload(&self, ppn: Ppn) -> Option<&[u8]> {
        self.payloads.as_ref()?[ppn.0 as usize].as_deref()
    }

    /// Program the next page of its block with host or FTL data. Returns the completion time.
    #[inline(always)]
    pub(crate) fn program(&mut self, ppn: Ppn, data: PageWrite, now: SimTime) -> SimTime {
        let block = self.block_of(ppn);
        self.advance_write_pointer(block, ppn);
        self.store(ppn, data);
        self.stats.flash_pages_written += 1;
        self.time_program(block, now)
    }

    /// Program the next page of `block` for a caller that knows the block, and leave its
    /// timing to the caller: [`Flash::time_program`] (or, on a timed run,
    /// [`Flash::time_placed`]) with the block and the write's time gives what
    /// [`Flash::program`] would have. Nothing in between may touch the die's or channel's
    /// timeline (the page FTL's host write maps and closes in between: no timing).
    /// Returns the page programmed and the block as a [`Programmed`] to time.
    #[inline(always)]
    pub(crate) fn program_next(&mut self, block: u32, data: PageWrite) -> (Ppn, Programmed) {
        let wp = &mut self.write_pointer[block as usize];
        assert!(
            *wp < self.layout.ppb,
            "NAND pages are programmed in order: block {block} is full"
        );
        let ppn = Ppn(block as u64 * self.layout.ppb as u64 + *wp as u64);
        *wp += 1;
        self.store(ppn, data);
        self.stats.flash_pages_written += 1;
        (ppn, Programmed(block))
    }

    /// Keep what a program writes at `ppn`: its tag, and its payload in payload mode.
    #[inline(always)]
    fn store(&mut self, ppn: Ppn, data: PageWrite) {
        if let Some(t) = self.tags.get_mut(ppn.0 as usize) {
            *t = data.tag;
        }
        if let Some(p) = self.payloads.as_mut() {
            p[ppn.0 as usize] = data.payload;
        }
    }

    /// Program page `ppn` of its block, skipping any pages below it that are still free (they
    /// stay unprogrammed until the block's erase). For block-mapped schemes that place a page
    /// at its logical offset.
    #[inline]
    pub(crate) fn program_at(&mut self, ppn: Ppn, data: PageWrite, now: SimTime) -> SimTime {
        self.skip_to(ppn);
        self.program(ppn, data, now)
    }

    /// [`Flash::copy`] to a destination page that may skip free pages (see [`Flash::program_at`]).
    #[inline]
    pub(crate) fn copy_to(&mut self, src: Ppn, dst: Ppn, now: SimTime) -> SimTime {
        self.skip_to(dst);
        self.copy(src, dst, now)
    }

    fn skip_to(&mut self, ppn: Ppn) {
        let block = self.block_of(ppn);
        let page = self.page_in_block(ppn);
        let wp = &mut self.write_pointer[block.0 as usize];
        assert!(
            page >= *wp,
            "NAND pages are programmed in order: block {} page {page} is below the write pointer {wp}",
            block.0
        );
        if let Some(skipped) = self.skipped.as_mut() {
            let first = ppn.0 - (page - *wp) as u64;
            (first..ppn.0).for_each(|p| skipped.set(p, true));
        }
        *wp = page;
    }

    /// Read a page (timing and counters only; the data is [`Flash::tag`] / [`Flash::payload`]).
    #[inline]
    pub(crate) fn read(&mut self, ppn: Ppn, now: SimTime) -> SimTime {
        self.stats.flash_pages_read += 1;
        if !self.timing {
            return now;
        }
        let die = self.die_of(self.block_of(ppn));
        let end = match (self.reads_suspend, self.die_queues.is_some()) {
            (true, _) => self.sense_suspending(die, now),
            (false, true) => self.sense_first(die, now),
            (false, false) => self.occupy_die(die, now, self.t_read_ns),
        };
        self.occupy_channel(die, end)
    }

    /// A host read's sense on `die` that suspends the program or erase running there: it
    /// starts after the die's earlier reads only; the die's other work ends `t_read_ns` later.
    fn sense_suspending(&mut self, die: DieId, now: SimTime) -> SimTime {
        let d = die.0 as usize;
        let start = now.0.max(self.die_read_free_ns[d]);
        let end = start.saturating_add(self.t_read_ns);
        self.die_read_free_ns[d] = end;
        let busy = &mut self.die_free_ns[d];
        *busy = match *busy > start {
            true => busy.saturating_add(self.t_read_ns),
            false => end,
        };
        SimTime(end)
    }

    /// A host read's sense on `die` with read priority: after the operation running there
    /// (and the die's earlier reads), ahead of the work queued behind it.
    fn sense_first(&mut self, die: DieId, now: SimTime) -> SimTime {
        let d = die.0 as usize;
        let queues = self
            .die_queues
            .as_mut()
            .expect("read priority keeps die queues");
        let (start, busy_until) = queues.read(d, now.0, self.t_read_ns);
        self.die_free_ns[d] = self.die_free_ns[d].max(busy_until);
        SimTime(start.saturating_add(self.t_read_ns))
    }

    /// The flash falls idle and its counters start again: every die and channel free at time
    /// zero, [`Stats`] cleared; what the pages hold is kept (the end of `[aging]`).
    pub(crate) fn settle(&mut self) {
        self.die_free_ns.fill(0);
        self.die_read_free_ns.fill(0);
        if let Some(q) = self.die_queues.as_mut() {
            q.clear();
        }
        self.channel_free_ns.fill(0);
        self.stats = Stats::default();
    }

    /// Copy a valid page to a free page (GC or merge): read, then program, moving its data.
    /// On the same die the copy stays on-chip (copyback: no channel transfer).
    /// Counts one flash read, one flash write and one `gc_pages_copied`.
    #[inline(always)]
    pub(crate) fn copy(&mut self, src: Ppn, dst: Ppn, now: SimTime) -> SimTime {
        let dst_block = self.block_of(dst);
        self.advance_write_pointer(dst_block, dst);
        if !self.tags.is_empty() {
            let tag = self.tags[src.0 as usize];
            self.tags[dst.0 as usize] = tag;
            if !self.copies_by_tag_class.is_empty() {
                self.count_copy(tag);
            }
        }
        if let Some(p) = self.payloads.as_mut() {
            p[dst.0 as usize] = p[src.0 as usize].clone();
        }
        self.stats.flash_pages_read += 1;
        self.stats.flash_pages_written += 1;
        self.stats.gc_pages_copied += 1;
        if !self.timing {
            return now;
        }
        self.time_copy(src.0 as usize, dst_block.0, now)
    }

    /// The timing of a copy from page `src` to a page of `dst_block`: sense on the source die,
    /// then program on-chip (copyback) on the same die, or transfer and program on another.
    #[inline]
    fn time_copy(&mut self, src: usize, dst_block: u32, now: SimTime) -> SimTime {
        let src_die = self.die_of(self.block_of(Ppn(src as u64)));
        let dst_die = self.die_of(BlockId(dst_block));
        let sensed = self.occupy_die(src_die, now, self.t_read_ns);
        if src_die == dst_die {
            self.occupy_die(dst_die, sensed, self.t_prog_ns)
        } else {
            let out = self.occupy_channel(src_die, sensed);
            self.time_program(BlockId(dst_block), out)
        }
    }

    /// Copy `n` pages of `src_block`, at offsets `offs` (ascending or not), to the next `n`
    /// pages of `dst_block`, in order: the same effect, counters and timing as one
    /// [`Flash::copy`] per page (each copy starting when the previous one finished), in one
    /// pass — one write pointer check for the run, the data moved in a tight loop, counters
    /// added once. A flash that keeps no data ([`Flash::keeps_data`]) reads no offset, and
    /// `offs` may then be empty.
    #[inline]
    pub(crate) fn copy_run(
        &mut self,
        src_block: u32,
        offs: &[u32],
        n: usize,
        dst_block: u32,
        now: SimTime,
    ) -> SimTime {
        let ppb = self.layout.ppb as usize;
        assert!(
            offs.len() == n || (offs.is_empty() && !self.keeps_data()),
            "{} offsets for {n} copies from block {src_block}",
            offs.len()
        );
        let wp = self.write_pointer[dst_block as usize] as usize;
        assert!(
            wp + n <= ppb,
            "NAND pages are programmed in order: {n} pages at write pointer {wp} overflow block {dst_block}"
        );
        self.write_pointer[dst_block as usize] = (wp + n) as u32;
        let (src0, dst0) = (src_block as usize * ppb, dst_block as usize * ppb + wp);
        if !self.tags.is_empty() {
            let tags = &mut self.tags[..];
            for (j, &off) in offs.iter().enumerate() {
                tags[dst0 + j] = tags[src0 + off as usize];
            }
            if !self.copies_by_tag_class.is_empty() {
                self.count_run_copies(dst0, n);
            }
        }
        if let Some(p) = self.payloads.as_mut() {
            for (j, &off) in offs.iter().enumerate() {
                p[dst0 + j] = p[src0 + off as usize].clone();
            }
        }
        self.stats.flash_pages_read += n as u64;
        self.stats.flash_pages_written += n as u64;
        self.stats.gc_pages_copied += n as u64;
        if !self.timing {
            return now;
        }
        self.time_copy_run(src_block, n, dst_block, now)
    }

    /// The timing of `pages` copies from `src_block` to `dst_block`, one after another: what
    /// [`Flash::time_copy`] gives page by page (a copy's time depends only on the two blocks'
    /// dies, not on the page), with the dies and channels looked up once for the run.
    #[inline]
    fn time_copy_run(
        &mut self,
        src_block: u32,
        pages: usize,
        dst_block: u32,
        now: SimTime,
    ) -> SimTime {
        let src_die = self.die_of(BlockId(src_block));
        let dst_die = self.die_of(BlockId(dst_block));
        assert!(
            (src_die.0 as usize) < self.die_free_ns.len()
                && (dst_die.0 as usize) < self.die_free_ns.len(),
            "copy from block {src_block} to block {dst_block} beyond the dies"
        );
        if src_die == dst_die {
            return self.time_copyback_run(src_die, pages, now);
        }
        let mut t = now;
        for _ in 0..pages {
            let sensed = self.occupy_die(src_die, t, self.t_read_ns);
            let out = self.occupy_channel(src_die, sensed);
            t = self.time_program_on(dst_die, out);
        }
        t
    }

    /// `pages` on-die copies one after another, in closed form: the first starts when both
    /// `now` and the die allow, and each then holds the die for a sense and a program (the
    /// die is the only resource, so every later copy starts when the one before ends). Sums
    /// saturate at `u64::MAX` ns as the page-by-page additions do.
    #[inline]
    fn time_copyback_run(&mut self, die: DieId, pages: usize, now: SimTime) -> SimTime {
        if pages == 0 {
            return now;
        }
        let per_page_ns = self.t_read_ns.saturating_add(self.t_prog_ns);
        let free = &mut self.die_free_ns[die.0 as usize];
        let start_ns = now.0.max(*free);
        let end_ns = (per_page_ns as u128)
            .saturating_mul(pages as u128)
            .saturating_add(start_ns as u128)
            .min(u64::MAX as u128) as u64;
        assert!(end_ns >= start_ns, "a copy run ends before it starts");
        *free = end_ns;
        if let Some(q) = self.die_queues.as_mut() {
            q.book(die.0 as usize, start_ns, per_page_ns, pages as u64);
        }
        SimTime(end_ns)
    }

    /// Erase a block: all its pages become free. Returns the completion time.
    pub(crate) fn erase(&mut self, block: BlockId, now: SimTime) -> SimTime {
        let b = block.0 as usize;
        self.write_pointer[b] = 0;
        self.erase_count[b] += 1;
        let first = b * self.layout.ppb as usize;
        let range = first..first + self.layout.ppb as usize;
        if let Some(tags) = self.tags.get_mut(range.clone()) {
            tags.fill(TAG_EMPTY);
        }
        if let Some(skipped) = self.skipped.as_mut() {
            skipped.clear_range(range.start as u64, range.end as u64);
        }
        if let Some(p) = self.payloads.as_mut() {
            p[range].iter_mut().for_each(|x| *x = None);
        }
        self.stats.erases += 1;
        if !self.timing {
            return now;
        }
        self.occupy_die(self.die_of(block), now, self.t_erase_ns)
    }

    #[inline(always)]
    fn advance_write_pointer(&mut self, block: BlockId, ppn: Ppn) {
        let page = self.page_in_block(ppn);
        let wp = &mut self.write_pointer[block.0 as usize];
        assert_eq!(
            page, *wp,
            "NAND pages are programmed in order: block {} page {page}, write pointer {wp}",
            block.0
        );
        *wp += 1;
    }

    /// The completion time of a page programmed into `block` at `now` (`now` itself when
    /// timing is off).
    #[inline(always)]
    pub(crate) fn time_program(&mut self, block: BlockId, now: SimTime) -> SimTime {
        if !self.timing {
            return now;
        }
        let (die, ch) = self.place_of_block[block.0 as usize];
        self.time_program_at(DieId(die as u32), ch as usize, now)
    }

    /// [`Flash::time_program`] on a flash known to be timed (a timed run checks once that
    /// it is): the page's transfer on its die's channel, then its program on the die.
    #[inline(always)]
    pub(crate) fn time_placed(&mut self, programmed: Programmed, now: SimTime) -> SimTime {
        debug_assert!(self.timing, "a timed program on an untimed flash");
        let block = programmed.0 as usize;
        debug_assert!(block < self.place_of_block.len(), "block {block}");
        // SAFETY: a `Programmed` is made only by `program_next` of a block it has just
        // indexed (so below the blocks, and `place_of_block` has one entry per block), and
        // only the flash that made it receives it back; every entry of `place_of_block`
        // indexes both timelines. All asserted in `Flash::new`; the boxed tables never
        // change length.
        let (die, ch) = unsafe { *self.place_of_block.get_unchecked(block) };
        let (ch_free, die_free) = unsafe {
            (
                self.channel_free_ns.get_unchecked_mut(ch as usize),
                self.die_free_ns.get_unchecked_mut(die as usize),
            )
        };
        let (start_ns, end) = program_step(now, ch_free, die_free, self.xfer_ns, self.t_prog_ns);
        if let Some(q) = self.die_queues.as_mut() {
            q.book(die as usize, start_ns, self.t_prog_ns, 1);
        }
        end
    }

    /// [`Flash::time_program`] on a die already known.
    #[inline(always)]
    fn time_program_on(&mut self, die: DieId, now: SimTime) -> SimTime {
        self.time_program_at(die, self.channel_of(die), now)
    }

    /// [`Flash::time_program`] on a die and its channel already known.
    #[inline(always)]
    fn time_program_at(&mut self, die: DieId, ch: usize, now: SimTime) -> SimTime {
        let (ch_free, die_free) = (
            &mut self.channel_free_ns[ch],
            &mut self.die_free_ns[die.0 as usize],
        );
        let (start_ns, end) = program_step(now, ch_free, die_free, self.xfer_ns, self.t_prog_ns);
        if let Some(q) = self.die_queues.as_mut() {
            q.book(die.0 as usize, start_ns, self.t_prog_ns, 1);
        }
        end
    }

    #[inline(always)]
    fn occupy_die(&mut self, die: DieId, now: SimTime, ns: u64) -> SimTime {
        let d = &mut self.die_free_ns[die.0 as usize];
        let start_ns = now.0.max(*d);
        *d = start_ns.saturating_add(ns);
        let end = SimTime(*d);
        if let Some(q) = self.die_queues.as_mut() {
            q.book(die.0 as usize, start_ns, ns, 1);
        }
        end
    }

    #[inline(always)]
    fn occupy_channel(&mut self, die: DieId, now: SimTime) -> SimTime {
        let ch = self.channel_of(die);
        let c = &mut self.channel_free_ns[ch];
        *c = now.0.max(*c).saturating_add(self.xfer_ns);
        SimTime(*c)
    }
}

/// One page's program on the timelines of its channel and die: the transfer when both `now`
/// and the channel allow, then the program when the die is free too. Times saturate at
/// `u64::MAX` ns (the device reports that as an overflow). Returns when the program started
/// on the die and when it ends.
#[inline(always)]
fn program_step(
    now: SimTime,
    channel_free_ns: &mut u64,
    die_free_ns: &mut u64,
    xfer_ns: u64,
    t_prog_ns: u64,
) -> (u64, SimTime) {
    let sent = now.0.max(*channel_free_ns).saturating_add(xfer_ns);
    *channel_free_ns = sent;
    let start_ns = sent.max(*die_free_ns);
    *die_free_ns = start_ns.saturating_add(t_prog_ns);
    (start_ns, SimTime(*die_free_ns))
}

#[cfg(test)]
mod div_tests {
    use super::DivU32;

    #[test]
    fn div_u32_is_exact() {
        for d in [
            1u32,
            2,
            3,
            7,
            64,
            128,
            255,
            256,
            384,
            1000,
            4095,
            65_536,
            1 << 31,
            u32::MAX,
        ] {
            let f = DivU32::new(d);
            for n in [
                0u32,
                1,
                2,
                d - 1,
                d,
                d.wrapping_add(1),
                12_345_678,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(f.div(n), n / d, "{n} / {d}");
                assert_eq!(f.rem(n), n % d, "{n} % {d}");
            }
            for i in 0..10_000u32 {
                let n = i.wrapping_mul(2_654_435_761);
                assert_eq!(f.div(n), n / d, "{n} / {d}");
                assert_eq!(f.rem(n), n % d, "{n} % {d}");
                let wide = (n as u64) << 7 | 0x5a;
                assert_eq!(f.div_u64(wide), wide / d as u64, "{wide} / {d}");
            }
        }
    }
}

#[cfg(test)]
mod copy_run_tests {
    use super::Flash;
    use crate::config::{Geometry, SsdConfig};
    use crate::types::{PageWrite, Ppn, SimTime};

    /// Four dies on two channels, timing on.
    fn four_dies() -> SsdConfig {
        let preset = SsdConfig::preset("mlc-sata-2010").expect("shipped preset");
        let cfg = SsdConfig {
            geometry: Geometry {
                channels: 2,
                dies_per_channel: 2,
                planes_per_die: 1,
                blocks_per_plane: 8,
                pages_per_block: 16,
                page_bytes: 4096,
            },
            ..preset
        };
        assert!(cfg.timing.enabled, "the preset times flash");
        cfg
    }

    /// A host page's program timed from its block's place ([`Flash::time_placed`], the
    /// table a timed run reads without bound checks) takes the same time, on the same die
    /// and channel, as one timed on the block's die ([`Flash::time_program_on`]), for
    /// every block of four dies on two channels.
    #[test]
    fn a_placed_program_times_like_one_on_its_die() {
        let mut flash = Flash::new(&four_dies());
        // Busy timelines, different per die and channel.
        for (i, t) in flash.die_free_ns.iter_mut().enumerate() {
            *t = 10_000 * i as u64;
        }
        flash.channel_free_ns[1] = 25_000;
        for block in 0..flash.total_blocks() {
            let (mut placed, mut on_die) = (flash.clone(), flash.clone());
            let now = SimTime(5_000);
            let t_placed = placed.time_placed(super::Programmed(block), now);
            let die = on_die.die_of(crate::types::BlockId(block));
            let t_on_die = on_die.time_program_on(die, now);
            assert_eq!(t_placed, t_on_die, "block {block}");
            assert_eq!(
                placed.die_free_ns, on_die.die_free_ns,
                "dies, block {block}"
            );
            assert_eq!(
                placed.channel_free_ns, on_die.channel_free_ns,
                "channels, block {block}"
            );
        }
    }

    /// A run of copies ends when page-by-page copies do, on the same die and across dies
    /// and channels, with every die's and channel's timeline left the same.
    #[test]
    fn a_copy_run_times_like_its_copies_one_by_one() {
        let cfg = four_dies();
        let mut flash = Flash::new(&cfg);
        let bpd = flash.layout.blocks_per_die;
        // Source block 1 (die 0) full; destinations on die 0 and on dies 1..3.
        for p in 0..16 {
            flash.program(
                flash.ppn(crate::types::BlockId(1), p),
                PageWrite::tag(p as u64),
                SimTime(0),
            );
        }
        let offs: Vec<u32> = vec![0, 3, 4, 9, 15];
        for dst_block in [2, bpd + 1, 2 * bpd + 3, 3 * bpd] {
            let (mut run, mut one) = (flash.clone(), flash.clone());
            let now = SimTime(1_000_000);
            let t_run = run.copy_run(1, &offs, offs.len(), dst_block, now);
            let mut t_one = now;
            for (j, &off) in offs.iter().enumerate() {
                let src = Ppn(16 + off as u64);
                let dst = one.ppn(crate::types::BlockId(dst_block), j as u32);
                t_one = one.copy(src, dst, t_one);
            }
            assert_eq!(t_run, t_one, "copy to block {dst_block}");
            assert_eq!(
                run.die_free_ns, one.die_free_ns,
                "dies after copies to {dst_block}"
            );
            assert_eq!(
                run.channel_free_ns, one.channel_free_ns,
                "channels, {dst_block}"
            );
            assert!(t_run.0 > now.0, "copies take time");
        }
    }
}
