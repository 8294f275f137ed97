//! `SharedDevice` and `Partition`: several users (e.g. one key-value store per DB file) on one
//! device, each on its own contiguous range of pages — the way files of one file system share
//! a drive and its streams.
//!
//! Model: a [`SharedDevice`] owns one device behind a shared handle and hands out
//! [`Partition`]s, consecutive non-overlapping page ranges in the order asked for. A partition
//! is a [`BlockDevice`] of its own: page 0 is the first page of its range; I/Os outside the
//! range are refused; reads, writes, trims and flushes go to the one device (whose clock every
//! partition shares). Each partition counts its own I/Os ([`BlockDevice::stats`]).
//!
//! Placement: by default partition page `p` is device page `first_page + p`. With
//! [`SharedDevice::with_extents`] the partitions are files of one file system instead: their
//! pages are placed on the device in chunks, where a file system's allocator would put them
//! ([`Extents`]: a chunk freed by one file's trim is reused by the next file that grows), and
//! reads of pages never placed return zeros.
//!
//! Trims pass on to the device unless the shared device is made
//! [`SharedDevice::without_discard`] (a file system mounted without `discard`).
//!
//! Streams: partition `i` is DB file `i`: it stamps its index as the file of every write's
//! class ([`WriteClass::in_file`]). A [`StreamAssignment`] given to the shared device sees
//! every page written through any partition (page on the whole device, the write's class) and
//! chooses the stream the page goes out on — so the assignment of streams is decided in one
//! place for all users of the device (e.g. `policy::streams::ClassStreams`: a table from
//! (DB file, data type) to stream, or an online lifetime grouping). A write whose pages get
//! different streams is split into runs of equal streams.

use crate::extents::{Extents, Segment};
use crate::{check_extent, BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, WriteHint};
use policy::streams::StreamAssignment;
#[cfg(doc)]
use policy::streams::WriteClass;
use std::cell::{Ref, RefCell, RefMut};
use std::rc::Rc;

struct Shared<D> {
    dev: RefCell<D>,
    /// Pass trims on to the device (false: a file system mounted without `discard`).
    discard: bool,
    streams: Option<RefCell<Box<dyn StreamAssignment>>>,
    /// File-system placement of the partitions' pages (None: fixed ranges).
    extents: Option<RefCell<Extents>>,
}

/// One device shared by [`Partition`]s.
pub struct SharedDevice<D: BlockDevice> {
    shared: Rc<Shared<D>>,
    /// First page not yet given to a partition.
    next_page: PageNo,
    parts: usize,
}

impl<D: BlockDevice> SharedDevice<D> {
    /// Share `dev`; every write keeps its writer's stream.
    pub fn new(dev: D) -> SharedDevice<D> {
        SharedDevice::build(dev, None)
    }

    /// Share `dev`; `streams` decides every written page's stream.
    pub fn with_streams(dev: D, streams: Box<dyn StreamAssignment>) -> SharedDevice<D> {
        SharedDevice::build(dev, Some(RefCell::new(streams)))
    }

    fn build(dev: D, streams: Option<RefCell<Box<dyn StreamAssignment>>>) -> SharedDevice<D> {
        SharedDevice {
            shared: Rc::new(Shared {
                dev: RefCell::new(dev),
                discard: true,
                streams,
                extents: None,
            }),
            next_page: 0,
            parts: 0,
        }
    }

    /// Drop the partitions' trims instead of passing them on (as ext4 mounted without
    /// `discard`: the device keeps counting freed pages as valid until they are overwritten).
    /// Call before making partitions.
    pub fn without_discard(mut self) -> SharedDevice<D> {
        let shared = Rc::get_mut(&mut self.shared).expect("no partition made yet");
        shared.discard = false;
        self
    }

    /// Place the partitions' pages as a file system would, in chunks of `chunk_pages` pages
    /// (1 to 64; see [`Extents`]). Call before making partitions.
    pub fn with_extents(self, chunk_pages: u64) -> SharedDevice<D> {
        self.with_placement(Extents::new(chunk_pages))
    }

    /// Place the partitions' pages with `extents` (see [`Extents`] and its goals). Call before
    /// making partitions.
    pub fn with_placement(mut self, extents: Extents) -> SharedDevice<D> {
        let shared = Rc::get_mut(&mut self.shared).expect("no partition made yet");
        shared.extents = Some(RefCell::new(extents));
        self
    }

