//! BFTL (Wu, Kuo, Chang, ACM TECS 2007) — P1's second baseline: a B+-tree stored as index
//! units.
//!
//! Model: the tree is logical. Every change to a node becomes index units (IUs: node, op, key,
//! value — put, delete, reset, set-next, set-first-child) collected in a RAM reservation buffer
//! of `reservation_units`. When it is full the units are sorted by node and packed into
//! sectors (here one sector = one device page), written to fresh sectors in order; the node
//! translation table (NTT, RAM) lists for every node the sectors holding its units, oldest
//! first. Reading a node reads every sector on its list and replays its units, then the
//! units still in the reservation buffer. When a node's list grows past `compact_threshold`
//! (C = 3) the node is compacted: its current content is re-emitted as a reset plus puts and
//! its list starts afresh. How the buffer's units are packed into sectors is a switch
//! ([`Packing`]): BFTL's commit policy keeps one node's units in one sector (first-fit
//! decreasing over the nodes' groups), so a node gains one sector per commit; packing in
//! node order regardless of sector ends splits a node's group across two sectors whenever it
//! straddles one, which lengthens its list (and every read of it) by one. When the
//! compaction runs is a switch too ([`Compaction`]): after a commit, on lists that grew past
//! C (their content re-enters the reservation buffer, so lists at rest hold 1..=C sectors),
//! or inside the commit, on nodes the commit would give their C-th sector (their whole
//! content is packed as their group, so C counts the sector being written and lists at rest
//! hold 1..C-1 sectors). How wide an index unit is on flash, and so how many a sector holds,
//! is a switch too ([`UnitLayout`]), and so is whether a commit descends the tree again to
//! place the records buffered since the last one ([`CommitDescent`]). Sectors are never
//! reclaimed (as in P1's measurement, where BFTL's file grows largest). The pager's cache holds
//! decoded nodes under their id (`cache_nodes` of them). Not crash-safe: the NTT and the root
//! live in RAM only (P1 does not recover BFTL either).

use super::node::{Node, NO_NODE};
use super::{pager_stats, BTreeConfig, NodeStore, TreeState};
use crate::error::{EngineError, Fault, Structure};
use crate::page::{self, Header, PageKind, HEADER_BYTES};
use crate::pager::Pager;
use crate::tree::{IndexStats, LIST_LEN_BINS};
use blockdev::BlockDevice;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// Bytes of the fields every layout stores: node identifier, key, value (8 each) and the op.
const IU_CORE_BYTES: usize = 25;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BftlConfig {
    pub base: BTreeConfig,
    /// Index units the reservation buffer holds before they are written.
    pub reservation_units: usize,
    /// C: sectors a node's list may hold before the node is compacted.
    pub compact_threshold: usize,
    /// How a commit packs the buffered units into sectors.
    pub packing: Packing,
    /// When a node's list is compacted (what C bounds).
    pub compaction: Compaction,
    /// How wide an index unit is on flash (how many units a sector holds).
    pub unit: UnitLayout,
    /// Whether a commit reads the tree again to place the buffered records.
    pub commit_descent: CommitDescent,
}

/// Whether a commit of the reservation buffer reads the tree again to place the records
/// buffered since the last commit (inserts and deletes), before it packs their units.
///
/// Wu, Kuo and Chang's reservation buffer holds dirty records, and BFTL builds each record's
/// index unit when the buffer is flushed. The unit names the record's place in the tree
/// (identifier, parent_node, left_ptr, right_ptr), so the commit must find that place: it
/// descends from the root through the NTT, rebuilding every node on the path from its
/// sectors (BFTL keeps nothing in RAM but the NTT and the buffer). When BFTL runs under a
/// B-tree that has already descended at insert time to change the leaf (as this engine's
/// trees, and P1's harness, insert), the commit's descent is a second read of the path.
/// P1 does not say where its BFTL placed a record; it says only that BFTL's writes go to
/// RAM and that its reads take 1 to 3 sectors per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CommitDescent {
    /// The earlier behaviour: the insert's own descent places the record; its units name
    /// their node when they enter the buffer, and a commit reads only what its compaction
    /// needs.
    #[default]
    None,
    /// Each buffered record (in the order it came) descends again from the root at the
    /// commit, every node on its path read from its sectors (or the node cache, when there is
    /// one): one more path read per insert, as BFTL's construction of the units with no node
    /// kept between records.
    PerRecord,
    /// The buffered records, sorted by key, descend with the previous record's path kept, so
    /// the commit reads each node on their paths once (a node's keys are contiguous): the
    /// cheapest placement at commit, about one more leaf read per insert.
    PerNode,
}

