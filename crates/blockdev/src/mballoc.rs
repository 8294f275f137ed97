//! An ext4-mballoc-like allocator for [`super::Extents`] (the [`super::ChunkGoal::Mballoc`]
//! switch): where a file system puts a write's new blocks when it decides by request size and
//! per-file preallocation rather than block by block.
//!
//! The rule, as ext4's multi-block allocator decides (Linux `fs/ext4/mballoc.c`, `extents.c`),
//! in units of chunks (ext4's block: one 4 KiB page when a chunk is one page):
//! - **Goal** (`ext4_ext_find_goal`): right after the device chunk of the file's previous
//!   chunk when that one is placed (a file extends after its last block), else right after the
//!   chunk last given to the file.
//! - **Inode preallocation** (`ext4_mb_use_preallocated`): a file larger than
//!   `s_mb_stream_request` (16 blocks; every DB file here) allocates from its own preallocated
//!   extent while the write continues it (the next logical chunk of the extent). Preallocated
//!   chunks are reserved: no other file's request takes them. A write elsewhere in the file
//!   drops the rest of the preallocation (ext4 keeps several per inode and drops them at
//!   close; an append-only file uses one at a time).
//! - **Normalized request** (`ext4_mb_normalize_request`): a new preallocation is sized from
//!   the file's logical end: the power of two of pages at or above it from 16 KiB to 1 MiB,
//!   2 MiB up to 4 MiB, 4 MiB up to 8 MiB, else 8 MiB — never below the write itself.
//! - **Search** (`ext4_mb_find_by_goal`, then `ext4_mb_regular_allocator`): the free extent at
//!   the goal if it holds the whole normalized request from the goal; else block groups
//!   (32,768 blocks of 4 KiB, 128 MiB each) from the goal's group on, wrapping; in the first
//!   group with a free extent as long as the request, the shortest such extent among the first
//!   200 found (`MB_DEFAULT_MAX_TO_SCAN`; `ext4_mb_measure_extent` keeps the best fit). So a
//!   large write (a compaction's new file) gets a whole free extent, best fit, near its goal;
//!   a small append continues its file's preallocation.
//! - **No extent that long** (criterion 3, "any"): the shortest free extent holding the rest
//!   of the write, else the longest one, taken partly, and the search repeats for the rest.
//!   When no free extent is left outside the preallocations, every file's preallocation is
//!   given back first (`ext4_mb_discard_preallocations`).
//!
//! Not modelled: locality-group preallocation for small files (none here), buddy alignment of
//! power-of-two requests (criterion 0), the logical alignment of normalized requests, and
//! per-CPU groups. Invariants: a chunk is free, reserved by one file's preallocation, or
//! placed — never two; free extents never touch (freed chunks coalesce).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// ext4's block group: 32,768 blocks (of 4 KiB: 128 MiB), in pages.
pub const GROUP_PAGES: u64 = 32_768;
/// Free extents a group's scan looks at before taking its best (`MB_DEFAULT_MAX_TO_SCAN`).
pub const MAX_TO_SCAN: usize = 200;

/// Free chunks as maximal extents, found by start and by length.
#[derive(Clone, Debug, Default)]
pub struct FreeExtents {
    by_start: BTreeMap<u64, u64>,
    by_len: BTreeSet<(u64, u64)>,
    chunks: u64,
}

impl FreeExtents {
    /// Free chunks in all.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Free extents, (start, length), in address order.
    pub fn extents(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.by_start.iter().map(|(&s, &l)| (s, l))
    }

    fn remove_extent(&mut self, start: u64) -> u64 {
        let len = self
            .by_start
            .remove(&start)
            .expect("a free extent starts here");
        assert!(
            self.by_len.remove(&(len, start)),
            "extent indexed by length"
        );
        len
    }

    fn add_extent(&mut self, start: u64, len: u64) {
        assert!(len > 0, "a free extent holds a chunk");
        self.by_start.insert(start, len);
        self.by_len.insert((len, start));
    }

    /// The free extent holding chunk `c`, if free.
    pub fn containing(&self, c: u64) -> Option<(u64, u64)> {
        let (&s, &l) = self.by_start.range(..=c).next_back()?;
        (c < s + l).then_some((s, l))
    }