    /// The next `pages` pages of the device as a partition (index: partitions made before it).
    /// With extents it takes whole chunks of the device.
    pub fn partition(&mut self, pages: u64) -> Result<Partition<D>, DevError> {
        let capacity_pages = self.shared.dev.borrow().capacity_pages();
        let taken = match &self.shared.extents {
            Some(e) => e.borrow().rounded(pages),
            None => pages,
        };
        if pages == 0 || self.next_page + taken > capacity_pages {
            return Err(DevError::OutOfRange {
                page: self.next_page,
                pages,
                capacity_pages,
            });
        }
        if let Some(e) = &self.shared.extents {
            e.borrow_mut().add_partition(pages);
        }
        Ok(self.next_part(pages, taken))
    }

    /// The next partition or file: `pages` of address space, `taken` pages of the device.
    fn next_part(&mut self, pages: u64, taken: u64) -> Partition<D> {
        let p = Partition {
            shared: self.shared.clone(),
            index: self.parts,
            first_page: self.next_page,
            pages,
            stats: DevStats::default(),
        };
        self.next_page += taken;
        self.parts += 1;
        p
    }

    /// A DB file of a shared file system: an address space of `pages` pages that brings
    /// `pool_pages` pages of the device to the free pool (with extents only). Unlike a
    /// partition, a file may hold more than it brought while other files hold less; a write
    /// that needs more chunks than the pool has free fails with [`DevError::NoSpace`] (ext4's
    /// ENOSPC). Why: ForestDB's files share one file system, so the space a file being
    /// compacted needs for its new generation comes from the pool, not from a reserve of its own.
    pub fn file(&mut self, pages: u64, pool_pages: u64) -> Result<Partition<D>, DevError> {
        let capacity_pages = self.shared.dev.borrow().capacity_pages();
        let Some(e) = &self.shared.extents else {
            return Err(DevError::Config {
                field: "file",
                value: format!("{pages} pages"),
                reason: "a file needs file-system placement (extents)".into(),
            });
        };
        let taken = e.borrow().rounded(pool_pages);
        if pages == 0 || pages < pool_pages || self.next_page + taken > capacity_pages {
            return Err(DevError::OutOfRange {
                page: self.next_page,
                pages: pool_pages,
                capacity_pages,
            });
        }
        e.borrow_mut().add_file(pages, pool_pages);
        Ok(self.next_part(pages, taken))
    }

    /// Give `pages` more pages of the device to the file system's free space (with extents:
    /// whole chunks any partition may take; without: nothing). Returns the pages given.
    pub fn add_free_space(&mut self, pages: u64) -> Result<u64, DevError> {
        let capacity_pages = self.shared.dev.borrow().capacity_pages();
        if self.next_page + pages > capacity_pages {
            return Err(DevError::OutOfRange {
                page: self.next_page,
                pages,
                capacity_pages,
            });
        }
        let given = match &self.shared.extents {
            Some(e) => e.borrow_mut().add_free_space(pages),
            None => 0,
        };
        self.next_page += given;
        Ok(given)
    }

    /// Device pages the partitions hold through the file system's placement (`None` without
    /// extents: fixed ranges).
    pub fn placed_pages(&self) -> Option<u64> {
        self.shared
            .extents
            .as_ref()
            .map(|e| e.borrow().placed_pages())
    }

    /// Trim every page of the file system's free space on the device, as `fstrim` does on a
    /// file system mounted without `discard` (with extents; without, the space outside the
    /// partitions is nobody's and nothing is trimmed). Goes to the device whether or not the
    /// partitions' own trims do. Returns the pages trimmed.
    pub fn fstrim(&self) -> Result<u64, DevError> {
        let Some(e) = &self.shared.extents else {
            return Ok(0);
        };
        let runs = e.borrow().free_runs();
        let mut dev = self.shared.dev.borrow_mut();
        let mut pages = 0;
        for (first, n) in runs {
            dev.trim(first, n)?;
            pages += n;
        }
        Ok(pages)
    }

    /// Pages not yet given to a partition.
    pub fn unallocated_pages(&self) -> u64 {
        self.shared.dev.borrow().capacity_pages() - self.next_page
    }