impl CommitDescent {
    /// The name `reproduce as-btree` prints: `none`, `per_record`, `per_node`.
    pub fn name(self) -> &'static str {
        match self {
            CommitDescent::None => "none",
            CommitDescent::PerRecord => "per_record",
            CommitDescent::PerNode => "per_node",
        }
    }
}

/// How wide an index unit is on flash. The width sets how many units a sector holds, so how
/// many sectors a node's whole content needs after a compaction (a node of more units than a
/// sector holds starts its list at two sectors, and with C = 3 in the commit it is then
/// compacted on every commit that touches it), and how fast the file grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum UnitLayout {
    /// 25 bytes: node identifier, key, value (a leaf's record pointer, an inner node's child)
    /// and the op flag, the fields this B+-tree's replay reads. The same size as BFTL's
    /// seven fields at 4-byte keys and pointers (6 × 4 + 1).
    #[default]
    Narrow,
    /// 49 bytes: BFTL's index unit as Wu, Kuo and Chang define it (data_ptr, parent_node,
    /// primary_key, left_ptr, right_ptr, identifier, op_flag) at this tree's 8-byte keys and
    /// pointers (6 × 8 + 1). parent_node, left_ptr and right_ptr are stored (as NO_NODE) for
    /// their size only: this B+-tree's replay finds a child in the value and a parent by the
    /// descent.
    Wide,
}

impl UnitLayout {
    /// Bytes one index unit takes in a sector.
    pub fn bytes(self) -> usize {
        match self {
            UnitLayout::Narrow => IU_CORE_BYTES,
            UnitLayout::Wide => IU_CORE_BYTES + 3 * 8,
        }
    }
}

/// When the NTT compaction shortens a node's sector list, and so what C bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compaction {
    /// After each commit: a node whose list now holds more than C sectors is rebuilt (its C + 1
    /// sectors read) and its content re-enters the reservation buffer, written by a later
    /// commit. Lists at rest hold 1..=C sectors; a lookup reads up to C, (C + 1) / 2 on average
    /// when a node's commits come evenly.
    #[default]
    AfterCommit,
    /// Inside the commit (the commit policy does the compaction): a node to which this commit
    /// would give its C-th sector is rebuilt (its C - 1 sectors read) and its whole content,
    /// the buffered units applied, is packed as its group in place of those units; its old
    /// sectors leave its list. C counts the sector being written, so lists at rest hold
    /// 1..C-1 sectors (when a node's content fits one sector) and a lookup reads C / 2 on
    /// average: P1 §4 ("C = 3 ... 1 to 3 reads per node, 1.5 on average"; measured 1.49).
    InCommit,
}

/// How a commit of the reservation buffer packs index units into sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Packing {
    /// BFTL's commit policy (Wu, Kuo, Chang): the units of one node form a group that goes
    /// into one sector (first-fit decreasing by group size; a group larger than a sector fills
    /// whole sectors of its own), so a commit adds one sector to each node it touches.
    #[default]
    ByNode,
    /// Units in node order, cut into sectors wherever a sector is full: a node's group that
    /// straddles a sector end lands in two sectors.
    Sequential,
}

