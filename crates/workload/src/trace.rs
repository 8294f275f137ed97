//! Block-trace readers: stream a trace file (plain or .gz/.bz2/.xz/.zst), parse each line by
//! its format, and map byte addresses onto the device.
//!
//! Formats (byte offsets and sizes after parsing; times in ns):
//! - `msr`: MSR Cambridge CSV `Timestamp(100 ns ticks),Hostname,Disk,Type(Read|Write),Offset(B),Size(B),ResponseTime`
//! - `spc`: SPC/UMass ASCII `ASU,LBA(512 B sectors),Size(B),Opcode(r|w),Timestamp(s)`
//! - `disksim`: DiskSim ASCII (as MQSim uses) `time(ns) device LBA(sectors) size(sectors) type(1=read,0=write)`
//! - `systor`: SNIA SYSTOR'17 CSV `Timestamp(s),Response,IOType(R|W),LUN,Offset(B),Size(B)` (header skipped)
//! - `tencent`: Tencent CBS CSV `Timestamp(s),Offset(sectors),Size(sectors),IOType(0=read,1=write),VolumeID`
//! - `blkparse`: blkparse events `pid D|C op offset(B) size(B) time(s) dur(s) sync`; only `D`
//!   (dispatch) events are requests; `read`, `write`, `discard` (a trim); flushes are skipped.
//!
//! Blank lines and lines starting with `#` are skipped everywhere; zero-size requests too.
//!
//! Mapping ([`LbaMapping`]): a request covers pages `offset / page .. ceil((offset+size) / page)`.
//! `Wrap` takes the first page modulo the device's pages; `Scale` maps `0..max_byte`
//! proportionally onto the device. Either way a request crossing the device's end is clipped.

use crate::lines::Lines;
use crate::{ClipCount, LbaMapping, OpKind, Request, Target, WorkloadError};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    Msr,
    Spc,
    Disksim,
    Systor,
    Tencent,
    Blkparse,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 6] = [
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Disksim,
        TraceFormat::Systor,
        TraceFormat::Tencent,
        TraceFormat::Blkparse,
    ];

    pub fn parse(s: &str) -> Option<TraceFormat> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name() == s.to_ascii_lowercase())
    }

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Systor => "systor",
            TraceFormat::Tencent => "tencent",
            TraceFormat::Blkparse => "blkparse",
        }
    }
}

/// One parsed trace record, in bytes and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub op: OpKind,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    pub time_ns: Option<u64>,
}

/// Parse one line. `Ok(None)`: a line that is not a request (header, blank, comment, skipped
/// event). `Err(reason)`: malformed, the reason names the field and value.
pub fn parse_line(format: TraceFormat, line: &str) -> Result<Option<Record>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let rec = match format {
        TraceFormat::Msr => msr(&fields(line, ',', 6)?)?,
        TraceFormat::Spc => spc(&fields(line, ',', 5)?)?,
        TraceFormat::Disksim => disksim(&fields_ws(line, 5)?)?,
        TraceFormat::Systor => {
            if line.starts_with("Timestamp") {
                return Ok(None);
            }
            systor(&fields(line, ',', 6)?)?
        }
        TraceFormat::Tencent => tencent(&fields(line, ',', 4)?)?,
        TraceFormat::Blkparse => match blkparse(&fields_ws(line, 6)?)? {
            Some(r) => r,
            None => return Ok(None),
        },
    };
    Ok((rec.size_bytes > 0).then_some(rec))
}

fn fields(line: &str, sep: char, min: usize) -> Result<Vec<&str>, String> {
    let f: Vec<&str> = line.split(sep).map(str::trim).collect();
    if f.len() < min {
        return Err(format!(
            "expected at least {min} `{sep}`-separated fields, found {}",
            f.len()
        ));
    }
    Ok(f)
}

fn fields_ws(line: &str, min: usize) -> Result<Vec<&str>, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < min {
        return Err(format!(
            "expected at least {min} whitespace-separated fields, found {}",
            f.len()
        ));
    }
    Ok(f)
}

fn uint(f: &[&str], i: usize, name: &str) -> Result<u64, String> {
    f[i].parse::<u64>().map_err(|_| {
        format!(
            "field {} ({name}) `{}` is not an unsigned integer",
            i + 1,
            f[i]
        )
    })
}

