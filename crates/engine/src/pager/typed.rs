//! Typed pages: the page contract held once. A structure reads a page as a verified payload of
//! the kind it expects ([`Pager::read_page`]) and writes payloads as sealed pages of one kind
//! and version ([`Pager::write_pages`]); the pager seals, checks (seal, kind, page number),
//! caches, and applies the write-through rule ([`Keep`]) so no cached copy is left stale.
//!
//! Invariants: a cached form is returned only for the kind it was read or written as (checked
//! on every hit); a page read from the device is returned only if its seal checks out, its
//! header names its own page number and the kind the reference expects, and its version is
//! no newer than the structure's durable commit ([`Pager::limit_versions`]) or a version
//! this pager wrote since (a page from the future is a stale or foreign page, never data);
//! every page written is sealed with the kind and version
//! given, and its frame afterwards holds the new form or nothing.

use super::Pager;
use crate::error::{Corruption, EngineError, Fault, Structure};
use crate::page::{self, Header, PageKind, HEADER_BYTES};
use blockdev::WriteHint;
use std::any::Any;
use std::rc::Rc;

/// A decoded form of a page that the pager caches under the page's number.
pub trait PageForm: Any {
    /// The kind of page this form was read or written as.
    fn kind(&self) -> PageKind;
    /// The form of a verified payload of `kind` (what a read of the page finds).
    fn from_payload(kind: PageKind, payload: &[u8]) -> Self;
    /// The payload bytes the form holds as they are, if it does ([`Pager::warm`] touches
    /// them; a form decoded into another shape says None).
    fn payload(&self) -> Option<&[u8]> {
        None
    }
}

/// What the cache keeps of pages just written: the write-through rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every page's new payload (the pages read next: a commit's data pages).
    Payloads,
    /// The new payload of pages already cached; others stay out (headers, superblocks).
    Resident,
    /// Nothing: cached copies are dropped, the caller keeps the forms it wants (index nodes,
    /// kept decoded, so rebuilding them from the image would cost a crc and a copy).
    Nothing,
    /// Every page's sealed image, checked as written (the pages read next, served from the
    /// image itself: [`Pager::lend_payload`]); a decoded form a frame held is dropped.
    Images,
}

/// How [`Pager::write_pages`] seals and places pages.
#[derive(Clone, Copy, Debug)]
pub struct PageWrite {
    pub kind: PageKind,
    /// Written in every page header (e.g. the commit that wrote it).
    pub version: u64,
    pub hint: WriteHint,
    pub keep: Keep,
}

/// Consecutive items go out as one I/O of at most this many pages (1 MiB of 4-KiB pages).
const RUN_PAGES_MAX: usize = 256;

impl Pager {
    /// Declare the structure's durable commit: a typed page read from now on must carry a
    /// version at most `version` (or one this pager writes later). Recovery calls it once it
    /// knows the commit; a page reached from that commit with a newer version is corruption.
    pub fn limit_versions(&mut self, version: u64) {
        self.version_max = version;
        assert_eq!(self.version_max, version, "the limit is the durable commit");
    }

    /// Page `page` as a verified payload of `kind` (`what` names it in errors), decoded to `T`
    /// and cached. A cached form of another kind is an error, as is a page whose seal fails
    /// or whose header names another page.
    pub fn read_page<T: PageForm>(
        &mut self,
        page: u64,
        kind: PageKind,
        what: &'static str,
    ) -> Result<Rc<T>, EngineError> {
        let version_max = self.version_max;
        let form: Rc<T> = self.load(page, page, |img| {
            let h = verified_header(img, page, kind, what, version_max)?;
            Ok(T::from_payload(kind, page::payload(img, &h)))
        })?;
        if form.kind() != kind {
            let fault = Fault::Kind {
                expected: what,
                found: form.kind(),
            };
            let at = page.saturating_mul(self.page_bytes as u64) + page::KIND_AT as u64;
            let c = Corruption::new(Structure::of_kind(kind), fault).on_page(page);
            return Err(c.at(at).into());
        }
        Ok(form)
    }

