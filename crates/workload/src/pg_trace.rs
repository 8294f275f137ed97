//! PostgreSQL page-reference traces (`flashlab capture pg-tpcc`): format `pg` of
//! [`crate::cache_trace::PageTraceFormat`]. The format is documented in `docs/pg-trace.md`:
//!
//! ```text
//! # flashlab-pg-trace 1
//! # postgres: PostgreSQL 15.18 ...      (header: `# key: value` lines, any order)
//! R 16397 0 12        read reference: relfilenode, fork, block (ReadBuffer)
//! W 16397 0 12        dirtying reference (MarkBufferDirty)
//! X 0/1A2B3C8         one WAL insertion: the end LSN XLogInsert returned (hex hi/lo)
//! ```
//!
//! The first line must be the magic line; `#` lines anywhere are comments (the capture puts
//! its header first). A reference becomes the page id [`page_id`]; WAL lines carry no page
//! and yield no reference. Every malformed line is an error naming the line; nothing here
//! panics on input.

use std::path::Path;

/// The first line of every trace of this format.
pub const MAGIC: &str = "# flashlab-pg-trace 1";

/// The most header lines [`read_header`] takes before it gives up (a header is ~20 lines).
pub const HEADER_LINES_MAX: usize = 256;

/// Bits of the block number in a page id: blocks of one fork below 2^30 (8 TiB of 8 KiB pages).
pub const BLOCK_BITS: u32 = 30;
/// Forks 0..=3 (main, fsm, vm, init).
pub const FORKS: u32 = 4;

/// One decoded line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgRecord {
    /// A page reference; `dirty` for MarkBufferDirty, else a ReadBuffer.
    Page {
        rel: u32,
        fork: u32,
        block: u32,
        dirty: bool,
    },
    /// A WAL insertion ending at this LSN.
    Wal { end_lsn: u64 },
}

/// The page id of `(rel, fork, block)`: `rel << 32 | fork << 30 | block`.
pub fn page_id(rel: u32, fork: u32, block: u32) -> Result<u64, String> {
    if fork >= FORKS {
        return Err(format!("fork {fork} is not 0..={}", FORKS - 1));
    }
    if block >= 1 << BLOCK_BITS {
        return Err(format!(
            "block {block} is not below 2^{BLOCK_BITS} (a page id would collide)"
        ));
    }
    Ok((rel as u64) << 32 | (fork as u64) << BLOCK_BITS | block as u64)
}

/// Decode one line (`Ok(None)`: blank or a comment).
pub fn decode_record(line: &str) -> Result<Option<PgRecord>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let f: Vec<&str> = line.split_ascii_whitespace().take(5).collect();
    match f[0] {
        "R" | "W" => {
            if f.len() != 4 {
                return Err(format!(
                    "expected `R|W relfilenode fork block`, found {} fields",
                    f.len()
                ));
            }
            let rel = uint32(f[1], 2, "relfilenode")?;
            let fork = uint32(f[2], 3, "fork")?;
            let block = uint32(f[3], 4, "block")?;
            page_id(rel, fork, block)?;
            Ok(Some(PgRecord::Page {
                rel,
                fork,
                block,
                dirty: f[0] == "W",
            }))
        }
        "X" => {
            if f.len() != 2 {
                return Err(format!("expected `X hi/lo`, found {} fields", f.len()));
            }
            Ok(Some(PgRecord::Wal {
                end_lsn: lsn(f[1])?,
            }))
        }
        other => Err(format!("field 1 (kind) `{other}` is not R, W or X")),
    }
}

/// The page reference of a line (`Ok(None)`: no page: comment, WAL).
pub fn decode_ref(line: &str) -> Result<Option<(u64, bool)>, String> {
    match decode_record(line)? {
        Some(PgRecord::Page {
            rel,
            fork,
            block,
            dirty,
        }) => Ok(Some((page_id(rel, fork, block)?, dirty))),
        _ => Ok(None),
    }
}

