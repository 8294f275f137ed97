//! fio's random-read IOPS on the experiment's own file, beside flashlab's read ceiling: the
//! same pages (the heap's first `span_bytes`), the same page size, O_DIRECT through io_uring,
//! at QD1 and at the batched scan's depth, alternating in rounds as the ceiling does. Run only
//! where `fio` is installed (an absent binary is a value, not an error).
//!
//! At the batched scan's depth fio runs twice: sliding (a new read enters as each completes,
//! fio's plain `--iodepth`) and in awaited batches (`--iodepth_batch_submit` and
//! `--iodepth_batch_complete_min` equal to the depth: all of a batch submitted at once, the
//! next only once every read of it completed). The second is the most a reader that waits for
//! a whole batch before the next (P2's method as P2 wrote it) can reach on this disk.

use serde::Serialize;
use std::path::Path;
use std::process::Command;

/// Rounds of QD1, QD-N and QD-N awaited-batch fio runs.
const ROUNDS: u32 = 3;
/// Seconds of each fio run.
const RUN_SECONDS: u32 = 1;

/// How fio keeps `qd` reads in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// A new read as each completes (fio's `--iodepth` alone).
    Sliding,
    /// `qd` reads submitted together, the next `qd` once all of them completed.
    AwaitedBatches,
}

/// Where fio's read buffers live (`--iomem`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iomem {
    /// fio's default: `malloc`, plain 4 KiB pages.
    Malloc,
    /// `shmhuge`: a System V segment on the kernel's reserved huge pages (hugetlb), the
    /// counterpart of flashlab's page images on huge pages (blockdev's `set_huge_pages`).
    ShmHuge,
}

/// Whether fio can place `qd` buffers of `page_bytes` on reserved huge pages here (`Ok`), or
/// why not: the kernel's free hugetlb pages (`/proc/meminfo`) must hold them.
pub fn huge_buffers_fit(qd: usize, page_bytes: usize) -> Result<(), String> {
    let meminfo =
        std::fs::read_to_string("/proc/meminfo").map_err(|e| format!("/proc/meminfo: {e}"))?;
    huge_buffers_fit_in(&meminfo, qd, page_bytes)
}

fn huge_buffers_fit_in(meminfo: &str, qd: usize, page_bytes: usize) -> Result<(), String> {
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().next()?.parse().ok()
    };
    let (Some(free), Some(kib)) = (field("HugePages_Free:"), field("Hugepagesize:")) else {
        return Err("the kernel reports no hugetlb pages (/proc/meminfo)".into());
    };
    // fio rounds its buffer area (qd buffers and a page of alignment) up to whole huge pages.
    let need = ((qd * page_bytes + 4096) as u64).div_ceil((kib * 1024).max(1));
    if free < need {
        return Err(format!(
            "{free} free hugetlb pages, fio's {qd} buffers need {need} (as root: sysctl vm.nr_hugepages={})",
            need.max(16)
        ));
    }
    Ok(())
}

/// fio's IOPS at QD1 and QD `depth` on one file.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FioRates {
    pub iops_qd1: f64,
    pub iops_qdn: f64,
    /// QD `depth` in awaited batches ([`Queue::AwaitedBatches`]).
    pub iops_qdn_batches: f64,
}

impl FioRates {
    pub fn ratio(&self) -> f64 {
        self.iops_qdn / self.iops_qd1.max(1e-12)
    }
    /// Awaited batches' IOPS over sliding QD `depth`'s: the share of fio's ratio a reader that
    /// waits for each whole batch can reach at most on this disk.
    pub fn batches_over_qdn(&self) -> f64 {
        self.iops_qdn_batches / self.iops_qdn.max(1e-12)
    }
}

/// What became of the fio comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum FioOutcome {
    Measured(FioRates),
    /// fio is not installed (or not on PATH).
    NotInstalled,
    /// fio ran but failed, or printed what we could not read: why.
    Failed(String),
}