    /// Page `page`'s cached form of `kind` lent to `f`, if the cache holds one: the hit path of
    /// [`Pager::read_page`] without its `Rc` (no reference count taken or dropped: a borrow
    /// that ends with `f`). The kind is checked as `read_page` checks it on a hit. None (nothing
    /// counted): not cached as a `T` of `kind`, or `f` refused it — the caller then reads the
    /// page with `read_page`, which loads, verifies and reports.
    pub fn lend_page<T: PageForm, R>(
        &mut self,
        page: u64,
        kind: PageKind,
        f: impl FnOnce(&T) -> Option<R>,
    ) -> Option<R> {
        self.lend_cached(page, |form: &T| match form.kind() == kind {
            true => f(form),
            false => None,
        })
    }

    /// Page `page`'s verified payload of `kind` lent to `f` where the cache holds it: from the
    /// frame's checked image as it lies (no decoded copy: [`Keep::Images`], or a page
    /// [`Pager::read_payload`] read), else from a cached form `T` of `kind` that holds its
    /// payload ([`PageForm::payload`]). A hit (counted, referenced) when `f` accepts it; None
    /// (nothing counted): not cached so, or refused — then `read_payload` reads and reports.
    pub fn lend_payload<T: PageForm, R>(
        &mut self,
        page: u64,
        kind: PageKind,
        f: impl FnOnce(&[u8]) -> Option<R>,
    ) -> Option<R> {
        let mut f = Some(f);
        if let Some(r) = self.lend_image(page, kind, |p| f.take()?(p)) {
            return Some(r);
        }
        let f = f?;
        self.lend_page(page, kind, |form: &T| f(form.payload()?))
    }

    /// Page `page`'s verified payload of `kind` (`what` names it in errors) handed to `f`:
    /// lent where the cache holds it ([`Pager::lend_payload`]); else from its image, checked
    /// as [`Pager::read_page`] checks a page (seal, kind, page number, version) and kept
    /// checked — a page read from the device is cached as its image alone, with no decoded
    /// copy. A frame that holds only a decoded form (newer than any image) is read through
    /// `read_page`.
    pub fn read_payload<T: PageForm, R>(
        &mut self,
        page: u64,
        kind: PageKind,
        what: &'static str,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, EngineError> {
        let mut f = Some(f);
        if let Some(r) = self.lend_payload::<T, R>(page, kind, |p| Some(f.take()?(p))) {
            return Ok(r);
        }
        let f = f.expect("f is taken only by a hit");
        if !self.image_or_absent(page) {
            let form = self.read_page::<T>(page, kind, what)?;
            let Some(payload) = form.payload() else {
                let fault = Fault::Kind {
                    expected: what,
                    found: form.kind(),
                };
                let c = Corruption::new(Structure::of_kind(kind), fault).on_page(page);
                return Err(c.into());
            };
            return Ok(f(payload));
        }
        let version_max = self.version_max;
        let fi = self.pin_checked_image(page, kind, |img| {
            verified_header(img, page, kind, what, version_max).map(|h| h.len as usize)
        })?;
        let r = f(self.checked_payload(fi));
        self.unpin(fi);
        Ok(r)
    }

    /// Page `page` read past the cache (a page read once: recovery, checks) and verified as
    /// [`Pager::read_page`] verifies, but for the version bound: its payload. For the roots
    /// a structure finds by its own protocol (meta slots: their epoch says which is newest),
    /// and for what recovery reads before it knows the durable commit.
    pub fn read_verified(
        &mut self,
        page: u64,
        kind: PageKind,
        what: &'static str,
    ) -> Result<Vec<u8>, EngineError> {
        let img = self.read_uncached(page)?;
        let h = verified_header(img, page, kind, what, u64::MAX)?;
        Ok(page::payload(img, &h).to_vec())
    }