impl Default for BftlConfig {
    fn default() -> Self {
        BftlConfig {
            base: BTreeConfig::default(),
            reservation_units: 256,
            compact_threshold: 3,
            packing: Packing::ByNode,
            compaction: Compaction::AfterCommit,
            unit: UnitLayout::Narrow,
            commit_descent: CommitDescent::None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Reset = 0,
    Put = 1,
    Del = 2,
    SetNext = 3,
    SetChild0 = 4,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Unit {
    node: u64,
    op: Op,
    key: u64,
    val: u64,
}

/// A node as its units describe it.
#[derive(Clone, Debug, Default)]
struct State {
    leaf: bool,
    entries: BTreeMap<u64, u64>,
    next: u64,
    child0: u64,
}

impl State {
    fn apply(&mut self, u: &Unit) {
        match u.op {
            Op::Reset => {
                *self = State {
                    leaf: u.val == 1,
                    entries: BTreeMap::new(),
                    next: NO_NODE,
                    child0: NO_NODE,
                }
            }
            Op::Put => {
                self.entries.insert(u.key, u.val);
            }
            Op::Del => {
                self.entries.remove(&u.key);
            }
            Op::SetNext => self.next = u.val,
            Op::SetChild0 => self.child0 = u.val,
        }
    }
    fn into_node(self, id: u64) -> Node {
        let keys: Vec<u64> = self.entries.keys().copied().collect();
        let mut vals: Vec<u64> = Vec::with_capacity(keys.len() + 1);
        if !self.leaf {
            vals.push(self.child0);
        }
        vals.extend(self.entries.values());
        Node {
            id,
            leaf: self.leaf,
            keys,
            vals,
            next: self.next,
        }
    }
}

/// Units that turn `old` (None: a new node) into `new`.
fn diff(old: Option<&Node>, new: &Node) -> Vec<Unit> {
    let u = |op, key, val| Unit {
        node: new.id,
        op,
        key,
        val,
    };
    let (nk, nv) = if new.leaf {
        (&new.keys[..], &new.vals[..])
    } else {
        (&new.keys[..], &new.vals[1..])
    };
    let mut out = Vec::new();
    match old {
        Some(o) if o.leaf == new.leaf => {
            let (ok, ov) = if o.leaf {
                (&o.keys[..], &o.vals[..])
            } else {
                (&o.keys[..], &o.vals[1..])
            };
            // Both key lists strictly ascending (the node invariant): one merge finds the
            // keys gone (Del, in old order) and the keys new or changed (Put, in new order).
            assert!(ok.len() == ov.len() && nk.len() == nv.len());
            let mut puts = Vec::new();
            let (mut i, mut j) = (0, 0);
            while i < ok.len() || j < nk.len() {
                match (ok.get(i), nk.get(j)) {
                    (Some(&a), Some(&b)) if a == b => {
                        if ov[i] != nv[j] {
                            puts.push(u(Op::Put, b, nv[j]));
                        }
                        (i, j) = (i + 1, j + 1);
                    }
                    (Some(&a), b) if b.is_none_or(|&b| a < b) => {
                        out.push(u(Op::Del, a, 0));
                        i += 1;
                    }
                    (_, Some(&b)) => {
                        puts.push(u(Op::Put, b, nv[j]));
                        j += 1;
                    }
                    (a, b) => unreachable!("merge past both ends: {a:?} {b:?}"),
                }
                assert!(
                    i <= 1 || ok[i - 2] < ok[i - 1],
                    "node {} keys not ascending",
                    o.id
                );
                assert!(
                    j <= 1 || nk[j - 2] < nk[j - 1],
                    "node {} keys not ascending",
                    new.id
                );
            }
            out.append(&mut puts);
            if o.next != new.next {
                out.push(u(Op::SetNext, 0, new.next));
            }
            if !new.leaf && o.vals[0] != new.vals[0] {
                out.push(u(Op::SetChild0, 0, new.vals[0]));
            }
        }
        _ => {
            out.push(u(Op::Reset, 0, new.leaf as u64));
            out.extend(nk.iter().zip(nv).map(|(&k, &v)| u(Op::Put, k, v)));
            out.push(u(Op::SetNext, 0, new.next));
            if !new.leaf {
                out.push(u(Op::SetChild0, 0, new.vals[0]));
            }
        }
    }
    out
}

pub struct Bftl {
    pager: Pager,
    cfg: BftlConfig,
    per_sector: usize,
    ntt: Vec<Vec<u64>>,
    reservation: Vec<Unit>,
    /// Nodes loaded during the current operation (to turn stores into units).
    loaded: HashMap<u64, Rc<Node>>,
    tree: TreeState,
    next_sector: u64,
    node_loads: u64,
    compaction_reads: u64,
    /// Keys of the records (inserts and deletes) buffered since the last commit, kept only
    /// when a commit descends for them ([`CommitDescent`]).
    records: Vec<u64>,
    /// Sectors read by the commits' descents (part of the pager's reads and of the lookups).
    commit_reads: u64,
    /// Nodes rebuilt from sectors by the commits' descents (part of `node_loads`).
    commit_loads: u64,
    /// Lookup rebuilds by level and list length (see [`IndexStats::loads_by_level_list_len`]).
    loads_by_level_list_len: [[u64; LIST_LEN_BINS]; 3],
}

impl Bftl {
    pub fn create(dev: Box<dyn BlockDevice>, cfg: BftlConfig) -> Result<Bftl, EngineError> {
        let pb = dev.page_bytes();
        cfg.base.validate(pb)?;
        if cfg.reservation_units == 0 || cfg.compact_threshold == 0 {
            return Err(EngineError::Config {
                field: "reservation_units/compact_threshold",
                value: format!("{}/{}", cfg.reservation_units, cfg.compact_threshold),
                reason: "both must be at least 1".into(),
            });
        }
        let mut t = Bftl {
            pager: Pager::new(dev, cfg.base.cache_nodes),
            cfg,
            per_sector: (pb - HEADER_BYTES - 4) / cfg.unit.bytes(),
            ntt: Vec::new(),
            reservation: Vec::new(),
            loaded: HashMap::new(),
            tree: TreeState::new(cfg.base.keys_per_node),
            next_sector: 0,
            node_loads: 0,
            compaction_reads: 0,
            records: Vec::new(),
            commit_reads: 0,
            commit_loads: 0,
            loads_by_level_list_len: [[0; LIST_LEN_BINS]; 3],
        };
        t.store(Rc::new(Node::empty_leaf(0)))?;
        Ok(t)
    }

    /// Average sectors read per node a lookup read from flash (P1: 1.49); compaction reads
    /// are not counted.
    pub fn sectors_per_node_read(&self) -> f64 {
        if self.node_loads == 0 {
            0.0
        } else {
            (self.pager.stats().pages_read - self.compaction_reads) as f64 / self.node_loads as f64
        }
    }

    /// Read a node from its sectors plus pending units. Reads made to compact a node are
    /// counted apart (`compaction_reads`), so sectors per node measures what a lookup costs.
    fn rebuild(&mut self, id: u64, compacting: bool) -> Result<Node, EngineError> {
        let mut state = State::default();
        let sectors = self.ntt.get(id as usize).map_or(&[][..], Vec::as_slice);
        let sectors_len = sectors.len();
        if !sectors.is_empty() && !compacting {
            self.node_loads += 1;
        }
        for &s in sectors {
            let units = open_sector(self.pager.read_uncached(s)?, s, self.cfg.unit)?;
            if compacting {
                self.compaction_reads += 1;
            }
            for u in units.of_node(id) {
                state.apply(&u);
            }
        }
        for u in self.reservation.iter().filter(|u| u.node == id) {
            state.apply(u);
        }
        let node = state.into_node(id);
        if !compacting {
            let level = match (id == self.tree.root, node.leaf) {
                (true, _) => 0,
                (false, false) => 1,
                (false, true) => 2,
            };
            self.loads_by_level_list_len[level][sectors_len.min(LIST_LEN_BINS - 1)] += 1;
        }
        Ok(node)
    }

    /// Write the reservation buffer: units sorted by node (stable), packed into sectors as
    /// `packing` says, written to fresh sectors in order; the NTT gains each sector for every
    /// node with a unit in it.
    fn commit_units(&mut self) -> Result<(), EngineError> {
        self.descend_records()?;
        if self.cfg.compaction == Compaction::InCommit {
            self.compact_in_commit()?;
        }
        let mut units = std::mem::take(&mut self.reservation);
        units.sort_by_key(|u| u.node);
        let sectors = match self.cfg.packing {
            Packing::Sequential => units
                .chunks(self.per_sector)
                .map(<[Unit]>::to_vec)
                .collect(),
            Packing::ByNode => pack_by_node(&units, self.per_sector),
        };
        for chunk in &sectors {
            self.write_sector(chunk)?;
        }
        self.compact_long_lists()
    }

    fn write_sector(&mut self, chunk: &[Unit]) -> Result<(), EngineError> {
        assert!(!chunk.is_empty() && chunk.len() <= self.per_sector);
        let sector = self.next_sector;
        if sector >= self.pager.capacity_pages() {
            return Err(EngineError::Full {
                what: "BFTL sectors",
                reason: format!("all {} pages used (BFTL never reclaims sectors)", sector),
            });
        }
        self.next_sector += 1;
        let unit = self.cfg.unit;
        self.pager
            .write_with(sector, |img| encode_sector(img, chunk, sector, unit))?;
        for u in chunk {
            if self.ntt.len() <= u.node as usize {
                self.ntt.resize(u.node as usize + 1, Vec::new());
            }
            let list = &mut self.ntt[u.node as usize];
            if list.last() != Some(&sector) {
                list.push(sector);
            }
        }
        Ok(())
    }

    /// [`CommitDescent`]: the buffered records' descents from the root, each node on a path
    /// read as a lookup reads it (the node cache first, then its sectors and the buffer).
    fn descend_records(&mut self) -> Result<(), EngineError> {
        let mut records = std::mem::take(&mut self.records);
        assert!(
            self.cfg.commit_descent != CommitDescent::None || records.is_empty(),
            "{} records kept with no commit descent",
            records.len()
        );
        // PerNode: every node read in this commit is kept; in key order a descent never
        // returns to a node it has left, so this reads what keeping the last path reads.
        let mut kept: HashMap<u64, Rc<Node>> = HashMap::new();
        if self.cfg.commit_descent == CommitDescent::PerNode {
            records.sort_unstable();
        }
        for &key in &records {
            let mut id = self.tree.root;
            loop {
                let node = match kept.get(&id) {
                    Some(n) => Rc::clone(n),
                    None => self.read_for_commit(id)?,
                };
                if self.cfg.commit_descent == CommitDescent::PerNode {
                    kept.insert(id, Rc::clone(&node));
                }
                if node.leaf {
                    break;
                }
                id = node.vals[node.child_index(key)];
            }
        }
        Ok(())
    }

    fn read_for_commit(&mut self, id: u64) -> Result<Rc<Node>, EngineError> {
        if let Some(n) = self.pager.cached(id) {
            return Ok(n);
        }
        let (reads, loads) = (self.pager.stats().pages_read, self.node_loads);
        let n = Rc::new(self.rebuild(id, false)?);
        self.commit_reads += self.pager.stats().pages_read - reads;
        self.commit_loads += self.node_loads - loads;
        self.pager.keep(id, Rc::clone(&n))?;
        Ok(n)
    }

    /// Nodes whose sector list passed C: re-emit their content as fresh units.
    fn compact_long_lists(&mut self) -> Result<(), EngineError> {
        let c = self.cfg.compact_threshold;
        let long: Vec<u64> = (0..self.ntt.len() as u64)
            .filter(|&n| self.ntt[n as usize].len() > c)
            .collect();
        self.compact(long)
    }

    /// [`Compaction::InCommit`]: nodes with units in the buffer whose list already holds
    /// C - 1 sectors (the commit would write their C-th) are rebuilt now, and their whole
    /// content replaces their buffered units, so the commit leaves each on one fresh list.
    fn compact_in_commit(&mut self) -> Result<(), EngineError> {
        let c = self.cfg.compact_threshold;
        let mut due: Vec<u64> = self
            .reservation
            .iter()
            .map(|u| u.node)
            .filter(|&n| {
                self.ntt
                    .get(n as usize)
                    .is_some_and(|l| !l.is_empty() && l.len() + 1 >= c)
            })
            .collect();
        due.sort_unstable();
        due.dedup();
        self.compact(due)
    }

    /// Rebuild each node (its sectors and buffered units), drop its list, and put its whole
    /// content in the reservation buffer in place of its buffered units.
    fn compact(&mut self, ids: Vec<u64>) -> Result<(), EngineError> {
        for id in ids {
            let node = self.rebuild(id, true)?;
            self.ntt[id as usize].clear();
            self.reservation.retain(|u| u.node != id);
            self.reservation.extend(diff(None, &node));
        }
        Ok(())
    }
}

/// BFTL's commit policy: `units` (sorted by node, stable) grouped by node; a group larger
/// than a sector fills whole sectors of its own first (in order, so its units stay in order),
/// then the groups, largest first, each go into the first sector with room for all of it.
fn pack_by_node(units: &[Unit], per_sector: usize) -> Vec<Vec<Unit>> {
    assert!(per_sector > 0);
    let mut groups: Vec<&[Unit]> = units.chunk_by(|a, b| a.node == b.node).collect();
    let mut bins: Vec<Vec<Unit>> = Vec::new();
    for g in groups.iter_mut() {
        while g.len() > per_sector {
            bins.push(g[..per_sector].to_vec());
            *g = &g[per_sector..];
        }
    }
    groups.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].node.cmp(&b[0].node)));
    for g in groups {
        match bins.iter_mut().find(|b| b.len() + g.len() <= per_sector) {
            Some(b) => b.extend_from_slice(g),
            None => bins.push(g.to_vec()),
        }
    }
    assert_eq!(bins.iter().map(Vec::len).sum::<usize>(), units.len());
    bins
}

