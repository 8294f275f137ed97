//! Large flat tables (L2P, P2L, page tags) backed by transparent huge pages where the kernel
//! allows it. The simulator's inner loop is a chain of random accesses into tables of many
//! megabytes; with 4 KiB pages nearly every access also misses the TLB, so asking for 2 MiB
//! pages (`madvise(MADV_HUGEPAGE)` before the memory is first touched) roughly halves the cost
//! of a simulated write. Where huge pages are unavailable this is a plain `vec![value; n]`.

/// `vec![value; n]`, with the allocation advised to use transparent huge pages.
pub fn filled<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(v.as_mut_ptr() as usize, n * std::mem::size_of::<T>());
    v.resize(n, value);
    v
}

/// A huge page's size (x86-64, and arm64 with 4 KiB pages).
pub const HUGE_BYTES: usize = 2 << 20;

/// Ask the kernel to back the whole huge pages inside `[addr, addr + len)` with transparent
/// huge pages (`madvise(MADV_HUGEPAGE)`), best before the memory is first touched; the caller
/// owns the range. A refusal (THP disabled) leaves plain pages and is ignored. Also used by
/// blockdev's page-image slabs.
#[cfg(target_os = "linux")]
pub fn advise_huge(addr: usize, len: usize) {
    let start = addr.next_multiple_of(HUGE_BYTES);
    let end = (addr + len) / HUGE_BYTES * HUGE_BYTES;
    if end > start {
        // SAFETY: [start, end) lies inside memory the caller owns (an allocation just made);
        // MADV_HUGEPAGE only changes how the kernel backs the range, never its contents.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn advise_huge(_addr: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn filled_is_a_filled_vec() {
        let v = super::filled(5_000_000, 7u32);
        assert_eq!(v.len(), 5_000_000);
        assert!(v.iter().all(|&x| x == 7));
    }
}
