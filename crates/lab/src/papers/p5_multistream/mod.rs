//! `flashlab reproduce multistream` — paper P5 (data streams of different lifetimes on a
//! multi-stream SSD).
//!
//! Experiment: 32 key-value stores (P5's 32 ForestDB files), each on its own partition of one
//! simulated multi-stream SSD (`pm953` with 4 KiB pages; [`blockdev::SharedDevice`]),
//! the partitions together covering 83 % of the logical space (P5: 400 GB of DB files on a
//! 480 GB drive; the rest is never written). Load: every file gets its keys (a third of its
//! partition in live documents, so compaction has room). Then 100 % updates: a uniformly random
//! file and key, a new value; each file commits every `OPS_PER_COMMIT` updates it received.
//! The stores write as ForestDB: path `wal` (documents and a header per commit, the index at
//! WAL flushes), whole-file compaction, next-fit allocation (docs/kv-format.md). The
//! drive is aged first (every logical page written once) and the stores' trims are dropped
//! (a file system without `discard`), so the SSD sees what P5's drive saw.
//! The device's streams are assigned by [`policy::streams::ClassStreams`] from the policy's
//! [`policy::streams::StreamMap`] (none, per-type, merge-similar, merge-different, per-file, auto),
//! once per GC placement mode of the SSD.
//!
//! Measured, over the update phase only: every `SAMPLE_SHARE` of the logical capacity written
//! by the host, the WAF of that window (flash page writes / host page writes) — the
//! `waf_over_time` series. A run stops when WAF is flat: the WAF of the last `FLAT_BLOCK_X`
//! capacities written differs from that of the `FLAT_BLOCK_X` before by at most
//! `FLAT_TOLERANCE` of it, or at `MAX_HOST_X` capacities (then `waf_flat` = "no"). The final
//! WAF is that of the last `FLAT_BLOCK_X` capacities. Host bytes "in equal simulated time" are each run's host
//! bytes by the shortest run's simulated duration (same GC mode), interpolated between
//! samples. The lifetime table (P5's Table 1) comes from the first policy's run (`none`): per data type, its
//! share of page writes and the mean and median lifetime in device page writes between two
//! writes of the same page. The store's write sequence does not depend on the device, so every
//! run sees the same writes: the stores run once, on a RAM device, their calls on their
//! partitions recorded ([`tape`]), and each run replays the calls on its own simulated SSD
//! (through the same file placement and stream assignment), as does the oracle's first pass.
//! The runs' figures are those of running the stores on each device (checked at quick scale:
//! every row, series and lifetime equal); the stores' work is done once instead of per run.

pub mod claims;
pub mod deaths;
pub mod figures;
pub mod gc_streams;
pub mod release;
mod tables;
pub mod tape;

use tables::{find, lifetime_rows, lifetime_table, notes, rows, series, volume_table, waf_table};
pub use tables::{LifetimeRow, MultistreamRow};

