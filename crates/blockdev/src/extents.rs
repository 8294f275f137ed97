//! File-system placement for a [`super::SharedDevice`]: where each partition's pages lie on the
//! device when the partitions are files of one file system rather than fixed ranges.
//!
//! Model (ext4's multi-block allocator in miniature): the partitions' space is cut into
//! chunks of `chunk_pages` pages (≤ 64). A partition's chunk is placed on a device chunk when
//! it is first written after being free: the first free device chunk at or after the
//! partition's **goal** — the chunk after the one it was last given, as ext4 extends a file
//! right after its last block — else the lowest free chunk (wrap around). A partition's
//! goal starts at its own share of the space (files begin apart, as in separate block
//! groups). A trim frees the pages it covers; a chunk none of whose pages is live any more
//! goes back to the free pool (with or without `discard`: the file system knows it is free,
//! the device may not), so a DB file written after another was deleted takes the deleted
//! file's device pages.
//!
//! Where a file's first chunk goes ([`ChunkGoal`]) is a switch:
//! - [`ChunkGoal::OwnShare`] (default): each partition's goal starts at its own share of the
//!   space and moves on after every chunk it is given, wherever the partition writes (files in
//!   separate block groups, each a log wrapping in its region);
//! - [`ChunkGoal::Directory`]: ext4's goal for a block (`ext4_ext_find_goal`): right after the
//!   device chunk of the partition chunk before it, when that one is placed (a file extends
//!   after its last block); else — the start of a new file, e.g. the first block of a
//!   ForestDB file written by a compaction — the directory's block group, which all files of
//!   one directory share (their inodes sit in the directory's group, and a file with no
//!   blocks starts from its inode's group): the lowest chunks of the space. So new files
//!   fill the holes that other files' deleted generations left, first fit from the bottom;
//! - [`ChunkGoal::Lowest`]: every chunk first fit from the bottom (a file system so
//!   fragmented that no file's next block is free after its last one);
//! - [`ChunkGoal::Mballoc`]: a write's unplaced chunks placed together as one request, the way
//!   ext4's multi-block allocator decides ([`crate::mballoc`]: goal after the file's last
//!   block, per-file preallocation sized from the file, a large request given a whole free
//!   extent, best fit, in the first block group from the goal's that has one);
//! - [`ChunkGoal::MballocFreeOrder`]: the same, but a preallocation the goal cannot hold
//!   takes the free space freed longest ago ([`crate::mballoc::Search::FreeOrder`]);
//! - [`ChunkGoal::MballocStream`]: the same, but the group scan starts at the group of the
//!   last allocation of any file, ext4's global goal for large files
//!   ([`crate::mballoc::Search::StreamGoal`]).
//!
//! Invariants: a device chunk is mapped by at most one partition chunk, or is free; mapped +
//! free = all chunks. Deterministic: a function of the sequence of writes and trims.

use crate::mballoc::{Mballoc, Search};
use crate::PageNo;
use std::collections::BTreeSet;

/// Largest chunk (a chunk's live pages are one `u64` mask).
pub const CHUNK_PAGES_MAX: u64 = 64;

/// Where a partition's chunk is placed first (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChunkGoal {
    /// After the chunk last given to the partition; first, the partition's own share.
    #[default]
    OwnShare,
    /// After the device chunk of the partition's previous chunk, else the lowest free chunk
    /// (the directory's block group, shared by every file).
    Directory,
    /// The lowest free chunk, always.
    Lowest,
    /// A write's unplaced run as one request to an ext4-mballoc-like allocator
    /// ([`crate::mballoc`]).
    Mballoc,
    /// As `Mballoc`, the free space reused in the order it was freed
    /// ([`crate::mballoc::Search::FreeOrder`]).
    MballocFreeOrder,
    /// As `Mballoc`, the group scan from the last allocation's group (ext4's stream
    /// allocation; [`crate::mballoc::Search::StreamGoal`]).
    MballocStream,
}

