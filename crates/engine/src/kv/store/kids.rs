//! Handles from a cached inner node to its children's cached nodes (pointer swizzling, as
//! LeanStore's swips): a lookup that finds the child it follows already decoded in the cache
//! goes to it straight from the parent, instead of through the pager's key-to-frame map and
//! the frame (two dependent memory misses per level).
//!
//! Why a handle is never stale: nodes are copy-on-write and a cached node never changes. A
//! lookup descends only from the current root, and while a parent is reachable from it, so
//! is every child it names — a reachable page is never released, hence never rewritten. So
//! the node a handle was taken from (the pager's cached node of the child's page, read and
//! checked) is what that page holds for as long as the parent can be reached. Handles are
//! weak: the pager still owns every node and evicts as it will (a handle to an evicted node
//! no longer upgrades, and the lookup goes through the pager, which reads it again). A hit
//! through a handle is still counted and referenced by the pager (`Pager::touch`), so the
//! replacement policy sees the same hits in the same order as without handles.
//!
//! Memory: 8 bytes per entry of an inner node once it has handed out a handle (inner nodes are
//! about one in a hundred nodes). A handle to an evicted node keeps that node's `Rc` block (its
//! fixed part, a few hundred bytes; the node's bytes and slots are freed with it) until the
//! entry is followed again or the parent leaves the cache.

use super::pages::Cached;
use std::cell::{Cell, OnceCell};
use std::rc::{Rc, Weak};

/// One weak handle per entry of an inner node, made at the first handle taken (a leaf, or an
/// inner node never searched, has none).
#[derive(Default)]
pub(super) struct Kids(OnceCell<Box<[Cell<Weak<Cached>>]>>);

impl Kids {
    /// The cached node entry `i` leads to, if a handle to it was taken and it is still cached.
    pub(super) fn get(&self, i: usize) -> Option<Rc<Cached>> {
        let cell = self.0.get()?.get(i)?;
        let w = cell.take();
        let got = w.upgrade();
        cell.set(w);
        got
    }

    /// Take a handle to `child`, the cached node entry `i` (of `len` entries) leads to.
    pub(super) fn set(&self, i: usize, len: usize, child: &Rc<Cached>) {
        assert!(i < len, "entry {i} of a node of {len}");
        let cells = self
            .0
            .get_or_init(|| (0..len).map(|_| Cell::new(Weak::new())).collect());
        assert_eq!(cells.len(), len, "one handle per entry");
        cells[i].set(Rc::downgrade(child));
    }
}