use crate::papers;
use crate::report::{fmt_f, Output, Report, ReproduceOptions, Scale, Series, Steps, Table};
use anyhow::{Context, Result};
use blockdev::{BlockDevice, MemDevice, Partition, SharedDevice, SimDevice};
use engine::kv::{
    CompactionMode, NodeLayout, Options, RetiredHeaders, StaleEstimate, StalePages, Store,
    WritePath,
};
use policy::streams::{
    ClassStreams, DataType, DeathRecorder, LifetimeReport, NamedPolicy, OracleStreams, StreamMap,
    StreamMapError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ssd::{GcStreamMode, SsdConfig};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::OnceLock;
use tape::{Event, Player, Recording, Tape};

/// The simulated device: P5's drive class, the Samsung PM953 (preset `pm953`: its spare area
/// and streams), with 4 KiB pages (the PM953's logical blocks; its flash geometry is not
/// published).
pub const PRESET: &str = "pm953";
const PAGE_BYTES: usize = 4096;
/// 256 KiB erase blocks (the preset's are 1.5 MiB at 4 KiB pages: too few blocks on a small
/// device). WAF depends on it: a block holds the pages written close together in time, and
/// smaller blocks die whole more often.
const PAGES_PER_BLOCK: u32 = 64;
/// P5's 32 DB files.
pub const FILES: u32 = 32;
/// P5: 400 GB of DB files on a 480 GB drive.
pub const FILL: f64 = 400.0 / 480.0;
/// Live documents per file, as a share of its partition (the rest: stale pages, compaction).
const LIVE_SHARE: f64 = 0.25;
const VALUE_BYTES: usize = 1024;
const KEY_BYTES: usize = 16;
/// P5's WAL flush threshold as a share of a DB file's documents: ForestDB flushes its WAL every
/// 4,096 documents (`wal_threshold`), and a P5 file holds ~390,000 (7.5 GB of live data in 32
/// files, ForestDB-Benchmark's default 512-byte bodies and 32-byte keys; estimated): 1.05 %.
/// The stale share a compaction waits for moves only at a WAL flush, so this share sets how far
/// a file grows past its live data before the compaction at 30 %.
pub const P5_WAL_FLUSH_SHARE: f64 = 4096.0 / 390_000.0;
/// Updates a file receives between two of its commits.
const OPS_PER_COMMIT: u32 = 16;
/// ForestDB's default compaction threshold (30 % stale).
const COMPACT_THRESHOLD: f64 = 0.3;
/// Pages each store's pager caches.
const CACHE_PAGES: usize = 256;
/// WAF sampled every this share of the logical capacity written by the host.
pub const SAMPLE_SHARE: f64 = 0.1;
/// Flatness is judged on blocks of this many capacities written ...
pub const FLAT_BLOCK_X: f64 = 2.0;
/// ... : flat when the WAF of the last block differs from the block's before by at most this
/// share of it.
pub const FLAT_TOLERANCE: f64 = 0.03;
/// At most this many capacities written by the host in the update phase.
const MAX_HOST_X: f64 = 12.0;
/// The DB files are placed as files of one file system (ext4 on P5's drive), in chunks of
/// this many pages: one 4 KiB page, ext4's block, its unit of allocation. Why: ForestDB only
/// appends to a file, so a page it frees is never written again by that file; the file
/// system gives the freed block to whichever file appends next, each file's blocks kept
/// together by the allocator's goal (after the file's last block), not by a coarser unit.
/// Chunks of 64 pages (256 KiB, the earlier default) kept a file's freed page in a chunk
/// the same file still held, so at 1 GiB 89–98 % of pages were overwritten by their own
/// file one lap later and every policy's WAF was 1.000 (`multistream_probe -- chunks paper`).
pub const FS_CHUNK_PAGES: u64 = 1;
/// Where the file system places a DB file's new pages: as ext4's multi-block allocator does
/// (`blockdev::mballoc`: a write's run is one request, each file appends into a preallocation
/// sized from the file, a new preallocation takes a whole free extent near the file's goal).
/// Why: P5's files are on ext4, whose allocator decides by request and per file, not page by
/// page. The earlier default, each page the first free one after the file's last
/// (`ChunkGoal::OwnShare`), filled single freed pages in address order; measured at 128 MiB,
/// seed 1, per-stream GC: none's WAF 1.569 -> 2.206 (P5 2.011), per-type -24.3 -> -20.7 %,
/// merge-similar -24.3 -> -21.1 %, merge-different +5.3 -> +4.6 %
/// (`multistream_probe -- mballoc`).
pub const CHUNK_GOAL: blockdev::ChunkGoal = blockdev::ChunkGoal::Mballoc;
/// One pool of free and open blocks for the device, at every scale. Why: what GC has to
/// work with is the spare area left after the open blocks and the GC reserve. On the real
/// PM953 (512 GiB of flash for 480 GB: ~11,100 spare blocks of 6 MiB, assumed 32 dies of
/// 2 planes) a stream's open block on every die takes (10 slots + 2 reserve) / 346 spare
/// blocks per die = 3.5 %, and as superblocks (one open superblock of 64 blocks per slot,
/// 173 spare superblocks) 6.9 %. Scaled to 1 GiB on the same 32 dies (600 spare blocks of
/// 256 KiB, 18.75 a die), per-die open blocks take (16 + 2) / 18.75 = 96 % and superblocks
/// (9.4 spare) more than all of it; one pool for the device takes (16 + 2) / 600 = 3 %, the
/// PM953's share. (Flash timing still charges each block's own die.)
pub const GC_POOL: ssd::GcPool = ssd::GcPool::Device;
/// Device streams (P5's PM953 offers several; ours: enough for per-type's 5 and auto's groups).
pub const DEVICE_STREAMS_DEFAULT: u16 = 8;

/// Sizes and switches of one reproduction.
#[derive(Clone, Debug)]
pub struct Plan {
    pub capacity_bytes: u64,
    pub files: u32,
    pub device_streams: u16,
    /// The stream maps to compare: P5's policies, ours, and maps from TOML files.
    pub policies: Vec<MapSpec>,
    pub gc_modes: Vec<GcStreamMode>,
    pub value_bytes: usize,
    pub ops_per_commit: u32,
    pub live_share: f64,
    pub pages_per_block: u32,
    /// The update phase stops at this many capacities written (if WAF was not flat before).
    pub max_host_x: f64,
    /// How the stores commit (ForestDB's `wal` by default).
    pub write_path: WritePath,
    /// A cap on the WAL flush threshold in documents (`Some(4_096)`: ForestDB's default,
    /// [`engine::kv::WAL_FLUSH_DOCS_DEFAULT`]), or none (`None`, default: the threshold is the same share
    /// of a file's keys at every capacity, `wal_flush_share`). Why none: the cap is an
    /// absolute count for files of P5's size (~390,000 documents) and binds only on our
    /// larger files, so with it the WAL was a file's 814 keys at 128 MiB (one flush per key
    /// count) but 4,096 of 6,520 at 1 GiB (0.63): the two scales modelled different stores,
    /// and that alone made paper scale's stream gains half quick scale's (quick with the
    /// 1 GiB share: none 2.387, per-type −10.5 %; 1 GiB with the 128 MiB share: none 1.985,
    /// per-type −22.7 %; `multistream_probe -- walmax`). With the cap, 51 % of the index
    /// pages a 1 GiB file writes are rewritten in the same file within a generation (ours
    /// reuses a freed index node; ForestDB appends until the compaction), against 3–10 % at a
    /// flush per key count (docs/results/2026-11-29-p5-7.md).
    pub wal_flush_docs_max: Option<u64>,
    /// The WAL flush threshold as a share of a file's documents (`Some`: P5's ~1 %,
    /// [`P5_WAL_FLUSH_SHARE`]; at least one document, at most `wal_flush_docs_max`), or the
    /// file's key count (`None`: a WAL as large as the file's live data on files smaller than
    /// 4,096 keys).
    pub wal_flush_share: Option<f64>,
    /// ForestDB's whole-file compaction by default (incremental: ours).
    pub compaction_mode: CompactionMode,
    /// The stores allocate next fit (ForestDB's append-only file: a log wrapping around its
    /// partition; default) or first fit (the lowest freed pages first).
    pub next_fit: bool,
    /// Where the DB files lie on the device: `None`, each on its fixed partition; `Some(n)`,
    /// placed as files of one file system in chunks of `n` pages (ext4's allocator in
    /// miniature: a new file takes the chunks other files' deleted generations freed).
    pub fs_chunk_pages: Option<u64>,
    /// How much of the file system the DB files fill (see [`DbFiles`]).
    pub db_files: DbFiles,
    /// Where a DB file's chunk is placed first (ext4's goal; see [`blockdev::ChunkGoal`]).
    pub chunk_goal: blockdev::ChunkGoal,
    /// The file system spans the whole logical space: the ~17 % the DB files leave is free
    /// space any file's chunk may take, as P5's 80 GB of ext4 free space (with placement in
    /// chunks only; off: the file system is the partitions' space alone).
    pub fs_free_space: bool,
    /// Index nodes as the stores write them: packed (the shared key prefix once, varint
    /// pointers, as ForestDB's nodes hold short entries; default) or plain.
    pub node_layout: NodeLayout,
    /// The leaves a WAL flush rewrites side by side cut again as one filled run (default on).
    pub refill_leaves: bool,
    /// Retired DB header pages held in their file until the whole-file compaction that ends
    /// their generation, then trimmed with it (ForestDB never overwrites a header: it dies
    /// with its file; default), or given back to the store's allocator untrimmed at the next
    /// commit (the file then writes the page again itself one lap later: `reuse`).
    pub retired_headers: RetiredHeaders,
    /// Any page a store frees within a generation (an index node a WAL flush rewrote, a data
    /// page gone stale) reused by its allocator once the commit is durable (`reuse`, default),
    /// or held until the compaction that ends the generation, so new index nodes are appended
    /// at the file's end (`hold`, ForestDB's: `engine::kv::StalePages` cites the source).
    pub stale_pages: StalePages,
    /// The stale share that starts a compaction, estimated as ForestDB's auto-compaction does
    /// (file size less the active data: every page written since the generation began, stale
    /// index nodes and headers too; `engine::kv::StaleEstimate` cites the source) or as ours
    /// (stale document bytes on the data pages in use).
    pub stale_estimate: StaleEstimate,
    /// Where the SSD pools its free blocks and open blocks (`None`: as the preset sized to
    /// the capacity decides: per die where the spare area holds a reserve and every stream's
    /// open blocks on each die, else one pool for the device). Default: one pool for the
    /// device ([`GC_POOL`]).
    pub gc_pool: Option<ssd::GcPool>,
    /// The stores' trims passed on to the SSD during the measured runs (`true`: ext4 mounted
    /// with `discard`, every block a compaction or a release frees dies on the drive at once),
    /// or dropped (`false`, default: the drive counts a freed page valid until its LBA is
    /// written again). Why dropped by default: P5's Ubuntu 14.04 mounts ext4 without
    /// `discard`; its weekly `fstrim-all` cron job (which trims Samsung drives such as the
    /// PM953) runs at most once a week, so a 6.5 h or 24 h run sees at most one trim of the
    /// free space, and P5 mentions none. The switch measures how much of the streams' gain
    /// rests on when freed pages die (`multistream_probe -- trim`).
    pub discard: bool,
    /// The stores punch holes for the pages their compaction commits free and that stay free
    /// `Options::trim_after_commits` commits (`true`, default), or not until they close,
    /// after the measurement (`false`). With in-file reuse (`CompactionMode::Incremental`)
    /// `false` is ForestDB's block reuse as P5 §4 describes it: a stale block is overwritten
    /// in place, never punched, so ext4 keeps it at its LBA and the drive sees the file
    /// rewrite it (with holes, each re-written page gets a new block from the allocator).
    /// The freed extents wait in memory until close.
    pub store_trims: bool,
    /// Every logical page written once before the stores load (`true`, default: an aged
    /// drive), or the drive as `mkfs.ext4` leaves it (`false`: e2fsprogs 1.42, Ubuntu 14.04's,
    /// discards the whole device when it makes the file system, so a page no file wrote since
    /// is free on the drive).
    pub aged_drive: bool,
    /// A periodic `fstrim` of the file system's free space (`Some(x)`: at the start of the
    /// update phase and after every `x` capacities the host writes), or none (`None`, default).
    /// Why none by default: Ubuntu 14.04 runs `fstrim-all` weekly from cron; P5's drive took
    /// ~175 GB an hour (4,203 GB in 24 h without streams), ~61 capacities of 480 GB a week, so
    /// a 6.5 h run (~2.4 capacities) sees a trim with odds of about 6.5 / 168, and at most one.
    pub fstrim_every: Option<f64>,
    /// How the SSD picks a GC victim among the closed blocks of its pool (the whole device,
    /// [`GC_POOL`]): `Greedy` (default: fewest valid pages), `CostBenefit` (LFS's
    /// `(1 − u) · age / 2u`: an old block before a young one with as few valid pages) or `Fifo`
    /// (the oldest block). Greedy by default because the PM953's policy is not published (an
    /// assumption, as is the device-wide pool: its victims are not chosen per stream).
    /// Cost-benefit measures whether the superblock's dead pages in young data blocks draw GC
    /// to blocks whose data is still live (`multistream_probe -- gcpolicy`): it keeps the
    /// stream gains where greedy has them (2026-11-29-p5-6.md).
    pub gc_policy: ssd::GcPolicy,
    /// Where the SSD takes a GC victim from: any closed block of its pool (`Device`, default:
    /// the PM953's victim choice is not published, and a drive that pools its blocks for the
    /// device needs no more) or the blocks of the stream that needs a free block (`Stream`:
    /// a multi-stream SSD that keeps each stream in a block set of its own and collects a
    /// stream's garbage when it writes; `ssd::GcVictimScope`). With `Stream` a run under the
    /// GC mode `separate` is refused (its shared GC stream belongs to no stream). Measured
    /// (`multistream_probe -- gcvictim`): per stream lowers every gain at both scales, as the
    /// spare area no longer moves to the stream whose blocks hold the garbage
    /// (2026-11-29-p5-7.md).
    pub gc_victim: ssd::GcVictimScope,
    /// The SSD's over-provisioning, (physical − logical) / logical (`None`, default: the
    /// preset's, 14.5 %, the PM953's 512 GiB of flash for 480 GB). A probe, not a fit: a
    /// smaller spare area stands in for the spare that dead superblock pages hold inside data
    /// blocks when the two share a stream (`multistream_probe -- op`).
    pub op: Option<f64>,
}

impl Plan {
    pub fn new(opts: &ReproduceOptions) -> Plan {
        let capacity_bytes = opts.capacity.unwrap_or(match opts.scale {
            // 512 MiB: the smallest power of two that keeps the superblock's lifetime factor
            // of P5's shape. A slot is rewritten every ~770 device writes at every capacity
            // while the other types live about a capacity of writes, so the factor is the
            // device's pages over ~770 and a scale-down below ~290 MiB breaks it (128 MiB:
            // 45x; 512 MiB: 164x; P5's 480 GB: 1,017x). Was 128 MiB; data's write share
            // then rises from 81.8 to 82.8 % (P5 77.0 %), as at 1 GiB (82.9 %)
            // (docs/results/2026-11-29-p5-8.md).
            Scale::Quick => 512 << 20,
            Scale::Paper => 1 << 30,
        });
        Plan {
            capacity_bytes,
            files: FILES,
            device_streams: opts.streams.unwrap_or(DEVICE_STREAMS_DEFAULT),
            policies: NamedPolicy::EVERY
                .into_iter()
                .map(MapSpec::Policy)
                .chain(opts.stream_map.iter().cloned().map(MapSpec::File))
                .collect(),
            gc_modes: GC_MODES.to_vec(),
            value_bytes: VALUE_BYTES,
            ops_per_commit: OPS_PER_COMMIT,
            live_share: LIVE_SHARE,
            pages_per_block: PAGES_PER_BLOCK,
            max_host_x: MAX_HOST_X,
            write_path: WritePath::Wal,
            wal_flush_docs_max: None,
            wal_flush_share: None,
            compaction_mode: CompactionMode::WholeFile,
            next_fit: true,
            fs_chunk_pages: Some(FS_CHUNK_PAGES),
            chunk_goal: CHUNK_GOAL,
            db_files: DbFiles::Partitions,
            fs_free_space: true,
            node_layout: NodeLayout::Packed,
            refill_leaves: true,
            retired_headers: RetiredHeaders::Hold,
            stale_pages: StalePages::Reuse,
            stale_estimate: StaleEstimate::FileSize,
            gc_pool: Some(GC_POOL),
            discard: false,
            store_trims: true,
            aged_drive: true,
            fstrim_every: None,
            gc_policy: ssd::GcPolicy::Greedy,
            gc_victim: ssd::GcVictimScope::Device,
            op: None,
        }
    }

    fn config(&self) -> serde_json::Value {
        json!({
            "capacity_bytes": self.capacity_bytes,
            "files": self.files,
            "device_streams": self.device_streams,
            "policies": self.policies.iter().map(|p| p.name()).collect::<Vec<_>>(),
            "gc_modes": self.gc_modes.iter().map(|&m| gc_name(m)).collect::<Vec<_>>(),
            "value_bytes": self.value_bytes,
            "key_bytes": KEY_BYTES,
            "ops_per_commit": self.ops_per_commit,
            "live_share": self.live_share,
            "compact_threshold": COMPACT_THRESHOLD,
            "max_host_x": self.max_host_x,
            "preset": PRESET,
            "page_bytes": PAGE_BYTES,
            "pages_per_block": self.pages_per_block,
            "fill": FILL,
            "sample_share": SAMPLE_SHARE,
            "flat_block_x": FLAT_BLOCK_X,
            "flat_tolerance": FLAT_TOLERANCE,
            "write_path": self.write_path.name(),
            "wal_flush_docs_max": self.wal_flush_docs_max,
            "wal_flush_share": self.wal_flush_share,
            "compaction_mode": self.compaction_mode.name(),
            "next_fit": self.next_fit,
            "fs_chunk_pages": self.fs_chunk_pages,
            "chunk_goal": self.chunk_goal.name(),
            "db_files": self.db_files.name(),
            "fs_free_space": self.fs_free_space,
            "gc_pool": self.gc_pool.map(|p| format!("{p:?}")),
            "node_layout": self.node_layout.name(),
            "refill_leaves": self.refill_leaves,
            "retired_headers": self.retired_headers.name(),
            "stale_pages": self.stale_pages.name(),
            "stale_estimate": self.stale_estimate.name(),
            "discard": self.discard,
            "store_trims": self.store_trims,
            "aged_drive": self.aged_drive,
            "fstrim_every": self.fstrim_every,
            "gc_policy": self.gc_policy,
            "gc_victim": self.gc_victim.name(),
            "op": self.op,
        })
    }
}

/// What bounds a DB file's size on the file system.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DbFiles {
    /// Each file a partition of its share of the space (`FILL` / files): it must hold its old
    /// and new generation and the growth between compactions itself, so its live documents
    /// stay at `live_share` of it (0.25; at 0.30 a file runs out of its partition) and the
    /// files fill ~30 % of the file system: the freed pages wait long for a writer.
    Partitions,
    /// Each file a file of one shared file system (ext4 on P5's drive): an address space of
    /// `space_x` times its share, bounded only by the pool of free chunks, so one file's new
    /// generation takes space other files are not using. Live documents are `live_share` of
    /// its share, as with partitions. Why: P5's 32 files share one ext4 and hold 400 GB of its
    /// 480 GB, so a block a deleted file freed is taken again soon.
    Shared { space_x: u32 },
}