    /// Seal `items` — (first page, payload; a payload longer than a page continues on the next
    /// pages) — as pages of `w.kind` and `w.version` in `buf`, and write them, consecutive
    /// items as one I/O (of up to 256 pages), every I/O in flight at once, each with `w.hint`;
    /// then cache by `w.keep`. `buf` is the caller's staging buffer, kept between calls.
    pub fn write_pages<T: PageForm>(
        &mut self,
        buf: &mut Vec<u8>,
        items: &[(u64, &[u8])],
        w: PageWrite,
    ) -> Result<(), EngineError> {
        let pb = self.page_bytes;
        assert!(
            w.version > 0,
            "a page written carries the version that wrote it"
        );
        // A page this pager wrote is read back as data (the commit being built).
        self.version_max = self.version_max.max(w.version);
        assert!(self.version_max >= w.version, "what is written reads back");
        let room = page::payload_capacity(pb);
        let pages_of = |body: &[u8]| {
            assert!(!body.is_empty(), "a page written holds a payload");
            body.len().div_ceil(room)
        };
        let total: usize = items.iter().map(|(_, b)| pages_of(b)).sum();
        if buf.len() < total * pb {
            // Sealing overwrites every byte of a page: old contents never leak.
            buf.resize(total * pb, 0);
        }
        let mut runs: Vec<(u64, usize, usize)> = Vec::new(); // (first page, from, to) in buf
        let mut at = 0;
        for &(first, body) in items {
            let follows = runs.last().is_some_and(|&(p, from, to)| {
                p + ((to - from) / pb) as u64 == first && to - from < RUN_PAGES_MAX * pb
            });
            let from = at;
            for (i, chunk) in body.chunks(room).enumerate() {
                seal_into(&mut buf[at..at + pb], first + i as u64, chunk, &w);
                at += pb;
            }
            match runs.last_mut() {
                Some(r) if follows => r.2 = at,
                _ => runs.push((first, from, at)),
            }
        }
        assert_eq!(at, total * pb, "every page of every item sealed once");
        let ios: Vec<(u64, &[u8])> = runs.iter().map(|&(p, f, t)| (p, &buf[f..t])).collect();
        if !ios.is_empty() {
            self.write_runs_hinted(&ios, w.hint)?;
        }
        self.write_through::<T>(items, &buf[..at], w)
    }

    /// The cache after `items` were written, sealed in `sealed` (their pages in order): the
    /// write-through rule, in one place.
    fn write_through<T: PageForm>(
        &mut self,
        items: &[(u64, &[u8])],
        sealed: &[u8],
        w: PageWrite,
    ) -> Result<(), EngineError> {
        let (pb, room) = (self.page_bytes, page::payload_capacity(self.page_bytes));
        assert!(room > 0, "a page holds a payload");
        let mut images = sealed.chunks_exact(pb);
        for &(first, body) in items {
            for (i, chunk) in body.chunks(room).enumerate() {
                let p = first + i as u64;
                let img = images.next().expect("a sealed page per chunk");
                let keep = match w.keep {
                    Keep::Payloads => true,
                    Keep::Resident => self.contains(p),
                    Keep::Nothing => {
                        self.discard(p);
                        false
                    }
                    Keep::Images => {
                        self.keep_image(p, img, w.kind, chunk.len())?;
                        false
                    }
                };
                if keep {
                    self.keep(p, Rc::new(T::from_payload(w.kind, chunk)))?;
                }
            }
        }
        assert!(
            images.next().is_none(),
            "every sealed page cached by the rule"
        );
        Ok(())
    }
}

/// The header of `img`, read from device page `page`, if its seal checks out, its kind is
/// `kind`, it names page `page` and its version is at most `version_max`.
fn verified_header(
    img: &[u8],
    page: u64,
    kind: PageKind,
    what: &'static str,
    version_max: u64,
) -> Result<Header, EngineError> {
    let h = page::open_kind(img, page, kind, what)?;
    let structure = Structure::of_kind(kind);
    let start = page.saturating_mul(img.len() as u64);
    if h.id != page {
        let fault = Fault::Id {
            what: "page number in the page header",
            expected: page,
            found: h.id,
        };
        let c = Corruption::new(structure, fault).on_page(page);
        return Err(c.at(start + page::ID_AT as u64).into());
    }
    if h.version > version_max {
        let fault = Fault::Version {
            found: h.version,
            newest: version_max,
        };
        let c = Corruption::new(structure, fault).on_page(page);
        return Err(c.at(start + page::VERSION_AT as u64).into());
    }
    assert_eq!(h.kind, kind, "open_kind checked the kind");
    assert!(h.version <= version_max, "no page from the future");
    Ok(h)
}

/// Seal `body` as page `page` into `img` (one page).
fn seal_into(img: &mut [u8], page: u64, body: &[u8], w: &PageWrite) {
    assert!(
        HEADER_BYTES + body.len() <= img.len(),
        "a payload fits its page"
    );
    img[HEADER_BYTES..HEADER_BYTES + body.len()].copy_from_slice(body);
    page::seal(
        img,
        &Header {
            kind: w.kind,
            flags: 0,
            id: page,
            version: w.version,
            len: body.len() as u32,
        },
    );
}
