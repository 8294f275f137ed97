//! fio's random-read IOPS on the experiment's own file, beside flashlab's read ceiling: the
//! same pages (the heap's first `span_bytes`), the same page size, O_DIRECT through io_uring,
//! at QD1 and at the batched scan's depth, alternating in rounds as the ceiling does. Run only
//! where `fio` is installed (an absent binary is a value, not an error).

use serde::Serialize;
use std::path::Path;
use std::process::Command;

/// Rounds of QD1 then QD-N fio runs.
const ROUNDS: u32 = 3;
/// Seconds of each fio run.
const RUN_SECONDS: u32 = 1;

/// fio's IOPS at QD1 and QD `depth` on one file.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FioRates {
    pub iops_qd1: f64,
    pub iops_qdn: f64,
}

impl FioRates {
    pub fn ratio(&self) -> f64 {
        self.iops_qdn / self.iops_qd1.max(1e-12)
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
    let (mut qd1, mut qdn) = ((0u64, 0.0f64), (0u64, 0.0f64));
    for _ in 0..ROUNDS {
        for (qd, acc) in [(1, &mut qd1), (depth, &mut qdn)] {
            match run(file, page_bytes, span_bytes, qd) {
                Ok((ios, seconds)) => {
                    acc.0 += ios;
                    acc.1 += seconds;
                }
                Err(outcome) => return outcome,
            }
        }
    }
    FioOutcome::Measured(FioRates {
        iops_qd1: qd1.0 as f64 / qd1.1.max(1e-9),
        iops_qdn: qdn.0 as f64 / qdn.1.max(1e-9),
    })
}

/// fio's IOPS of one run of `ms` milliseconds at QD `qd` (random `page_bytes` reads over the
/// first `span_bytes` of `file`), or why there is none.
pub fn iops(
    file: &Path,
    page_bytes: usize,
    span_bytes: u64,
    qd: usize,
    ms: u32,
) -> Result<f64, FioOutcome> {
    let (ios, s) = run_for(file, page_bytes, span_bytes, qd, ms.max(1))?;
    Ok(ios as f64 / s.max(1e-9))
}

/// One fio run of `RUN_SECONDS`: (reads, seconds).
fn run(
    file: &Path,
    page_bytes: usize,
    span_bytes: u64,
    qd: usize,
) -> Result<(u64, f64), FioOutcome> {
    run_for(file, page_bytes, span_bytes, qd, RUN_SECONDS * 1000)
}

/// One fio run of `ms` milliseconds: (reads, seconds).
fn run_for(
    file: &Path,
    page_bytes: usize,
    span_bytes: u64,
    qd: usize,
    ms: u32,
) -> Result<(u64, f64), FioOutcome> {
    let span = span_bytes - span_bytes % page_bytes as u64;
    let out = Command::new("fio")
        .arg("--name=ceiling")
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--size={span}"))
        .arg("--rw=randread")
        .arg(format!("--bs={page_bytes}"))
        .args(["--direct=1", "--ioengine=io_uring", "--time_based"])
        .arg(format!("--iodepth={qd}"))
        .arg(format!("--runtime={ms}ms"))
        .arg("--output-format=json")
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FioOutcome::NotInstalled),
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
        };
        assert_eq!(r.ratio(), 4.0);
    }
}
