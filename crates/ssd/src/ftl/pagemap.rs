//! A flat table of page numbers (the page FTL's L2P or P2L), packed at 3 bytes per entry when
//! every number it can hold is below 2^24 - 1, else 4.
//!
//! The two maps are most of the simulator's memory (issue 27: under 10 bytes per logical page
//! at 28 % over-provisioning). A device of fewer than 2^24 - 1 pages (64 GiB of 4 KiB pages)
//! needs only 24 bits per page number, so its maps take 3 bytes per entry: an entry is read as
//! a 4-byte unaligned load masked to 24 bits (the table keeps a byte of padding after the last
//! entry, so the load stays inside it) and written as 3 bytes, with no read. The all-ones
//! 24-bit value stands for [`NIL`]. The width is the type's const parameter `W` (3 or 4),
//! chosen once where the FTL is built ([`entry_bytes`]): an entry's address is `i * W` with
//! `W` a constant (a shift and an add, not a multiply by a loaded width), and its mask and
//! empty value are constants too.

use super::blocks::NIL;

/// The all-ones entry of a 3-byte table: no page.
const NIL24: u32 = (1 << 24) - 1;

/// Bytes per entry of a table holding page numbers below `values`: 3 or 4.
pub(crate) fn entry_bytes(values: u64) -> usize {
    if values <= NIL24 as u64 {
        3
    } else {
        4
    }
}

/// A table of `W`-byte entries (`W` 3 or 4).
pub(crate) struct PageMap<const W: usize> {
    /// `len` entries of `W` bytes, little-endian, then one byte of padding.
    bytes: Vec<u8>,
    len: usize,
}

impl<const W: usize> PageMap<W> {
    /// The all-ones value of the width: the mask of an entry, and the empty entry.
    const NIL_W: u32 = match W {
        3 => NIL24,
        4 => NIL,
        _ => panic!("a page map entry is 3 or 4 bytes"),
    };

