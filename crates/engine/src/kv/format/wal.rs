//! The write-ahead-log record that follows a DB header on its page (write path `wal`).
//!
//! `magic FKVW u32 | flags u8 (bit 0: this commit flushed the WAL into the index) | 3 zero
//! bytes | run_count u32 | runs (first page u64, pages u32) | crc32c`. The runs are the data
//! pages the commit appended (its documents, each a WAL entry); recovery reads them back for
//! every commit after the last one that flushed the index. A flushing commit lists no runs.

use super::*;

pub const WAL_MAGIC: u32 = 0x5756_4B46; // "FKVW"
pub const WAL_FLUSHED: u8 = 0x01;
/// Bytes of the record without its runs (head, count, crc).
pub const WAL_RECORD_MIN_BYTES: usize = 12 + CRC_BYTES;
/// Bytes of one run.
pub const WAL_RUN_BYTES: usize = 12;

/// A commit's WAL record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalRecord {
    /// The commit applied every WAL entry to the index (the header's root includes them).
    pub flushed: bool,
    /// Runs of data pages the commit appended: (first page, pages). Empty when flushed.
    pub runs: Vec<(u64, u32)>,
}

impl WalRecord {
    /// Bytes of the encoded record.
    pub fn encoded_len(&self) -> usize {
        WAL_RECORD_MIN_BYTES + WAL_RUN_BYTES * self.runs.len()
    }

    /// Append the record to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        assert!(
            !self.flushed || self.runs.is_empty(),
            "a flushing commit lists no runs"
        );
        let from = out.len();
        out.extend_from_slice(&WAL_MAGIC.to_le_bytes());
        out.push(if self.flushed { WAL_FLUSHED } else { 0 });
        out.extend_from_slice(&[0u8; 3]);
        out.extend_from_slice(&(self.runs.len() as u32).to_le_bytes());
        for &(page, pages) in &self.runs {
            out.extend_from_slice(&page.to_le_bytes());
            out.extend_from_slice(&pages.to_le_bytes());
        }
        push_crc(out, from);
        assert_eq!(out.len() - from, self.encoded_len(), "encoded as measured");
    }

    /// Decode the record at the start of `buf`; `Ok(None)` when `buf` is blank (a header
    /// written by the copy-on-write path: its commit flushed the index).
    pub fn decode(buf: &[u8]) -> Result<Option<WalRecord>, Corruption> {
        if buf.iter().take(4).all(|&b| b == 0) {
            return Ok(None);
        }
        let mut r = Reader::new(buf, Structure::Wal);
        let m = r.u32()?;
        if m != WAL_MAGIC {
            return Err(r.field(
                "magic",
                4,
                format!("{WAL_MAGIC:#010x}"),
                format!("{m:#010x}"),
            ));
        }
        let flags = r.u8()?;
        if flags & !WAL_FLUSHED != 0 {
            return Err(r.field("flags", 1, "0 or 1", flags));
        }
        zeros3(&mut r)?;
        let n = r.u32()? as usize;
        let room = buf.len().saturating_sub(WAL_RECORD_MIN_BYTES) / WAL_RUN_BYTES;
        if n > room || (flags == WAL_FLUSHED && n > 0) {
            return Err(r.field("run_count", 4, format!("at most {room}"), n));
        }
        let mut runs = Vec::with_capacity(n);
        for _ in 0..n {
            let page = r.u64()?;
            let pages = r.u32()?;
            if page == NO_PAGE || pages == 0 {
                return Err(r.field("run", 12, "a page and at least one page", pages));
            }
            runs.push((page, pages));
        }
        r.crc()?;
        Ok(Some(WalRecord {
            flushed: flags == WAL_FLUSHED,
            runs,
        }))
    }
}

fn zeros3(r: &mut Reader<'_>) -> Result<(), Corruption> {
    let b = r.array::<3>()?;
    if b != [0; 3] {
        return Err(r.field("reserved", 3, "zeros", format!("{b:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_damage_is_named() {
        let rec = WalRecord {
            flushed: false,
            runs: vec![(7, 3), (20, 1)],
        };
        let mut out = Vec::new();
        rec.encode_into(&mut out);
        out.resize(200, 0);
        assert_eq!(WalRecord::decode(&out).unwrap(), Some(rec));
        assert_eq!(WalRecord::decode(&[0u8; 64]).unwrap(), None);
        out[14] ^= 1;
        assert!(matches!(
            WalRecord::decode(&out),
            Err(Corruption {
                fault: Fault::Checksum { .. },
                ..
            })
        ));
    }
}
