//! DB headers, superblock slots and recovery.

use super::*;

/// Pages written, by data type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PagesByType {
    pub superblock: u64,
    pub header: u64,
    pub index: u64,
    pub data: u64,
}

/// What the store holds at a commit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KvStats {
    pub live_keys: u64,
    /// Bytes of the documents the index points at.
    pub live_bytes: u64,
    /// Bytes of documents overwritten or deleted (compaction reclaims them).
    pub stale_bytes: u64,
    pub pages: PagesByType,
}

/// One commit's header: appended after the commit's documents and index nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DbHeader {
    /// Commit sequence number (the first commit is 1).
    pub commit_seq: u64,
    /// Sequence number of the last document written.
    pub doc_seq: u64,
    /// The index root (None: the store is empty).
    pub root: Option<NodePtr>,
    /// The previous commit's header page ([`NO_PAGE`] for the first).
    pub prev_header_page: u64,
    /// The next page the log appends at.
    pub log_end_page: u64,
    /// Compactions done so far (space behind the log is reused after each).
    pub generation: u64,
    pub stats: KvStats,
}

impl DbHeader {
    pub fn encode(&self) -> [u8; DB_HEADER_BYTES] {
        let mut out = Vec::with_capacity(DB_HEADER_BYTES);
        out.extend_from_slice(&DB_HEADER_MAGIC.to_le_bytes());
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(DB_HEADER_BYTES as u16).to_le_bytes());
        let (root_page, root_len) = self.root.map_or((NO_PAGE, 0), |p| (p.page, p.len));
        let s = &self.stats;
        for x in [self.commit_seq, self.doc_seq, root_page] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&root_len.to_le_bytes());
        out.extend_from_slice(&[0u8; 4]);
        for x in [
            self.prev_header_page,
            self.log_end_page,
            self.generation,
            s.live_keys,
            s.live_bytes,
            s.stale_bytes,
            s.pages.superblock,
            s.pages.header,
            s.pages.index,
            s.pages.data,
        ] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        assert!(
            out.len() <= DB_HEADER_BYTES - CRC_BYTES,
            "header fields fit the header"
        );
        out.resize(DB_HEADER_BYTES - CRC_BYTES, 0);
        push_crc(&mut out, 0);
        out.try_into().expect("a header is DB_HEADER_BYTES long")
    }

    pub fn decode(buf: &[u8]) -> Result<DbHeader, Corruption> {
        let mut r = Reader::new(buf, Structure::CommitHeader);
        fixed_head(&mut r, DB_HEADER_MAGIC, DB_HEADER_BYTES)?;
        let commit_seq = r.u64()?;
        let doc_seq = r.u64()?;
        let root_page = r.u64()?;
        let root_len = r.u32()?;
        let root = match (root_page, root_len) {
            (NO_PAGE, 0) => None,
            (NO_PAGE, n) => return Err(r.field("root_len", 4, "0 for an empty tree", n)),
            (page, len) if len as usize >= NODE_MIN_BYTES => Some(NodePtr { page, len }),
            (_, n) => return Err(r.field("root_len", 4, format!("at least {NODE_MIN_BYTES}"), n)),
        };
        zeros(&mut r, 4)?;
        let mut next = || r.u64();
        let header = DbHeader {
            commit_seq,
            doc_seq,
            root,
            prev_header_page: next()?,
            log_end_page: next()?,
            generation: next()?,
            stats: KvStats {
                live_keys: next()?,
                live_bytes: next()?,
                stale_bytes: next()?,
                pages: PagesByType {
                    superblock: next()?,
                    header: next()?,
                    index: next()?,
                    data: next()?,
                },
            },
        };
        let pad = DB_HEADER_BYTES - CRC_BYTES - r.at;
        zeros(&mut r, pad)?;
        r.bytes(CRC_BYTES)?; // checked first, in fixed_head
        assert_eq!(r.at, DB_HEADER_BYTES, "every byte of the header read");
        if header.commit_seq == 0 {
            return Err(field_at(
                Structure::CommitHeader,
                "commit_seq",
                8,
                "at least 1",
                0,
            ));
        }
        Ok(header)
    }
}