fn seconds_ns(f: &[&str], i: usize, name: &str) -> Result<u64, String> {
    let x: f64 = f[i]
        .parse()
        .map_err(|_| format!("field {} ({name}) `{}` is not a number", i + 1, f[i]))?;
    if !(0.0..1.8e10).contains(&x) {
        return Err(format!(
            "field {} ({name}) `{}` is not a time in seconds",
            i + 1,
            f[i]
        ));
    }
    Ok((x * 1e9) as u64)
}

fn mul(a: u64, b: u64, name: &str) -> Result<u64, String> {
    a.checked_mul(b)
        .ok_or_else(|| format!("{name} {a} x {b} overflows"))
}

fn op_word(s: &str, i: usize) -> Result<OpKind, String> {
    match s.to_ascii_lowercase().as_str() {
        "read" | "r" => Ok(OpKind::Read),
        "write" | "w" => Ok(OpKind::Write),
        _ => Err(format!(
            "field {} (type) `{s}` is not Read/Write (R/W)",
            i + 1
        )),
    }
}

fn msr(f: &[&str]) -> Result<Record, String> {
    Ok(Record {
        time_ns: Some(mul(uint(f, 0, "timestamp")?, 100, "timestamp")?),
        op: op_word(f[3], 3)?,
        offset_bytes: uint(f, 4, "offset")?,
        size_bytes: uint(f, 5, "size")?,
    })
}

fn spc(f: &[&str]) -> Result<Record, String> {
    Ok(Record {
        offset_bytes: mul(uint(f, 1, "LBA")?, 512, "LBA")?,
        size_bytes: uint(f, 2, "size")?,
        op: op_word(f[3], 3)?,
        time_ns: Some(seconds_ns(f, 4, "timestamp")?),
    })
}

fn disksim(f: &[&str]) -> Result<Record, String> {
    let t: f64 = f[0]
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("field 1 (time ns) `{}` is not a time", f[0]))?;
    let op = match f[4] {
        "1" => OpKind::Read,
        "0" => OpKind::Write,
        other => {
            return Err(format!(
                "field 5 (type) `{other}` is not 1 (read) or 0 (write)"
            ))
        }
    };
    Ok(Record {
        time_ns: Some(t as u64),
        offset_bytes: mul(uint(f, 2, "LBA")?, 512, "LBA")?,
        size_bytes: mul(uint(f, 3, "size")?, 512, "size")?,
        op,
    })
}

fn systor(f: &[&str]) -> Result<Record, String> {
    Ok(Record {
        time_ns: Some(seconds_ns(f, 0, "timestamp")?),
        op: op_word(f[2], 2)?,
        offset_bytes: uint(f, 4, "offset")?,
        size_bytes: uint(f, 5, "size")?,
    })
}

fn tencent(f: &[&str]) -> Result<Record, String> {
    let op = match f[3] {
        "0" => OpKind::Read,
        "1" => OpKind::Write,
        other => {
            return Err(format!(
                "field 4 (IOType) `{other}` is not 0 (read) or 1 (write)"
            ))
        }
    };
    Ok(Record {
        time_ns: Some(mul(uint(f, 0, "timestamp")?, 1_000_000_000, "timestamp")?),
        offset_bytes: mul(uint(f, 1, "offset")?, 512, "offset")?,
        size_bytes: mul(uint(f, 2, "size")?, 512, "size")?,
        op,
    })
}

fn blkparse(f: &[&str]) -> Result<Option<Record>, String> {
    match f[1] {
        "D" => {}
        "C" | "Q" | "I" | "G" | "M" | "P" | "U" | "A" | "X" => return Ok(None),
        other => {
            return Err(format!(
                "field 2 (action) `{other}` is not a blkparse action (D, C, ...)"
            ))
        }
    }
    let op = match f[2] {
        "read" => OpKind::Read,
        "write" => OpKind::Write,
        "discard" => OpKind::Trim,
        "flush" | "sync" => return Ok(None),
        other => {
            return Err(format!(
                "field 3 (operation) `{other}` is not read, write, discard or flush"
            ))
        }
    };
    Ok(Some(Record {
        op,
        offset_bytes: uint(f, 3, "offset")?,
        size_bytes: uint(f, 4, "size")?,
        time_ns: Some(seconds_ns(f, 5, "time")?),
    }))
}

