//! Pages of different host streams never share a flash block while free blocks remain, in
//! every GC mode; with `victim` and `per_stream` GC they stay apart through GC too (a GC copy
//! goes to its own stream's blocks), while `separate` GC mixes them in its one GC stream.
//!
//! Each page's tag records the stream it was written on (GC copies keep the tag), so every
//! programmed page of a block tells which stream's data it holds.

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssd::flash::TAG_EMPTY;
use ssd::{BlockId, GcStreamMode, Lpn, SimTime, Ssd, StreamId};

const STREAMS: u16 = 4;

fn device(mode: GcStreamMode) -> Ssd {
    let mut cfg = common::two_dies(64, 16);
    cfg.timing.enabled = false;
    cfg.ftl.op = 0.3;
    cfg.ftl.streams = STREAMS;
    cfg.ftl.gc_stream = mode;
    Ssd::new(cfg).unwrap()
}

fn write(ssd: &mut Ssd, lpn: u64, stream: u16) {
    let tag = lpn << 8 | stream as u64;
    ssd.write_tags(Lpn(lpn), &[tag], StreamId(stream), SimTime::ZERO)
        .unwrap();
}

/// Blocks holding pages of more than one stream, with the streams they hold.
fn mixed_blocks(ssd: &Ssd) -> Vec<(u32, Vec<u64>)> {
    let f = ssd.flash();
    let mut out = Vec::new();
    for b in 0..f.total_blocks() {
        let mut streams: Vec<u64> = (0..f.pages_per_block())
            .map(|p| f.tag(f.ppn(BlockId(b), p)))
            .filter(|&t| t != TAG_EMPTY)
            .map(|t| t & 0xff)
            .collect();
        streams.sort_unstable();
        streams.dedup();
        if streams.len() > 1 {
            out.push((b, streams));
        }
    }
    out
}

/// Every logical page once, in random order, each on a random stream (no GC yet).
fn fill_randomly(ssd: &mut Ssd, rng: &mut ChaCha8Rng) {
    let n = ssd.logical_pages();
    let mut order: Vec<u64> = (0..n).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.gen_range(0..=i));
    }
    for lpn in order {
        write(ssd, lpn, rng.gen_range(0..STREAMS));
    }
}

#[test]
fn streams_never_share_a_block_while_free_blocks_remain() {
    for mode in GcStreamMode::ALL {
        let mut ssd = device(mode);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        fill_randomly(&mut ssd, &mut rng);
        assert_eq!(
            ssd.stats().gc_invocations,
            0,
            "{mode:?}: GC ran during the fill"
        );
        assert_eq!(mixed_blocks(&ssd), vec![], "{mode:?}");
        ssd.verify().unwrap();
    }
}

#[test]
fn victim_and_per_stream_gc_keep_streams_apart_and_separate_gc_mixes_them() {
    for mode in GcStreamMode::ALL {
        let mut ssd = device(mode);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        fill_randomly(&mut ssd, &mut rng);
        let n = ssd.logical_pages();
        // Overwrites on the stream of the LBA's quarter, skewed so GC finds live pages to copy.
        for _ in 0..4 * n {
            let lpn = if rng.gen_bool(0.8) {
                rng.gen_range(0..n / 4)
            } else {
                rng.gen_range(0..n)
            };
            write(&mut ssd, lpn, (lpn * STREAMS as u64 / n) as u16);
        }
        assert!(ssd.stats().gc_pages_copied > 0, "{mode:?}: no GC copies");
        ssd.verify().unwrap();
        let mixed = mixed_blocks(&ssd);
        match mode {
            GcStreamMode::Separate => assert!(!mixed.is_empty(), "separate GC should mix"),
            _ => assert_eq!(mixed, vec![], "{mode:?}"),
        }
    }
}

#[test]
fn per_stream_gc_needs_a_gc_open_block_per_stream() {
    let mut cfg = device(GcStreamMode::PerStream).config().clone();
    let per_stream = cfg.spare_blocks_needed();
    cfg.ftl.gc_stream = GcStreamMode::Separate;
    let separate = cfg.spare_blocks_needed();
    // (streams - 1) more open blocks on each of the 2 dies.
    assert_eq!(per_stream - separate, (STREAMS as u64 - 1) * 2);
    // With one stream the modes are the same device.
    cfg.ftl.streams = 1;
    let one_separate = cfg.spare_blocks_needed();
    cfg.ftl.gc_stream = GcStreamMode::PerStream;
    assert_eq!(cfg.spare_blocks_needed(), one_separate);
}