fn encode_sector(img: &mut [u8], units: &[Unit], sector: u64, layout: UnitLayout) {
    let w = layout.bytes();
    let p = &mut img[HEADER_BYTES..];
    p[0..4].copy_from_slice(&(units.len() as u32).to_le_bytes());
    for (i, u) in units.iter().enumerate() {
        let at = 4 + i * w;
        p[at..at + 8].copy_from_slice(&u.node.to_le_bytes());
        p[at + 8..at + 16].copy_from_slice(&u.key.to_le_bytes());
        p[at + 16..at + 24].copy_from_slice(&u.val.to_le_bytes());
        p[at + 24] = u.op as u8;
        // Wide: parent_node, left_ptr, right_ptr.
        for f in p[at + IU_CORE_BYTES..at + w].chunks_exact_mut(8) {
            f.copy_from_slice(&NO_NODE.to_le_bytes());
        }
    }
    let len = (4 + units.len() * w) as u32;
    page::seal(
        img,
        &Header {
            kind: PageKind::IndexUnits,
            flags: 0,
            id: sector,
            version: 0,
            len,
        },
    );
}

/// The units of one sector, checked (header, length for the unit count, every op byte) when
/// opened and decoded only when asked for: a lookup decodes just its node's units.
struct SectorUnits<'a> {
    payload: &'a [u8],
    count: usize,
    width: usize,
}

