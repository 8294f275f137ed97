//! The config's types: geometry, timing and FTL settings, as TOML gives them (serde).
//!
//! Units are in the field names. Over-provisioning `op` is (physical − logical) / logical.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdConfig {
    /// Free-form name, e.g. the preset's.
    #[serde(default)]
    pub name: String,
    /// What the drive is for, in a sentence (`flashlab presets` prints it). Not part of a
    /// run's config: not written back out, so results and their hashes do not depend on it.
    #[serde(default, skip_serializing)]
    pub description: String,
    pub geometry: Geometry,
    pub timing: Timing,
    pub ftl: FtlConfig,
    /// Figures the drive's maker or a paper published for this drive (`[[published]]` rows);
    /// the simulator ignores them, `bench device` prints them beside its measurements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<PublishedFigure>,
    /// The drive's state when it is made: fresh (the default, every block erased) or aged to
    /// a steady state by writes before first use (`[aging]`).
    #[serde(default, skip_serializing_if = "Aging::is_fresh")]
    pub aging: Aging,
    /// The CMT size and logical pages the config was loaded with (see `FtlConfig::cmt_entries`).
    #[serde(skip)]
    pub(crate) loaded: Loaded,
}

/// One published figure of a drive: an access pattern, its request size and queue depth, and the
/// rate measured there, with its source. Exactly one of `mb_per_s` and `iops` is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedFigure {
    /// "random read", "random write", "sequential read" or "sequential write".
    pub what: String,
    pub request_kib: u32,
    pub queue_depth: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mb_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    /// Where the figure comes from (a paper's table, a datasheet), with enough to find it.
    pub source: String,
}

/// Writes the drive has seen before it is handed to the host (MQSim's preconditioning): every
/// logical page once in order (`fill`), then `random_writes_x` device-fulls of uniformly random
/// one-page writes (seeded by `seed`), so GC runs at its steady state from the first host
/// write. Aging takes no host time: the flash is idle (every die and channel free) when the
/// device is handed over, and its counters start from zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aging {
    #[serde(default)]
    pub fill: bool,
    /// Device-fulls of random one-page writes after the fill, from 0 to 16.
    #[serde(default)]
    pub random_writes_x: f64,
    #[serde(default)]
    pub seed: u64,
}

impl Aging {
    /// A drive as it leaves the factory: no writes before use.
    pub fn is_fresh(&self) -> bool {
        !self.fill && self.random_writes_x == 0.0
    }
}

/// What a config held when it was parsed; not part of its value (equal configs may differ here).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Loaded {
    pub(super) cmt: Option<(u32, u64)>,
}

