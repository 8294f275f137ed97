//! Documents and the data pages that hold them.

use super::*;

/// A document: a key and its value at sequence number `seq`, or a tombstone (`value: None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Document<'a> {
    pub key: &'a [u8],
    pub value: Option<&'a [u8]>,
    pub seq: u64,
}

impl<'a> Document<'a> {
    /// Bytes of the encoded document (key and value within the limits).
    pub fn encoded_len(&self) -> usize {
        DOC_HEAD_BYTES + self.key.len() + self.value.map_or(0, <[u8]>::len) + CRC_BYTES
    }

    /// Check the key and value against the limits.
    pub fn check_limits(&self) -> Result<(), EngineError> {
        if self.key.len() > KEY_BYTES_MAX {
            return Err(too_large("key", self.key.len(), KEY_BYTES_MAX));
        }
        match self.value {
            Some(v) if v.len() > VALUE_BYTES_MAX => {
                Err(too_large("value", v.len(), VALUE_BYTES_MAX))
            }
            _ => Ok(()),
        }
    }

    /// Append the encoded document to `out`; returns its length.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, EngineError> {
        self.check_limits()?;
        let from = out.len();
        let value = self.value.unwrap_or_default();
        out.push(DOC_TAG);
        out.push(if self.value.is_none() {
            DOC_TOMBSTONE
        } else {
            0
        });
        out.extend_from_slice(&(self.key.len() as u16).to_le_bytes());
        out.extend_from_slice(&(value.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(self.key);
        out.extend_from_slice(value);
        push_crc(out, from);
        assert_eq!(
            out.len() - from,
            self.encoded_len(),
            "encoded as long as computed"
        );
        Ok(out.len() - from)
    }

    /// Decode the document at the start of `buf`; returns it and its encoded length.
    pub fn decode(buf: &'a [u8]) -> Result<(Document<'a>, usize), Corruption> {
        Self::decode_checked(buf, true)
    }

    /// [`Document::decode`], checking the document's own crc32c only when `verify_crc` (a page
    /// whose seal was verified needs no second checksum); head, lengths and bounds always.
    fn decode_checked(
        buf: &'a [u8],
        verify_crc: bool,
    ) -> Result<(Document<'a>, usize), Corruption> {
        let head = DocHead::decode(buf)?;
        let mut r = Reader::new(buf, Structure::Document);
        r.bytes(DOC_HEAD_BYTES)?;
        let key = r.bytes(head.key_len)?;
        let value = r.bytes(head.value_len)?;
        if verify_crc {
            r.crc()?;
        } else {
            r.bytes(CRC_BYTES)?;
        }
        let value = (!head.tombstone).then_some(value);
        assert_eq!(r.at, head.encoded_len(), "read exactly the document");
        Ok((
            Document {
                key,
                value,
                seq: head.seq,
            },
            r.at,
        ))
    }
}

/// The document at `ptr` inside one data-page payload whose page seal (crc32c over the whole
/// page) was verified when it was read: the head, lengths and bounds are checked as by
/// [`gather_document`], but not the document's own crc32c again (the store's cache holds
/// verified pages only, so a cached read costs no second checksum).
pub fn document_in_verified_page(payload: &[u8], ptr: DocPtr) -> Result<Document<'_>, Corruption> {
    let (start, len) = (ptr.offset as usize, ptr.len as usize);
    let Some(buf) = payload
        .get(start..start.saturating_add(len))
        .filter(|_| start >= DATA_PAGE_HEAD_BYTES)
    else {
        return Err(field_at(
            Structure::DocPointer,
            "offset",
            0,
            format!("a document inside the page's {} bytes", payload.len()),
            format!("offset {start} len {len}"),
        ));
    };
    checked_len(Document::decode_checked(buf, false), len, start)
}

/// The fixed head of a document: enough to know its length before reading the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocHead {
    pub tombstone: bool,
    pub key_len: usize,
    pub value_len: usize,
    pub seq: u64,
}

