//! Page-reference traces for buffer-cache simulation: a stream of [`PageRef`]s (a read or a
//! write of one page id), decoded in constant memory from a file, plain or compressed (.gz,
//! .bz2, .xz, .zst: the opener of [`crate::trace`]).
//!
//! Formats ([`PageTraceFormat`]):
//! - `text`: ours, `R|W page_id` per line (`r`/`w` too);
//! - `arc`: the ARC traces' `.lis`, `start nblocks ignore req#`: reads of blocks
//!   `start .. start+nblocks-1`, in order (at most 2^32 blocks per line);
//! - `lirs`: one page number per line; lines starting with `*` are skipped;
//! - `u32be`, `u32le`, `u64be`: raw streams of integers, one read per integer. Byte order per
//!   file of `../shared/traces`: cache2k `*.u32be` big-endian; `cloudphysics_w106.u32be`
//!   *little*-endian despite its name (use `u32le`); scarab `*.u64be` big-endian;
//! - `block:FORMAT`: the block traces [`crate::trace`] reads (`msr`, `spc`, `disksim`, ...):
//!   each read or write touches its pages `offset / page .. ceil((offset + size) / page)`, in
//!   order; trims are skipped.
//!
//! In text formats blank lines and lines starting with `#` are skipped. Malformed input is a
//! [`PageTraceError`] naming the file and the line (text) or byte offset (binary) and what is
//! wrong; decoding stops there. Nothing in here panics on input.

use crate::trace::{open_text, parse_line};
use crate::{OpKind, TraceFormat, WorkloadError};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// One page reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRef {
    pub page: u64,
    pub write: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PageTraceFormat {
    Text,
    Arc,
    Lirs,
    U32Be,
    U32Le,
    U64Be,
    Block(TraceFormat),
}

impl PageTraceFormat {
    pub const HELP: &'static str =
        "text (R|W page), arc (.lis), lirs, u32be, u32le, u64be, block:FORMAT (FORMAT: msr, spc, disksim, systor, tencent, blkparse)";

    pub fn parse(s: &str) -> Option<PageTraceFormat> {
        let s = s.trim().to_ascii_lowercase();
        if let Some(block) = s.strip_prefix("block:") {
            return TraceFormat::parse(block).map(PageTraceFormat::Block);
        }
        Some(match s.as_str() {
            "text" => PageTraceFormat::Text,
            "arc" | "lis" => PageTraceFormat::Arc,
            "lirs" => PageTraceFormat::Lirs,
            "u32be" => PageTraceFormat::U32Be,
            "u32le" => PageTraceFormat::U32Le,
            "u64be" => PageTraceFormat::U64Be,
            _ => return None,
        })
    }

    pub fn name(self) -> String {
        match self {
            PageTraceFormat::Text => "text".into(),
            PageTraceFormat::Arc => "arc".into(),
            PageTraceFormat::Lirs => "lirs".into(),
            PageTraceFormat::U32Be => "u32be".into(),
            PageTraceFormat::U32Le => "u32le".into(),
            PageTraceFormat::U64Be => "u64be".into(),
            PageTraceFormat::Block(f) => format!("block:{}", f.name()),
        }
    }