    /// Free `[start, start + len)`, none of it free now; it joins its free neighbours.
    pub fn free(&mut self, start: u64, len: u64) {
        assert!(len > 0, "freeing no chunk");
        if let Some((s, l)) = self
            .by_start
            .range(..start + len)
            .next_back()
            .map(|(&s, &l)| (s, l))
        {
            assert!(
                s + l <= start,
                "chunks {start}+{len} freed twice (free extent {s}+{l})"
            );
        }
        let (mut s, mut l) = (start, len);
        if let Some((ps, pl)) = self
            .by_start
            .range(..start)
            .next_back()
            .map(|(&a, &b)| (a, b))
        {
            if ps + pl == start {
                self.remove_extent(ps);
                (s, l) = (ps, pl + l);
            }
        }
        if self.by_start.contains_key(&(start + len)) {
            l += self.remove_extent(start + len);
        }
        self.add_extent(s, l);
        self.chunks += len;
    }

    /// Take `[start, start + len)`, all of it free, out of the free extents.
    pub fn take(&mut self, start: u64, len: u64) {
        let (s, l) = self
            .containing(start)
            .unwrap_or_else(|| panic!("chunk {start} taken is not free"));
        assert!(start + len <= s + l, "chunks {start}+{len} not all free");
        self.remove_extent(s);
        if start > s {
            self.add_extent(s, start - s);
        }
        if s + l > start + len {
            self.add_extent(start + len, s + l - start - len);
        }
        self.chunks -= len;
    }

    /// The shortest free extent of at least `len` chunks (lowest start among equals).
    fn best_fit(&self, len: u64) -> Option<(u64, u64)> {
        self.by_len.range((len, 0)..).next().map(|&(l, s)| (s, l))
    }

    fn longest(&self) -> Option<(u64, u64)> {
        self.by_len.iter().next_back().map(|&(l, s)| (s, l))
    }

    /// In chunk groups of `group` chunks from `goal`'s group on (wrapping), the first group
    /// with a free extent of at least `len` chunks starting in it; there, the shortest such
    /// among the first [`MAX_TO_SCAN`] extents of the group.
    fn in_groups(&self, goal: u64, len: u64, group: u64, end: u64) -> Option<(u64, u64)> {
        let groups = end.div_ceil(group).max(1);
        let first = goal / group;
        (0..groups).find_map(|i| {
            let g = (first + i) % groups;
            self.by_start
                .range(g * group..(g + 1) * group)
                .take(MAX_TO_SCAN)
                .filter(|&(_, &l)| l >= len)
                .min_by_key(|&(&s, &l)| (l, s))
                .map(|(&s, &l)| (s, l))
        })
    }
}

/// One file's preallocated extent: logical chunk `lnext` goes to device chunk `pnext`, up to
/// `pend` (exclusive).
#[derive(Clone, Copy, Debug)]
struct Prealloc {
    lnext: u64,
    pnext: u64,
    pend: u64,
}

/// Where a new preallocation goes when the goal's free extent cannot hold it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Search {
    /// ext4's: the shortest free extent long enough among the first [`MAX_TO_SCAN`] of the
    /// first block group from the goal's that has one (best fit near the goal).
    #[default]
    BestFit,
    /// The free chunk freed longest ago, and the free run from it on: space reused in the
    /// order it was freed, whatever its address or length (a bound, not ext4's rule: the
    /// space a deleted file freed together is written again together and before later
    /// frees). New space counts as freed when added, in address order.
    FreeOrder,
    /// ext4's for a file of at least `s_mb_stream_request` blocks (every DB file here):
    /// best fit as `BestFit`, but the group scan starts at the group of the last new
    /// allocation of any file (`s_mb_last_group`, set by `ext4_mb_use_best_found`; Linux
    /// 3.13 `ext4_mb_regular_allocator`: "if stream allocation is enabled, use global goal"),
    /// not at the goal's group: one rotor for the whole file system, moving on group by group
    /// as their free space runs out.
    StreamGoal,
}