impl DocHead {
    pub fn encoded_len(&self) -> usize {
        DOC_HEAD_BYTES + self.key_len + self.value_len + CRC_BYTES
    }

    /// Decode and check the head at the start of `buf` (the body is not read).
    pub fn decode(buf: &[u8]) -> Result<DocHead, Corruption> {
        let mut r = Reader::new(buf, Structure::Document);
        let tag = r.u8()?;
        if tag == 0 {
            return Err(blank(Structure::Document, 0));
        }
        if tag != DOC_TAG {
            return Err(r.field("tag", 1, format!("{DOC_TAG:#04x}"), format!("{tag:#04x}")));
        }
        let flags = r.u8()?;
        if flags & !DOC_TOMBSTONE != 0 {
            return Err(r.field(
                "flags",
                1,
                "0x00 or 0x01 (tombstone)",
                format!("{flags:#04x}"),
            ));
        }
        let key_len = r.u16()? as usize;
        if key_len > KEY_BYTES_MAX {
            return Err(r.field("key_len", 2, format!("at most {KEY_BYTES_MAX}"), key_len));
        }
        let value_len = r.u32()? as usize;
        let tombstone = flags & DOC_TOMBSTONE != 0;
        let max = if tombstone { 0 } else { VALUE_BYTES_MAX };
        if value_len > max {
            let expected = if tombstone {
                "0 (a tombstone has no value)".to_string()
            } else {
                format!("at most {VALUE_BYTES_MAX}")
            };
            return Err(r.field("value_len", 4, expected, value_len));
        }
        let seq = r.u64()?;
        let head = DocHead {
            tombstone,
            key_len,
            value_len,
            seq,
        };
        assert!(
            head.encoded_len() <= DOC_MAX_BYTES,
            "a checked head is within the limits"
        );
        Ok(head)
    }
}

/// Where a document lives: it starts `offset` bytes into the payload of data page `page` and
/// is `len` bytes long, continuing on pages `page + 1, ...` if it does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocPtr {
    pub page: u64,
    pub offset: u32,
    pub len: u32,
}

pub(crate) const DOC_PTR_RULE: &str =
    "a page (not NO_PAGE), an offset past the data-page head, a length in DOC_MIN_BYTES..=DOC_MAX_BYTES";

impl DocPtr {
    /// Why this pointer cannot point at a document (None: it can).
    pub fn invalid(&self) -> Option<String> {
        let len = self.len as usize;
        let ok = self.page != NO_PAGE
            && self.offset as usize >= DATA_PAGE_HEAD_BYTES
            && (DOC_MIN_BYTES..=DOC_MAX_BYTES).contains(&len);
        (!ok).then(|| format!("page {} offset {} len {}", self.page, self.offset, self.len))
    }

    /// Pages the document touches, for data pages of `payload_bytes`.
    pub fn pages(&self, payload_bytes: usize) -> u64 {
        let room = payload_bytes.saturating_sub(DATA_PAGE_HEAD_BYTES).max(1) as u64;
        let first = (payload_bytes as u64).saturating_sub(self.offset as u64);
        let rest = (self.len as u64).saturating_sub(first);
        let pages = 1 + rest.div_ceil(room);
        assert!(pages >= 1, "a document touches its first page");
        pages
    }
}

/// Packs documents into data-page payloads of `payload_bytes` each (pure: the caller writes
/// the payloads to consecutive device pages and turns page indexes into page numbers). One
/// builder per commit: its last page is written padded, and the next commit starts a page.
#[derive(Clone, Debug)]
pub struct DataPages {
    payload_bytes: usize,
    pages: Vec<Vec<u8>>,
    /// Write position in the last page.
    at: usize,
    /// Pages already handed out by [`DataPages::take_full`].
    taken: u64,
    scratch: Vec<u8>,
}