impl ChunkGoal {
    pub fn name(self) -> &'static str {
        match self {
            ChunkGoal::OwnShare => "own-share",
            ChunkGoal::Directory => "directory",
            ChunkGoal::Lowest => "lowest",
            ChunkGoal::Mballoc => "mballoc",
            ChunkGoal::MballocFreeOrder => "mballoc-free-order",
            ChunkGoal::MballocStream => "mballoc-stream",
        }
    }
}

/// One partition's chunk map.
#[derive(Clone, Debug)]
struct PartMap {
    /// Per partition chunk: its device chunk, if placed.
    chunk: Vec<Option<u64>>,
    /// Per partition chunk: live pages (bit i: page i of the chunk written and not trimmed).
    live: Vec<u64>,
    /// Device chunk to try first for the next placement.
    goal: u64,
}

/// The chunk placement of every partition (see the module docs).
#[derive(Clone, Debug)]
pub struct Extents {
    chunk_pages: u64,
    goal: ChunkGoal,
    /// Device chunks so far given to partitions' space (the pool).
    chunks: u64,
    free: BTreeSet<u64>,
    parts: Vec<PartMap>,
    /// With [`ChunkGoal::Mballoc`]: the allocator's free extents and preallocations (the
    /// chunks it reserves stay in `free` until placed).
    mb: Option<Mballoc>,
}

/// A run of a partition I/O on the device: `pages` pages from offset `off` (pages into the
/// I/O), at device page `dev_page` (`None`: not placed, reads as zeros).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub off: u64,
    pub pages: u64,
    pub dev_page: Option<PageNo>,
}

impl Extents {
    pub fn new(chunk_pages: u64) -> Extents {
        assert!(
            (1..=CHUNK_PAGES_MAX).contains(&chunk_pages),
            "chunk of {chunk_pages} pages: 1 to {CHUNK_PAGES_MAX}"
        );
        Extents {
            chunk_pages,
            goal: ChunkGoal::OwnShare,
            chunks: 0,
            free: BTreeSet::new(),
            parts: Vec::new(),
            mb: None,
        }
    }

    /// The same placement with `goal` for each chunk's first try.
    pub fn with_goal(mut self, goal: ChunkGoal) -> Extents {
        assert_eq!(
            self.chunks, 0,
            "the goal is chosen before any space is added"
        );
        self.goal = goal;
        self.mb = match goal {
            ChunkGoal::Mballoc => Some(Mballoc::new(self.chunk_pages)),
            ChunkGoal::MballocFreeOrder => {
                Some(Mballoc::new(self.chunk_pages).with_search(Search::FreeOrder))
            }
            ChunkGoal::MballocStream => {
                Some(Mballoc::new(self.chunk_pages).with_search(Search::StreamGoal))
            }
            _ => None,
        };
        self
    }

    /// Chunks `[first, first + n)` join the free pool.
    fn add_chunks(&mut self, first: u64, n: u64) {
        self.free.extend(first..first + n);
        self.chunks += n;
        if let Some(mb) = &mut self.mb {
            mb.add_space(first, n);
        }
    }

    /// Pages of device space a partition of `pages` pages takes from the pool.
    pub fn rounded(&self, pages: u64) -> u64 {
        pages.div_ceil(self.chunk_pages) * self.chunk_pages
    }

    /// Add `pages` pages of free space (whole chunks, rounded down) to the pool: space of the
    /// file system no partition was made from, which any partition may take (ext4's free
    /// blocks). Returns the pages added.
    pub fn add_free_space(&mut self, pages: u64) -> u64 {
        let n = pages / self.chunk_pages;
        self.add_chunks(self.chunks, n);
        n * self.chunk_pages
    }

    /// Add a partition of `pages` pages; its chunks join the free pool.
    pub fn add_partition(&mut self, pages: u64) {
        self.add_file(pages, pages);
    }