impl DbFiles {
    pub fn name(self) -> String {
        match self {
            DbFiles::Partitions => "partitions".to_string(),
            DbFiles::Shared { space_x } => format!("shared (address space {space_x}x its share)"),
        }
    }

    /// The DB file's partition of `shared`: `pages` pages its share of the space.
    fn make<D: BlockDevice>(
        self,
        shared: &mut SharedDevice<D>,
        pages: u64,
    ) -> Result<Partition<D>> {
        Ok(match self {
            DbFiles::Partitions => shared.partition(pages)?,
            DbFiles::Shared { space_x } => shared.file(pages * u64::from(space_x), pages)?,
        })
    }
}

/// A stream map to run: a named policy or a user's TOML file.
#[derive(Clone, Debug, PartialEq)]
pub enum MapSpec {
    Policy(NamedPolicy),
    File(PathBuf),
}

impl MapSpec {
    /// The policy's name, or the file's path.
    pub fn name(&self) -> String {
        match self {
            MapSpec::Policy(p) => p.name().to_string(),
            MapSpec::File(f) => f.display().to_string(),
        }
    }

    fn build(&self, files: u32, device_streams: u16) -> Result<StreamMap, StreamMapError> {
        match self {
            MapSpec::Policy(p) => StreamMap::policy(*p, files, device_streams),
            MapSpec::File(f) => StreamMap::load(f, files, device_streams),
        }
    }
}