impl DataPages {
    pub fn new(payload_bytes: usize) -> Result<DataPages, EngineError> {
        if payload_bytes < DATA_PAYLOAD_MIN_BYTES || payload_bytes > u32::MAX as usize {
            return Err(EngineError::Invalid {
                structure: Structure::DataPage,
                field: "payload_bytes",
                expected: format!("{DATA_PAYLOAD_MIN_BYTES}..={}", u32::MAX),
                found: payload_bytes.to_string(),
            });
        }
        assert!(payload_bytes > DATA_PAGE_HEAD_BYTES + DOC_HEAD_BYTES);
        Ok(DataPages {
            payload_bytes,
            pages: Vec::new(),
            at: payload_bytes,
            taken: 0,
            scratch: Vec::new(),
        })
    }

    fn new_page(&mut self, cont_bytes: usize) {
        assert!(
            cont_bytes <= self.payload_bytes - DATA_PAGE_HEAD_BYTES,
            "a continuation of {cont_bytes} bytes fits its page"
        );
        let mut p = vec![0u8; self.payload_bytes];
        p[..DATA_PAGE_HEAD_BYTES].copy_from_slice(&(cont_bytes as u32).to_le_bytes());
        self.pages.push(p);
        self.at = DATA_PAGE_HEAD_BYTES;
    }

    /// Append `doc`; returns where it lies (`page` counts pages from this builder's first,
    /// taken ones included).
    pub fn push(&mut self, doc: &Document<'_>) -> Result<DocPtr, EngineError> {
        let mut bytes = std::mem::take(&mut self.scratch);
        bytes.clear();
        let r = doc.encode(&mut bytes).map(|_| self.place(&bytes));
        self.scratch = bytes;
        if let Ok(p) = &r {
            assert!(
                p.invalid().is_none(),
                "a placed document's pointer is valid: {p:?}"
            );
        }
        r
    }

    fn place(&mut self, bytes: &[u8]) -> DocPtr {
        if self.payload_bytes - self.at < DOC_HEAD_BYTES {
            self.new_page(0);
        }
        let ptr = DocPtr {
            page: self.taken + self.pages.len() as u64 - 1,
            offset: self.at as u32,
            len: bytes.len() as u32,
        };
        assert!(
            self.at >= DATA_PAGE_HEAD_BYTES && self.payload_bytes - self.at >= DOC_HEAD_BYTES,
            "a document starts past the page head with its head on the page"
        );
        let mut rest = bytes;
        loop {
            let n = rest.len().min(self.payload_bytes - self.at);
            let page = self.pages.last_mut().expect("a page is open");
            page[self.at..self.at + n].copy_from_slice(&rest[..n]);
            self.at += n;
            rest = &rest[n..];
            if rest.is_empty() {
                return ptr;
            }
            let cont = rest.len().min(self.payload_bytes - DATA_PAGE_HEAD_BYTES);
            self.new_page(cont);
        }
    }

    /// The payloads not yet taken (the last one may still be filling; its tail is zeros).
    pub fn pages(&self) -> &[Vec<u8>] {
        &self.pages
    }

    /// Remove and return the complete pages (all but one still filling), so a large batch is
    /// written as it goes in bounded memory.
    pub fn take_full(&mut self) -> Vec<Vec<u8>> {
        let filling = usize::from(self.at < self.payload_bytes && !self.pages.is_empty());
        let full: Vec<Vec<u8>> = self.pages.drain(..self.pages.len() - filling).collect();
        self.taken += full.len() as u64;
        assert!(self.pages.len() <= 1, "at most the filling page stays");
        full
    }

    pub fn into_pages(self) -> Vec<Vec<u8>> {
        self.pages
    }
}