    /// The device (e.g. to read a simulated SSD's counters).
    pub fn device(&self) -> Ref<'_, D> {
        self.shared.dev.borrow()
    }

    pub fn device_mut(&self) -> RefMut<'_, D> {
        self.shared.dev.borrow_mut()
    }
}

/// A contiguous range of a [`SharedDevice`]'s pages, as a device of its own.
pub struct Partition<D: BlockDevice> {
    shared: Rc<Shared<D>>,
    index: usize,
    first_page: PageNo,
    pages: u64,
    stats: DevStats,
}

impl<D: BlockDevice> Partition<D> {
    /// Its index among the shared device's partitions (the order they were made in).
    pub fn index(&self) -> usize {
        self.index
    }

    /// Its first page on the whole device.
    pub fn first_page(&self) -> PageNo {
        self.first_page
    }

    fn check(&self, page: PageNo, len: usize) -> Result<u64, DevError> {
        check_extent(page, len, self.page_bytes(), self.pages)
    }

    /// Where `pages` pages at partition page `page` lie on the device (`write`: placing
    /// chunks not yet placed).
    fn segments(&self, page: PageNo, pages: u64, write: bool) -> Vec<Segment> {
        match &self.shared.extents {
            Some(e) if write => e.borrow_mut().write(self.index, page, pages),
            Some(e) => e.borrow_mut().read(self.index, page, pages),
            None => vec![Segment {
                off: 0,
                pages,
                dev_page: Some(self.first_page + page),
            }],
        }
    }

    /// Refuse a write that needs more chunks than the file system has free.
    fn check_space(&self, page: PageNo, pages: u64) -> Result<(), DevError> {
        let Some(e) = &self.shared.extents else {
            return Ok(());
        };
        let e = e.borrow();
        let (needed_chunks, free_chunks) =
            (e.unplaced_chunks(self.index, page, pages), e.free_chunks());
        if needed_chunks > free_chunks {
            return Err(DevError::NoSpace {
                page,
                pages,
                needed_chunks,
                free_chunks,
            });
        }
        Ok(())
    }

    /// The device writes of `pages` pages at partition page `page`: runs of equal hints, the
    /// partition's file stamped on the class and each page's stream chosen by the shared
    /// device's assignment: (offset in pages, page count, device page, hint).
    fn writes(
        &self,
        page: PageNo,
        pages: u64,
        hint: WriteHint,
    ) -> Vec<(u64, u64, PageNo, WriteHint)> {
        let mut out = Vec::new();
        for s in self.segments(page, pages, true) {
            let dev_page = s.dev_page.expect("a write places its chunks");
            for (off, n, h) in self.runs(dev_page, s.pages, hint) {
                out.push((s.off + off, n, dev_page + off, h));
            }
        }
        out
    }

    /// Runs of `pages` pages written at device page `dev_page` with equal hints:
    /// (offset in pages, page count, hint).
    fn runs(&self, dev_page: PageNo, pages: u64, hint: WriteHint) -> Vec<(u64, u64, WriteHint)> {
        let hint = WriteHint {
            class: hint.class.map(|c| c.in_file(self.index as u32)),
            ..hint
        };
        let Some(streams) = &self.shared.streams else {
            return vec![(0, pages, hint)];
        };
        let mut streams = streams.borrow_mut();
        let mut runs: Vec<(u64, u64, WriteHint)> = Vec::new();
        for i in 0..pages {
            let stream = streams.stream(dev_page + i, hint.class);
            let h = WriteHint { stream, ..hint };
            match runs.last_mut() {
                Some(last) if last.2 == h => last.1 += 1,
                _ => runs.push((i, 1, h)),
            }
        }
        runs
    }
}