/// Open a trace file (as `bounded::open`: no wait on a FIFO, no endless device), decompressing
/// by extension.
pub fn open_text(path: &Path) -> Result<Box<dyn BufRead + Send>, WorkloadError> {
    let file = bounded::open(path).map_err(|source| WorkloadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.to_string_lossy().to_ascii_lowercase();
    let raw: Box<dyn Read + Send> = if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else if name.ends_with(".bz2") {
        Box::new(bzip2::read::MultiBzDecoder::new(file))
    } else if name.ends_with(".xz") {
        Box::new(xz2::read::XzDecoder::new_multi_decoder(file))
    } else if name.ends_with(".zst") {
        let d = zstd::stream::read::Decoder::new(file).map_err(|source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Box::new(d)
    } else {
        Box::new(file)
    };
    Ok(Box::new(BufReader::with_capacity(1 << 16, raw)))
}

/// Streams the records of a trace file with their line numbers.
pub struct Records {
    format: TraceFormat,
    lines: Lines,
}

impl Records {
    pub fn open(path: &Path, format: TraceFormat) -> Result<Records, WorkloadError> {
        Ok(Records {
            format,
            lines: Lines::new(path, open_text(path)?),
        })
    }
}

impl Iterator for Records {
    type Item = Result<Record, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let format = self.format;
        let r = self.lines.next_parsed(
            "line is not UTF-8 text (is this the right file and format?)",
            |text| parse_line(format, text),
        )?;
        Some(r.map_err(|e| WorkloadError::from_line(&self.lines, e)))
    }
}

/// A trace record placed on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapped {
    pub lpn: u64,
    pub pages: u32,
    /// The record asked for more pages than `pages`: it ran past the device's last logical
    /// page (or beyond 2^32 - 1 pages) and was cut there.
    pub clipped: bool,
}

/// Map a record's bytes to a first page and a page count on `target`, clipped at the
/// device's end (`clipped` says when).
pub fn map_record(r: &Record, target: Target, mapping: LbaMapping) -> Mapped {
    let pb = target.page_bytes as u64;
    let n = target.logical_pages;
    let first = r.offset_bytes / pb;
    let end = r.offset_bytes.saturating_add(r.size_bytes).div_ceil(pb);
    let asked = (end - first).max(1);
    let lpn = match mapping {
        LbaMapping::Wrap => first % n,
        LbaMapping::Scale { max_byte } => {
            let span = max_byte.div_ceil(pb).max(1);
            ((first.min(span - 1) as u128 * n as u128) / span as u128) as u64
        }
    };
    let pages = asked.min(n - lpn).min(u32::MAX as u64);
    Mapped {
        lpn,
        pages: pages as u32,
        clipped: pages < asked,
    }
}

/// A trace as a request stream on a device.
pub struct TraceReader {
    records: Records,
    target: Target,
    mapping: LbaMapping,
    clipped: ClipCount,
}