    /// Bytes per record of the binary formats.
    fn record_bytes(self) -> Option<usize> {
        match self {
            PageTraceFormat::U32Be | PageTraceFormat::U32Le => Some(4),
            PageTraceFormat::U64Be => Some(8),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PageTraceError {
    #[error("cannot read trace {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    Line {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error("{path}: ends inside a record at byte {offset_bytes} ({got_bytes} of {record_bytes} bytes); is the format right?")]
    Truncated {
        path: PathBuf,
        offset_bytes: u64,
        record_bytes: usize,
        got_bytes: usize,
    },
    #[error(transparent)]
    Workload(#[from] WorkloadError),
}

/// Pages still to emit from one line (ARC run, block request).
#[derive(Clone, Copy)]
struct Run {
    next: u64,
    /// Pages left, this one included (>= 1).
    left: u64,
    write: bool,
}

/// A decoded page-reference stream; see the module docs.
pub struct PageRefs {
    path: PathBuf,
    format: PageTraceFormat,
    page_bytes: u64,
    input: Box<dyn BufRead + Send>,
    /// Lines read (text) or bytes read (binary).
    position: u64,
    buf: Vec<u8>,
    run: Option<Run>,
    done: bool,
}

impl PageRefs {
    /// Open `path` (decompressing by extension). `page_bytes` is the page size for
    /// `block:FORMAT` traces (ignored otherwise).
    pub fn open(
        path: &Path,
        format: PageTraceFormat,
        page_bytes: u32,
    ) -> Result<PageRefs, PageTraceError> {
        let input = open_text(path)?;
        Ok(PageRefs::from_reader(path, input, format, page_bytes))
    }

    /// Decode an already open stream; `name` appears in errors.
    pub fn from_reader(
        name: &Path,
        input: Box<dyn BufRead + Send>,
        format: PageTraceFormat,
        page_bytes: u32,
    ) -> PageRefs {
        PageRefs {
            path: name.to_path_buf(),
            format,
            page_bytes: page_bytes.max(1) as u64,
            input,
            position: 0,
            buf: Vec::with_capacity(256),
            run: None,
            done: false,
        }
    }

    fn fail(&mut self, reason: String) -> PageTraceError {
        self.done = true;
        PageTraceError::Line {
            path: self.path.clone(),
            line: self.position,
            reason,
        }
    }

    fn io(&mut self, source: std::io::Error) -> PageTraceError {
        self.done = true;
        PageTraceError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn next_binary(&mut self, n: usize) -> Option<Result<PageRef, PageTraceError>> {
        let mut rec = [0u8; 8];
        let mut got = 0;
        while got < n {
            match self.input.read(&mut rec[got..n]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Some(Err(self.io(e))),
            }
        }
        if got == 0 {
            return None;
        }
        let offset_bytes = self.position;
        self.position += got as u64;
        if got < n {
            self.done = true;
            return Some(Err(PageTraceError::Truncated {
                path: self.path.clone(),
                offset_bytes,
                record_bytes: n,
                got_bytes: got,
            }));
        }
        let page = match self.format {
            PageTraceFormat::U32Be => u32::from_be_bytes([rec[0], rec[1], rec[2], rec[3]]) as u64,
            PageTraceFormat::U32Le => u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]) as u64,
            _ => u64::from_be_bytes(rec),
        };
        Some(Ok(PageRef { page, write: false }))
    }

    /// Read lines until one yields references; `None` at the end.
    fn next_line(&mut self) -> Option<Result<PageRef, PageTraceError>> {
        loop {
            self.buf.clear();
            match self.input.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => self.position += 1,
                Err(e) => return Some(Err(self.io(e))),
            }
            let parsed = match std::str::from_utf8(&self.buf) {
                Ok(text) => decode_line(self.format, text, self.page_bytes),
                Err(_) => Err("line is not UTF-8 text (is this the right file and format?)".into()),
            };
            match parsed {
                Ok(Some(run)) => {
                    self.run = Some(run);
                    return self.next_from_run();
                }
                Ok(None) => continue,
                Err(reason) => return Some(Err(self.fail(reason))),
            }
        }
    }

    fn next_from_run(&mut self) -> Option<Result<PageRef, PageTraceError>> {
        let run = self.run.as_mut()?;
        let page = run.next;
        let write = run.write;
        run.left -= 1;
        if run.left == 0 {
            self.run = None;
        } else {
            run.next += 1; // no overflow: `page_run` checked the run's last page
        }
        Some(Ok(PageRef { page, write }))
    }
}

impl Iterator for PageRefs {
    type Item = Result<PageRef, PageTraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.run.is_some() {
            return self.next_from_run();
        }
        let r = match self.format.record_bytes() {
            Some(n) => self.next_binary(n),
            None => self.next_line(),
        };
        if r.is_none() {
            self.done = true;
        }
        r
    }
}

/// The most pages one line may reference (ARC runs, block requests).
const RUN_PAGES_MAX: u64 = 1 << 32;

/// Decode one text line into a run of pages (`Ok(None)`: nothing to reference).
fn decode_line(
    format: PageTraceFormat,
    line: &str,
    page_bytes: u64,
) -> Result<Option<Run>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    match format {
        PageTraceFormat::Text => {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 2 {
                return Err(format!("expected `R|W page_id`, found {} fields", f.len()));
            }
            let write = match f[0] {
                "R" | "r" => false,
                "W" | "w" => true,
                other => return Err(format!("field 1 (op) `{other}` is not R or W")),
            };
            let page = number(f[1], 2, "page id")?;
            page_run(page, 1, write).map(Some)
        }
        PageTraceFormat::Lirs => {
            if line.starts_with('*') {
                return Ok(None);
            }
            let page = number(line, 1, "page number")?;
            page_run(page, 1, false).map(Some)
        }
        PageTraceFormat::Arc => {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 2 {
                return Err(format!(
                    "expected `start nblocks ignore req#`, found {} fields",
                    f.len()
                ));
            }
            let start = number(f[0], 1, "start block")?;
            let n = number(f[1], 2, "nblocks")?;
            if n == 0 {
                return Ok(None);
            }
            page_run(start, n, false).map(Some)
        }
        PageTraceFormat::Block(tf) => match parse_line(tf, line)? {
            Some(r) if r.op != OpKind::Trim => {
                let first = r.offset_bytes / page_bytes;
                let end = r
                    .offset_bytes
                    .saturating_add(r.size_bytes)
                    .div_ceil(page_bytes);
                page_run(
                    first,
                    end.saturating_sub(first).max(1),
                    r.op == OpKind::Write,
                )
                .map(Some)
            }
            _ => Ok(None),
        },
        _ => Err("binary format decoded as text".into()),
    }
}

