//! The page checksum's cost on a page in the CPU's caches against one that is not (as a page
//! just read from the device by DMA): `cargo run --release -p engine --example crc_cold`.
//! crc32c of 32,768 8 KiB pages (256 MiB, more than any cache), in order, with and without a
//! prefetch of every line of the page first, then of one page over and over.

use std::time::Instant;

const PB: usize = 8192;

fn main() {
    let n = 32_768;
    let v: Vec<u8> = (0..PB * n).map(|i| (i * 31 % 251) as u8).collect();
    for prefetch in [false, true, false, true] {
        let t = Instant::now();
        let mut acc = 0u32;
        for p in v.chunks(PB) {
            if prefetch {
                #[cfg(target_arch = "x86_64")]
                for line in p.chunks(64) {
                    // SAFETY: a prefetch is a hint that never faults; `line` is `v`'s memory.
                    unsafe {
                        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                            line.as_ptr().cast(),
                        )
                    };
                }
            }
            acc ^= crc32c::crc32c(p);
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
        println!("cold, prefetch {prefetch:5}: {us:.3} us per page (crc xor {acc:08x})");
    }
    let p = &v[..PB];
    let reps = 100_000;
    let t = Instant::now();
    let mut acc = 0u32;
    for _ in 0..reps {
        acc ^= crc32c::crc32c(std::hint::black_box(p));
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    println!("hot (one page again):  {us:.3} us per page (crc xor {acc:08x})");
}