/// The SSD's GC placement modes, the SSD's default (`per-stream`) first: its figures are the
/// rows' unsuffixed columns.
pub const GC_MODES: [GcStreamMode; 3] = [
    GcStreamMode::PerStream,
    GcStreamMode::Separate,
    GcStreamMode::Victim,
];

pub fn gc_name(m: GcStreamMode) -> &'static str {
    m.name()
}

/// One WAF sample: counters since the update phase began.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    host_pages: u64,
    flash_pages: u64,
    sim_ns: u64,
}

/// One (policy, GC mode) run.
struct Run {
    policy: MapSpec,
    gc: GcStreamMode,
    samples: Vec<Sample>,
    stats: ssd::Stats,
    flat: bool,
    logical_pages: u64,
    page_bytes: u64,
    lifetimes: Option<LifetimeReport>,
    auto_mapping: Vec<(u32, DataType, u16)>,
    /// `oracle`: its groups `(lifetime low, high, stream)`, writes placed, writes recorded.
    oracle: Option<OracleGroups>,
    /// Per device stream over the update phase: host pages and GC copies out of its blocks.
    gc_by_stream: Vec<gc_streams::StreamGc>,
    /// The periodic fstrims of the update phase (`Plan::fstrim_every`).
    fstrims: Fstrims,
    /// Compactions each DB file finished over the run's update phase.
    compactions: Compactions,
}

/// Compaction passes the DB files finished over a run's update phase (whole-file by default:
/// each a new file written and the old one deleted), over the files: fewest, mean, most.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Compactions {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
    pub total: u64,
}

impl Compactions {
    /// The summary of per-file counts (index = DB file).
    pub fn of(per_file: &[u64]) -> Compactions {
        assert!(!per_file.is_empty(), "at least one DB file");
        let total: u64 = per_file.iter().sum();
        let c = Compactions {
            min: *per_file.iter().min().expect("a file"),
            mean: total as f64 / per_file.len() as f64,
            max: *per_file.iter().max().expect("a file"),
            total,
        };
        assert!(
            c.min as f64 <= c.mean && c.mean <= c.max as f64,
            "min <= mean <= max: {c:?}"
        );
        c
    }
}

/// Periodic fstrims in a run: how many, and the free pages they trimmed in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Fstrims {
    trims: u64,
    pages: u64,
}

type OracleGroups = (Vec<(u64, u64, u16)>, u64, u64);