fn page_run(first: u64, pages: u64, write: bool) -> Result<Run, String> {
    if pages == 0 || pages > RUN_PAGES_MAX {
        return Err(format!(
            "{pages} pages in one line is more than {RUN_PAGES_MAX}; is the format right?"
        ));
    }
    first
        .checked_add(pages - 1)
        .ok_or_else(|| format!("pages {first} + {pages} overflow 64 bits"))?;
    Ok(Run {
        next: first,
        left: pages,
        write,
    })
}

fn number(s: &str, field: usize, name: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("field {field} ({name}) `{s}` is not an unsigned integer"))
}

/// Decode `bytes` as a whole trace (tests and fuzzing): every reference, or the first error.
pub fn decode_bytes(
    bytes: &[u8],
    format: PageTraceFormat,
    page_bytes: u32,
) -> Result<Vec<PageRef>, PageTraceError> {
    let input = Box::new(std::io::Cursor::new(bytes.to_vec()));
    PageRefs::from_reader(Path::new("<bytes>"), input, format, page_bytes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(pages: &[(u64, bool)]) -> Vec<PageRef> {
        pages
            .iter()
            .map(|&(page, write)| PageRef { page, write })
            .collect()
    }

    #[test]
    fn text_formats_decode() {
        let t = decode_bytes(b"R 5\n# c\n\nW 7\nr 1", PageTraceFormat::Text, 4096).unwrap();
        assert_eq!(t, refs(&[(5, false), (7, true), (1, false)]));
        let a = decode_bytes(b"10 3 0 1\n4 1 0 2\n", PageTraceFormat::Arc, 4096).unwrap();
        assert_eq!(
            a,
            refs(&[(10, false), (11, false), (12, false), (4, false)])
        );
        let l = decode_bytes(b"*\n3\n*\n9\n", PageTraceFormat::Lirs, 4096).unwrap();
        assert_eq!(l, refs(&[(3, false), (9, false)]));
        let b = decode_bytes(
            b"938513000 4 8 16 0\n",
            PageTraceFormat::Block(TraceFormat::Disksim),
            4096,
        )
        .unwrap();
        assert_eq!(
            b,
            refs(&[(1, true), (2, true)]),
            "sectors 8..24 = bytes 4096..12288"
        );
    }

    #[test]
    fn binary_formats_decode_in_their_byte_order() {
        let bytes = [0u8, 0, 1, 2, 3, 0, 0, 0];
        let be = decode_bytes(&bytes, PageTraceFormat::U32Be, 4096).unwrap();
        assert_eq!(be, refs(&[(0x102, false), (0x0300_0000, false)]));
        let le = decode_bytes(&bytes, PageTraceFormat::U32Le, 4096).unwrap();
        assert_eq!(le, refs(&[(0x0201_0000, false), (3, false)]));
        let w = decode_bytes(&bytes, PageTraceFormat::U64Be, 4096).unwrap();
        assert_eq!(w, refs(&[(0x0000_0102_0300_0000, false)]));
    }

    #[test]
    fn malformed_input_names_the_line_or_offset() {
        let e = decode_bytes(b"R 1\nX 2\n", PageTraceFormat::Text, 4096).unwrap_err();
        assert!(e.to_string().contains("<bytes>:2: field 1 (op) `X`"), "{e}");
        let e = decode_bytes(b"1 2 3 4\n5 x 0 0\n", PageTraceFormat::Arc, 4096).unwrap_err();
        assert!(e.to_string().contains(":2: field 2 (nblocks)"), "{e}");
        let e =
            decode_bytes(b"18446744073709551615 2 0 0", PageTraceFormat::Arc, 4096).unwrap_err();
        assert!(e.to_string().contains("overflow"), "{e}");
        let e = decode_bytes(&[1, 2, 3, 4, 5, 6], PageTraceFormat::U32Be, 4096).unwrap_err();
        assert!(e.to_string().contains("byte 4 (2 of 4 bytes)"), "{e}");
        let e = decode_bytes(b"-3\n", PageTraceFormat::Lirs, 4096).unwrap_err();
        assert!(e.to_string().contains(":1:"), "{e}");
    }

    #[test]
    fn formats_parse_by_name() {
        for f in [
            PageTraceFormat::Text,
            PageTraceFormat::Arc,
            PageTraceFormat::Lirs,
            PageTraceFormat::U32Be,
            PageTraceFormat::U32Le,
            PageTraceFormat::U64Be,
            PageTraceFormat::Block(TraceFormat::Msr),
        ] {
            assert_eq!(PageTraceFormat::parse(&f.name()), Some(f));
        }
        assert_eq!(PageTraceFormat::parse("block:nope"), None);
    }
}