    /// `len` entries, all [`NIL`], able to hold any page number below `values` (which `W`
    /// bytes must hold: `W` at least [`entry_bytes`] of `values`).
    pub fn new(len: usize, values: u64) -> PageMap<W> {
        assert!(
            values <= Self::NIL_W as u64 && W >= entry_bytes(values),
            "page numbers up to {values} do not fit {W} bytes"
        );
        PageMap {
            bytes: crate::hugevec::filled(len * W + 1, 0xff),
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Entry `i`, or [`NIL`].
    #[inline(always)]
    pub fn get(&self, i: usize) -> u32 {
        self.check(i);
        // SAFETY: `i < len`, so bytes `i * W .. i * W + 4` lie inside `bytes`
        // (`len * W + 1` long, `W >= 3`); an unaligned read of plain bytes.
        let raw = unsafe { std::ptr::read_unaligned(self.bytes.as_ptr().add(i * W) as *const u32) };
        // Branch-free at either width (at 4 bytes the mask keeps everything and NIL is NIL).
        let v = u32::from_le(raw) & Self::NIL_W;
        if v == Self::NIL_W {
            NIL
        } else {
            v
        }
    }

    /// Set entry `i` to `v` (a page number the table was made for, or [`NIL`]).
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: u32) {
        self.check(i);
        self.store(i, v);
    }

    /// Set entry `i` to `v` and return what it held ([`PageMap::get`] then
    /// [`PageMap::set`], with one bound check and one address).
    #[inline(always)]
    pub fn replace(&mut self, i: usize, v: u32) -> u32 {
        let was = self.get(i);
        self.store(i, v);
        was
    }

    /// Assert that entry `i` is in the table. The panic is out of line, so the check is a
    /// compare and a branch (formatting its message in line would keep `i` on the stack on
    /// every call).
    #[inline(always)]
    fn check(&self, i: usize) {
        if i >= self.len {
            beyond(i, self.len);
        }
    }

    /// Entry `i` (below `len`: each caller asserts it) is `v`.
    #[inline(always)]
    fn store(&mut self, i: usize, v: u32) {
        debug_assert!(i < self.len);
        debug_assert!(
            W == 4 || v < NIL24 || v == NIL,
            "page number {v} in a 3-byte map"
        );
        let p = self.bytes.as_mut_ptr();
        // SAFETY: `i < len` (checked by `set`, `replace`'s `get` and `remap_run`), so the
        // entry's `W` bytes from `i * W` lie inside `bytes`;
        // unaligned stores of plain bytes. (Two fixed-size stores, not a copy of `width`
        // bytes, which the compiler would make a call to `memcpy`.)
        unsafe {
            if W == 4 {
                std::ptr::write_unaligned(p.add(i * 4) as *mut u32, v.to_le());
            } else {
                // The low three bytes (NIL's are NIL24): two, then one.
                let at = p.add(i * 3);
                std::ptr::write_unaligned(at as *mut u16, (v as u16).to_le());
                *at.add(2) = (v >> 16) as u8;
            }
        }
    }

    /// Branch-free: write the offset and entry of each of the `n` entries from `first` at the
    /// next free slot of `offs` and `vals`, advancing only past those not [`NIL`]. Returns
    /// how many were not (now first in both). With `OFFS` false, `offs` is not written (it
    /// may be empty): the entries alone, one store each (a flash that keeps no data needs no
    /// offsets to copy).
    #[inline]
    pub fn gather<const OFFS: bool>(
        &self,
        first: usize,
        n: usize,
        offs: &mut [u32],
        vals: &mut [u32],
    ) -> usize {
        assert!(
            first + n <= self.len && (!OFFS || offs.len() >= n) && vals.len() >= n,
            "gather of {n} entries from {first}: beyond the map or the buffers"
        );
        let base = self.bytes.as_ptr();
        let mut found = 0;
        for off in 0..n {
            // SAFETY: `first + off < len` (asserted), so the 4-byte load lies inside `bytes`
            // (see `get`); `found <= off < n <= offs.len() (when written), vals.len()`
            // (asserted above).
            unsafe {
                let raw = std::ptr::read_unaligned(base.add((first + off) * W) as *const u32);
                let v = u32::from_le(raw) & Self::NIL_W;
                if OFFS {
                    *offs.get_unchecked_mut(found) = off as u32;
                }
                *vals.get_unchecked_mut(found) = v;
                found += (v != Self::NIL_W) as usize;
            }
        }
        found
    }

    /// Set entries `range` to [`NIL`].
    pub fn clear(&mut self, range: std::ops::Range<usize>) {
        assert!(
            range.end <= self.len,
            "page map range {range:?} beyond {}",
            self.len
        );
        self.bytes[range.start * W..range.end * W].fill(0xff);
    }

    /// Every entry in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Ask the CPU to start loading entry `i`'s cache line (a hint: any `i` is harmless).
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        prefetch_line(self.bytes.as_ptr().wrapping_add(i.wrapping_mul(W)));
    }

    /// The table's bytes (entry `i` at `i * W`) and `W`: where a prefetch of entry `i` goes
    /// ([`crate::Ssd::write_prefetch`]).
    pub fn bytes(&self) -> (&[u8], usize) {
        (&self.bytes, W)
    }
}

/// GC's move of `lpns` to the physical pages `dst0..dst0 + lpns.len()`, in one pass: L2P
/// entry `lpns[j]` becomes `dst0 + j` and P2L entry `dst0 + j` becomes `lpns[j]`
/// ([`PageMap::set`] of each, with one load per page, P2L's run checked once, and each
/// logical page checked against L2P's length held in a register).
#[inline(always)]
pub(crate) fn remap_run<const L: usize, const R: usize>(
    l2p: &mut PageMap<L>,
    p2l: &mut PageMap<R>,
    lpns: &[u32],
    dst0: usize,
) {
    assert!(
        dst0 <= p2l.len && lpns.len() <= p2l.len - dst0,
        "page map run of {} entries from {dst0} beyond {}",
        lpns.len(),
        p2l.len
    );
    let len = l2p.len;
    for (ppn, &lpn) in (dst0..).zip(lpns) {
        if lpn as usize >= len {
            beyond(lpn as usize, len);
        }
        l2p.store(lpn as usize, ppn as u32);
        p2l.store(ppn, lpn);
    }
}

/// An entry's index beyond the table: a broken invariant of the caller.
#[cold]
#[inline(never)]
fn beyond(i: usize, len: usize) -> ! {
    panic!("page map entry {i} beyond {len}");
}