/// Check the magic line (the trace's first line).
pub fn check_magic(first_line: &str) -> Result<(), String> {
    if first_line.trim_end() == MAGIC {
        Ok(())
    } else {
        Err(format!(
            "not a flashlab PostgreSQL trace: the first line must be `{MAGIC}` (written by `flashlab capture pg-tpcc`)"
        ))
    }
}

fn uint32(s: &str, field: usize, name: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .map_err(|_| format!("field {field} ({name}) `{s}` is not a 32-bit unsigned integer"))
}

/// A PostgreSQL LSN `hi/lo` (hex) as a 64-bit byte position.
fn lsn(s: &str) -> Result<u64, String> {
    let bad = || format!("field 2 (lsn) `{s}` is not an LSN like 0/1A2B3C8");
    let (hi, lo) = s.split_once('/').ok_or_else(bad)?;
    let hi = u32::from_str_radix(hi, 16).map_err(|_| bad())?;
    let lo = u32::from_str_radix(lo, 16).map_err(|_| bad())?;
    Ok((hi as u64) << 32 | lo as u64)
}

/// The header of a trace: its `# key: value` lines before the first record, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgTraceHeader {
    pub fields: Vec<(String, String)>,
}

impl PgTraceHeader {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The header lines (magic first), each ending in a newline.
    pub fn to_text(&self) -> String {
        let mut s = format!("{MAGIC}\n");
        for (k, v) in &self.fields {
            assert!(!k.contains(':') && !k.contains('\n') && !v.contains('\n'));
            s.push_str(&format!("# {k}: {v}\n"));
        }
        s
    }
}

/// Read the header of the trace at `path` (decompressed by extension); at most
/// [`HEADER_LINES_MAX`] lines, each capped by [`crate::lines::LINE_BYTES_MAX`].
pub fn read_header(path: &Path) -> Result<PgTraceHeader, crate::cache_trace::PageTraceError> {
    use crate::cache_trace::PageTraceError;
    let input = crate::trace::open_text(path)?;
    let mut lines = crate::lines::Lines::new(path, input);
    let mut header = PgTraceHeader::default();
    let line_err = |line: u64, reason: String| PageTraceError::Line {
        path: path.to_path_buf(),
        line,
        reason,
    };
    for n in 1..=HEADER_LINES_MAX as u64 {
        let text = match lines.next_line() {
            None => break,
            Some(Err(source)) => {
                return Err(PageTraceError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            }
            Some(Ok(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
        };
        if n == 1 {
            check_magic(&text).map_err(|r| line_err(1, r))?;
            continue;
        }
        let Some(rest) = text.trim_end().strip_prefix("# ") else {
            return Ok(header);
        };
        if let Some((k, v)) = rest.split_once(": ") {
            header.fields.push((k.to_string(), v.to_string()));
        }
    }
    if header.fields.is_empty() && lines.line() == 0 {
        return Err(line_err(0, "empty file: no header".into()));
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_decode_and_page_ids_do_not_collide() {
        assert_eq!(
            decode_record("R 16397 0 12").unwrap(),
            Some(PgRecord::Page {
                rel: 16397,
                fork: 0,
                block: 12,
                dirty: false
            })
        );
        assert_eq!(
            decode_record("X 1/10").unwrap(),
            Some(PgRecord::Wal {
                end_lsn: (1 << 32) + 16
            })
        );
        assert_ne!(page_id(1, 0, 5), page_id(1, 1, 5));
        assert_ne!(page_id(1, 3, 5), page_id(2, 0, 5));
        assert_eq!(
            decode_ref("W 1 1 5").unwrap(),
            Some((page_id(1, 1, 5).unwrap(), true))
        );
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        for (line, want) in [
            ("R 1 0", "found 3 fields"),
            ("R 1 9 0", "fork 9"),
            ("R 1 0 4294967295", "below 2^30"),
            ("Q 1 0 0", "not R, W or X"),
            ("X 12", "not an LSN"),
            ("R -1 0 0", "field 2 (relfilenode)"),
        ] {
            let e = decode_record(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
        assert!(check_magic("R 1 0 0").is_err());
        assert!(check_magic(MAGIC).is_ok());
    }
}