fn op_of(byte: u8) -> Option<Op> {
    Some(match byte {
        0 => Op::Reset,
        1 => Op::Put,
        2 => Op::Del,
        3 => Op::SetNext,
        4 => Op::SetChild0,
        _ => return None,
    })
}

impl SectorUnits<'_> {
    fn word(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.payload[at..at + 8].try_into().expect("8 bytes"))
    }

    fn unit(&self, i: usize) -> Unit {
        assert!(i < self.count);
        let at = 4 + i * self.width;
        Unit {
            node: self.word(at),
            key: self.word(at + 8),
            val: self.word(at + 16),
            op: op_of(self.payload[at + 24]).expect("op checked when the sector was opened"),
        }
    }

    /// The units of node `id`, in sector order.
    fn of_node(&self, id: u64) -> impl Iterator<Item = Unit> + '_ {
        (0..self.count)
            .filter(move |&i| self.word(4 + i * self.width) == id)
            .map(|i| self.unit(i))
    }
}

fn open_sector(
    buf: &[u8],
    sector: u64,
    layout: UnitLayout,
) -> Result<SectorUnits<'_>, EngineError> {
    let iu = layout.bytes();
    let h = page::open_kind(buf, sector, PageKind::IndexUnits, "index-unit sector")?;
    let bad = |what: Fault| EngineError::corrupt(Structure::IndexUnits, sector, what);
    let p = page::payload(buf, &h);
    let n = match p.get(0..4) {
        Some(b) => u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64,
        None => {
            return Err(bad(Fault::Length {
                what: "index-unit sector payload bytes (at least)",
                expected: 4,
                found: p.len() as u64,
            }))
        }
    };
    if p.len() as u64 != 4 + n * iu as u64 {
        return Err(bad(Fault::Length {
            what: "index-unit sector payload bytes for its unit count",
            expected: 4 + n * iu as u64,
            found: p.len() as u64,
        }));
    }
    let count = n as usize;
    if let Some(found) = (0..count)
        .map(|i| p[4 + i * iu + 24])
        .find(|&b| op_of(b).is_none())
    {
        return Err(bad(Fault::UnitOp { found }));
    }
    Ok(SectorUnits {
        payload: p,
        count,
        width: iu,
    })
}

