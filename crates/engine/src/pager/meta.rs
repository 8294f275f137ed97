//! Double-buffered roots: two alternating meta pages.
//!
//! Model: a structure's root (superblock) is a list of u64 words published with an epoch that
//! grows by one per publish. Epoch `e` goes to slot `first + e % 2`, so publishing never
//! overwrites the newest published root: a torn write damages only the slot being written,
//! whose checksum then fails, and opening falls back to the other slot. `publish` flushes
//! before (everything the root points to is durable first) and after (the root itself is).
//! Each slot is a page of kind Meta whose `flags` carry the structure's tag (so one kind of
//! structure never opens another's root) and whose version is the epoch.

use super::{PageForm, PageWrite, Pager};
use crate::error::{EngineError, Fault, Structure};
use crate::page::{self, Header, PageKind, HEADER_BYTES};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetaSlots {
    first: u64,
    tag: u8,
    what: &'static str,
}

impl MetaSlots {
    /// Pages the two slots take.
    pub const PAGES: u64 = 2;

    /// Slots at pages `first` and `first + 1` for a structure tagged `tag`, named `what` in
    /// errors ("in-place B-tree meta page", "AS B-tree superblock").
    pub fn new(first: u64, tag: u8, what: &'static str) -> MetaSlots {
        assert!(
            first.checked_add(MetaSlots::PAGES).is_some(),
            "slots past the last page"
        );
        MetaSlots { first, tag, what }
    }

    /// The slot epoch `epoch` is written to.
    pub fn slot(&self, epoch: u64) -> u64 {
        let slot = self.first + epoch % MetaSlots::PAGES;
        assert!(
            slot - self.first < MetaSlots::PAGES,
            "epoch {epoch} maps to a slot"
        );
        slot
    }

    /// Words that fit one slot of `page_bytes`.
    pub fn capacity_words(page_bytes: usize) -> usize {
        page::payload_capacity(page_bytes) / 8
    }

    /// Flush, write `words` as epoch `epoch` to its slot, flush.
    pub fn publish(&self, pager: &mut Pager, epoch: u64, words: &[u64]) -> Result<(), EngineError> {
        if words.len() > MetaSlots::capacity_words(pager.page_bytes()) {
            return Err(EngineError::Full {
                what: "meta page",
                reason: format!(
                    "the {} needs {} words; a page holds {}",
                    self.what,
                    words.len(),
                    MetaSlots::capacity_words(pager.page_bytes())
                ),
            });
        }
        pager.flush()?;
        let (tag, slot) = (self.tag, self.slot(epoch));
        assert!(
            HEADER_BYTES + 8 * words.len() <= pager.page_bytes(),
            "words fit a slot"
        );
        pager.write_with(slot, |img| {
            for (i, w) in words.iter().enumerate() {
                img[HEADER_BYTES + 8 * i..HEADER_BYTES + 8 * i + 8]
                    .copy_from_slice(&w.to_le_bytes());
            }
            page::seal(
                img,
                &Header {
                    kind: PageKind::Meta,
                    flags: tag,
                    id: 0,
                    version: epoch,
                    len: (words.len() * 8) as u32,
                },
            );
        })?;
        pager.flush()
    }

    /// Flush, write `body` as a typed page (sealed as `w` says) to epoch `epoch`'s slot,
    /// flush: the protocol for a structure whose root is a page of its own kind (the KV
    /// store's superblock, which carries its commit and checks its own slot).
    pub fn publish_page<T: PageForm>(
        &self,
        pager: &mut Pager,
        buf: &mut Vec<u8>,
        epoch: u64,
        body: &[u8],
        w: PageWrite,
    ) -> Result<(), EngineError> {
        pager.flush()?;
        self.write_page::<T>(pager, buf, epoch, body, w)?;
        pager.flush()
    }

    /// Write epoch `epoch`'s slot without the flushes (the first root of a new structure:
    /// nothing before it to make durable; the caller flushes after).
    pub fn write_page<T: PageForm>(
        &self,
        pager: &mut Pager,
        buf: &mut Vec<u8>,
        epoch: u64,
        body: &[u8],
        w: PageWrite,
    ) -> Result<(), EngineError> {
        let slot = self.slot(epoch);
        assert!(
            slot < self.first + MetaSlots::PAGES,
            "slot {slot} of {self:?}"
        );
        pager.write_pages::<T>(buf, &[(slot, body)], w)
    }

    /// Both slots' pages as read past the cache, unverified (the structure's own format
    /// checks them: a torn slot is for it to tell), in slot order.
    pub fn read_both(&self, pager: &mut Pager) -> Result<[Vec<u8>; 2], EngineError> {
        let a = pager.read_uncached(self.first)?.to_vec();
        let b = pager.read_uncached(self.first + 1)?.to_vec();
        assert_eq!(a.len(), b.len(), "two slots of one page size");
        Ok([a, b])
    }

    /// The slots' pages.
    pub fn pages(&self) -> [u64; 2] {
        [self.first, self.first + 1]
    }

    /// One slot's (epoch, words) if it holds a sealed meta page of this tag.
    pub fn read(&self, pager: &mut Pager, slot: u64) -> Result<(u64, Vec<u64>), EngineError> {
        let buf = pager.read_uncached(slot)?;
        let h = page::open_kind(buf, slot, PageKind::Meta, "meta")?;
        if h.flags != self.tag {
            return Err(EngineError::corrupt(
                Structure::MetaSlot,
                slot,
                Fault::Id {
                    what: "meta page tag",
                    expected: self.tag as u64,
                    found: h.flags as u64,
                },
            ));
        }
        let words: Vec<u64> = page::payload(buf, &h)
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        assert!(
            words.len() <= MetaSlots::capacity_words(buf.len()),
            "a slot's words fit it"
        );
        Ok((h.version, words))
    }

    /// The newest slot that reads, checks out and that `parse` accepts, as (epoch, parsed).
    /// Neither: [`Fault::NoMeta`].
    pub fn newest<T>(
        &self,
        pager: &mut Pager,
        parse: impl Fn(&[u64]) -> Option<T>,
    ) -> Result<(u64, T), EngineError> {
        let mut best: Option<(u64, T)> = None;
        for slot in [self.first, self.first + 1] {
            let Ok((epoch, words)) = self.read(pager, slot) else {
                continue;
            };
            let Some(t) = parse(&words) else {
                continue;
            };
            let newer = match &best {
                Some((newest, _)) => epoch > *newest,
                None => true,
            };
            if newer {
                best = Some((epoch, t));
            }
        }
        best.ok_or(EngineError::corrupt(
            Structure::MetaSlot,
            self.first,
            Fault::NoMeta {
                what: self.what,
                first: self.first,
                second: self.first + 1,
            },
        ))
    }
}