/// The allocator's state: free extents outside every preallocation, and each file's one.
#[derive(Clone, Debug)]
pub struct Mballoc {
    search: Search,
    /// With [`Search::FreeOrder`]: (free sequence, chunk) in the order freed; an entry is
    /// current while its chunk is free and was last freed at that sequence.
    freed: VecDeque<(u64, u64)>,
    /// With [`Search::FreeOrder`]: per chunk, the sequence of its last free.
    freed_at: Vec<u64>,
    seq: u64,
    /// With [`Search::StreamGoal`]: the group of the last new preallocation.
    last_group: u64,
    free: FreeExtents,
    pa: Vec<Option<Prealloc>>,
    group_chunks: u64,
    chunk_pages: u64,
    /// One past the highest chunk ever freed (the file system's size in chunks).
    end: u64,
}

impl Mballoc {
    pub fn new(chunk_pages: u64) -> Mballoc {
        assert!(chunk_pages > 0, "a chunk holds a page");
        Mballoc {
            search: Search::BestFit,
            freed: VecDeque::new(),
            freed_at: Vec::new(),
            seq: 0,
            last_group: 0,
            free: FreeExtents::default(),
            pa: Vec::new(),
            group_chunks: (GROUP_PAGES / chunk_pages).max(1),
            chunk_pages,
            end: 0,
        }
    }

    /// The same allocator searching by `search` (before any space is added).
    pub fn with_search(mut self, search: Search) -> Mballoc {
        assert_eq!(
            self.end, 0,
            "the search is chosen before any space is added"
        );
        self.search = search;
        self
    }

    /// Note chunks `[first, first + n)` freed now (free order only).
    fn note_freed(&mut self, first: u64, n: u64) {
        if self.search != Search::FreeOrder {
            return;
        }
        if self.freed_at.len() < (first + n) as usize {
            self.freed_at.resize((first + n) as usize, 0);
        }
        for c in first..first + n {
            self.seq += 1;
            self.freed_at[c as usize] = self.seq;
            self.freed.push_back((self.seq, c));
        }
    }

    /// The free chunk freed longest ago (free order only), its stale queue entries dropped.
    fn oldest_free(&mut self) -> Option<u64> {
        while let Some(&(seq, c)) = self.freed.front() {
            if self.freed_at[c as usize] == seq && self.free.containing(c).is_some() {
                return Some(c);
            }
            self.freed.pop_front();
        }
        None
    }

    /// Chunks free outside every preallocation.
    pub fn unreserved_chunks(&self) -> u64 {
        self.free.chunks()
    }

    /// Free extents outside every preallocation, (first chunk, chunks), in address order
    /// (what `fstrim` trims: ext4 marks a preallocation's blocks in use in its bitmap).
    pub fn unreserved_extents(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.free.extents()
    }

    /// Free chunk `d` (a placed chunk the file system gave back).
    pub fn release(&mut self, d: u64) {
        self.free.free(d, 1);
        self.note_freed(d, 1);
    }

    /// New space `[first, first + n)` joins the free chunks.
    pub fn add_space(&mut self, first: u64, n: u64) {
        if n > 0 {
            self.free.free(first, n);
            self.end = self.end.max(first + n);
            self.note_freed(first, n);
        }
    }

    /// The normalized request of a file whose logical end is chunk `end_chunk` (see the
    /// module docs), in chunks.
    pub fn normalized_chunks(&self, end_chunk: u64) -> u64 {
        let pages = end_chunk * self.chunk_pages;
        let norm_pages = match pages {
            0..=256 => pages.next_power_of_two().max(4),
            257..=1024 => 512,
            1025..=2048 => 1024,
            _ => 2048,
        };
        norm_pages.div_ceil(self.chunk_pages)
    }

    /// Device chunks for file `part`'s logical chunks `c0 .. c0 + n` (all unplaced), `goal`
    /// the device chunk to try first. The caller guarantees at least `n` chunks are free in
    /// all (reserved ones count: they are given back when nothing else is left).
    pub fn alloc(&mut self, part: usize, c0: u64, n: u64, goal: u64) -> Vec<u64> {
        if self.pa.len() <= part {
            self.pa.resize(part + 1, None);
        }
        let mut out = Vec::with_capacity(n as usize);
        while (out.len() as u64) < n {
            let c = c0 + out.len() as u64;
            let left = n - out.len() as u64;
            match self.pa[part] {
                Some(pa) if pa.lnext == c && pa.pnext < pa.pend => {
                    let k = left.min(pa.pend - pa.pnext);
                    out.extend(pa.pnext..pa.pnext + k);
                    self.pa[part] = Some(Prealloc {
                        lnext: c + k,
                        pnext: pa.pnext + k,
                        pend: pa.pend,
                    });
                }
                _ => {
                    self.drop_prealloc(part);
                    let goal = out.last().map_or(goal, |&d| d + 1);
                    let want = self.normalized_chunks(c0 + n).max(left);
                    let (start, len) = self.find(goal, want, left);
                    self.free.take(start, len);
                    self.last_group = start / self.group_chunks;
                    self.pa[part] = Some(Prealloc {
                        lnext: c,
                        pnext: start,
                        pend: start + len,
                    });
                }
            }
        }
        assert_eq!(out.len() as u64, n, "a chunk for every chunk asked for");
        out
    }