impl NodeStore for Bftl {
    const NAME: &'static str = "bftl";

    fn load(&mut self, id: u64) -> Result<Rc<Node>, EngineError> {
        if let Some(n) = self.loaded.get(&id) {
            return Ok(Rc::clone(n));
        }
        let node = match self.pager.cached(id) {
            Some(n) => n,
            None => {
                let n = Rc::new(self.rebuild(id, false)?);
                self.pager.keep(id, Rc::clone(&n))?;
                n
            }
        };
        self.loaded.insert(id, Rc::clone(&node));
        Ok(node)
    }
    fn store(&mut self, node: Rc<Node>) -> Result<(), EngineError> {
        let units = diff(self.loaded.get(&node.id).map(|n| n.as_ref()), &node);
        self.reservation.extend(units);
        self.pager.keep(node.id, Rc::clone(&node))?;
        self.loaded.insert(node.id, node);
        Ok(())
    }
    fn tree(&mut self) -> &mut TreeState {
        &mut self.tree
    }
    fn begin_op(&mut self) {
        self.loaded.clear();
    }
    fn note_record(&mut self, key: u64) {
        if self.cfg.commit_descent != CommitDescent::None {
            self.records.push(key);
        }
    }
    fn end_write(&mut self) -> Result<(), EngineError> {
        self.loaded.clear();
        if self.reservation.len() >= self.cfg.reservation_units {
            self.commit_units()?;
        }
        Ok(())
    }