impl Run {
    fn sim_ns(&self) -> u64 {
        self.samples.last().map_or(0, |s| s.sim_ns)
    }
    /// WAF of the last flatness block (`FLAT_BLOCK_X` capacities; all if fewer were written).
    fn final_waf(&self) -> f64 {
        let n = self.samples.len();
        let first = n.saturating_sub(block_windows() + 1);
        let (a, b) = (self.samples[first], self.samples[n - 1]);
        ratio(b.flash_pages - a.flash_pages, b.host_pages - a.host_pages)
    }
    fn window_wafs(&self) -> Vec<(f64, f64)> {
        self.samples
            .windows(2)
            .map(|w| {
                (
                    w[1].host_pages as f64 / self.logical_pages as f64,
                    ratio(
                        w[1].flash_pages - w[0].flash_pages,
                        w[1].host_pages - w[0].host_pages,
                    ),
                )
            })
            .collect()
    }
    /// Host pages written by simulated time `t_ns` (linear between samples).
    fn host_pages_by(&self, t_ns: u64) -> f64 {
        let mut prev = Sample::default();
        for &s in &self.samples {
            if s.sim_ns >= t_ns {
                let span = (s.sim_ns - prev.sim_ns).max(1) as f64;
                let f = (t_ns - prev.sim_ns) as f64 / span;
                return prev.host_pages as f64 + f * (s.host_pages - prev.host_pages) as f64;
            }
            prev = s;
        }
        prev.host_pages as f64
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Sample windows in one flatness block.
fn block_windows() -> usize {
    (FLAT_BLOCK_X / SAMPLE_SHARE).round() as usize
}

/// Whether WAF is flat after `samples` (cumulative counters, one per window, the first at 0):
/// the WAF of the last `FLAT_BLOCK_X` capacities written and that of the block before differ
/// by at most `FLAT_TOLERANCE` of the earlier.
fn is_flat(samples: &[Sample]) -> bool {
    let k = block_windows();
    let n = samples.len();
    if n < 2 * k + 1 {
        return false;
    }
    let waf =
        |a: Sample, b: Sample| ratio(b.flash_pages - a.flash_pages, b.host_pages - a.host_pages);
    let earlier = waf(samples[n - 1 - 2 * k], samples[n - 1 - k]);
    let last = waf(samples[n - 1 - k], samples[n - 1]);
    earlier > 0.0 && (last - earlier).abs() <= FLAT_TOLERANCE * earlier
}

fn device(plan: &Plan, gc: GcStreamMode) -> Result<SimDevice> {
    crate::devices::sim_device_checked(device_config(plan, gc)?, "--capacity")
}

fn device_config(plan: &Plan, gc: GcStreamMode) -> Result<SsdConfig> {
    let mut cfg = SsdConfig::preset(PRESET)?;
    cfg.geometry.page_bytes = PAGE_BYTES as u32;
    cfg.geometry.pages_per_block = plan.pages_per_block;
    cfg.ftl.streams = plan.device_streams;
    cfg.ftl.gc_stream = gc;
    cfg.ftl.gc_policy = plan.gc_policy;
    cfg.ftl.gc_victim = plan.gc_victim;
    if let Some(op) = plan.op {
        anyhow::ensure!(
            op.is_finite() && op > 0.0,
            "over-provisioning {op}: give a share above 0, e.g. 0.145"
        );
        cfg.ftl.op = op;
    }
    if let Some(p) = plan.gc_pool {
        cfg.ftl.gc_pool = p;
    }
    let context = || {
        format!(
            "--capacity {} bytes on preset {PRESET} with {} streams",
            plan.capacity_bytes, plan.device_streams
        )
    };
    cfg.with_logical_capacity(plan.capacity_bytes)
        .with_context(context)
}

/// Age the drive: every logical page written once, sequentially, on the default stream (the
/// file system's earlier contents; without `discard` the SSD counts them valid until
/// overwritten, as P5's drive after its 400 GB load and hours of compactions).
fn precondition(dev: &mut impl BlockDevice) -> Result<()> {
    const CHUNK_PAGES: u64 = 64;
    let zeros = vec![0u8; CHUNK_PAGES as usize * PAGE_BYTES];
    let pages = dev.capacity_pages();
    let mut p = 0;
    while p < pages {
        let n = CHUNK_PAGES.min(pages - p);
        dev.write(
            p,
            &zeros[..n as usize * PAGE_BYTES],
            blockdev::WriteHint::NONE,
        )?;
        p += n;
    }
    Ok(())
}

struct Files {
    stores: Vec<Store>,
    keys_per_file: u64,
    pending: Vec<u32>,
}

fn store_options(plan: &Plan, file_pages: u64, keys_per_file: u64) -> Options {
    Options {
        cache_pages: CACHE_PAGES,
        compact_threshold: COMPACT_THRESHOLD,
        compact_min_bytes: file_pages * PAGE_BYTES as u64 / 20,
        streams: NamedPolicy::PerType,
        write_path: plan.write_path,
        wal_flush_docs: wal_flush_docs(plan, keys_per_file),
        compaction_mode: plan.compaction_mode,
        next_fit: plan.next_fit,
        node_layout: plan.node_layout,
        refill_leaves: plan.refill_leaves,
        retired_headers: plan.retired_headers,
        stale_pages: plan.stale_pages,
        stale_estimate: plan.stale_estimate,
        trim_after_commits: if plan.store_trims {
            Options::default().trim_after_commits
        } else {
            u64::MAX
        },
        ..Options::default()
    }
}

/// The WAL flush threshold of a file with `keys_per_file` keys: `wal_flush_share` of its keys
/// when set, else the file's key count; at most `wal_flush_docs_max` if set and at least one
/// document. (A WAL larger than the live data would hold most of a small file's
/// space until its flush.)
pub fn wal_flush_docs(plan: &Plan, keys_per_file: u64) -> u64 {
    let docs = match plan.wal_flush_share {
        Some(share) => {
            assert!(share > 0.0 && share <= 1.0, "WAL flush share {share}");
            (keys_per_file as f64 * share).round() as u64
        }
        None => keys_per_file,
    };
    plan.wal_flush_docs_max.map_or(docs, |m| m.min(docs)).max(1)
}

fn key(k: u64) -> [u8; KEY_BYTES] {
    let mut b = [b'0'; KEY_BYTES];
    let s = format!("{k:0width$}", width = KEY_BYTES);
    b.copy_from_slice(&s.as_bytes()[..KEY_BYTES]);
    b
}

/// Pages of each DB file's partition on a device of `logical` pages.
fn file_pages(plan: &Plan, logical: u64) -> u64 {
    (logical as f64 * FILL / plan.files as f64) as u64
}

/// The stores, each opened on what `wrap` makes of its partition (index = DB file).
fn open_files<D: BlockDevice + 'static>(
    shared: &mut SharedDevice<D>,
    plan: &Plan,
    mut wrap: impl FnMut(usize, Partition<D>) -> Box<dyn BlockDevice>,
) -> Result<Files> {
    let logical = shared.device().capacity_pages();
    let file_pages = file_pages(plan, logical);
    let doc_bytes = (plan.value_bytes + KEY_BYTES + 32) as u64;
    let keys_per_file = (file_pages as f64 * plan.live_share * PAGE_BYTES as f64 / doc_bytes as f64)
        .max(1.0) as u64;
    let mut stores = Vec::with_capacity(plan.files as usize);
    for f in 0..plan.files {
        let part = plan.db_files.make(shared, file_pages)?;
        let opts = store_options(plan, file_pages, keys_per_file);
        let s =
            Store::open(wrap(f as usize, part), opts).with_context(|| format!("DB file {f}"))?;
        stores.push(s);
    }
    add_free_space(shared, plan)?;
    Ok(Files {
        stores,
        keys_per_file,
        pending: vec![0; plan.files as usize],
    })
}

/// The plan's partitions of `shared`, one per DB file, as the stores would get them.
fn partitions<D: BlockDevice>(
    shared: &mut SharedDevice<D>,
    plan: &Plan,
) -> Result<Vec<Partition<D>>> {
    let pages = file_pages(plan, shared.device().capacity_pages());
    let parts = (0..plan.files)
        .map(|_| plan.db_files.make(shared, pages))
        .collect::<Result<Vec<_>>>()?;
    add_free_space(shared, plan)?;
    Ok(parts)
}

/// With `plan.fs_free_space`, the logical space the DB files do not fill joins the file
/// system's free chunks (ext4's free blocks, which any file may take).
fn add_free_space<D: BlockDevice>(shared: &mut SharedDevice<D>, plan: &Plan) -> Result<()> {
    if plan.fs_free_space {
        shared.add_free_space(shared.unallocated_pages())?;
    }
    Ok(())
}

fn load(files: &mut Files, ops_per_commit: u32, value_bytes: usize, seed: u64) -> Result<()> {
    let mut value = vec![0u8; value_bytes];
    for (f, s) in files.stores.iter_mut().enumerate() {
        for k in 0..files.keys_per_file {
            value[0] = (k ^ seed) as u8;
            value[1] = f as u8;
            s.put(&key(k), &value)?;
            if (k + 1) % ops_per_commit as u64 == 0 {
                s.commit()?;
            }
        }
        s.commit()?;
    }
    Ok(())
}

/// `shared` with the plan's placement of DB files.
fn placed<D: BlockDevice>(shared: SharedDevice<D>, plan: &Plan) -> SharedDevice<D> {
    match plan.fs_chunk_pages {
        Some(n) => shared.with_placement(blockdev::Extents::new(n).with_goal(plan.chunk_goal)),
        None => shared,
    }
}

/// The update workload's state: 100 % updates of a uniformly random file and key.
struct Updates {
    rng: ChaCha8Rng,
    value: Vec<u8>,
    op: u64,
}

impl Updates {
    fn new(plan: &Plan, seed: u64) -> Updates {
        Updates {
            rng: ChaCha8Rng::seed_from_u64(seed),
            value: vec![0u8; plan.value_bytes],
            op: 0,
        }
    }