    /// Where a new preallocation of `want` chunks goes (at least one chunk; `need` is what
    /// the write still needs): (device start, chunks reserved).
    fn find(&mut self, goal: u64, want: u64, need: u64) -> (u64, u64) {
        if let Some((s, l)) = self.free.containing(goal) {
            if s + l - goal >= want {
                return (goal, want);
            }
        }
        match self.search {
            Search::BestFit => {
                if let Some((s, _)) = self.free.in_groups(goal, want, self.group_chunks, self.end) {
                    return (s, want);
                }
            }
            Search::StreamGoal => {
                let from = self.last_group * self.group_chunks;
                if let Some((s, _)) = self.free.in_groups(from, want, self.group_chunks, self.end) {
                    return (s, want);
                }
            }
            Search::FreeOrder => {
                if let Some(c) = self.oldest_free() {
                    let (s, l) = self
                        .free
                        .containing(c)
                        .expect("the oldest free chunk is free");
                    return (c, want.min(s + l - c));
                }
            }
        }
        if self.free.chunks() == 0 {
            for part in 0..self.pa.len() {
                self.drop_prealloc(part);
            }
        }
        let (s, l) = self
            .free
            .best_fit(need)
            .or_else(|| self.free.longest())
            .expect("a write is refused before it needs more chunks than are free");
        (s, l.min(want))
    }

