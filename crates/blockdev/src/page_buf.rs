//! A page image in memory aligned for direct I/O, owned: the pager's frames hold one each, and a
//! device that reads into callers' buffers without a bounce copy (a file through io_uring,
//! O_DIRECT) reads straight into it; a [`crate::ReadStream`] holds it while its read is in
//! flight, so no borrow has to outlive the call that started the read.
//!
//! Invariant: a non-empty image is `len` initialized bytes at [`PageBuf::align_of`]`(len)`
//! (4096 for whole 4 KiB blocks, else 512), no byte more than the page: a 4 KiB image is a
//! slot of a slab ([`slab`]), any other length is allocated alone.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A page image: `len` bytes, aligned (empty: no allocation).
pub struct PageBuf {
    ptr: NonNull<u8>,
    len: usize,
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
        if len == slab::PAGE_BYTES {
            let ptr = slab::take();
            // SAFETY: a slot is PAGE_BYTES bytes this buffer now owns alone.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
            return PageBuf { ptr, len };
        }
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(PageBuf::layout(len)) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| {
            std::alloc::handle_alloc_error(PageBuf::layout(len));
        });
        PageBuf { ptr, len }
    }

    /// Make this `len` bytes long (a new zeroed image when the length changes).
    pub fn resize(&mut self, len: usize) {
        if self.len != len {
            *self = PageBuf::zeroed(len);
        }
    }
}

impl Default for PageBuf {
    fn default() -> PageBuf {
        PageBuf {
            ptr: NonNull::dangling(),
            len: 0,
        }
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        if self.len == slab::PAGE_BYTES {
            slab::give(self.ptr);
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

/// 4 KiB images carved from slabs and recycled. An aligned allocation of its own costs glibc's
/// malloc a second 4 KiB beside each image (the alignment gap; measured: 75,000 images alone
/// took 601 MB, as slabs they take 300 MB), which doubled a cache of page images. Slabs
/// are kept for the process's life and their slots reused (the pool's size is the most
/// images held at once).
mod slab {
    use std::alloc::{alloc, handle_alloc_error, Layout};
    use std::ptr::NonNull;
    use std::sync::Mutex;

    pub(super) const PAGE_BYTES: usize = 4096;
    /// Images per slab (256 KiB).
    const SLAB_PAGES: usize = 64;
    /// Free slots, as addresses.
    static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

    /// A free slot (a new slab when none is left): PAGE_BYTES bytes aligned to PAGE_BYTES.
    pub(super) fn take() -> NonNull<u8> {
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        if free.is_empty() {
            let layout = Layout::from_size_align(PAGE_BYTES * SLAB_PAGES, PAGE_BYTES)
                .expect("a slab's layout");
            // SAFETY: the layout has a non-zero size.
            let base = unsafe { alloc(layout) };
            if base.is_null() {
                handle_alloc_error(layout);
            }
            free.extend(
                (0..SLAB_PAGES)
                    .rev()
                    .map(|i| base as usize + i * PAGE_BYTES),
            );
        }
        let at = free.pop().expect("a slab refills the list");
        assert!(at.is_multiple_of(PAGE_BYTES), "a slot is aligned");
        NonNull::new(at as *mut u8).expect("a slot is never null")
    }

    /// Return a slot `take` gave.
    pub(super) fn give(slot: NonNull<u8>) {
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        free.push(slot.as_ptr() as usize);
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