    /// One update; the file commits every `ops_per_commit` updates it received. Returns
    /// the commit's tape event if it committed (with whether the commit ended a compaction).
    fn next(&mut self, files: &mut Files, plan: &Plan) -> Result<Option<Event>> {
        let f = self.rng.gen_range(0..plan.files as usize);
        let k = self.rng.gen_range(0..files.keys_per_file);
        self.op += 1;
        self.value[..8].copy_from_slice(&self.op.to_le_bytes());
        let store = &mut files.stores[f];
        store.put(&key(k), &self.value)?;
        files.pending[f] += 1;
        if files.pending[f] < plan.ops_per_commit {
            return Ok(None);
        }
        files.pending[f] = 0;
        let before = store.generation();
        store.commit()?;
        let after = store.generation();
        assert!(
            after == before || after == before + 1,
            "a commit ends at most one compaction (generation {before} -> {after})"
        );
        Ok(Some(Event::Commit {
            file: u16::try_from(f).expect("at most u16::MAX DB files"),
            compaction_done: after > before,
        }))
    }
}

/// The stores' I/O (see [`tape`]): the same load and updates on a RAM device, every call on
/// a partition recorded, up to a little more than the longest update phase a run may have.
fn record(plan: &Plan, seed: u64) -> Result<Tape> {
    let cfg = device_config(plan, plan.gc_modes[0])?;
    // The RAM device holds every logical page, as a payload-keeping simulated SSD does: refuse
    // a capacity that does not fit the memory limit before allocating it.
    let mut payloads = cfg.clone();
    payloads.ftl.data = ssd::DataMode::Payloads;
    crate::devices::check_memory(&payloads, "--capacity")?;
    let logical_pages = cfg.logical_pages();
    let mut mem = MemDevice::new(PAGE_BYTES, logical_pages);
    precondition(&mut mem)?;
    let shared = SharedDevice::new(mem).without_discard();
    let mut shared = placed(shared, plan);
    let tape = Rc::new(RefCell::new(Tape::default()));
    let mut files = open_files(&mut shared, plan, |f, part| {
        Box::new(Recording {
            inner: part,
            file: u16::try_from(f).expect("at most u16::MAX DB files"),
            tape: tape.clone(),
        })
    })?;
    load(&mut files, plan.ops_per_commit, plan.value_bytes, seed)?;
    let load_events = tape.borrow().events.len();
    tape.borrow_mut().load_events = load_events;
    let window_pages = ((logical_pages as f64 * SAMPLE_SHARE) as u64).max(1);
    let max_pages = (logical_pages as f64 * plan.max_host_x) as u64;
    let until = tape.borrow().pages_written + max_pages + window_pages;
    let mut updates = Updates::new(plan, seed);
    loop {
        let Some(commit) = updates.next(&mut files, plan)? else {
            continue;
        };
        tape.borrow_mut().push(commit);
        if tape.borrow().pages_written >= until {
            break;
        }
    }
    drop(files);
    let tape = std::mem::take(&mut *tape.borrow_mut());
    Ok(tape)
}

/// The `oracle`'s first pass: the tape replayed on a RAM device, every page write recorded
/// with its death time.
fn oracle_placement(plan: &Plan, tape: &Tape) -> Result<OracleStreams> {
    let logical_pages = device_config(plan, plan.gc_modes[0])?.logical_pages();
    let mem = MemDevice::new(PAGE_BYTES, logical_pages);
    let rec = Rc::new(RefCell::new(DeathRecorder::new(logical_pages)));
    let shared = SharedDevice::with_streams(mem, Box::new(rec.clone())).without_discard();
    let mut shared = placed(shared, plan);
    let mut player = Player::new(partitions(&mut shared, plan)?);
    for e in &tape.events {
        player.play(e)?;
    }
    drop(player);
    drop(shared);
    let rec = std::mem::take(&mut *rec.borrow_mut());
    Ok(rec.into_streams(plan.device_streams))
}

/// What ends each type's pages over the recorded update phase ([`deaths`]): the tape replayed
/// on a RAM device through the same placement.
fn death_lines(plan: &Plan, tape: &Tape) -> Result<(Vec<deaths::DeathLine>, FsFill)> {
    let logical_pages = device_config(plan, plan.gc_modes[0])?.logical_pages();
    let mem = MemDevice::new(PAGE_BYTES, logical_pages);
    let counter = Rc::new(RefCell::new(deaths::DeathCounter::new(logical_pages)));
    let shared = SharedDevice::with_streams(mem, Box::new(counter.clone())).without_discard();
    let mut shared = placed(shared, plan);
    let mut player = Player::new(partitions(&mut shared, plan)?);
    for e in tape.load() {
        player.play(e)?;
    }
    counter.borrow_mut().start();
    let mut fill = FsFill::default();
    for (i, e) in tape.updates().iter().enumerate() {
        player.play(e)?;
        if i % FILL_SAMPLE_EVENTS == 0 {
            if let Some(p) = shared.placed_pages() {
                fill.add(p as f64 / logical_pages as f64);
            }
        }
    }
    drop(player);
    let lines = counter.borrow().lines();
    Ok((lines, fill))
}

/// The tape's events between two samples of how much of the file system the files hold.
const FILL_SAMPLE_EVENTS: usize = 1024;

/// Share of the logical space the DB files hold on the file system (placed pages: live, and
/// stale until their generation's compaction trims them), sampled over the update phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct FsFill {
    samples: u64,
    sum: f64,
    max: f64,
}