/// The `cont_bytes` of a data-page payload, checked against the page.
pub fn data_page_cont(payload: &[u8]) -> Result<usize, Corruption> {
    let mut r = Reader::new(payload, Structure::DataPage);
    let cont = r.u32()? as usize;
    if cont > payload.len() - DATA_PAGE_HEAD_BYTES {
        let room = payload.len() - DATA_PAGE_HEAD_BYTES;
        return Err(r.field("cont_bytes", 4, format!("at most {room}"), cont));
    }
    assert!(
        DATA_PAGE_HEAD_BYTES + cont <= payload.len(),
        "the continuation fits its page"
    );
    Ok(cont)
}

/// Read the document at `ptr` from the payloads of its pages (`pages[0]` is `ptr.page`,
/// then the following pages; all of one payload size). A document inside one page is
/// borrowed from it; one spanning pages is gathered into `scratch`. Each continuation page
/// must announce the bytes it continues (`cont_bytes`), so a stale page is not mistaken for
/// the rest of a document.
pub fn gather_document<'a>(
    pages: &[&'a [u8]],
    ptr: DocPtr,
    scratch: &'a mut Vec<u8>,
) -> Result<Document<'a>, Corruption> {
    gather(pages, ptr, scratch, true)
}

fn gather<'a>(
    pages: &[&'a [u8]],
    ptr: DocPtr,
    scratch: &'a mut Vec<u8>,
    verify_crc: bool,
) -> Result<Document<'a>, Corruption> {
    let first = *pages
        .first()
        .ok_or(truncated(Structure::Document, 0, ptr.len as u64, 0))?;
    let start = ptr.offset as usize;
    let len = ptr.len as usize;
    check_doc_offset(first, start)?;
    if start + len <= first.len() {
        let one = &first[start..start + len];
        return checked_len(Document::decode_checked(one, verify_crc), len, start);
    }
    let mut g = DocGather::start(first, ptr, scratch)?;
    for page in &pages[1..] {
        if g.done(scratch) {
            break;
        }
        g.take(page, scratch)?;
    }
    g.document(scratch, verify_crc)
}

/// A document's offset must lie in its first page's payload, past the data page head.
fn check_doc_offset(first: &[u8], start: usize) -> Result<(), Corruption> {
    if start < DATA_PAGE_HEAD_BYTES || start >= first.len() {
        return Err(field_at(
            Structure::DocPointer,
            "offset",
            0,
            format!("{DATA_PAGE_HEAD_BYTES}..{}", first.len()),
            start.to_string(),
        ));
    }
    Ok(())
}

/// A document spanning pages, gathered one page at a time into a caller's buffer (the first
/// page, then each continuation in order), so the pages need not be held at once: a reader
/// can copy each from wherever it lies. Every call takes the same buffer, which holds the
/// document's bytes so far. Each continuation page must announce the bytes it continues
/// (`cont_bytes`), so a stale page is not mistaken for the rest of a document.
#[derive(Clone, Copy, Debug)]
pub struct DocGather {
    ptr: DocPtr,
    /// The payload length of the first page (every page of a document has it).
    page_len: usize,
    /// Pages taken so far.
    pages: usize,
}

impl DocGather {
    /// Start with the payload of the document's first page (`ptr.page`): its bytes from the
    /// document's offset go to `buf` (cleared first).
    pub fn start(first: &[u8], ptr: DocPtr, buf: &mut Vec<u8>) -> Result<DocGather, Corruption> {
        let (start, len) = (ptr.offset as usize, ptr.len as usize);
        check_doc_offset(first, start)?;
        buf.clear();
        buf.extend_from_slice(&first[start..first.len().min(start.saturating_add(len))]);
        assert!(buf.len() <= len, "gathered no more than the document");
        Ok(DocGather {
            ptr,
            page_len: first.len(),
            pages: 1,
        })
    }

    /// Whether `buf` holds the whole document.
    pub fn done(&self, buf: &[u8]) -> bool {
        assert!(buf.len() <= self.ptr.len as usize, "the gathering buffer");
        buf.len() == self.ptr.len as usize
    }