/// Check a fixed-size structure's `magic u32 | version u16 | size u16` and its trailing
/// crc32c (blank is its own error).
fn fixed_head(r: &mut Reader<'_>, magic: u32, size: usize) -> Result<(), Corruption> {
    let all = r.buf.get(..size).unwrap_or(r.buf);
    if all.iter().all(|&b| b == 0) {
        return Err(blank(r.structure, 0));
    }
    if r.buf.len() < size {
        return Err(truncated(r.structure, 0, size as u64, r.buf.len() as u64));
    }
    let m = r.u32()?;
    if m != magic {
        return Err(r.field("magic", 4, format!("{magic:#010x}"), format!("{m:#010x}")));
    }
    // The checksum next: damage anywhere reads as a torn or corrupt write, not as a field.
    let mut whole = Reader {
        at: size - CRC_BYTES,
        ..*r
    };
    whole.crc()?;
    let v = r.u16()?;
    if v != FORMAT_VERSION {
        let expected = format!("{FORMAT_VERSION} (this build's format)");
        return Err(r.field("version", 2, expected, v));
    }
    let s = r.u16()? as usize;
    if s != size {
        return Err(r.field("size", 2, size, s));
    }
    assert_eq!(r.at, 8, "magic, version and size read");
    Ok(())
}

fn zeros(r: &mut Reader<'_>, n: usize) -> Result<(), Corruption> {
    let b = r.bytes(n)?;
    match b.iter().position(|&x| x != 0) {
        None => Ok(()),
        Some(i) => {
            let found = format!("{:#04x}", b[i]);
            Err(field_at(
                r.structure,
                "reserved",
                (r.at - n + i) as u64,
                0,
                found,
            ))
        }
    }
}

/// A superblock slot: points at the newest header. Commit `c` writes slot `c % 2`, so the
/// other slot keeps the previous commit (the fallback when the newest is torn). Commit 0 is
/// the empty store written at creation (no header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Superblock {
    pub commit_seq: u64,
    /// The header of `commit_seq` ([`NO_PAGE`] for commit 0).
    pub header_page: u64,
    /// The device's page size when the store was created.
    pub page_bytes: u32,
}

impl Superblock {
    /// The slot this superblock is written to.
    pub fn slot(&self) -> u8 {
        let slot = (self.commit_seq % 2) as u8;
        assert!(slot < 2, "two slots");
        slot
    }

    pub fn encode(&self) -> [u8; SUPERBLOCK_BYTES] {
        let mut out = Vec::with_capacity(SUPERBLOCK_BYTES);
        out.extend_from_slice(&SUPERBLOCK_MAGIC.to_le_bytes());
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(SUPERBLOCK_BYTES as u16).to_le_bytes());
        out.extend_from_slice(&self.commit_seq.to_le_bytes());
        out.extend_from_slice(&self.header_page.to_le_bytes());
        out.extend_from_slice(&self.page_bytes.to_le_bytes());
        assert!(
            out.len() <= SUPERBLOCK_BYTES - CRC_BYTES,
            "fields fit the superblock"
        );
        out.resize(SUPERBLOCK_BYTES - CRC_BYTES, 0);
        push_crc(&mut out, 0);
        out.try_into()
            .expect("a superblock is SUPERBLOCK_BYTES long")
    }

    /// Decode the superblock read from slot `slot` (0 or 1).
    pub fn decode(buf: &[u8], slot: u8) -> Result<Superblock, Corruption> {
        let mut r = Reader::new(buf, Structure::Superblock);
        fixed_head(&mut r, SUPERBLOCK_MAGIC, SUPERBLOCK_BYTES)?;
        let sb = Superblock {
            commit_seq: r.u64()?,
            header_page: r.u64()?,
            page_bytes: r.u32()?,
        };
        let pad = SUPERBLOCK_BYTES - CRC_BYTES - r.at;
        zeros(&mut r, pad)?;
        r.bytes(CRC_BYTES)?; // checked first, in fixed_head
        assert_eq!(r.at, SUPERBLOCK_BYTES, "every byte of the superblock read");
        if sb.slot() != slot {
            let found = format!("commit {} (belongs in slot {})", sb.commit_seq, sb.slot());
            let expected = format!("a commit for slot {slot}");
            return Err(field_at(
                Structure::Superblock,
                "commit_seq",
                8,
                expected,
                found,
            ));
        }
        if (sb.commit_seq == 0) != (sb.header_page == NO_PAGE) {
            let found = format!(
                "commit {} with header page {}",
                sb.commit_seq, sb.header_page
            );
            let expected = "no header page exactly for commit 0";
            return Err(field_at(
                Structure::Superblock,
                "header_page",
                16,
                expected,
                found,
            ));
        }
        Ok(sb)
    }
}