    /// Give back the rest of file `part`'s preallocation.
    fn drop_prealloc(&mut self, part: usize) {
        if let Some(pa) = self.pa[part].take() {
            if pa.pend > pa.pnext {
                self.free.free(pa.pnext, pa.pend - pa.pnext);
                self.note_freed(pa.pnext, pa.pend - pa.pnext);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn freed_chunks_coalesce_and_best_fit_takes_the_shortest_long_enough() {
        let mut f = FreeExtents::default();
        f.free(0, 4);
        f.free(10, 2);
        f.free(20, 8);
        f.free(4, 2); // joins 0..4
        assert_eq!(f.extents().collect::<Vec<_>>(), [(0, 6), (10, 2), (20, 8)]);
        assert_eq!(f.best_fit(3), Some((0, 6)));
        assert_eq!(f.best_fit(7), Some((20, 8)));
        assert_eq!(f.best_fit(9), None);
        f.take(1, 2);
        assert_eq!(
            f.extents().collect::<Vec<_>>(),
            [(0, 1), (3, 3), (10, 2), (20, 8)]
        );
        f.free(1, 2);
        assert_eq!(f.containing(5), Some((0, 6)));
        assert_eq!(f.chunks(), 16);
    }

    #[test]
    fn a_file_appends_into_its_preallocation_and_a_large_write_gets_a_whole_extent() {
        let mut m = Mballoc::new(1);
        m.add_space(0, 4096);
        // File 0 appends one page at a time: a 16 KiB preallocation at the goal (0..4), then
        // one of 32 KiB sized from its end (4..12).
        let a: Vec<u64> = (0..6).flat_map(|c| m.alloc(0, c, 1, 0)).collect();
        assert_eq!(a, [0, 1, 2, 3, 4, 5]);
        // File 1's first append cannot take file 0's reserved chunks 6..12.
        assert_eq!(m.alloc(1, 0, 1, 6), [12]);
        // A hole of 3 and one of 300: a 256-page write takes the 300-page one, whole.
        let mut m = Mballoc::new(1);
        m.add_space(0, 3);
        m.add_space(10, 300);
        m.add_space(400, 1000);
        let big = m.alloc(0, 0, 256, 0);
        assert_eq!((big[0], big.len()), (10, 256));
    }

    #[test]
    fn in_free_order_a_new_preallocation_takes_the_space_freed_longest_ago() {
        for search in [Search::BestFit, Search::FreeOrder] {
            // 32 chunks, all placed: file 0 on 0..16, file 1 on 16..32 (one request each).
            let mut m = Mballoc::new(1).with_search(search);
            m.add_space(0, 32);
            assert_eq!(m.alloc(0, 0, 16, 0), (0..16).collect::<Vec<_>>());
            assert_eq!(m.alloc(1, 0, 16, 16), (16..32).collect::<Vec<_>>());
            // File 1 frees 20..28 first, then file 0 frees 2..6.
            (20..28).for_each(|d| m.release(d));
            (2..6).for_each(|d| m.release(d));
            // File 2's 4-chunk write at a goal in use: best fit takes the shortest hole
            // (2..6, freed last); free order the space freed first (20..24).
            let got = m.alloc(2, 0, 4, 0);
            match search {
                Search::BestFit => assert_eq!(got, [2, 3, 4, 5]),
                Search::FreeOrder => assert_eq!(got, [20, 21, 22, 23]),
                Search::StreamGoal => unreachable!(),
            }
            // The goal still comes first: file 3 after chunk 23 continues at 24.
            assert_eq!(m.alloc(3, 0, 2, 24), [24, 25]);
        }
    }

    #[test]
    fn with_the_stream_goal_the_scan_starts_at_the_last_allocations_group() {
        for search in [Search::BestFit, Search::StreamGoal] {
            // Three groups: a hole of 8 in group 0, group 1 free from 2 * G - 16, group 2 free.
            let g = GROUP_PAGES;
            let mut m = Mballoc::new(1).with_search(search);
            m.add_space(0, 3 * g);
            m.alloc(0, 0, 2048, 0);
            m.alloc(0, 2048, g - 2048, 2048);
            m.alloc(1, 0, g - 16, g);
            (100..108).for_each(|d| m.release(d));
            // File 2 at a goal in use in group 0: its first write of 8 chunks.
            let got = m.alloc(2, 0, 8, 50);
            match search {
                Search::BestFit => assert_eq!(got[0], 100, "the hole in the goal's group"),
                Search::StreamGoal => {
                    assert_eq!(
                        got[0],
                        2 * g - 16,
                        "from group 1, where file 1 allocated last"
                    )
                }
                Search::FreeOrder => unreachable!(),
            }
        }
    }

    proptest! {
        /// Against a model set of free chunks, under both searches: never hands out a chunk
        /// in use, frees coalesce (no two free extents touch), free + reserved + placed = all.
        #[test]
        fn never_hands_out_a_used_chunk(
            ops in prop::collection::vec((0usize..3, 1u64..40, any::<bool>(), 0u64..600), 1..200),
            search in 0usize..3,
        ) {
            let total = 512u64;
            let search = [Search::BestFit, Search::FreeOrder, Search::StreamGoal][search];
            let mut m = Mballoc::new(1).with_search(search);
            m.add_space(0, total);
            let mut used: Vec<BTreeSet<u64>> = vec![BTreeSet::new(); 3];
            let mut next = [0u64; 3];
            for (part, n, free, goal) in ops {
                let in_use: u64 = used.iter().map(|u| u.len() as u64).sum();
                if free && !used[part].is_empty() {
                    let d = *used[part].iter().next().unwrap();
                    used[part].remove(&d);
                    m.release(d);
                } else if in_use + n <= total {
                    let got = m.alloc(part, next[part], n, goal % total);
                    next[part] += n;
                    prop_assert_eq!(got.len() as u64, n);
                    for d in got {
                        prop_assert!(d < total);
                        prop_assert!(used.iter().all(|u| !u.contains(&d)), "chunk {} handed out twice", d);
                        used[part].insert(d);
                    }
                }
                let reserved: u64 = m.pa.iter().flatten().map(|p| p.pend - p.pnext).sum();
                let in_use: u64 = used.iter().map(|u| u.len() as u64).sum();
                prop_assert_eq!(m.unreserved_chunks() + reserved + in_use, total);
                let ext: Vec<(u64, u64)> = m.free.extents().collect();
                for w in ext.windows(2) {
                    prop_assert!(w[0].0 + w[0].1 < w[1].0, "free extents {:?} touch", w);
                }
            }
        }
    }
}