impl PartialEq for Loaded {
    fn eq(&self, _: &Loaded) -> bool {
        true
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
}

/// Operation times and the bus. Valid ranges: `t_read_ns`, `t_prog_ns`, `t_erase_ns` at most
/// 10^10 (10 s); `channel_mb_per_s` from 0.1 to 10^6; `host_queue_depth` from 1 to 65536.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Off: the pure FTL/GC path (every operation completes at the time it is issued).
    #[serde(default = "yes")]
    pub enabled: bool,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    pub t_erase_ns: u64,
    /// Channel (bus) transfer rate, MB/s (10^6 bytes per second).
    pub channel_mb_per_s: f64,
    /// Host requests in flight at once (1 = synchronous).
    #[serde(default = "one")]
    pub host_queue_depth: u32,
    /// The host link (SATA, PCIe) rate, MB/s; 0 (the default) models no link: requests reach
    /// the flash at once and complete when the flash is done. With a rate, the link carries
    /// each request's command and data one request at a time, busy `t_cmd_ns` plus its bytes
    /// at this rate (writes cross it before the flash, reads after).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub host_mb_per_s: f64,
    /// Link time of each request's command (frames, handshake), ns; only with `host_mb_per_s`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub t_cmd_ns: u64,
    /// The controller's DRAM write cache, in pages: a write completes when its data is in the
    /// cache (a page's slot frees when its program ends); 0 (the default): when programmed.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub write_cache_pages: u32,
    /// The controller's time to acknowledge a write once its data is in (the firmware's
    /// cache-slot allocation and mapping bookkeeping for the command), ns: every write
    /// request completes this much after its last page has a cache slot (or, without a
    /// cache, after its last program). Latency only: it holds neither the link nor a die, so
    /// requests in flight at once overlap it (a deep queue hides it; a synchronous writer of
    /// small requests pays it on every one). 0 (the default): none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub t_write_ack_ns: u64,
    /// A read may suspend the program or erase running on its die (NAND program/erase
    /// suspend): it starts once the die's earlier reads are done, and the suspended operation
    /// ends later by the read's time. Off (the default): a read queues behind every program and
    /// erase already on its die — reads interleaved with writes wait for them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reads_suspend_programs: bool,
    /// Read-priority scheduling: a host read goes ahead of the programs, GC copies and erases
    /// queued on its die (write-cache destaging, garbage collection), waiting only for the one
    /// operation running there when it arrives, and the queued work starts later by the read's
    /// time (the controller's per-die read queue served first; Wu & He, FAST 2012, call it
    /// RPS; MQSim's out-of-order scheduler does the same). Off (the default): a read queues
    /// behind everything booked on its die. `reads_suspend_programs` goes further (it does not
    /// wait for the running operation either) and takes precedence.
    #[serde(default, skip_serializing_if = "is_false")]
    pub read_priority: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}
fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}
fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FtlKind {
    Page,
    Block,
    Bast,
    Fast,
    Dftl,
    Ioa,
}

impl FtlKind {
    pub const ALL: [FtlKind; 6] = [
        FtlKind::Page,
        FtlKind::Block,
        FtlKind::Bast,
        FtlKind::Fast,
        FtlKind::Dftl,
        FtlKind::Ioa,
    ];
    pub fn name(self) -> &'static str {
        match self {
            FtlKind::Page => "page",
            FtlKind::Block => "block",
            FtlKind::Bast => "bast",
            FtlKind::Fast => "fast",
            FtlKind::Dftl => "dftl",
            FtlKind::Ioa => "ioa",
        }
    }
    pub fn parse(s: &str) -> Option<FtlKind> {
        FtlKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcPolicy {
    Greedy,
    CostBenefit,
    Fifo,
}

impl GcPolicy {
    pub fn parse(s: &str) -> Option<GcPolicy> {
        match s {
            "greedy" => Some(GcPolicy::Greedy),
            "cost-benefit" | "cost_benefit" | "cb" => Some(GcPolicy::CostBenefit),
            "fifo" => Some(GcPolicy::Fifo),
            _ => None,
        }
    }
}

/// Which closed blocks GC may take its victim from (page-mapped schemes), beside the victim
/// policy that orders them ([`GcPolicy`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcVictimScope {
    /// Any closed block of the pool (a die, or the device under `gc_pool = "device"`): the
    /// policy's best of them all.
    #[default]
    Device,
    /// The blocks of the stream that needs a free block: a multi-stream SSD that keeps each
    /// stream in a block set of its own and collects a stream's garbage when that stream
    /// writes. A stream's blocks are those of its host writes and of its GC copies
    /// (`gc_stream = "per_stream"` or `"victim"`; a shared GC stream holds every stream's
    /// copies and belongs to none, so `"separate"` is refused with more than one stream).
    /// Three rules keep it from deadlock, each with a physical reason: a closed block with no
    /// valid page is taken from any stream first (erasing it copies nothing); a stream whose
    /// own closed blocks are all full of valid pages (collecting one frees nothing) or that has
    /// none takes the policy's choice in the stream holding most reclaimable blocks (whose
    /// set can give one up). With one stream it is exactly `device`.
    Stream,
}

impl GcVictimScope {
    pub const ALL: [GcVictimScope; 2] = [GcVictimScope::Device, GcVictimScope::Stream];