    /// Add a partition whose address space is `pages` pages but which brings only
    /// `pool_pages` pages (whole chunks, rounded up) to the free pool: a file of a shared file
    /// system, which may grow past its share while others are smaller (ext4 sets no size per
    /// file; the pool is the only limit). Its goal starts at the first chunk it brought.
    pub fn add_file(&mut self, pages: u64, pool_pages: u64) {
        let n = pages.div_ceil(self.chunk_pages);
        let pooled = pool_pages.div_ceil(self.chunk_pages);
        let first = self.chunks;
        self.add_chunks(first, pooled);
        self.parts.push(PartMap {
            chunk: vec![None; n as usize],
            live: vec![0; n as usize],
            goal: first,
        });
    }

    /// Chunks a write of `pages` pages at partition page `page` would newly place.
    pub fn unplaced_chunks(&self, part: usize, page: PageNo, pages: u64) -> u64 {
        if pages == 0 {
            return 0;
        }
        let cp = self.chunk_pages;
        let m = &self.parts[part];
        let (first, last) = ((page / cp) as usize, ((page + pages - 1) / cp) as usize);
        m.chunk[first..=last].iter().filter(|c| c.is_none()).count() as u64
    }

    /// Segments of a write of `pages` pages at partition page `page`, placing free chunks.
    pub fn write(&mut self, part: usize, page: PageNo, pages: u64) -> Vec<Segment> {
        self.segments(part, page, pages, true)
    }

    /// Segments of a read (unplaced chunks read as zeros).
    pub fn read(&mut self, part: usize, page: PageNo, pages: u64) -> Vec<Segment> {
        self.segments(part, page, pages, false)
    }

    /// Trim: the pages' live bits cleared; returns the placed segments (for `discard`) and
    /// frees the chunks left with no live page.
    pub fn trim(&mut self, part: usize, page: PageNo, pages: u64) -> Vec<Segment> {
        let segs = self.segments(part, page, pages, false);
        let cp = self.chunk_pages;
        let m = &mut self.parts[part];
        for p in page..page + pages {
            let c = (p / cp) as usize;
            m.live[c] &= !(1u64 << (p % cp));
            if m.live[c] == 0 {
                if let Some(d) = m.chunk[c].take() {
                    assert!(self.free.insert(d), "device chunk {d} freed twice");
                    if let Some(mb) = &mut self.mb {
                        mb.release(d);
                    }
                }
            }
        }
        segs
    }

    fn segments(&mut self, part: usize, page: PageNo, pages: u64, write: bool) -> Vec<Segment> {
        let cp = self.chunk_pages;
        if write && self.mb.is_some() && pages > 0 {
            self.place_runs(part, page / cp, (page + pages - 1) / cp);
        }
        let mut out: Vec<Segment> = Vec::new();
        let mut p = page;
        while p < page + pages {
            let c = (p / cp) as usize;
            let n = (cp - p % cp).min(page + pages - p);
            let dev = match (self.parts[part].chunk[c], write) {
                (Some(d), _) => Some(d),
                (None, true) => Some(self.place(part, c)),
                (None, false) => None,
            };
            if write {
                let bits = if n == 64 {
                    u64::MAX
                } else {
                    ((1u64 << n) - 1) << (p % cp)
                };
                self.parts[part].live[c] |= bits;
            }
            let dev_page = dev.map(|d| d * cp + p % cp);
            match out.last_mut() {
                Some(s)
                    if s.dev_page
                        .zip(dev_page)
                        .is_some_and(|(a, b)| a + s.pages == b) =>
                {
                    s.pages += n
                }
                Some(s) if s.dev_page.is_none() && dev_page.is_none() => s.pages += n,
                _ => out.push(Segment {
                    off: p - page,
                    pages: n,
                    dev_page,
                }),
            }
            p += n;
        }
        out
    }

