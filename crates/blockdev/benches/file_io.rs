//! 4 KiB random reads on a `FileDevice` (O_DIRECT) at queue depth 1 (one `read` at a time)
//! versus batches of 32 through `submit` (io_uring). The device file (256 MiB, written in
//! full so reads reach the disk rather than file holes) lives under the target directory,
//! which must be on a disk file system. Throughput is reported in I/Os per second.
//! Offsets come from ChaCha8Rng seed 42.

use blockdev::{BlockDevice, FileDevice, FileOptions, Io, WriteHint};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

const PB: usize = 4096;
const PAGES: u64 = 256 << 20 >> 12;
const BATCH: usize = 32;

fn device(dir: &std::path::Path) -> FileDevice {
    let opts = FileOptions {
        queue_depth: BATCH as u32,
        ..FileOptions::default()
    };
    let mut dev = FileDevice::create(&dir.join("bench.img"), PAGES, PB, opts)
        .expect("create the bench device on a disk file system");
    let chunk = vec![0xa5u8; 256 * PB];
    for p in (0..PAGES).step_by(256) {
        dev.write(p, &chunk, WriteHint::NONE).expect("fill");
    }
    dev.flush().expect("flush");
    dev
}

fn random_reads(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let mut dev = device(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut g = c.benchmark_group("file_4k_random_read");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));

    g.throughput(Throughput::Elements(1));
    let mut buf = vec![0u8; PB];
    g.bench_function("qd1_read", |b| {
        b.iter(|| {
            let page = rng.gen_range(0..PAGES);
            dev.read(page, &mut buf).expect("read");
        })
    });

    g.throughput(Throughput::Elements(BATCH as u64));
    let mut bufs = vec![vec![0u8; PB]; BATCH];
    g.bench_function("submit_batch32", |b| {
        b.iter(|| {
            let mut batch: Vec<Io> = bufs
                .iter_mut()
                .map(|buf| Io::Read {
                    page: rng.gen_range(0..PAGES),
                    buf,
                })
                .collect();
            dev.submit(&mut batch).expect("batch");
        })
    });
    g.finish();
}

criterion_group!(benches, random_reads);
criterion_main!(benches);