/// Where opening a store lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovered {
    /// Both slots blank: no store was ever created here.
    Blank,
    /// The newest commit whose superblock and header both check out (`header` is None for
    /// commit 0, the empty store). `skipped` holds the damage met on the way: a bad slot, or
    /// a newer commit's header that failed (with file offsets) — worth a warning.
    Committed {
        superblock: Superblock,
        header: Option<DbHeader>,
        skipped: Vec<Corruption>,
    },
    /// Neither slot holds a superblock that checks out: every failure, slot 0 first.
    Damaged { errors: Vec<Corruption> },
    /// The newest superblock checks out but the header it points at does not: damage to a
    /// durable commit (the header was flushed before the superblock was written, so it cannot
    /// be a torn write). An error, never a rollback to the previous commit.
    Corrupt {
        superblock: Superblock,
        error: Corruption,
    },
}

/// Recovery: the newest superblock slot that checks out names the commit; its header must
/// decode and carry the slot's commit number, else the result is [`Recovered::Corrupt`] (the
/// header was durable before the slot was written: its damage is not a torn write). A slot
/// that fails its checks is read as a lost slot write, and the other slot's commit is taken
/// (the error is kept in `skipped`). `slots[i]` is slot i's bytes at file offset `slot_offsets[i]`;
/// `read_header(page)` returns the header's bytes and their file offset (I/O errors pass
/// through). Format errors come back with file offsets.
pub fn recover<E>(
    slots: [&[u8]; 2],
    slot_offsets: [u64; 2],
    mut read_header: impl FnMut(u64) -> Result<(Vec<u8>, u64), E>,
) -> Result<Recovered, E> {
    let mut errors = Vec::new();
    let mut candidates = Vec::new();
    for (i, bytes) in slots.iter().enumerate() {
        match Superblock::decode(bytes, i as u8) {
            Ok(sb) => candidates.push(sb),
            Err(Corruption {
                fault: Fault::Blank,
                ..
            }) => {}
            Err(e) => errors.push(e.rebase(slot_offsets[i])),
        }
    }
    if candidates.is_empty() && errors.is_empty() {
        return Ok(Recovered::Blank);
    }
    assert!(
        candidates.len() + errors.len() <= 2,
        "two slots, each a candidate or an error"
    );
    let Some(sb) = candidates.into_iter().max_by_key(|sb| sb.commit_seq) else {
        return Ok(Recovered::Damaged { errors });
    };
    if sb.header_page == NO_PAGE {
        return Ok(Recovered::Committed {
            superblock: sb,
            header: None,
            skipped: errors,
        });
    }
    let (bytes, at) = read_header(sb.header_page)?;
    let error = match DbHeader::decode(&bytes) {
        Ok(h) if h.commit_seq == sb.commit_seq => {
            return Ok(Recovered::Committed {
                superblock: sb,
                header: Some(h),
                skipped: errors,
            });
        }
        Ok(h) => field_at(
            Structure::CommitHeader,
            "commit_seq",
            at + 8,
            format!("{} (as the superblock says)", sb.commit_seq),
            h.commit_seq.to_string(),
        ),
        Err(e) => e.rebase(at),
    };
    Ok(Recovered::Corrupt {
        superblock: sb,
        error,
    })
}