/// Random reads of `page_bytes` over the first `span_bytes` of `file` at QD1 and QD `depth`.
pub fn measure(file: &Path, page_bytes: usize, span_bytes: u64, depth: usize) -> FioOutcome {
    let (mut qd1, mut qdn, mut batches) = ((0u64, 0.0f64), (0u64, 0.0f64), (0u64, 0.0f64));
    for _ in 0..ROUNDS {
        let runs = [
            (1, Queue::Sliding, &mut qd1),
            (depth, Queue::Sliding, &mut qdn),
            (depth, Queue::AwaitedBatches, &mut batches),
        ];
        for (qd, queue, acc) in runs {
            let job = Job {
                file,
                page_bytes,
                span_bytes,
                qd,
                queue,
                iomem: Iomem::Malloc,
            };
            match job.run_for(RUN_SECONDS * 1000) {
                Ok((ios, seconds)) => {
                    acc.0 += ios;
                    acc.1 += seconds;
                }
                Err(outcome) => return outcome,
            }
        }
    }
    let iops = |(ios, s): (u64, f64)| ios as f64 / s.max(1e-9);
    FioOutcome::Measured(FioRates {
        iops_qd1: iops(qd1),
        iops_qdn: iops(qdn),
        iops_qdn_batches: iops(batches),
    })
}

/// fio's IOPS of one run of `ms` milliseconds at QD `qd` (random `page_bytes` reads over the
/// first `span_bytes` of `file`) into buffers where `iomem` says, or why there is none.
pub fn iops(
    file: &Path,
    page_bytes: usize,
    span_bytes: u64,
    qd: usize,
    ms: u32,
    iomem: Iomem,
) -> Result<f64, FioOutcome> {
    let job = Job {
        file,
        page_bytes,
        span_bytes,
        qd,
        queue: Queue::Sliding,
        iomem,
    };
    let (ios, s) = job.run_for(ms.max(1))?;
    Ok(ios as f64 / s.max(1e-9))
}

/// One fio job: random `page_bytes` reads over the first `span_bytes` of `file`, `qd` in
/// flight as `queue` says.
struct Job<'a> {
    file: &'a Path,
    page_bytes: usize,
    span_bytes: u64,
    qd: usize,
    queue: Queue,
    iomem: Iomem,
}

impl Job<'_> {
    /// fio's arguments for a run of `ms` milliseconds.
    fn args(&self, ms: u32) -> Vec<String> {
        assert!(self.qd >= 1 && self.page_bytes > 0, "a job reads pages");
        let span = self.span_bytes - self.span_bytes % self.page_bytes as u64;
        let mut a = vec![
            "--name=ceiling".to_string(),
            format!("--filename={}", self.file.display()),
            format!("--size={span}"),
            "--rw=randread".into(),
            format!("--bs={}", self.page_bytes),
            "--direct=1".into(),
            "--ioengine=io_uring".into(),
            "--time_based".into(),
            format!("--iodepth={}", self.qd),
        ];
        if self.queue == Queue::AwaitedBatches {
            a.push(format!("--iodepth_batch_submit={}", self.qd));
            a.push(format!("--iodepth_batch_complete_min={}", self.qd));
        }
        if self.iomem == Iomem::ShmHuge {
            a.push("--iomem=shmhuge".into());
        }
        a.push(format!("--runtime={ms}ms"));
        a.push("--output-format=json".into());
        a
    }

    /// One fio run of `ms` milliseconds: (reads, seconds).
    fn run_for(&self, ms: u32) -> Result<(u64, f64), FioOutcome> {
        let out = Command::new("fio").args(self.args(ms)).output();
        let out = match out {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(FioOutcome::NotInstalled)
            }
            Err(e) => return Err(FioOutcome::Failed(format!("running fio: {e}"))),
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(FioOutcome::Failed(format!(
                "fio exited with {}: {}",
                out.status,
                err.trim()
            )));
        }
        parse(&out.stdout).ok_or_else(|| {
            FioOutcome::Failed("fio's JSON has no jobs[0].read.total_ios / runtime".into())
        })
    }
}