    /// Writes the reservation buffer and flushes (durable only while the NTT is in RAM).
    fn make_durable(&mut self) -> Result<(), EngineError> {
        if !self.reservation.is_empty() {
            self.commit_units()?;
        }
        self.pager.flush()
    }
    fn index_stats(&self) -> IndexStats {
        IndexStats {
            nodes_loaded: self.node_loads,
            compaction_reads: self.compaction_reads,
            commit_reads: self.commit_reads,
            commit_loads: self.commit_loads,
            loads_by_level_list_len: self.loads_by_level_list_len,
            file_bytes: self.next_sector * self.pager.page_bytes() as u64,
            ..pager_stats(self.pager.stats())
        }
    }
    fn into_pager(self) -> Pager {
        self.pager
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(nodes: &[(u64, usize)]) -> Vec<Unit> {
        let mut v = Vec::new();
        for &(node, n) in nodes {
            v.extend((0..n as u64).map(|key| Unit {
                node,
                op: Op::Put,
                key,
                val: 0,
            }));
        }
        v
    }

    #[test]
    fn packing_by_node_keeps_each_group_in_one_sector_and_its_units_in_order() {
        // Sectors of 10 units; groups of 6, 5, 4, 3 and one of 23 (two full sectors + 3).
        let u = units(&[(1, 6), (2, 5), (3, 4), (4, 3), (5, 23)]);
        let bins = pack_by_node(&u, 10);
        assert!(bins.iter().all(|b| !b.is_empty() && b.len() <= 10));
        for node in 1..=4 {
            let holding = bins.iter().filter(|b| b.iter().any(|x| x.node == node));
            assert_eq!(holding.count(), 1, "node {node}: {bins:?}");
        }
        let five: Vec<u64> = bins
            .iter()
            .flatten()
            .filter(|x| x.node == 5)
            .map(|x| x.key)
            .collect();
        assert_eq!(
            five,
            (0..23).collect::<Vec<_>>(),
            "a split group keeps its order"
        );
        // 41 units in 10-unit sectors: 5 is the least possible; first-fit decreasing gets it.
        assert_eq!(bins.len(), 5, "{bins:?}");
        // Cutting in node order splits nodes 2 and 5's groups across sector ends.
        let cut: Vec<&[Unit]> = u.chunks(10).collect();
        assert!(cut.iter().filter(|c| c.iter().any(|x| x.node == 2)).count() == 2);
    }

    #[test]
    fn sectors_round_trip_and_an_unknown_op_is_named() {
        let units = [
            Unit {
                node: 3,
                op: Op::Put,
                key: 7,
                val: 70,
            },
            Unit {
                node: 4,
                op: Op::SetNext,
                key: 0,
                val: 9,
            },
        ];
        for layout in [UnitLayout::Narrow, UnitLayout::Wide] {
            let mut img = vec![0u8; 4096];
            encode_sector(&mut img, &units, 11, layout);
            let h = page::open(&img, 11).unwrap();
            assert_eq!(h.len as usize, 4 + 2 * layout.bytes(), "{layout:?}");
            let opened = open_sector(&img, 11, layout).unwrap();
            let all: Vec<Unit> = (0..opened.count).map(|i| opened.unit(i)).collect();
            assert_eq!(all, units);
            assert_eq!(opened.of_node(4).collect::<Vec<_>>(), units[1..]);
            img[HEADER_BYTES + 4 + layout.bytes() + 24] = 9;
            page::seal(&mut img, &h);
            assert!(matches!(
                open_sector(&img, 11, layout)
                    .map(|_| ())
                    .map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
                Err(Some((Some(11), Fault::UnitOp { found: 9 })))
            ));
        }
        // A sector read with the other layout is refused by its length, never misread.
        let mut img = vec![0u8; 4096];
        encode_sector(&mut img, &units, 11, UnitLayout::Wide);
        assert!(matches!(
            open_sector(&img, 11, UnitLayout::Narrow)
                .map(|_| ())
                .map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
            Err(Some((Some(11), Fault::Length { .. })))
        ));
    }

    /// The units of [`diff`] as a hash of each side finds them (the form it had before the
    /// merge): deletes in old order, then puts of new or changed keys in new order.
    fn diff_by_hash(old: &Node, new: &Node) -> Vec<Unit> {
        let skip = |n: &Node| usize::from(!n.leaf);
        let before: HashMap<u64, u64> = old
            .keys
            .iter()
            .copied()
            .zip(old.vals[skip(old)..].iter().copied())
            .collect();
        let after: HashMap<u64, u64> = new
            .keys
            .iter()
            .copied()
            .zip(new.vals[skip(new)..].iter().copied())
            .collect();
        let u = |op, key, val| Unit {
            node: new.id,
            op,
            key,
            val,
        };
        let mut out: Vec<Unit> = old
            .keys
            .iter()
            .filter(|k| !after.contains_key(k))
            .map(|&k| u(Op::Del, k, 0))
            .collect();
        out.extend(
            new.keys
                .iter()
                .zip(&new.vals[skip(new)..])
                .filter(|(k, v)| before.get(k) != Some(v))
                .map(|(&k, &v)| u(Op::Put, k, v)),
        );
        if old.next != new.next {
            out.push(u(Op::SetNext, 0, new.next));
        }
        if !new.leaf && old.vals[0] != new.vals[0] {
            out.push(u(Op::SetChild0, 0, new.vals[0]));
        }
        out
    }

    fn node_of(leaf: bool, entries: &BTreeMap<u64, u64>, first: u64, next: u64) -> Node {
        let mut vals: Vec<u64> = if leaf { vec![] } else { vec![first] };
        vals.extend(entries.values());
        Node {
            id: 7,
            leaf,
            keys: entries.keys().copied().collect(),
            vals,
            next,
        }
    }

    proptest::proptest! {
        /// Small keys and values, so old and new share keys, values and links often.
        #[test]
        fn diff_by_merge_emits_the_units_a_hash_of_each_side_finds(
            leaf in proptest::bool::ANY,
            old in proptest::collection::btree_map(0u64..40, 0u64..3, 0..30),
            new in proptest::collection::btree_map(0u64..40, 0u64..3, 0..30),
            links in (0u64..2, 0u64..2, 0u64..2, 0u64..2),
        ) {
            let o = node_of(leaf, &old, links.0, links.1);
            let n = node_of(leaf, &new, links.2, links.3);
            let units = diff(Some(&o), &n);
            proptest::prop_assert_eq!(&units, &diff_by_hash(&o, &n));
            // Applying the units to the old node gives the new one.
            let mut state = State { leaf, entries: old.clone(), next: o.next, child0: links.0 };
            for u in &units {
                state.apply(u);
            }
            proptest::prop_assert_eq!(state.into_node(7), n);
        }
    }
}
