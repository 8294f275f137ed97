//! Random page reads on an existing file through `FileDevice`, at QD1 (`read`), in batches of
//! `depth` (`submit`, the batched scan's path) and with `depth` kept in flight (`read_queued`,
//! fio's `iodepth`): IOPS of each, to set beside fio's on the same file.
//!
//! Usage: `read_rate FILE PAGE_BYTES SPAN_PAGES DEPTH IOS [ROUNDS]`

use blockdev::{BlockDevice, FileDevice, FileOptions, Io, Lock};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        return Err("usage: read_rate FILE PAGE_BYTES SPAN_PAGES DEPTH IOS [ROUNDS]".into());
    }
    let page_bytes: usize = args[1].parse()?;
    let span: u64 = args[2].parse()?;
    let depth: usize = args[3].parse()?;
    let ios: u64 = args[4].parse()?;
    let rounds: u32 = args.get(5).map_or(Ok(3), |s| s.parse())?;
    let opts = FileOptions {
        queue_depth: 64,
        page_bytes,
        lock: Lock::Shared,
        ..FileOptions::default()
    };
    let mut dev = FileDevice::open(std::path::Path::new(&args[0]), opts)?;
    let span = span.min(dev.capacity_pages());
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..rounds {
        let mut buf = vec![0u8; page_bytes];
        let t = Instant::now();
        for _ in 0..ios {
            dev.read(rng.gen_range(0..span), &mut buf)?;
        }
        let qd1 = ios as f64 / t.elapsed().as_secs_f64();
        let mut bufs = vec![vec![0u8; page_bytes]; depth];
        let t = Instant::now();
        for _ in 0..ios / depth as u64 {
            let mut batch: Vec<Io> = bufs
                .iter_mut()
                .map(|buf| Io::Read {
                    page: rng.gen_range(0..span),
                    buf,
                })
                .collect();
            dev.submit(&mut batch)?;
        }
        let batched = (ios / depth as u64 * depth as u64) as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut pages = (0..ios).map(|_| rng.gen_range(0..span));
        let done = dev.read_queued(&mut pages, depth)?;
        let queued = done as f64 / t.elapsed().as_secs_f64();
        println!(
            "qd1 {qd1:.0} batched{depth} {batched:.0} queued{depth} {queued:.0} (IOPS; ratios {:.2} {:.2})",
            batched / qd1,
            queued / qd1
        );
    }
    Ok(())
}