/// (reads, seconds) of fio's JSON output (`jobs[0].read.total_ios`, `.runtime` in ms).
fn parse(json: &[u8]) -> Option<(u64, f64)> {
    // fio may print notices before its JSON object.
    let start = json.iter().position(|&b| b == b'{')?;
    let v: serde_json::Value = serde_json::from_slice(&json[start..]).ok()?;
    let read = v.get("jobs")?.get(0)?.get("read")?;
    let ios = read.get("total_ios")?.as_u64()?;
    let ms = read.get("runtime")?.as_f64()?;
    (ios > 0 && ms > 0.0).then_some((ios, ms / 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_reads_and_seconds_after_a_notice_and_refuses_empty_runs() {
        let out = br#"note: both iodepth >= 1 and synchronous I/O engine
{"jobs": [{"read": {"total_ios": 12000, "runtime": 1500, "iops": 8000.0}}]}"#;
        assert_eq!(parse(out), Some((12000, 1.5)));
        assert_eq!(
            parse(br#"{"jobs": [{"read": {"total_ios": 0, "runtime": 1000}}]}"#),
            None
        );
        assert_eq!(parse(b"fio: failed"), None);
        let r = FioRates {
            iops_qd1: 10_000.0,
            iops_qdn: 40_000.0,
            iops_qdn_batches: 30_000.0,
        };
        assert_eq!(r.ratio(), 4.0);
        assert_eq!(r.batches_over_qdn(), 0.75);
    }

    #[test]
    fn awaited_batches_submit_and_complete_the_whole_depth_and_sliding_runs_do_not() {
        let job = |qd, queue| Job {
            file: Path::new("f.dev"),
            page_bytes: 8192,
            span_bytes: 8192 * 10 + 100,
            qd,
            queue,
            iomem: Iomem::Malloc,
        };
        let batches = job(50, Queue::AwaitedBatches).args(700);
        for want in [
            "--iodepth=50",
            "--iodepth_batch_submit=50",
            "--iodepth_batch_complete_min=50",
            "--size=81920",
            "--bs=8192",
            "--runtime=700ms",
        ] {
            assert!(batches.iter().any(|a| a == want), "{want}: {batches:?}");
        }
        let sliding = job(50, Queue::Sliding).args(700);
        assert!(sliding.iter().any(|a| a == "--iodepth=50"), "{sliding:?}");
        assert!(
            !sliding.iter().any(|a| a.starts_with("--iodepth_batch")),
            "{sliding:?}"
        );
        assert_eq!(sliding.len() + 2, batches.len());
        assert!(
            !sliding.iter().any(|a| a.starts_with("--iomem")),
            "fio's default"
        );
        let huge = Job {
            iomem: Iomem::ShmHuge,
            ..job(50, Queue::Sliding)
        };
        assert!(huge.args(700).iter().any(|a| a == "--iomem=shmhuge"));
    }

    #[test]
    fn huge_buffers_fit_only_in_enough_free_hugetlb_pages_and_say_why_not() {
        let meminfo = |free: u64| {
            format!("MemTotal: 100 kB\nHugePages_Total: 16\nHugePages_Free: {free}\nHugepagesize: 2048 kB\n")
        };
        // 50 buffers of 8 KiB and a page of alignment: one 2 MiB page.
        assert_eq!(huge_buffers_fit_in(&meminfo(1), 50, 8192), Ok(()));
        let e = huge_buffers_fit_in(&meminfo(0), 50, 8192).unwrap_err();
        assert!(
            e.contains("0 free") && e.contains("need 1") && e.contains("vm.nr_hugepages"),
            "{e}"
        );
        // 256 buffers of 8 KiB (2 MiB) and the alignment page: two.
        assert!(huge_buffers_fit_in(&meminfo(1), 256, 8192).is_err());
        assert_eq!(huge_buffers_fit_in(&meminfo(2), 256, 8192), Ok(()));
        let e = huge_buffers_fit_in("MemTotal: 1 kB\n", 50, 8192).unwrap_err();
        assert!(e.contains("no hugetlb"), "{e}");
    }

    /// Where fio is installed, it takes the awaited-batch options and reads (a misspelt
    /// option fails the run).
    #[test]
    fn fio_takes_the_awaited_batch_options_where_installed() {
        // In the crate's directory, as the devices' files (a RAM file system refuses O_DIRECT).
        let dir = tempfile::tempdir_in(".").expect("tempdir");
        let file = dir.path().join("f.dev");
        std::fs::write(&file, vec![7u8; 8192 * 64]).expect("file");
        let job = Job {
            file: &file,
            page_bytes: 8192,
            span_bytes: 8192 * 64,
            qd: 8,
            queue: Queue::AwaitedBatches,
            iomem: Iomem::Malloc,
        };
        match job.run_for(200) {
            Ok((ios, seconds)) => assert!(ios > 0 && seconds > 0.0),
            Err(FioOutcome::NotInstalled) => {}
            Err(other) => panic!("fio refused the awaited-batch job: {other:?}"),
        }
        // Its buffers on reserved huge pages, where the kernel has them free.
        if huge_buffers_fit(8, 8192).is_ok() {
            let huge = Job {
                iomem: Iomem::ShmHuge,
                ..job
            };
            match huge.run_for(200) {
                Ok((ios, _)) => assert!(ios > 0),
                Err(FioOutcome::NotInstalled) => {}
                Err(other) => panic!("fio refused --iomem=shmhuge: {other:?}"),
            }
        }
    }
}
