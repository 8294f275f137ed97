//! Devices the ssd integration tests share.
#![allow(dead_code)] // each test file uses some of them

use ssd::{FtlKind, GcPolicy, SsdConfig};

/// One die of `blocks` blocks of `ppb` pages, GC policy `gc_policy`, reserve 1, timing off:
/// large enough (4096 x 64) for the mean-field WAF models of `ssd::analytic`.
pub fn one_die(blocks: u32, ppb: u32, op: f64, gc_policy: GcPolicy) -> SsdConfig {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
    cfg.geometry.channels = 1;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.planes_per_die = 1;
    cfg.geometry.blocks_per_plane = blocks;
    cfg.geometry.pages_per_block = ppb;
    cfg.timing.enabled = false;
    cfg.ftl.op = op;
    cfg.ftl.gc_policy = gc_policy;
    cfg.ftl.gc_free_blocks_min = 1;
    cfg
}

/// Two dies (two channels of one die) of `blocks` blocks of `ppb` pages, the preset's other
/// settings: the small devices the stream and model tests start from.
pub fn two_dies(blocks: u32, ppb: u32) -> SsdConfig {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
    cfg.geometry.channels = 2;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.blocks_per_plane = blocks;
    cfg.geometry.pages_per_block = ppb;
    cfg
}

/// A tiny two-die device of `kind` (32 blocks of 8 pages of 512 B per die, OP 50 %, 4 log
/// blocks, 16 cached map entries) with invariant checks after every GC and merge.
pub fn tiny(kind: FtlKind) -> SsdConfig {
    let mut cfg = two_dies(32, 8);
    cfg.geometry.page_bytes = 512;
    cfg.ftl.scheme = kind;
    cfg.ftl.op = 0.5;
    cfg.ftl.gc_free_blocks_min = 1;
    cfg.ftl.log_blocks = 4;
    cfg.ftl.cmt_entries = 16;
    cfg.ftl.check_invariants = true;
    cfg
}
