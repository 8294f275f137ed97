//! A frame's page image in memory aligned for direct I/O, so a device that reads into callers'
//! buffers without a bounce copy (a file through io_uring, O_DIRECT) reads straight into it.
//!
//! Invariant: the bytes are `len` of a zeroed allocation of whole `ALIGN`-byte blocks.

use std::ops::{Deref, DerefMut};

/// Alignment of a page image: 4096 bytes, what O_DIRECT asks of a 4Kn disk (and more than a
/// 512-byte one needs).
const ALIGN: usize = 4096;

#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Block([u8; ALIGN]);

/// A page image: `len` bytes at a 4096-byte-aligned address (empty: no allocation).
#[derive(Clone, Default)]
pub(super) struct PageBuf {
    blocks: Box<[Block]>,
    len: usize,
}

impl PageBuf {
    /// `len` zero bytes.
    pub(super) fn zeroed(len: usize) -> PageBuf {
        PageBuf {
            blocks: vec![Block([0; ALIGN]); len.div_ceil(ALIGN)].into_boxed_slice(),
            len,
        }
    }

    /// Make this `len` bytes long (a new zeroed image when the length changes).
    pub(super) fn resize(&mut self, len: usize) {
        if self.len != len {
            *self = PageBuf::zeroed(len);
        }
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        assert!(self.len <= self.blocks.len() * ALIGN);
        // SAFETY: `Block` is `repr(C)` over `[u8; ALIGN]` (no padding), so the blocks are
        // `blocks.len() * ALIGN` initialized bytes, of which the first `len` are viewed.
        unsafe { std::slice::from_raw_parts(self.blocks.as_ptr().cast::<u8>(), self.len) }
    }
}

impl DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        assert!(self.len <= self.blocks.len() * ALIGN);
        // SAFETY: as in `deref`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast::<u8>(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_image_is_aligned_zeroed_and_as_long_as_asked() {
        for len in [512, 4096, 8192, 12288 + 512] {
            let mut b = PageBuf::zeroed(len);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            assert!((b.as_ptr() as usize).is_multiple_of(ALIGN), "{len}");
            b[len - 1] = 7;
            assert_eq!(b.clone()[len - 1], 7);
            b.resize(len);
            assert_eq!(b[len - 1], 7, "same length: kept");
        }
        let mut e = PageBuf::default();
        assert!(e.is_empty());
        e.resize(8192);
        assert_eq!(e.len(), 8192);
        assert!((e.as_ptr() as usize).is_multiple_of(ALIGN));
    }
}