    /// The config and CLI name (`device`, `stream`).
    pub fn name(self) -> &'static str {
        match self {
            GcVictimScope::Device => "device",
            GcVictimScope::Stream => "stream",
        }
    }

    pub fn parse(s: &str) -> Option<GcVictimScope> {
        GcVictimScope::ALL.into_iter().find(|m| m.name() == s)
    }

    fn is_device(&self) -> bool {
        *self == GcVictimScope::Device
    }
}

/// Where GC copies go (page-mapped schemes).
///
/// Measured on a 90/10 hot/cold workload (`hotcold-write:0.9:0.1`) with oracle separation
/// (hot set on its own stream), `mlc-sata-2010` at 1 GiB, greedy GC, timing off, seed 1, 4x
/// capacity after a full precondition: one stream 8.81; two streams with `separate` 8.57
/// (−2.7 %), `victim` 7.61 (−13.6 %), `per_stream` 7.05 (−20.0 %). So `per_stream` is the
/// default (with one host stream it is exactly `separate`, so single-stream runs are unchanged).
/// On one large die (4096 blocks) `victim` and `per_stream` agree within 0.5 % (pages of a
/// uniformly written pool are memoryless, so mixing a pool's copies with its host writes is
/// harmless there); on small per-die pools keeping copies apart wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcStreamMode {
    /// One GC stream shared by every host stream (copies of all streams mix again).
    Separate,
    /// Back into the victim's own stream's open block, beside that stream's host writes.
    Victim,
    /// One GC stream per host stream: copies of stream `s`'s data go to GC open block
    /// `s` (and copies of a GC block's pages to that same GC block's stream), apart from host
    /// writes and from other streams — as NVMe FDP's persistently isolated reclaim unit
    /// handles do. With one host stream it is exactly `separate`.
    PerStream,
}

impl GcStreamMode {
    pub const ALL: [GcStreamMode; 3] = [
        GcStreamMode::Separate,
        GcStreamMode::Victim,
        GcStreamMode::PerStream,
    ];

    /// The CLI name (`separate`, `victim`, `per-stream`).
    pub fn name(self) -> &'static str {
        match self {
            GcStreamMode::Separate => "separate",
            GcStreamMode::Victim => "victim",
            GcStreamMode::PerStream => "per-stream",
        }
    }

    /// Parse a CLI name (the serde spelling `per_stream` is accepted too).
    pub fn parse(s: &str) -> Option<GcStreamMode> {
        match s {
            "per_stream" => Some(GcStreamMode::PerStream),
            _ => GcStreamMode::ALL.into_iter().find(|m| m.name() == s),
        }
    }
}

/// Page-mapped schemes (page, DFTL): where free blocks are pooled, open blocks kept and GC run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcPool {
    /// A free pool, a GC reserve and open blocks per die; writes stripe over the dies.
    #[default]
    PerDie,
    /// One free pool, GC reserve and set of open blocks for the whole device (writes fill one
    /// block at a time). [`SsdConfig::with_logical_capacity`] picks it when the spare blocks
    /// cannot hold a reserve and open blocks on every die (small capacities on many dies).
    Device,
}

impl GcPool {
    fn is_per_die(&self) -> bool {
        *self == GcPool::PerDie
    }
}

/// What the device keeps of each written page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataMode {
    /// A 64-bit tag per page (enough to check every read returns the last write).
    Tags,
    /// Full page payloads (engines run on the device).
    Payloads,
    /// No data at all: for runs that never read data back (`flashlab sim`'s WAF, GC and
    /// timing studies), 8 bytes less per physical page. Reads that return data (`read_tags`,
    /// `read_data`) are refused; timing-only reads (`read`), TRIM and every invariant check
    /// still work (the flash keeps which pages are programmed).
    None,
}