impl<D: BlockDevice> BlockDevice for Partition<D> {
    fn page_bytes(&self) -> usize {
        self.shared.dev.borrow().page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.pages
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        let pages = self.check(page, buf.len())?;
        self.stats.read_ios += 1;
        self.stats.pages_read += pages;
        let pb = self.page_bytes();
        let mut dev = self.shared.dev.borrow_mut();
        for s in self.segments(page, pages, false) {
            let part = &mut buf[(s.off as usize) * pb..(s.off + s.pages) as usize * pb];
            match s.dev_page {
                Some(d) => dev.read(d, part)?,
                None => part.fill(0),
            }
        }
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        let pages = self.check(page, buf.len())?;
        self.check_space(page, pages)?;
        self.stats.write_ios += 1;
        self.stats.pages_written += pages;
        let pb = self.page_bytes();
        let writes = self.writes(page, pages, hint);
        let mut dev = self.shared.dev.borrow_mut();
        for (off, n, dev_page, h) in writes {
            let bytes = &buf[off as usize * pb..(off + n) as usize * pb];
            dev.write(dev_page, bytes, h)?;
        }
        Ok(())
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.stats.batches += 1;
        let pb = self.page_bytes();
        let mut out: Vec<Io<'_>> = Vec::with_capacity(batch.len());
        // An I/O outside the partition fails; the others still run (the submit contract).
        let mut refused = None;
        for io in batch.iter_mut() {
            let (page, len) = match io {
                Io::Read { page, buf } => (*page, buf.len()),
                Io::Write { page, buf, .. } => (*page, buf.len()),
            };
            let checked = self.check(page, len).and_then(|n| match io {
                Io::Write { .. } => self.check_space(page, n).map(|()| n),
                Io::Read { .. } => Ok(n),
            });
            let pages = match checked {
                Ok(n) => n,
                Err(e) => {
                    refused.get_or_insert(e);
                    continue;
                }
            };
            match io {
                Io::Read { buf, .. } => {
                    self.stats.read_ios += 1;
                    self.stats.pages_read += pages;
                    let mut rest: &mut [u8] = buf;
                    for s in self.segments(page, pages, false) {
                        let (part, tail) = rest.split_at_mut(s.pages as usize * pb);
                        rest = tail;
                        match s.dev_page {
                            Some(d) => out.push(Io::Read { page: d, buf: part }),
                            None => part.fill(0),
                        }
                    }
                }
                Io::Write { buf, hint, .. } => {
                    self.stats.write_ios += 1;
                    self.stats.pages_written += pages;
                    for (off, n, dev_page, h) in self.writes(page, pages, *hint) {
                        out.push(Io::Write {
                            page: dev_page,
                            buf: &buf[off as usize * pb..(off + n) as usize * pb],
                            hint: h,
                        });
                    }
                }
            }
        }
        let r = self.shared.dev.borrow_mut().submit(&mut out);
        refused.map_or(r, Err)
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        check_extent(
            page,
            pages as usize * self.page_bytes(),
            self.page_bytes(),
            self.pages,
        )?;
        self.stats.trims += 1;
        let segments = match &self.shared.extents {
            Some(e) => e.borrow_mut().trim(self.index, page, pages),
            None => self.segments(page, pages, false),
        };
        if !self.shared.discard {
            return Ok(());
        }
        let mut dev = self.shared.dev.borrow_mut();
        for s in segments {
            if let Some(d) = s.dev_page {
                dev.trim(d, s.pages)?;
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.stats.flushes += 1;
        self.shared.dev.borrow_mut().flush()
    }
    fn now_ns(&self) -> u64 {
        self.shared.dev.borrow().now_ns()
    }
    fn clock_kind(&self) -> ClockKind {
        self.shared.dev.borrow().clock_kind()
    }
    fn stats(&self) -> DevStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemDevice;
    use policy::streams::{DataType, WriteClass};

    /// Every page placed, with its class.
    type Placed = Rc<RefCell<Vec<(PageNo, Option<WriteClass>)>>>;

    /// Records every page it places and sends DB file `f`'s writes to stream `f + 1`.
    struct ByFile(Placed);

    impl StreamAssignment for ByFile {
        fn stream(&mut self, page: PageNo, class: Option<WriteClass>) -> u16 {
            self.0.borrow_mut().push((page, class));
            class.map_or(0, |c| c.file as u16 + 1)
        }
    }

    #[test]
    fn partitions_are_disjoint_ranges_of_one_device() {
        let mut shared = SharedDevice::new(MemDevice::new(512, 10));
        let mut a = shared.partition(4).unwrap();
        let mut b = shared.partition(6).unwrap();
        assert!(shared.partition(1).is_err(), "the device is used up");
        assert_eq!((a.capacity_pages(), b.first_page(), b.index()), (4, 4, 1));
        a.write(3, &[7u8; 512], WriteHint::NONE).unwrap();
        b.write(0, &[9u8; 1024], WriteHint::NONE).unwrap();
        assert!(matches!(
            a.write(4, &[1u8; 512], WriteHint::NONE),
            Err(DevError::OutOfRange { .. })
        ));
        let mut buf = vec![0u8; 512];
        shared.device_mut().read(3, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 7));
        shared.device_mut().read(5, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 9));
        b.read(1, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 9));
        assert_eq!(a.stats().pages_written, 1);
        assert_eq!(b.stats().pages_written, 2);
        assert_eq!(shared.device().stats().pages_written, 3);
        assert_eq!(shared.unallocated_pages(), 0);
    }

    #[test]
    fn the_assignment_sees_every_page_with_its_partitions_file() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let mut shared =
            SharedDevice::with_streams(MemDevice::new(512, 8), Box::new(ByFile(seen.clone())));
        let mut a = shared.partition(4).unwrap();
        let mut b = shared.partition(4).unwrap();
        let data = WriteClass::new(7, DataType::Data);
        a.write(1, &[1u8; 1024], WriteHint::classed(3, data))
            .unwrap();
        let bufs = [vec![2u8; 512], vec![3u8; 1024]];
        let index = WriteClass::new(0, DataType::Index);
        let mut batch = vec![
            Io::Write {
                page: 0,
                buf: &bufs[0],
                hint: WriteHint::classed(4, index),
            },
            Io::Write {
                page: 2,
                buf: &bufs[1],
                hint: WriteHint::NONE,
            },
        ];
        b.submit(&mut batch).unwrap();
        let (a_data, b_index) = (Some(data.in_file(0)), Some(index.in_file(1)));
        assert_eq!(
            *seen.borrow(),
            [(1, a_data), (2, a_data), (4, b_index), (6, None), (7, None)]
        );
        let mut buf = vec![0u8; 512];
        b.read(3, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 3));
        // An I/O outside the partition fails the batch, the others still run.
        let one = [4u8; 512];
        let mut batch = vec![
            Io::Write {
                page: 4,
                buf: &one,
                hint: WriteHint::NONE,
            },
            Io::Write {
                page: 0,
                buf: &one,
                hint: WriteHint::NONE,
            },
        ];
        assert!(matches!(
            b.submit(&mut batch),
            Err(DevError::OutOfRange { page: 4, .. })
        ));
        b.read(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 4));
    }

    #[test]
    fn without_discard_trims_are_counted_but_not_passed_on() {
        let mut shared = SharedDevice::new(MemDevice::new(512, 4)).without_discard();
        let mut a = shared.partition(4).unwrap();
        a.write(0, &[5u8; 512], WriteHint::NONE).unwrap();
        a.trim(0, 1).unwrap();
        assert!(a.trim(3, 2).is_err(), "still checked against the partition");
        assert_eq!(a.stats().trims, 1);
        assert_eq!(shared.device().stats().trims, 0);
        let mut buf = vec![0u8; 512];
        a.read(0, &mut buf).unwrap();
        assert!(
            buf.iter().all(|&x| x == 5),
            "the device still holds the page"
        );
    }

    #[test]
    fn fstrim_trims_the_file_systems_free_space_and_not_a_files_pages() {
        // Four 1-page chunks: file 0 writes two, deletes one; fstrim trims the other three
        // pages even though the file system drops the file's own trims.
        let mut shared = SharedDevice::new(MemDevice::new(512, 4))
            .without_discard()
            .with_extents(1);
        let mut a = shared.partition(4).unwrap();
        a.write(0, &[5u8; 512], WriteHint::NONE).unwrap();
        a.write(1, &[6u8; 512], WriteHint::NONE).unwrap();
        a.trim(1, 1).unwrap();
        assert_eq!(shared.device().stats().trims, 0, "no discard");
        assert_eq!(shared.fstrim().unwrap(), 3);
        assert!(shared.device().stats().trims >= 1);
        let mut buf = vec![0u8; 512];
        a.read(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 5), "the live page is not trimmed");
        // Without extents nothing is the file system's free space.
        let plain = SharedDevice::new(MemDevice::new(512, 4)).without_discard();
        assert_eq!(plain.fstrim().unwrap(), 0);
    }
}
