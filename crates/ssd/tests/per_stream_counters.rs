//! Host pages written are counted per stream, through every write entry point, and a refused
//! write (out of range, no such stream) counts nothing.

mod common;

use ssd::{Lpn, SimTime, Ssd, StreamId};

fn device(streams: u16) -> Ssd {
    let mut cfg = common::two_dies(24, 8);
    // Room for a host and a GC open block per stream on each die (gc_stream = per_stream).
    cfg.ftl.op = 0.6;
    cfg.ftl.streams = streams;
    cfg.ftl.data = ssd::DataMode::Payloads;
    Ssd::new(cfg).unwrap()
}

#[test]
fn each_stream_counts_its_own_host_pages() {
    let mut d = device(3);
    assert_eq!(d.host_pages_written_by_stream(), &[0, 0, 0]);
    let t = SimTime::ZERO;
    d.write(Lpn(0), 4, StreamId(0), t).unwrap();
    d.write_tags(Lpn(10), &[7, 8], StreamId(2), t).unwrap();
    let pb = d.page_bytes();
    d.write_data(Lpn(20), &vec![1u8; 3 * pb], StreamId(1), t)
        .unwrap();
    d.write(Lpn(0), 1, StreamId(2), t).unwrap();
    assert_eq!(d.host_pages_written_by_stream(), &[4, 3, 3]);
    // Refused writes count nothing.
    assert!(d.write(Lpn(0), 1, StreamId(3), t).is_err());
    assert!(d.write(Lpn(d.logical_pages()), 1, StreamId(1), t).is_err());
    assert_eq!(d.host_pages_written_by_stream(), &[4, 3, 3]);
    let sum: u64 = d.host_pages_written_by_stream().iter().sum();
    assert_eq!(sum, d.stats().host_pages_written);
}

/// GC copies are counted per stream of the block they leave: a stream of pages written once
/// and never overwritten holds no victim worth taking, and under `per_stream` GC the counts
/// add up to the device's total.
#[test]
fn gc_copies_are_counted_on_the_stream_whose_block_held_them() {
    let mut d = device(2);
    assert_eq!(d.gc_pages_copied_by_stream(), vec![0, 0]);
    let t = SimTime::ZERO;
    let logical = d.logical_pages();
    let cold = logical / 2;
    // Stream 1: the lower half written once.
    d.write(Lpn(0), cold as u32, StreamId(1), t).unwrap();
    // Stream 0: the upper half overwritten over and over in a scattered order.
    let hot = logical - cold;
    let mut x = 1u64;
    for _ in 0..hot * 12 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        d.write(Lpn(cold + (x >> 33) % hot), 1, StreamId(0), t)
            .unwrap();
    }
    let by_stream = d.gc_pages_copied_by_stream();
    let total = d.stats().gc_pages_copied;
    assert!(total > 0, "the hot stream made GC copy pages");
    assert_eq!(by_stream.iter().sum::<u64>(), total);
    assert_eq!(
        by_stream[1], 0,
        "the cold stream's full blocks were never victims"
    );
    assert_eq!(by_stream[0], total);
}
