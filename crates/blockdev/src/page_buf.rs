//! A page image in memory aligned for direct I/O, owned: the pager's frames hold one each, and a
//! device that reads into callers' buffers without a bounce copy (a file through io_uring,
//! O_DIRECT) reads straight into it; a [`crate::ReadStream`] holds it while its read is in
//! flight, so no borrow has to outlive the call that started the read.
//!
//! Invariant: a non-empty image is `len` initialized bytes at [`PageBuf::align_of`]`(len)`
//! (4096 for whole 4 KiB blocks, else 512), no byte more than the page: an image of whole
//! 4 KiB blocks up to [`slab::MAX_BYTES`] is a slot of a slab ([`slab`]; `slab` names it), any
//! other length is allocated alone. A slab's memory lives as long as the process, so a device
//! may register it with the kernel once (io_uring's fixed buffers) and read into its slots.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A page image: `len` bytes, aligned (empty: no allocation).
pub struct PageBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// The slab holding the image ([`slab::NONE`]: allocated alone, or empty).
    slab: u32,
}

impl PageBuf {
    /// 4096 for a length of whole 4 KiB blocks (what O_DIRECT asks of a 4Kn disk), else 512
    /// (a sector).
    fn align_of(len: usize) -> usize {
        if len.is_multiple_of(4096) {
            4096
        } else {
            512
        }
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len, PageBuf::align_of(len)).expect("a page's layout")
    }

    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> PageBuf {
        if len == 0 {
            return PageBuf::default();
        }
        if slab::serves(len) {
            let (ptr, id) = slab::take(len);
            // SAFETY: a slot is `len` bytes this buffer now owns alone.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
            return PageBuf { ptr, len, slab: id };
        }
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(PageBuf::layout(len)) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| {
            std::alloc::handle_alloc_error(PageBuf::layout(len));
        });
        PageBuf {
            ptr,
            len,
            slab: slab::NONE,
        }
    }

    /// The id of the slab holding this image, if one does (see [`slab_region`]).
    pub(crate) fn slab_id(&self) -> Option<u32> {
        (self.slab != slab::NONE).then_some(self.slab)
    }

    /// Whether this image lies in a slab asked for huge pages ([`set_huge_pages`]).
    pub fn on_huge_slab(&self) -> bool {
        self.slab != slab::NONE && slab::is_huge(self.slab)
    }

    /// Make this `len` bytes long (a new zeroed image when the length changes).
    pub fn resize(&mut self, len: usize) {
        if self.len != len {
            *self = PageBuf::zeroed(len);
        }
    }
}

/// Slab `id`'s memory: (base address, bytes). It lives as long as the process and holds every
/// image [`PageBuf::slab_id`] says is in it, whole.
pub(crate) fn slab_region(id: u32) -> (usize, usize) {
    slab::region(id)
}

impl Default for PageBuf {
    fn default() -> PageBuf {
        PageBuf {
            ptr: NonNull::dangling(),
            len: 0,
            slab: slab::NONE,
        }
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        if self.slab != slab::NONE {
            slab::give(self.ptr, self.len, self.slab);
        } else if self.len > 0 {
            // SAFETY: allocated in `zeroed` with this same layout, and not freed since.
            unsafe { dealloc(self.ptr.as_ptr(), PageBuf::layout(self.len)) }
        }
    }
}