/// Start loading the cache line at `at` (any address: a hint that never faults).
#[inline(always)]
pub(crate) fn prefetch_line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache: it never faults, reads into the program or
    // changes memory, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(at as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a `Vec<u32>` model, at width `W`, with neighbours left alone.
    fn matches_the_model<const W: usize>(values: u64) {
        let mut m = PageMap::<W>::new(257, values);
        let mut model = vec![NIL; 257];
        let top = (values - 1) as u32;
        let mut x = 12345u64;
        for step in 0..5000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (x >> 33) as usize % 257;
            let v = match step % 4 {
                0 => NIL,
                1 => top,
                _ => (x >> 7) as u32 % (top + 1),
            };
            m.set(i, v);
            model[i] = v;
            if step % 97 == 0 {
                m.clear(i / 2..i);
                model[i / 2..i].fill(NIL);
            }
            if step % 89 == 0 {
                // A run from `i / 3` of up to 20 values, ending at the last entry at most.
                let run: Vec<u32> = (0..20u32.min(257 - i as u32 / 3))
                    .map(|k| (x >> 11).wrapping_add(k as u64 * 7919) as u32 % (top + 1))
                    .collect();
                for (k, &v) in run.iter().enumerate() {
                    m.set(i / 3 + k, v);
                }
                model[i / 3..i / 3 + run.len()].copy_from_slice(&run);
            }
            assert_eq!(m.get(i), model[i]);
        }
        assert!(m.iter().eq(model.iter().copied()), "{W} bytes for {values}");
        let (mut offs, mut vals) = (vec![0; 100], vec![0; 100]);
        let n = m.gather::<true>(150, 100, &mut offs, &mut vals);
        let want: Vec<(u32, u32)> = (0..100u32)
            .map(|o| (o, model[150 + o as usize]))
            .filter(|&(_, v)| v != NIL)
            .collect();
        let got: Vec<(u32, u32)> = offs[..n]
            .iter()
            .copied()
            .zip(vals[..n].iter().copied())
            .collect();
        assert_eq!(got, want, "gather at {W} bytes for {values}");
        let mut alone = vec![0; 100];
        let n_alone = m.gather::<false>(150, 100, &mut [], &mut alone);
        assert_eq!(&alone[..n_alone], &vals[..n], "values alone at {W} bytes");
        // GC's move: each gathered offset (as a logical page) to the next entry of a run
        // in a second map, and back; the other entries left alone.
        let lpns = &offs[..n];
        let mut back = PageMap::<W>::new(257, values);
        let mut back_model = vec![NIL; 257];
        let dst0 = 257 - n;
        remap_run(&mut m, &mut back, lpns, dst0);
        for (j, &lpn) in lpns.iter().enumerate() {
            model[lpn as usize] = (dst0 + j) as u32;
            back_model[dst0 + j] = lpn;
        }
        assert!(
            m.iter().eq(model.iter().copied()),
            "L2P after a move at {W} bytes"
        );
        assert!(back.iter().eq(back_model), "P2L after a move at {W} bytes");
    }

    #[test]
    fn a_page_map_is_a_vec_of_page_numbers() {
        matches_the_model::<3>(1000);
        matches_the_model::<3>(NIL24 as u64);
        matches_the_model::<4>(1000);
        matches_the_model::<4>(NIL24 as u64 + 1);
        matches_the_model::<4>(NIL as u64);
        assert_eq!(entry_bytes(NIL24 as u64), 3);
        assert_eq!(entry_bytes(NIL24 as u64 + 1), 4);
        assert_eq!(PageMap::<3>::new(10, NIL24 as u64).bytes.len(), 31);
        assert_eq!(PageMap::<4>::new(10, NIL24 as u64 + 1).bytes.len(), 41);
    }

    #[test]
    #[should_panic(expected = "beyond 10")]
    fn a_run_past_the_last_entry_is_refused() {
        let mut l2p = PageMap::<3>::new(10, 100);
        remap_run(&mut l2p, &mut PageMap::<3>::new(10, 100), &[1, 2, 3], 8);
    }

    #[test]
    #[should_panic(expected = "entry 10 beyond 10")]
    fn a_moved_page_past_the_last_entry_is_refused() {
        let mut p2l = PageMap::<3>::new(20, 10);
        remap_run(&mut PageMap::<3>::new(10, 100), &mut p2l, &[3, 10, 4], 0);
    }

    #[test]
    #[should_panic(expected = "do not fit 3 bytes")]
    fn a_3_byte_map_refuses_page_numbers_past_24_bits() {
        PageMap::<3>::new(10, NIL24 as u64 + 1);
    }
}
