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
/// list per length. An aligned allocation of its own costs glibc's malloc a second 4 KiB beside
/// each image (the alignment gap; measured: 75,000 4 KiB images alone took 601 MB, as slabs
/// they take 300 MB), which doubled a cache of page images. Slabs are kept for the process's
/// life and their slots reused (the pool's size is the most images held at once); each has an
/// id (its index in creation order) by which a device registers its memory with the kernel.
mod slab {
    use std::alloc::{alloc, handle_alloc_error, Layout};
    use std::ptr::NonNull;
    use std::sync::Mutex;

    /// The id of no slab.
    pub(super) const NONE: u32 = u32::MAX;
    const BLOCK_BYTES: usize = 4096;
    /// The longest image a slab serves.
    pub(super) const MAX_BYTES: usize = 16 * BLOCK_BYTES;
    /// Images per slab (256 KiB of 4 KiB images, 512 KiB of 8 KiB ones).
    const SLAB_PAGES: usize = 64;

    struct Slabs {
        /// Free slots per length in blocks (index `blocks - 1`), as addresses.
        free: Vec<Vec<(usize, u32)>>,
        /// Each slab's (base address, bytes), by id.
        regions: Vec<(usize, usize)>,
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
        let mut s = lock();
        if s.free.len() <= class {
            s.free.resize_with(class + 1, Vec::new);
        }
        if s.free[class].is_empty() {
            let layout =
                Layout::from_size_align(len * SLAB_PAGES, BLOCK_BYTES).expect("a slab's layout");
            // SAFETY: the layout has a non-zero size.
            let base = unsafe { alloc(layout) };
            if base.is_null() {
                handle_alloc_error(layout);
            }
            let id = u32::try_from(s.regions.len()).expect("fewer slabs than u32::MAX");
            assert!(id != NONE, "a slab's id is never NONE");
            s.regions.push((base as usize, len * SLAB_PAGES));
            s.free[class].extend((0..SLAB_PAGES).rev().map(|i| (base as usize + i * len, id)));
        }
        let (at, id) = s.free[class].pop().expect("a slab refills the list");
        assert!(at.is_multiple_of(BLOCK_BYTES), "a slot is aligned");
        (
            NonNull::new(at as *mut u8).expect("a slot is never null"),
            id,
        )
    }

    /// Return a slot of `len` bytes `take` gave from slab `id`.
    pub(super) fn give(slot: NonNull<u8>, len: usize, id: u32) {
        let at = slot.as_ptr() as usize;
        let mut s = lock();
        let (base, bytes) = s.regions[id as usize];
        assert!(
            at >= base && at + len <= base + bytes,
            "a slot of slab {id}"
        );
        s.free[len / BLOCK_BYTES - 1].push((at, id));
    }

    /// Slab `id`'s (base address, bytes).
    pub(super) fn region(id: u32) -> (usize, usize) {
        lock().regions[id as usize]
    }
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