impl Clone for PageBuf {
    fn clone(&self) -> PageBuf {
        let mut b = PageBuf::zeroed(self.len);
        b.copy_from_slice(self);
        b
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` holds `len` initialized bytes owned by `self` (or is dangling with
        // `len` 0, which a slice allows).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// Images of whole 4 KiB blocks (up to [`MAX_BYTES`]) carved from slabs and recycled, one free
/// list per length and backing. An aligned allocation of its own costs glibc's malloc a second
/// 4 KiB beside each image (the alignment gap; measured: 75,000 4 KiB images alone took 601 MB,
/// as slabs they take 300 MB), which doubled a cache of page images. Slabs are kept for the
/// process's life and their slots reused (the pool's size is the most images held at once);
/// each has an id (its index in creation order) by which a device registers its memory with the
/// kernel.
///
/// Backing: while [`set_huge_pages`] is on (the default) a new slab is 2 MiB on a 2 MiB
/// boundary, advised to the kernel as one transparent huge page before it is first touched
/// (`madvise(MADV_HUGEPAGE)`; PostgreSQL's `huge_pages = try` asks the same of its buffer
/// pool). A direct read then lands in memory the kernel and a virtual disk's host map as one
/// page instead of a 4 KiB page per 4 KiB of image: on this project's virtio disk P2's batched
/// scan, reading 50 deep into a pool's worth of images, ran at 0.75-0.87 of fio's QD50 pace on
/// 4 KiB pages and 0.87-0.97 on huge ones (docs/results/2026-11-29-p2-file-10.md). Off, a
/// slab is 64 images on plain pages. Where the kernel gives no huge page (THP `never`) a huge
/// slab is plain memory, the same as asking nothing. Each backing keeps its own free lists, so
/// switching mid-process takes new images from slabs of the new backing at once.
mod slab {
    use std::alloc::{alloc, handle_alloc_error, Layout};
    use std::ptr::NonNull;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    /// The id of no slab.
    pub(super) const NONE: u32 = u32::MAX;
    const BLOCK_BYTES: usize = 4096;
    /// The longest image a slab serves.
    pub(super) const MAX_BYTES: usize = 16 * BLOCK_BYTES;
    /// Images per slab on plain pages (256 KiB of 4 KiB images, 512 KiB of 8 KiB ones).
    const SLAB_PAGES: usize = 64;
    /// A huge slab's size and alignment: one huge page.
    pub(super) const HUGE_BYTES: usize = ssd::hugevec::HUGE_BYTES;

    static HUGE: AtomicBool = AtomicBool::new(true);

    pub(super) fn set_huge(on: bool) {
        HUGE.store(on, Ordering::Relaxed);
    }

    pub(super) fn huge() -> bool {
        HUGE.load(Ordering::Relaxed)
    }

    /// A slab's (bytes, alignment, slots) for images of `len` bytes on huge or plain pages.
    pub(super) fn shape(len: usize, huge: bool) -> (usize, usize, usize) {
        assert!(serves(len), "a slab serves {len} bytes");
        let (bytes, align) = if huge {
            (HUGE_BYTES, HUGE_BYTES)
        } else {
            (len * SLAB_PAGES, BLOCK_BYTES)
        };
        let slots = bytes / len;
        assert!(
            slots >= 1 && slots * len <= bytes,
            "a slab holds whole images"
        );
        (bytes, align, slots)
    }

    struct Slabs {
        /// Free slots per length in blocks (index `blocks - 1`) and backing (0 plain, 1
        /// huge), as addresses.
        free: Vec<[Vec<(usize, u32)>; 2]>,
        /// Each slab's (base address, bytes of whole images, huge), by id.
        regions: Vec<(usize, usize, bool)>,
    }

    static SLABS: Mutex<Slabs> = Mutex::new(Slabs {
        free: Vec::new(),
        regions: Vec::new(),
    });

    fn lock() -> std::sync::MutexGuard<'static, Slabs> {
        SLABS.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether images of `len` bytes come from slabs.
    pub(super) fn serves(len: usize) -> bool {
        len > 0 && len <= MAX_BYTES && len.is_multiple_of(BLOCK_BYTES)
    }

    /// A free slot of `len` bytes (a new slab when none is left), aligned to 4096, and its
    /// slab's id.
    pub(super) fn take(len: usize) -> (NonNull<u8>, u32) {
        assert!(serves(len), "a slab serves {len} bytes");
        let class = len / BLOCK_BYTES - 1;
        let huge = huge();
        let mut s = lock();
        if s.free.len() <= class {
            s.free.resize_with(class + 1, Default::default);
        }
        if s.free[class][huge as usize].is_empty() {
            let (bytes, align, slots) = shape(len, huge);
            let layout = Layout::from_size_align(bytes, align).expect("a slab's layout");
            let base = match huge {
                true => map_huge(bytes).unwrap_or_else(|| handle_alloc_error(layout)),
                // SAFETY: the layout has a non-zero size.
                false => unsafe { alloc(layout) },
            };
            if base.is_null() {
                handle_alloc_error(layout);
            }
            let id = u32::try_from(s.regions.len()).expect("fewer slabs than u32::MAX");
            assert!(id != NONE, "a slab's id is never NONE");
            s.regions.push((base as usize, slots * len, huge));
            s.free[class][huge as usize]
                .extend((0..slots).rev().map(|i| (base as usize + i * len, id)));
        }
        let (at, id) = s.free[class][huge as usize]
            .pop()
            .expect("a slab refills the list");
        assert!(at.is_multiple_of(BLOCK_BYTES), "a slot is aligned");
        assert_eq!(
            s.regions[id as usize].2, huge,
            "a slot of the backing asked"
        );
        (
            NonNull::new(at as *mut u8).expect("a slot is never null"),
            id,
        )
    }

    /// `bytes` (whole huge pages) of fresh anonymous memory on a huge-page boundary, advised to
    /// the kernel as transparent huge pages before anything touches it. Fresh from `mmap`, not
    /// from malloc: memory malloc hands back (from its heap) may already be backed by 4 KiB
    /// pages, which the advice does not replace until the kernel's background collapse gets to
    /// them. Never unmapped (slabs live for the process). `None` when the kernel gives no
    /// memory.
    #[cfg(target_os = "linux")]
    fn map_huge(bytes: usize) -> Option<*mut u8> {
        assert!(bytes.is_multiple_of(HUGE_BYTES), "whole huge pages");
        let span = bytes + HUGE_BYTES;
        // SAFETY: a new private anonymous mapping, owned by no one else; the slack on either
        // side of the aligned range is unmapped below and never used.
        unsafe {
            let at = libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if at == libc::MAP_FAILED {
                return None;
            }
            let start = (at as usize).next_multiple_of(HUGE_BYTES);
            let (head, tail) = (start - at as usize, span - (start - at as usize) - bytes);
            if head > 0 {
                libc::munmap(at, head);
            }
            if tail > 0 {
                libc::munmap((start + bytes) as *mut libc::c_void, tail);
            }
            assert!(start.is_multiple_of(HUGE_BYTES), "a huge slab is aligned");
            ssd::hugevec::advise_huge(start, bytes);
            Some(start as *mut u8)
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn map_huge(bytes: usize) -> Option<*mut u8> {
        let layout = Layout::from_size_align(bytes, HUGE_BYTES).expect("a slab's layout");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc(layout) };
        (!base.is_null()).then_some(base)
    }

    /// Return a slot of `len` bytes `take` gave from slab `id`.
    pub(super) fn give(slot: NonNull<u8>, len: usize, id: u32) {
        let at = slot.as_ptr() as usize;
        let mut s = lock();
        let (base, bytes, huge) = s.regions[id as usize];
        assert!(
            at >= base && at + len <= base + bytes,
            "a slot of slab {id}"
        );
        s.free[len / BLOCK_BYTES - 1][huge as usize].push((at, id));
    }

    /// Slab `id`'s (base address, bytes).
    pub(super) fn region(id: u32) -> (usize, usize) {
        let (base, bytes, _) = lock().regions[id as usize];
        (base, bytes)
    }

    /// Whether slab `id` was asked for huge pages.
    pub(super) fn is_huge(id: u32) -> bool {
        lock().regions[id as usize].2
    }
}

/// Back slabs made from now on with transparent huge pages (on, the default) or plain pages
/// (off): process-wide, like a database server's `huge_pages` setting. Images already handed
/// out keep their memory; see [`slab`].
pub fn set_huge_pages(on: bool) {
    slab::set_huge(on);
}

/// Whether new page images are asked for on huge pages ([`set_huge_pages`]).
pub fn huge_pages() -> bool {
    slab::huge()
}

/// The process's anonymous memory the kernel holds on transparent huge pages, in KiB
/// (`AnonHugePages` of `/proc/self/smaps_rollup`): what [`set_huge_pages`] was granted. `None`
/// where the file is missing or has no such line (not Linux, an old kernel).
pub fn anon_huge_kib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    parse_anon_huge_kib(&text)
}

fn parse_anon_huge_kib(smaps: &str) -> Option<u64> {
    let line = smaps.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let mut words = line["AnonHugePages:".len()..].split_whitespace();
    let kib = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib)
}

// SAFETY: a PageBuf owns its allocation exclusively (like a Box<[u8]>).
unsafe impl Send for PageBuf {}
// SAFETY: shared access only reads (through `Deref`).
unsafe impl Sync for PageBuf {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_image_is_aligned_zeroed_and_as_long_as_asked() {
        for (len, align) in [(512, 512), (4096, 4096), (8192, 4096), (12288 + 512, 512)] {
            let mut b = PageBuf::zeroed(len);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            assert!((b.as_ptr() as usize).is_multiple_of(align), "{len}");
            b[len - 1] = 7;
            assert_eq!(b.clone()[len - 1], 7);
            b.resize(len);
            assert_eq!(b[len - 1], 7, "same length: kept");
        }
        let mut e = PageBuf::default();
        assert!(e.is_empty());
        assert!(e.clone().is_empty());
        e.resize(8192);
        assert_eq!(e.len(), 8192);
        assert!((e.as_ptr() as usize).is_multiple_of(4096));
    }

    #[test]
    fn a_huge_slab_is_one_aligned_huge_page_of_whole_images() {
        for (len, huge, slots) in [
            (4096, true, 512),
            (8192, true, 256),
            (65536, true, 32),
            (8192, false, 64),
            (12288, true, 170),
        ] {
            let (bytes, align, n) = slab::shape(len, huge);
            assert_eq!(n, slots, "{len} {huge}");
            if huge {
                assert_eq!((bytes, align), (slab::HUGE_BYTES, slab::HUGE_BYTES));
            } else {
                assert_eq!((bytes, align), (len * 64, 4096));
            }
        }
    }

    /// The only test that switches the backing; other tests may take images meanwhile, which
    /// either backing serves.
    #[test]
    fn images_come_from_slabs_of_the_backing_asked_and_go_back_to_them() {
        assert!(huge_pages(), "on by default");
        set_huge_pages(false);
        let plain: Vec<PageBuf> = (0..70).map(|_| PageBuf::zeroed(20480)).collect();
        set_huge_pages(true);
        let huge: Vec<PageBuf> = (0..70).map(|_| PageBuf::zeroed(20480)).collect();
        assert!(plain.iter().all(|b| !b.on_huge_slab()));
        assert!(huge.iter().all(|b| b.on_huge_slab()));
        for b in &huge {
            let (base, bytes) = slab_region(b.slab_id().unwrap());
            assert!(
                base.is_multiple_of(slab::HUGE_BYTES),
                "a huge slab is aligned"
            );
            assert_eq!(bytes, slab::HUGE_BYTES / 20480 * 20480);
        }
        let plain_at: Vec<usize> = plain.iter().map(|b| b.as_ptr() as usize).collect();
        drop(plain);
        let again: Vec<PageBuf> = (0..70).map(|_| PageBuf::zeroed(20480)).collect();
        assert!(
            again
                .iter()
                .all(|b| b.on_huge_slab() && !plain_at.contains(&(b.as_ptr() as usize))),
            "a freed plain slot is not handed out while huge pages are asked"
        );
        assert!(
            PageBuf::zeroed(4097).slab_id().is_none(),
            "not whole blocks: alone"
        );
    }

    #[test]
    fn anon_huge_pages_are_read_from_smaps_rollup_or_named_missing() {
        let text = "Rss:  100 kB\nAnonHugePages:    4096 kB\nShmemHugePages: 0 kB\n";
        assert_eq!(parse_anon_huge_kib(text), Some(4096));
        assert_eq!(parse_anon_huge_kib("Rss: 100 kB\n"), None);
        assert_eq!(parse_anon_huge_kib("AnonHugePages: x kB\n"), None);
        assert_eq!(parse_anon_huge_kib("AnonHugePages: 12 MB\n"), None);
        #[cfg(target_os = "linux")]
        assert!(anon_huge_kib().is_some(), "Linux has smaps_rollup");
    }

    #[test]
    fn slab_images_are_apart_and_a_reused_slot_comes_zeroed() {
        let mut held: Vec<PageBuf> = (0..200).map(|_| PageBuf::zeroed(4096)).collect();
        for (i, b) in held.iter_mut().enumerate() {
            b.fill(i as u8);
        }
        for (i, b) in held.iter().enumerate() {
            assert!(b.iter().all(|&x| x == i as u8), "image {i} kept its bytes");
            assert!((b.as_ptr() as usize).is_multiple_of(4096));
        }
        held.truncate(10);
        let again: Vec<PageBuf> = (0..100).map(|_| PageBuf::zeroed(4096)).collect();
        assert!(
            again.iter().all(|b| b.iter().all(|&x| x == 0)),
            "reused slots are zeroed"
        );
        for (i, b) in held.iter().enumerate() {
            assert!(
                b.iter().all(|&x| x == i as u8),
                "a held image is never handed out"
            );
        }
    }
}