impl DataMode {
    pub fn name(self) -> &'static str {
        match self {
            DataMode::Tags => "tags",
            DataMode::Payloads => "payloads",
            DataMode::None => "none",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    #[serde(default = "page_kind")]
    pub scheme: FtlKind,
    /// Over-provisioning, (physical − logical) / logical.
    pub op: f64,
    #[serde(default = "greedy")]
    pub gc_policy: GcPolicy,
    /// Where GC's victim comes from: any closed block of the pool (`device`, default) or the
    /// blocks of the stream that needs a free block (`stream`; see [`GcVictimScope`]).
    #[serde(default, skip_serializing_if = "GcVictimScope::is_device")]
    pub gc_victim: GcVictimScope,
    /// Foreground GC runs when a die's free blocks fall below this many (the GC reserve; of
    /// the whole device's free blocks under `gc_pool = "device"`).
    #[serde(default = "two")]
    pub gc_free_blocks_min: u32,
    /// Page-mapped schemes: free blocks and GC per die (default) or for the whole device.
    #[serde(default, skip_serializing_if = "GcPool::is_per_die")]
    pub gc_pool: GcPool,
    /// Host write streams (1 = no streams).
    #[serde(default = "one")]
    pub streams: u16,
    /// Where GC copies go (default `per_stream`: the best of the three on a 90/10 hot/cold
    /// workload with oracle separation, see `GcStreamMode`; with one stream it is `separate`).
    #[serde(default = "per_stream")]
    pub gc_stream: GcStreamMode,
    /// Log-block schemes (bast, fast, ioa): number of log blocks in the whole device.
    #[serde(default = "log_blocks_default")]
    pub log_blocks: u32,
    /// Log-block schemes (bast, ioa): stripe the logical pages over the dies page by page
    /// (`lpn % dies`, as the Jasmine OpenSSD board's firmware stripes over its banks), each
    /// die running the scheme on its own share: its own data blocks, `log_blocks / dies` log
    /// blocks (the first `log_blocks % dies` dies one more) and merges. Default false: one
    /// free pool for the device, a logical block's pages in one block of one die.
    #[serde(default, skip_serializing_if = "is_false")]
    pub log_stripe_dies: bool,
    /// DFTL: cached mapping table size in entries (one entry maps one page). Scales with
    /// capacity: where [`SsdConfig::with_logical_capacity`] makes a device smaller than the
    /// size its TOML (or preset) was loaded at, a value left as loaded keeps the loaded ratio of
    /// entries to logical pages (at least 1, at most the logical pages); a value set after
    /// loading, or any value at a larger size, is kept (the CMT is bounded by controller RAM).
    #[serde(default = "cmt_default")]
    pub cmt_entries: u32,
    #[serde(default = "tags")]
    pub data: DataMode,
    /// Run the FTL's invariant verifier after every GC and merge (slow; for tests).
    #[serde(default)]
    pub check_invariants: bool,
    /// NVMe Flexible Data Placement (`[ftl.fdp]`, page scheme only): reclaim units and the
    /// handle type; the streams are its reclaim-unit handles. None: no FDP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<super::FdpConfig>,
}

impl FtlConfig {
    /// Open-block slots of a page-mapped scheme in every pool: one per host stream plus the
    /// GC stream(s) — one shared (`separate`; `victim` keeps it too), or one per host stream
    /// (`per_stream`).
    pub fn open_slots(&self) -> u64 {
        let streams = self.streams as u64;
        match self.gc_stream {
            GcStreamMode::Separate | GcStreamMode::Victim => streams + 1,
            GcStreamMode::PerStream => 2 * streams,
        }
    }
}

fn yes() -> bool {
    true
}
fn one<T: From<u8>>() -> T {
    T::from(1)
}
fn two() -> u32 {
    2
}
fn page_kind() -> FtlKind {
    FtlKind::Page
}
fn greedy() -> GcPolicy {
    GcPolicy::Greedy
}
fn per_stream() -> GcStreamMode {
    GcStreamMode::PerStream
}
fn log_blocks_default() -> u32 {
    64
}
fn cmt_default() -> u32 {
    16384
}
fn tags() -> DataMode {
    DataMode::Tags
}