    /// Place partition `part`'s chunk `c` on the first free device chunk from its goal.
    fn place(&mut self, part: usize, c: usize) -> u64 {
        let m = &mut self.parts[part];
        let goal = match self.goal {
            ChunkGoal::OwnShare => m.goal,
            ChunkGoal::Directory => c
                .checked_sub(1)
                .and_then(|prev| m.chunk[prev])
                .map_or(0, |d| d + 1),
            ChunkGoal::Lowest => 0,
            ChunkGoal::Mballoc | ChunkGoal::MballocFreeOrder | ChunkGoal::MballocStream => {
                unreachable!("mballoc places whole runs (place_runs)")
            }
        };
        let d = self
            .free
            .range(goal..)
            .next()
            .or_else(|| self.free.iter().next())
            .copied()
            .expect("a write is refused before it needs more chunks than are free");
        self.free.remove(&d);
        m.chunk[c] = Some(d);
        m.goal = d + 1;
        d
    }

    /// With [`ChunkGoal::Mballoc`]: place every run of unplaced chunks among partition
    /// `part`'s chunks `first..=last` as one request.
    fn place_runs(&mut self, part: usize, first: u64, last: u64) {
        let mut c = first;
        while c <= last {
            if self.parts[part].chunk[c as usize].is_some() {
                c += 1;
                continue;
            }
            let run = (c..=last)
                .take_while(|&x| self.parts[part].chunk[x as usize].is_none())
                .count() as u64;
            let m = &self.parts[part];
            let goal = c
                .checked_sub(1)
                .and_then(|prev| m.chunk[prev as usize])
                .map_or(m.goal, |d| d + 1);
            let mb = self.mb.as_mut().expect("mballoc placement");
            let got = mb.alloc(part, c, run, goal);
            for (i, d) in got.into_iter().enumerate() {
                assert!(self.free.remove(&d), "device chunk {d} placed while in use");
                self.parts[part].chunk[(c + i as u64) as usize] = Some(d);
                self.parts[part].goal = d + 1;
            }
            c += run;
        }
    }

    /// The free space as device page runs, (first page, pages), in address order: what
    /// `fstrim` would trim (ext4's `FITRIM` walks the free blocks of its bitmaps). With
    /// [`ChunkGoal::Mballoc`], chunks reserved by a file's preallocation are not free (ext4
    /// marks them in use).
    pub fn free_runs(&self) -> Vec<(PageNo, u64)> {
        let cp = self.chunk_pages;
        let mut runs: Vec<(u64, u64)> = Vec::new();
        match &self.mb {
            Some(mb) => runs.extend(mb.unreserved_extents()),
            None => {
                for &c in &self.free {
                    match runs.last_mut() {
                        Some((s, n)) if *s + *n == c => *n += 1,
                        _ => runs.push((c, 1)),
                    }
                }
            }
        }
        let out: Vec<(PageNo, u64)> = runs.into_iter().map(|(s, n)| (s * cp, n * cp)).collect();
        assert!(
            out.iter().map(|r| r.1).sum::<u64>() <= self.free_chunks() * cp,
            "free runs within the free chunks"
        );
        out
    }

    /// Free device chunks.
    pub fn free_chunks(&self) -> u64 {
        self.free.len() as u64
    }