impl FsFill {
    fn add(&mut self, share: f64) {
        self.samples += 1;
        self.sum += share;
        self.max = self.max.max(share);
    }

    /// Mean and largest share, if sampled.
    pub fn mean_max(&self) -> Option<(f64, f64)> {
        (self.samples > 0).then(|| (self.sum / self.samples as f64, self.max))
    }

    fn note(&self, plan: &Plan) -> Option<String> {
        let (mean, max) = self.mean_max()?;
        Some(format!(
            "File system held by the DB files ({}), over the update phase: mean {:.1} %, at most {:.1} % of the logical space (P5: 400 GB of DB files on the 480 GB drive, {:.1} %). What is not held is free space: a page a deleted generation freed waits for a writer in proportion to it.",
            plan.db_files.name(),
            mean * 100.0,
            max * 100.0,
            FILL * 100.0
        ))
    }
}

fn sample(shared: &SharedDevice<SimDevice>, base: &ssd::Stats, t0: u64) -> Sample {
    let d = shared.device();
    let s = d.ssd().stats().since(base);
    Sample {
        host_pages: s.host_pages_written,
        flash_pages: s.flash_pages_written,
        sim_ns: d.now_ns() - t0,
    }
}

fn run_one(
    plan: &Plan,
    policy: &MapSpec,
    gc: GcStreamMode,
    tape: &Tape,
    lifetimes: bool,
    oracle: Option<&OracleStreams>,
) -> Result<Run> {
    let mut dev = device(plan, gc)?;
    let logical_pages = dev.capacity_pages();
    if plan.aged_drive {
        precondition(&mut dev)?;
    }
    let map = policy.build(plan.files, plan.device_streams)?;
    let mut streams = ClassStreams::new(map, logical_pages);
    if streams.map().is_oracle() {
        let o = oracle.context("the oracle policy runs after its recording pass")?;
        streams = streams.with_oracle(o.clone());
    }
    let router = Rc::new(RefCell::new(streams));
    let shared = SharedDevice::with_streams(dev, Box::new(router.clone()));
    let shared = if plan.discard {
        shared
    } else {
        shared.without_discard()
    };
    let mut shared = placed(shared, plan);
    let mut player = Player::new(partitions(&mut shared, plan)?);
    for e in tape.load() {
        player.play(e)?;
    }
    if lifetimes {
        router.borrow_mut().measure_lifetimes(logical_pages);
    }
    let base = shared.device().ssd().stats();
    let base_by_stream = gc_streams::snapshot(shared.device().ssd());
    let t0 = shared.device().now_ns();
    let window_pages = ((logical_pages as f64 * SAMPLE_SHARE) as u64).max(1);
    let max_pages = (logical_pages as f64 * plan.max_host_x) as u64;
    let mut samples = vec![Sample::default()];
    let mut events = tape.updates().iter();
    let trim_every = plan.fstrim_every.map(|x| {
        assert!(x > 0.0, "fstrim period {x} capacities");
        ((logical_pages as f64 * x) as u64).max(1)
    });
    let mut next_trim = 0;
    let mut fstrims = Fstrims::default();
    let mut compactions = vec![0u64; plan.files as usize];
    let flat = loop {
        let e = events.next().context(
            "the recorded updates ended before the run (a tape shorter than max_host_x)",
        )?;
        player.play(e)?;
        let Event::Commit {
            file,
            compaction_done,
        } = *e
        else {
            continue;
        };
        compactions[usize::from(file)] += u64::from(compaction_done);
        let s = sample(&shared, &base, t0);
        if let Some(every) = trim_every {
            // Between two commits, as a cron job runs between the stores' writes.
            if s.host_pages >= next_trim {
                fstrims.trims += 1;
                fstrims.pages += shared.fstrim()?;
                next_trim = s.host_pages + every;
            }
        }
        let last = *samples.last().expect("a first sample");
        if s.host_pages - last.host_pages < window_pages {
            continue;
        }
        samples.push(s);
        if is_flat(&samples) {
            break true;
        }
        if s.host_pages >= max_pages {
            break false;
        }
    };
    drop(player);
    let stats = shared.device().ssd().stats().since(&base);
    let gc_by_stream = gc_streams::since(
        &gc_streams::snapshot(shared.device().ssd()),
        &base_by_stream,
    );
    if gc != GcStreamMode::Separate {
        // Every GC block belongs to a stream: the streams' copies are all of them.
        let copied: u64 = gc_by_stream.iter().map(|s| s.gc_pages_copied).sum();
        assert_eq!(copied, stats.gc_pages_copied, "per-stream GC copies add up");
    }
    let r = router.borrow();
    Ok(Run {
        policy: policy.clone(),
        gc,
        samples,
        stats,
        flat,
        logical_pages,
        page_bytes: PAGE_BYTES as u64,
        lifetimes: r.lifetimes(),
        auto_mapping: r.auto_mapping(),
        oracle: r.oracle().map(|o| (o.groups(), o.placed(), o.recorded())),
        gc_by_stream,
        fstrims,
        compactions: Compactions::of(&compactions),
    })
}

/// Every (GC mode, policy) run of `plan`, side by side under `--jobs` (the runs are
/// independent; each is a function of the plan and seed, so the figures do not depend on the
/// threads), in the plan's order (GC mode, then policy). The oracle's recording pass is made
/// once, by the first oracle run to need it (the others wait for it). Prints a `partial:`
/// line as each run finishes (a cut run keeps what it printed).
/// The config's `age_at_release`: per type, pages released and their mean age (page writes).
fn config_release(config: &mut serde_json::Value, lines: &[release::ReleaseLine]) {
    config["age_at_release"] = lines
        .iter()
        .map(|l| {
            json!({"data_type": l.data_type.name(), "released": l.released, "rewritten_share": l.rewritten_share, "mean_age_writes": l.mean_age_writes})
        })
        .collect();
}

