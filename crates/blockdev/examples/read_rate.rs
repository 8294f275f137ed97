//! Random page reads on an existing file through `FileDevice`, at QD1 (`read`), in batches of
//! `depth` (`submit`, the batched scan's path) and with `depth` kept in flight (`read_queued`,
//! fio's `iodepth`): IOPS of each, to set beside fio's on the same file.
//!
//! Usage: `read_rate FILE PAGE_BYTES SPAN_PAGES DEPTH IOS [ROUNDS] [MODES] [RING]`, MODES a comma list
//! of `qd1`, `batched`, `queued` (default all three; one alone, to profile one path), and RING
//! the ring's setup (`plain`, `coop`, `defer`, `sqpoll`: [`blockdev::RingSetup`]; default plain).

use blockdev::{BlockDevice, FileDevice, FileOptions, Io, Lock, RingSetup};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

struct Run {
    dev: FileDevice,
    rng: ChaCha8Rng,
    page_bytes: usize,
    span: u64,
    depth: usize,
    ios: u64,
}

impl Run {
    fn page(&mut self) -> u64 {
        self.rng.gen_range(0..self.span)
    }

    /// IOPS of `ios` reads one at a time.
    fn qd1(&mut self) -> Result<f64, blockdev::DevError> {
        let mut buf = vec![0u8; self.page_bytes];
        let t = Instant::now();
        for _ in 0..self.ios {
            let p = self.page();
            self.dev.read(p, &mut buf)?;
        }
        Ok(self.ios as f64 / t.elapsed().as_secs_f64())
    }

    /// IOPS of awaited batches of `depth` reads.
    fn batched(&mut self) -> Result<f64, blockdev::DevError> {
        let mut bufs = vec![vec![0u8; self.page_bytes]; self.depth];
        let batches = self.ios / self.depth as u64;
        let t = Instant::now();
        for _ in 0..batches {
            let pages: Vec<u64> = (0..self.depth).map(|_| self.page()).collect();
            let mut batch: Vec<Io> = bufs
                .iter_mut()
                .zip(pages)
                .map(|(buf, page)| Io::Read { page, buf })
                .collect();
            self.dev.submit(&mut batch)?;
        }
        Ok((batches * self.depth as u64) as f64 / t.elapsed().as_secs_f64())
    }

    /// IOPS of `ios` reads with `depth` kept in flight.
    fn queued(&mut self) -> Result<f64, blockdev::DevError> {
        let pages: Vec<u64> = (0..self.ios).map(|_| self.page()).collect();
        let t = Instant::now();
        let done = self.dev.read_queued(&mut pages.into_iter(), self.depth)?;
        Ok(done as f64 / t.elapsed().as_secs_f64())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        return Err(
            "usage: read_rate FILE PAGE_BYTES SPAN_PAGES DEPTH IOS [ROUNDS] [MODES] [RING]".into(),
        );
    }
    let page_bytes: usize = args[1].parse()?;
    let ring = args.get(7).map_or("plain", String::as_str);
    let ring_setup = RingSetup::parse(ring)
        .ok_or_else(|| format!("unknown ring setup {ring}: plain, coop, defer or sqpoll"))?;
    let opts = FileOptions {
        ring_setup,
        queue_depth: 64,
        page_bytes,
        lock: Lock::Shared,
        ..FileOptions::default()
    };
    let dev = FileDevice::open(std::path::Path::new(&args[0]), opts)?;
    let span = args[2].parse::<u64>()?.min(dev.capacity_pages());
    let mut run = Run {
        dev,
        rng: ChaCha8Rng::seed_from_u64(7),
        page_bytes,
        span,
        depth: args[3].parse()?,
        ios: args[4].parse()?,
    };
    let rounds: u32 = args.get(5).map_or(Ok(3), |s| s.parse())?;
    let modes = args.get(6).map_or("qd1,batched,queued", String::as_str);
    for _ in 0..rounds {
        let mut line = Vec::new();
        for mode in modes.split(',') {
            let iops = match mode {
                "qd1" => run.qd1()?,
                "batched" => run.batched()?,
                "queued" => run.queued()?,
                other => return Err(format!("unknown mode {other}: qd1, batched or queued").into()),
            };
            line.push(format!("{mode} {iops:.0}"));
        }
        println!("{} (IOPS, depth {})", line.join(" "), run.depth);
    }
    Ok(())
}
