//! `gc_victim = "stream"`: a stream that needs a free block collects its own blocks, even
//! when another stream's blocks are the device-wide best victims; the default (`device`)
//! takes those. Both keep every page (invariants checked after every GC, data read back).

mod common;

use ssd::{GcStreamMode, GcVictimScope, Lpn, ReadPage, SimTime, Ssd, SsdConfig, StreamId};

fn config(scope: GcVictimScope) -> SsdConfig {
    let mut cfg = common::tiny(ssd::FtlKind::Page);
    cfg.ftl.streams = 2;
    cfg.ftl.op = 0.6;
    cfg.ftl.gc_stream = GcStreamMode::PerStream;
    cfg.ftl.gc_victim = scope;
    cfg
}

/// Stream 1 writes the lower quarter once; stream 0 then overwrites all of it but one page
/// per block (stream 1's blocks keep one valid page: the best victims on the device) and
/// churns the rest of the space. Returns the GC copies out of each stream's blocks.
fn run(scope: GcVictimScope) -> Vec<u64> {
    let mut d = Ssd::new(config(scope)).unwrap();
    let t = SimTime::ZERO;
    let logical = d.logical_pages();
    let ppb = 8;
    let cold = logical / 4 / ppb * ppb;
    let tags: Vec<u64> = (0..cold).map(|l| l + 1000).collect();
    d.write_tags(Lpn(0), &tags, StreamId(1), t).unwrap();
    for l in (0..cold).filter(|l| l % ppb != 0) {
        d.write(Lpn(l), 1, StreamId(0), t).unwrap();
    }
    let hot = logical - cold;
    let mut x = 7u64;
    for _ in 0..hot * 8 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        d.write(Lpn(cold + (x >> 33) % hot), 1, StreamId(0), t)
            .unwrap();
    }
    for l in (0..cold).step_by(ppb as usize) {
        let mut page = [ReadPage::Unwritten];
        d.read_tags(Lpn(l), &mut page, t).unwrap();
        assert_eq!(
            page,
            [ReadPage::Tag(l + 1000)],
            "stream 1's page {l} is kept"
        );
    }
    d.verify().unwrap();
    let by_stream = d.gc_pages_copied_by_stream();
    assert_eq!(by_stream.iter().sum::<u64>(), d.stats().gc_pages_copied);
    by_stream
}

#[test]
fn a_stream_collects_its_own_blocks_and_leaves_another_streams_better_victims() {
    let device = run(GcVictimScope::Device);
    let stream = run(GcVictimScope::Stream);
    assert!(
        device[1] > 0,
        "device-wide greedy takes stream 1's nearly empty blocks: {device:?}"
    );
    assert!(
        stream[0] > 0,
        "stream 0 collected its own blocks: {stream:?}"
    );
    assert_eq!(
        stream[1], 0,
        "stream 0 never took stream 1's blocks: {stream:?}"
    );
}

#[test]
fn with_one_stream_the_stream_scope_is_the_device_scope() {
    let run_one = |scope| {
        let mut cfg = config(scope);
        cfg.ftl.streams = 1;
        let mut d = Ssd::new(cfg).unwrap();
        let logical = d.logical_pages();
        let mut x = 3u64;
        for _ in 0..logical * 6 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            d.write(Lpn((x >> 33) % logical), 1, StreamId(0), SimTime::ZERO)
                .unwrap();
        }
        d.stats()
    };
    assert_eq!(
        run_one(GcVictimScope::Device),
        run_one(GcVictimScope::Stream)
    );
}

#[test]
fn a_shared_gc_stream_with_victims_per_stream_is_refused_by_name() {
    let mut cfg = config(GcVictimScope::Stream);
    cfg.ftl.gc_stream = GcStreamMode::Separate;
    let err = cfg.validate().unwrap_err().to_string();
    assert!(err.contains("ftl.gc_victim"), "{err}");
    cfg.ftl.gc_victim = GcVictimScope::Device;
    cfg.validate().unwrap();
}