    /// Take the payload of the next page: its continuation of the document goes to `buf`.
    pub fn take(&mut self, page: &[u8], buf: &mut Vec<u8>) -> Result<(), Corruption> {
        let len = self.ptr.len as usize;
        assert!(!self.done(buf), "a page taken only while bytes are missing");
        let base = (self.pages * self.page_len) as u64;
        if page.len() != self.page_len {
            return Err(truncated(
                Structure::DataPage,
                base,
                self.page_len as u64,
                page.len() as u64,
            ));
        }
        let want = (len - buf.len()).min(page.len() - DATA_PAGE_HEAD_BYTES);
        let cont = data_page_cont(page).map_err(|e| e.rebase(base))?;
        if cont != want {
            return Err(field_at(
                Structure::DataPage,
                "cont_bytes",
                base,
                format!(
                    "{want} (the rest of the document at offset {})",
                    self.ptr.offset
                ),
                cont.to_string(),
            ));
        }
        buf.extend_from_slice(&page[DATA_PAGE_HEAD_BYTES..DATA_PAGE_HEAD_BYTES + want]);
        self.pages += 1;
        assert!(buf.len() <= len, "gathered no more than the document");
        Ok(())
    }

    /// The document gathered in `buf` (its crc checked if `verify_crc`: pages not verified
    /// by a seal), or the damage: bytes missing, or a document that does not decode.
    pub fn document<'b>(
        &self,
        buf: &'b [u8],
        verify_crc: bool,
    ) -> Result<Document<'b>, Corruption> {
        let (start, len) = (self.ptr.offset as usize, self.ptr.len as usize);
        if !self.done(buf) {
            return Err(truncated(
                Structure::Document,
                start as u64,
                len as u64,
                buf.len() as u64,
            ));
        }
        checked_len(Document::decode_checked(buf, verify_crc), len, start)
    }
}

fn checked_len(
    r: Result<(Document<'_>, usize), Corruption>,
    len: usize,
    start: usize,
) -> Result<Document<'_>, Corruption> {
    let (doc, used) = r.map_err(|e| e.rebase(start as u64))?;
    assert_eq!(
        used,
        doc.encoded_len(),
        "a decoded document is as long as it says"
    );
    if used != len {
        return Err(field_at(
            Structure::DocPointer,
            "len",
            start as u64,
            used.to_string(),
            len.to_string(),
        ));
    }
    Ok(doc)
}

/// A document starting on a data page, as a page scan finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocStart {
    /// Offset in the payload.
    pub offset: u32,
    pub head: DocHead,
    /// Whether the document ends on this page (it was then decoded and its crc checked).
    pub complete: bool,
}

/// Every document that starts on a data page, in order (compaction and `check` walk pages
/// this way, without the index). Documents ending on the page are checked whole.
pub fn data_page_docs(payload: &[u8]) -> Result<Vec<DocStart>, Corruption> {
    let mut at = DATA_PAGE_HEAD_BYTES + data_page_cont(payload)?;
    let mut docs = Vec::new();
    while payload.len() - at >= DOC_HEAD_BYTES && payload[at] != 0 {
        let head = DocHead::decode(&payload[at..]).map_err(|e| e.rebase(at as u64))?;
        let end = at + head.encoded_len();
        let complete = end <= payload.len();
        if complete {
            Document::decode(&payload[at..end]).map_err(|e| e.rebase(at as u64))?;
        }
        docs.push(DocStart {
            offset: at as u32,
            head,
            complete,
        });
        if !complete {
            return Ok(docs);
        }
        at = end;
    }
    if let Some(i) = payload[at..].iter().position(|&b| b != 0) {
        return Err(field_at(
            Structure::DataPage,
            "padding",
            (at + i) as u64,
            "zero bytes after the last document",
            format!("{:#04x}", payload[at + i]),
        ));
    }
    assert!(
        docs.windows(2).all(|w| w[0].offset < w[1].offset),
        "documents in page order"
    );
    Ok(docs)
}