    /// Device pages placed (held by a partition's live or not yet trimmed pages' chunks).
    pub fn placed_pages(&self) -> u64 {
        (self.chunks - self.free_chunks()) * self.chunk_pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_files_chunks_go_to_the_next_file_written() {
        let mut e = Extents::new(4);
        e.add_partition(8); // chunks 0, 1
        e.add_partition(8); // chunks 2, 3
        let s = e.write(0, 0, 8);
        assert_eq!(
            s,
            [Segment {
                off: 0,
                pages: 8,
                dev_page: Some(0)
            }]
        );
        assert_eq!(e.write(1, 0, 4)[0].dev_page, Some(8));
        // File 0 deleted: its chunks are free again; file 1 grows from its goal, then wraps
        // onto them.
        e.trim(0, 0, 8);
        assert_eq!(e.free_chunks(), 3);
        assert_eq!(e.write(1, 4, 4)[0].dev_page, Some(12));
        let s = e.write(1, 0, 1); // still placed
        assert_eq!(s[0].dev_page, Some(8));
        e.trim(1, 0, 4);
        assert_eq!(
            e.write(1, 0, 1)[0].dev_page,
            Some(0),
            "wrapped to the lowest free"
        );
        assert_eq!(e.read(0, 0, 4)[0].dev_page, None, "unplaced reads as zeros");
    }

    #[test]
    fn with_the_directory_goal_a_new_file_fills_the_lowest_hole() {
        let mut e = Extents::new(4).with_goal(ChunkGoal::Directory);
        e.add_partition(12); // chunks 0, 1, 2
        e.add_partition(12); // chunks 3, 4, 5
        assert_eq!(
            e.write(0, 0, 8)[0].dev_page,
            Some(0),
            "from the directory's group"
        );
        assert_eq!(e.write(1, 0, 4)[0].dev_page, Some(8), "the next free");
        assert_eq!(
            e.write(1, 4, 4)[0].dev_page,
            Some(12),
            "after its last chunk"
        );
        e.trim(0, 0, 8); // file 0's generation deleted: chunks 0, 1 free
                         // File 1's next chunk continues after its chunk 1 (device chunk 3) ...
        assert_eq!(e.write(1, 8, 4)[0].dev_page, Some(16));
        // ... and file 0's new file (its chunk 2, whose chunk 1 is unplaced) starts low.
        assert_eq!(e.write(0, 8, 4)[0].dev_page, Some(0));
        // Under its own goal, file 0 would have gone on after its last chunk (device chunk 2).
        let mut o = Extents::new(4);
        o.add_partition(12);
        o.add_partition(12);
        o.write(0, 0, 8);
        o.write(1, 0, 8);
        o.trim(0, 0, 8);
        assert_eq!(
            o.write(0, 8, 4)[0].dev_page,
            Some(8),
            "own share: first free after 1"
        );
    }

    #[test]
    fn free_space_is_taken_by_any_partition() {
        let mut e = Extents::new(4);
        e.add_partition(4); // chunk 0
        e.add_partition(8); // chunks 1, 2
        assert_eq!(e.add_free_space(9), 8, "whole chunks only: 3 and 4");
        assert_eq!(e.write(1, 0, 8)[0].dev_page, Some(4));
        assert_eq!(e.write(0, 0, 4)[0].dev_page, Some(0));
        e.trim(0, 0, 4);
        // File 0's rewrite takes free space after its goal, not its own chunk back.
        assert_eq!(e.write(0, 0, 4)[0].dev_page, Some(12));
        assert_eq!(e.free_chunks(), 2);
    }

    #[test]
    fn free_runs_are_the_free_chunks_as_pages_and_skip_preallocations() {
        let mut e = Extents::new(2);
        e.add_partition(8); // chunks 0..4
        e.write(0, 0, 2); // chunk 0 placed
        e.write(0, 6, 2); // chunk 1 placed (own share: after chunk 0)
        assert_eq!(e.free_runs(), [(4, 4)]);
        e.trim(0, 0, 2);
        assert_eq!(e.free_runs(), [(0, 2), (4, 4)]);
        // Mballoc: file 0's first page reserves a preallocation of 4 chunks at the goal.
        let mut m = Extents::new(1).with_goal(ChunkGoal::Mballoc);
        m.add_partition(16);
        m.write(0, 0, 1);
        assert_eq!(m.free_runs(), [(4, 12)], "chunks 1..4 reserved, not free");
    }

    #[test]
    fn a_chunk_stays_placed_while_a_page_of_it_lives() {
        let mut e = Extents::new(4);
        e.add_partition(4);
        e.write(0, 0, 4);
        e.trim(0, 0, 3);
        assert_eq!(e.free_chunks(), 0);
        e.trim(0, 3, 1);
        assert_eq!(e.free_chunks(), 1);
    }
}
