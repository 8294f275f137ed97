//! Checked page images: payloads served from the frame's page image as it lies, without a
//! decoded copy (the frames half of [`Pager::lend_payload`] and [`Pager::read_payload`];
//! the checks themselves are the typed layer's, `typed.rs`).
//!
//! A frame's image is *checked* as a page of one kind once the typed layer has verified it
//! (seal, page number, version) or sealed it itself ([`Keep::Images`](super::Keep)); the
//! mark goes with every change of the image (`data_mut`, eviction, `keep`, `discard`, a new
//! frame), so a checked image is always the bytes that were checked. A hit on it waits for
//! the frame's first line and then the payload's bytes: one dependent load fewer than a
//! decoded form behind its `Rc`.

use super::{FrameId, NO_PAGE};
use crate::error::EngineError;
use crate::page::{PageKind, HEADER_BYTES};
use crate::pager::Pager;

impl Pager {
    /// The payload of `key`'s image, if it is checked as a page of `kind`, lent to `f`: a hit
    /// (counted, referenced) when `f` accepts it; None (nothing counted) otherwise.
    pub(in crate::pager) fn lend_image<R>(
        &mut self,
        key: u64,
        kind: PageKind,
        f: impl FnOnce(&[u8]) -> Option<R>,
    ) -> Option<R> {
        let fi = self.frames.map.get(key)?;
        let fr = &self.frames.slots[fi];
        if fr.checked != Some(kind) {
            return None;
        }
        assert!(fr.image, "a checked frame holds its image");
        let r = f(&fr.data[HEADER_BYTES..HEADER_BYTES + fr.payload_len as usize])?;
        self.io.stats.hits += 1;
        self.frames.referenced(fi);
        Some(r)
    }

    /// `key` is resident with a page image (checked or not) or not resident at all: what
    /// [`Pager::pin_checked_image`] serves (a frame holding a decoded form only does not
    /// qualify: its form is newer than any image).
    pub(in crate::pager) fn image_or_absent(&self, key: u64) -> bool {
        self.frames
            .map
            .get(key)
            .is_none_or(|f| self.frames.slots[f].image)
    }

    /// Device page `page` pinned with its image checked as a page of `kind`: resident (a hit;
    /// `check` runs on an image not yet checked), or read into a new frame (a miss; flash
    /// copy first, as `fetch` reads). `check` returns the payload's length; an image it
    /// refuses is not marked (a new frame is not kept) and its error is returned.
    pub(in crate::pager) fn pin_checked_image(
        &mut self,
        page: u64,
        kind: PageKind,
        check: impl FnOnce(&[u8]) -> Result<usize, EngineError>,
    ) -> Result<FrameId, EngineError> {
        assert!(
            self.image_or_absent(page),
            "page {page} is an image or absent"
        );
        let (f, fresh) = match self.frames.map.get(page) {
            Some(f) => {
                self.pin_hit(f);
                (f, false)
            }
            None => {
                let flash = self.take_flash_copy(page);
                let f = self.take_frame(page, page)?;
                if let Err(e) = self.fill(f, page, flash) {
                    self.frames.release(&[f]);
                    return Err(e);
                }
                (f, true)
            }
        };
        let fr = &mut self.frames.slots[f];
        if fr.checked != Some(kind) {
            match check(&fr.data) {
                Ok(len) => {
                    assert!(
                        HEADER_BYTES + len <= fr.data.len(),
                        "a payload fits its page"
                    );
                    (fr.checked, fr.payload_len) = (Some(kind), len as u32);
                }
                Err(e) if fresh => {
                    self.frames.release(&[f]);
                    return Err(e);
                }
                Err(e) => {
                    self.unpin(f);
                    return Err(e);
                }
            }
        }
        if fresh {
            self.frames.slots[f].image = true;
            self.frames.map.insert(page, f);
            self.io.stats.misses += 1;
        }
        Ok(f)
    }

    /// The payload of pinned frame `f`, whose image is checked.
    pub(in crate::pager) fn checked_payload(&self, f: FrameId) -> &[u8] {
        let fr = &self.frames.slots[f];
        assert!(fr.pins > 0, "frame {f} read while unpinned");
        assert!(
            fr.checked.is_some() && fr.image,
            "frame {f} holds a checked image"
        );
        &fr.data[HEADER_BYTES..HEADER_BYTES + fr.payload_len as usize]
    }

    /// Keep `img`, just sealed as page `page` of `kind` with a payload of `payload_len`
    /// bytes, as the page's checked image (the write-through rule [`Keep::Images`](super::Keep));
    /// a decoded form the frame held is dropped. Referenced as [`Pager::keep`] references.
    pub(in crate::pager) fn keep_image(
        &mut self,
        page: u64,
        img: &[u8],
        kind: PageKind,
        payload_len: usize,
    ) -> Result<(), EngineError> {
        assert_eq!(img.len(), self.page_bytes, "an image is a whole page");
        assert!(
            HEADER_BYTES + payload_len <= img.len(),
            "a payload fits its page"
        );
        assert_ne!(page, NO_PAGE, "an image is a device page's");
        let (f, fresh) = match self.frames.map.get(page) {
            Some(f) => (f, false),
            None if self.frames.capacity == 0 => return Ok(()),
            None => (self.take_frame(page, page)?, true),
        };
        let page_bytes = self.page_bytes;
        let fr = &mut self.frames.slots[f];
        assert!(!fr.dirty, "page {page} kept over a dirty page image");
        if fr.data.len() != page_bytes {
            fr.data.resize(page_bytes);
        }
        fr.data.copy_from_slice(img);
        fr.page = page;
        (fr.image, fr.decoded) = (true, None);
        (fr.checked, fr.payload_len) = (Some(kind), payload_len as u32);
        if fresh {
            self.frames.map.insert(page, f);
            self.unpin(f);
        } else {
            self.frames.referenced(f);
        }
        Ok(())
    }
}