impl TraceReader {
    pub fn open(
        path: &Path,
        format: TraceFormat,
        target: Target,
        mapping: LbaMapping,
        clipped: ClipCount,
    ) -> Result<TraceReader, WorkloadError> {
        Ok(TraceReader {
            records: Records::open(path, format)?,
            target,
            mapping,
            clipped,
        })
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let r = match self.records.next()? {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let m = map_record(&r, self.target, self.mapping);
        if m.clipped {
            self.clipped.add_one();
        }
        Some(Ok(Request {
            op: r.op,
            lpn: m.lpn,
            pages: m.pages,
            stream: 0,
            arrival_ns: r.time_ns,
        }))
    }
}

/// The end of the highest byte range a trace touches (for `LbaMapping::Scale`).
pub fn scan_trace_span(path: &Path, format: TraceFormat) -> Result<u64, WorkloadError> {
    let mut max = 0u64;
    for r in Records::open(path, format)? {
        let r = r?;
        max = max.max(r.offset_bytes.saturating_add(r.size_bytes));
    }
    Ok(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(op: OpKind, off: u64, size: u64, t: u64) -> Option<Record> {
        Some(Record {
            op,
            offset_bytes: off,
            size_bytes: size,
            time_ns: Some(t),
        })
    }

    #[test]
    fn each_format_parses_a_real_line() {
        use OpKind::*;
        use TraceFormat::*;
        let cases = [
            (
                Msr,
                "128166385295514663,hm,0,Write,9056014336,2048,2833",
                rec(Write, 9056014336, 2048, 12816638529551466300),
            ),
            (
                Spc,
                "0,20941264,8192,W,0.551706",
                rec(Write, 20941264 * 512, 8192, 551706000),
            ),
            (
                Disksim,
                "938513000 4 264719034 16 0",
                rec(Write, 264719034 * 512, 8192, 938513000),
            ),
            (
                Disksim,
                "11413000 0 657728 16 1",
                rec(Read, 657728 * 512, 8192, 11413000),
            ),
            (
                Systor,
                "1456095145.133076000,0.000806000,R,0,899056122368,131072",
                rec(Read, 899056122368, 131072, 1456095145133076000),
            ),
            (
                Tencent,
                "1538323200,4247200,128,1,1058",
                rec(Write, 4247200 * 512, 65536, 1538323200000000000),
            ),
            (
                Blkparse,
                "39949 D write 299008 4096 0.5 0 False",
                rec(Write, 299008, 4096, 500000000),
            ),
            (
                Blkparse,
                "39949 D discard 0 8192 1.0 0 False",
                rec(Trim, 0, 8192, 1000000000),
            ),
        ];
        for (f, line, want) in cases {
            let got = parse_line(f, line).unwrap_or_else(|e| panic!("{f:?} {line}: {e}"));
            match (got, want) {
                (Some(g), Some(w)) if f == Systor => {
                    assert_eq!(
                        (g.op, g.offset_bytes, g.size_bytes),
                        (w.op, w.offset_bytes, w.size_bytes)
                    );
                    assert!(g.time_ns.unwrap().abs_diff(w.time_ns.unwrap()) < 1000);
                }
                (g, w) => assert_eq!(g, w, "{f:?} {line}"),
            }
        }
    }

    #[test]
    fn headers_blank_and_completion_lines_are_skipped() {
        assert_eq!(
            parse_line(
                TraceFormat::Systor,
                "Timestamp,Response,IOType,LUN,Offset,Size"
            ),
            Ok(None)
        );
        assert_eq!(parse_line(TraceFormat::Msr, "  "), Ok(None));
        assert_eq!(
            parse_line(TraceFormat::Blkparse, "0 C read 299008 4096 0.1 0.1 False"),
            Ok(None)
        );
    }

    #[test]
    fn malformed_lines_name_the_field() {
        for (f, line, needle) in [
            (TraceFormat::Msr, "1,hm,0,Write,abc,4096,1", "offset"),
            (TraceFormat::Msr, "1,hm,0,Erase,0,4096,1", "type"),
            (TraceFormat::Disksim, "1 2 3", "fields"),
            (TraceFormat::Tencent, "1,2,3,7,9", "IOType"),
            (TraceFormat::Spc, "0,1,2,w,-5", "timestamp"),
            (TraceFormat::Blkparse, "1 D frob 0 1 0 0 False", "operation"),
        ] {
            let e = parse_line(f, line).unwrap_err();
            assert!(e.contains(needle), "{f:?} `{line}`: {e}");
        }
    }

    #[test]
    fn mapping_wraps_scales_and_clips() {
        let t = Target {
            logical_pages: 100,
            page_bytes: 4096,
        };
        let r = Record {
            op: OpKind::Write,
            offset_bytes: 4096 * 250 + 100,
            size_bytes: 8192,
            time_ns: None,
        };
        let placed = |lpn, pages, clipped| Mapped {
            lpn,
            pages,
            clipped,
        };
        assert_eq!(map_record(&r, t, LbaMapping::Wrap), placed(50, 3, false));
        let s = LbaMapping::Scale {
            max_byte: 4096 * 1000,
        };
        assert_eq!(map_record(&r, t, s), placed(25, 3, false));
        let end = Record {
            offset_bytes: 4096 * 99,
            size_bytes: 4096 * 5,
            ..r
        };
        assert_eq!(map_record(&end, t, LbaMapping::Wrap), placed(99, 1, true));
        let huge = Record {
            offset_bytes: 0,
            size_bytes: 1_000_000_000_000_000,
            ..r
        };
        assert_eq!(map_record(&huge, t, LbaMapping::Wrap), placed(0, 100, true));
    }
}