/// Each run, what ends each type's pages on the device, and their age at release.
type AllRuns = (
    Vec<Run>,
    Vec<deaths::DeathLine>,
    Vec<release::ReleaseLine>,
    FsFill,
);

fn run_all(opts: &ReproduceOptions, plan: &Plan) -> Result<AllRuns> {
    let mut tasks = Vec::new();
    for (g, &gc) in plan.gc_modes.iter().enumerate() {
        for (i, p) in plan.policies.iter().enumerate() {
            tasks.push((g * plan.policies.len() + i, gc, p));
        }
    }
    let steps = Steps::new(opts, tasks.len());
    let seed = opts.seed;
    let tape: OnceLock<Result<Tape, String>> = OnceLock::new();
    let oracle: OnceLock<Result<OracleStreams, String>> = OnceLock::new();
    let err = |e: &String| anyhow::anyhow!("{e}");
    let runs = crate::parallel::try_map(&opts.jobs, tasks, |(i, gc, p)| {
        let what = format!("policy {} gc {}", p.name(), gc_name(gc));
        let _step = steps.step(&what);
        let t = tape.get_or_init(|| record(plan, seed).map_err(|e| format!("{e:#}")));
        let t = t.as_ref().map_err(err)?;
        let o = if matches!(p, MapSpec::Policy(NamedPolicy::Oracle)) {
            let rec =
                oracle.get_or_init(|| oracle_placement(plan, t).map_err(|e| format!("{e:#}")));
            Some(rec.as_ref().map_err(err)?)
        } else {
            None
        };
        let r = run_one(plan, p, gc, t, i == 0, o)?;
        opts.progress(format_args!(
            "partial: {what}: WAF {:.3} (flat {}), cumulative {:.3}, {:.1} capacities written",
            r.final_waf(),
            if r.flat { "yes" } else { "no" },
            r.stats.waf(),
            ratio(r.stats.host_pages_written, r.logical_pages)
        ));
        Ok::<Run, anyhow::Error>(r)
    })?;
    let ((lines, fill), released) = match tape.get() {
        Some(Ok(t)) => (
            death_lines(plan, t)?,
            release::release_lines(t.load(), t.updates()),
        ),
        _ => ((Vec::new(), FsFill::default()), Vec::new()),
    };
    Ok((runs, lines, released, fill))
}

/// Each policy's gap to the oracle (per GC mode), and the oracle's lifetime groups.
fn oracle_notes(plan: &Plan, runs: &[Run]) -> Vec<String> {
    let oracle = MapSpec::Policy(NamedPolicy::Oracle);
    let mut n = Vec::new();
    for &gc in &plan.gc_modes {
        let Some(o) = find(runs, &oracle, gc).map(Run::final_waf) else {
            continue;
        };
        let gaps: Vec<String> = plan
            .policies
            .iter()
            .filter(|p| **p != oracle)
            .filter_map(|p| {
                let w = find(runs, p, gc)?.final_waf();
                Some(format!("{} {:+.1} %", p.name(), (w / o - 1.0) * 100.0))
            })
            .collect();
        n.push(format!(
            "gap to the oracle (gc {}; WAF {o:.3}; a policy's WAF above the oracle's): {}",
            gc_name(gc),
            gaps.join(", ")
        ));
    }
    if let Some((groups, placed, recorded)) =
        find(runs, &oracle, plan.gc_modes[0]).and_then(|r| r.oracle.as_ref())
    {
        let g: Vec<String> = groups
            .iter()
            .map(|&(lo, hi, s)| {
                let eternal = policy::streams::oracle::ETERNAL;
                match (lo == eternal, hi == eternal) {
                    (true, _) => format!("stream {s}: never overwritten"),
                    (false, true) => format!("stream {s}: {lo}.. and never overwritten"),
                    (false, false) => format!("stream {s}: {lo}..{hi}"),
                }
            })
            .collect();
        n.push(format!(
            "oracle: each page write placed by its death time, known from a first pass of the same load and updates on a RAM device ({recorded} page writes recorded, {placed} placed); streams by remaining lifetime in device page writes: {}",
            g.join("; ")
        ));
    }
    n
}

pub fn run(opts: &ReproduceOptions) -> Result<Output> {
    run_with(opts, &Plan::new(opts))
}

/// Run `plan` (tests use smaller plans than the scales).
pub fn run_with(opts: &ReproduceOptions, plan: &Plan) -> Result<Output> {
    anyhow::ensure!(!plan.gc_modes.is_empty(), "multistream: no GC mode to run");
    anyhow::ensure!(
        !plan.policies.is_empty(),
        "multistream: no stream policy to run"
    );
    for p in &plan.policies {
        // A bad map file fails here, before any run.
        p.build(plan.files, plan.device_streams)?;
    }
    let (runs, death, released, fill) = run_all(opts, plan)?;
    let lifetimes = runs.iter().find_map(|r| r.lifetimes.clone());
    let lrows = lifetimes.as_ref().map(lifetime_rows).unwrap_or_default();
    let rows = rows(&runs, plan);
    let mut config = plan.config();
    config["lifetime"] = serde_json::to_value(&lrows)?;
    let mut report = Report::new("multistream", opts, config);
    report.set_rows(&rows);
    report.paper = papers::p5().rows.clone();
    report.config["gc_by_stream"] = gc_streams::config(plan, &runs);
    if let Some(c) = tables::compactions_config(plan, &runs) {
        report.config["compactions_per_file"] = c;
    }
    report.notes = notes(plan, &runs);
    report.notes.extend(gc_streams::note(plan, &runs));
    if !death.is_empty() {
        report.notes.push(deaths::note(&death));
    }
    report.notes.extend(fill.note(plan));
    if let Some((mean, max)) = fill.mean_max() {
        report.config["fs_fill"] = json!({"mean": mean, "max": max});
    }
    if !released.is_empty() {
        let life: Vec<_> = death
            .iter()
            .map(|d| (d.data_type, d.mean_lifetime_writes))
            .collect();
        report.notes.push(release::note(&released, &life));
        report.notes.extend(release::order_note(&released, &life));
        config_release(&mut report.config, &released);
        report.config["reuse_wait_share"] = json!(release::reuse_wait_share(&released, &life));
    }
    // After the config holds every measurement the claims' notes read.
    report.claims = claims::claims(&report);
    report.series = series(&runs, plan, lifetimes.as_ref());
    let tables = vec![
        waf_table(&runs, plan),
        volume_table(&rows, plan),
        lifetime_table(&lrows),
    ];
    Ok(Output { report, tables })
}
