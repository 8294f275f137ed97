//! `flashlab reproduce as-btree` — paper P1 (AS B-tree vs the in-place B-tree).
//!
//! Experiment (P1 §4): on a fresh device, insert N0 random keys, commit, then time N1 more
//! inserts and N1 searches of inserted keys; 8 KiB nodes. Sweeps: F (keys per node) in
//! {64, 128, 256} x (in-place B-tree; AS B-tree with write buffer MS in {1, 8, 16, 32}) —
//! P1's Tables 2-4; an LRU node cache of 0..80 nodes (F = 256, MS = 32) — Tables 5-6; file
//! sizes — Table 7. Devices: `file` (a real file, O_DIRECT, wall-clock seconds, CPU included),
//! `sim` (the simulated SSD with 8 KiB pages, simulated seconds of device time), or `all`.
//! The in-place B-tree runs write-through as P1's does (every modified node written in place
//! at once). BFTL (`engine::btree::Bftl`) runs the F sweep and the cache sweep.

use crate::report::{fmt_f, row, Output, Report, ReproduceOptions, Row, Scale, Table};
use anyhow::{bail, Context, Result};
use blockdev::{BlockDevice, FileDevice, FileOptions};
use engine::btree::{AsBTree, AsConfig, BTreeConfig, Bftl, BftlConfig, InPlaceBTree};
use engine::tree::IndexStats;
use engine::OrderedIndex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

const NODE_BYTES: usize = 8192;

#[derive(Clone, Copy, Debug)]
struct Plan {
    preload: usize,
    measured: usize,
    fanouts: &'static [usize],
    buffers: &'static [usize],
    caches: &'static [usize],
    device_bytes: u64,
    segment_bytes: u64,
    window: usize,
}

fn plan(scale: Scale) -> Plan {
    match scale {
        Scale::Paper => Plan {
            preload: 400_000,
            measured: 100_000,
            fanouts: &[64, 128, 256],
            buffers: &[1, 8, 16, 32],
            caches: &[16, 32, 48, 64, 80],
            device_bytes: 2 << 30,
            segment_bytes: 128 << 20,
            window: 6,
        },
        Scale::Quick => Plan {
            preload: 40_000,
            measured: 10_000,
            fanouts: &[64, 256],
            buffers: &[1, 32],
            caches: &[16, 80],
            device_bytes: 512 << 20,
            segment_bytes: 16 << 20,
            window: 6,
        },
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TreeKind {
    InPlace,
    As,
    Bftl,
}

#[derive(Clone, Copy, Debug)]
struct Case {
    tree: TreeKind,
    f: usize,
    ms: usize,
    cache: usize,
}

fn cases(p: &Plan) -> Vec<Case> {
    let mut v = Vec::new();
    for &f in p.fanouts {
        v.push(Case {
            tree: TreeKind::InPlace,
            f,
            ms: 0,
            cache: 0,
        });
        v.push(Case {
            tree: TreeKind::Bftl,
            f,
            ms: 0,
            cache: 0,
        });
        for &ms in p.buffers {
            v.push(Case {
                tree: TreeKind::As,
                f,
                ms,
                cache: 0,
            });
        }
    }
    for &cache in p.caches {
        v.push(Case {
            tree: TreeKind::InPlace,
            f: 256,
            ms: 0,
            cache,
        });
        v.push(Case {
            tree: TreeKind::Bftl,
            f: 256,
            ms: 0,
            cache,
        });
        v.push(Case {
            tree: TreeKind::As,
            f: 256,
            ms: 32,
            cache,
        });
    }
    v
}

/// What one case measured.
#[derive(Clone, Debug)]
struct Measured {
    device: &'static str,
    case: Case,
    insert_s: f64,
    search_s: f64,
    insert: IndexStats,
    search: IndexStats,
    file_bytes: u64,
}

fn open_device(
    kind: &str,
    p: &Plan,
    opts: &ReproduceOptions,
    dir: &Path,
    n: usize,
) -> Result<Box<dyn BlockDevice>> {
    let pages = p.device_bytes / NODE_BYTES as u64;
    Ok(match kind {
        "file" => {
            let path = dir.join(format!("as-btree-{n}.dev"));
            let o = FileOptions {
                buffered: false,
                queue_depth: 32,
                ..FileOptions::default()
            };
            Box::new(
                FileDevice::create(&path, pages, NODE_BYTES, o)
                    .with_context(|| format!("creating {}", path.display()))?,
            )
        }
        _ => Box::new(crate::devices::sim_device(
            &opts.preset,
            NODE_BYTES,
            p.device_bytes,
        )?),
    })
}

fn build(case: &Case, p: &Plan, dev: Box<dyn BlockDevice>) -> Result<Box<dyn OrderedIndex>> {
    let base = BTreeConfig {
        keys_per_node: case.f,
        cache_nodes: case.cache,
    };
    Ok(match case.tree {
        TreeKind::InPlace => Box::new(InPlaceBTree::create_with_journal(dev, base, 0)?),
        TreeKind::As => Box::new(AsBTree::create(
            dev,
            AsConfig {
                base,
                write_buffer_nodes: case.ms,
                segment_bytes: p.segment_bytes,
                max_segments: p.window,
            },
        )?),
        TreeKind::Bftl => Box::new(Bftl::create(
            dev,
            BftlConfig {
                base,
                ..BftlConfig::default()
            },
        )?),
    })
}

fn diff(a: IndexStats, b: IndexStats) -> IndexStats {
    IndexStats {
        node_reads: b.node_reads - a.node_reads,
        nodes_loaded: b.nodes_loaded - a.nodes_loaded,
        compaction_reads: b.compaction_reads - a.compaction_reads,
        node_writes: b.node_writes - a.node_writes,
        read_ns: b.read_ns - a.read_ns,
        write_ns: b.write_ns - a.write_ns,
        buffer_hits: b.buffer_hits - a.buffer_hits,
        buffer_lookups: b.buffer_lookups - a.buffer_lookups,
        cache_hits: b.cache_hits - a.cache_hits,
        cache_lookups: b.cache_lookups - a.cache_lookups,
        file_bytes: b.file_bytes,
    }
}

/// Seconds of a phase: wall time on a real file, device time on a simulated one.
fn seconds(device: &str, wall: f64, s: &IndexStats) -> f64 {
    if device == "file" {
        wall
    } else {
        (s.read_ns + s.write_ns) as f64 / 1e9
    }
}

fn run_case(
    device: &'static str,
    case: Case,
    p: &Plan,
    dev: Box<dyn BlockDevice>,
    seed: u64,
) -> Result<Measured> {
    let mut tree = build(&case, p, dev)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys: Vec<u64> = Vec::with_capacity(p.preload + p.measured);
    for _ in 0..p.preload {
        let k = rng.gen();
        tree.insert(k, k ^ 0x5555)?;
        keys.push(k);
    }
    tree.commit()?;
    let s0 = tree.stats();
    let wall = Instant::now();
    for _ in 0..p.measured {
        let k = rng.gen();
        tree.insert(k, k ^ 0x5555)?;
        keys.push(k);
    }
    tree.commit()?;
    let insert_wall = wall.elapsed().as_secs_f64();
    let s1 = tree.stats();
    let wall = Instant::now();
    for _ in 0..p.measured {
        let k = keys[rng.gen_range(0..keys.len())];
        if tree.get(k)? != Some(k ^ 0x5555) {
            bail!("{device} {:?}: key {k} lost", case.tree);
        }
    }
    let search_wall = wall.elapsed().as_secs_f64();
    let s2 = tree.stats();
    let (insert, search) = (diff(s0, s1), diff(s1, s2));
    Ok(Measured {
        device,
        case,
        insert_s: seconds(device, insert_wall, &insert),
        search_s: seconds(device, search_wall, &search),
        insert,
        search,
        file_bytes: s2.file_bytes,
    })
}

fn tree_name(t: TreeKind) -> &'static str {
    match t {
        TreeKind::InPlace => "in_place",
        TreeKind::As => "as_btree",
        TreeKind::Bftl => "bftl",
    }
}

fn to_row(m: &Measured, p: &Plan) -> Row {
    let ratio = |h: u64, l: u64| if l == 0 { 0.0 } else { h as f64 / l as f64 };
    let per_s = |n: usize, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
    let split = |ns: u64| ns as f64 / 1e9;
    row([
        ("device", m.device.into()),
        ("tree", tree_name(m.case.tree).into()),
        ("keys_per_node", m.case.f.into()),
        ("write_buffer_nodes", m.case.ms.into()),
        ("cache_nodes", m.case.cache.into()),
        ("insert_seconds", json!(m.insert_s)),
        ("search_seconds", json!(m.search_s)),
        ("insert_read_seconds", json!(split(m.insert.read_ns))),
        ("insert_write_seconds", json!(split(m.insert.write_ns))),
        ("file_bytes", m.file_bytes.into()),
        ("inserts_per_second", json!(per_s(p.measured, m.insert_s))),
        ("searches_per_second", json!(per_s(p.measured, m.search_s))),
        ("insert_node_reads", m.insert.node_reads.into()),
        ("insert_node_writes", m.insert.node_writes.into()),
        (
            "write_buffer_hit_ratio",
            json!(ratio(m.insert.buffer_hits, m.insert.buffer_lookups)),
        ),
        (
            "bftl_sectors_per_node",
            json!(if m.case.tree == TreeKind::Bftl {
                ratio(
                    m.insert.node_reads + m.search.node_reads
                        - m.insert.compaction_reads
                        - m.search.compaction_reads,
                    m.insert.nodes_loaded + m.search.nodes_loaded,
                )
            } else {
                0.0
            }),
        ),
        (
            "cache_hit_ratio",
            json!(ratio(
                m.insert.cache_hits + m.search.cache_hits,
                m.insert.cache_lookups + m.search.cache_lookups
            )),
        ),
    ])
}

fn paper_rows() -> Vec<Row> {
    let mut v = Vec::new();
    let t2: [(&str, [u32; 3]); 6] = [
        ("B-tree", [109, 81, 78]),
        ("BFTL", [184, 149, 143]),
        ("AS buffer 1", [108, 76, 68]),
        ("AS buffer 8", [94, 66, 65]),
        ("AS buffer 16", [91, 65, 63]),
        ("AS buffer 32", [90, 63, 61]),
    ];
    for (tree, secs) in t2 {
        for (f, s) in [64, 128, 256].into_iter().zip(secs) {
            v.push(row([
                ("table", "P1 Table 2: insert seconds per 100,000".into()),
                ("tree", tree.into()),
                ("keys_per_node", f.into()),
                ("insert_seconds", s.into()),
            ]));
        }
    }
    for (tree, secs) in [("B-tree", [84, 57, 56]), ("BFTL", [120, 90, 88])] {
        for (f, s) in [64, 128, 256].into_iter().zip(secs) {
            v.push(row([
                ("table", "P1 Table 3: search seconds per 100,000".into()),
                ("tree", tree.into()),
                ("keys_per_node", f.into()),
                ("search_seconds", s.into()),
            ]));
        }
    }
    v.push(row([
        ("table", "P1 Table 4 (F=256, buffer 32)".into()),
        ("tree", "AS".into()),
        ("insert_read_seconds", 56.into()),
        ("insert_write_seconds", 5.into()),
    ]));
    v.push(row([
        ("table", "P1 Table 4 (F=256, buffer 32)".into()),
        ("tree", "B-tree".into()),
        ("insert_read_seconds", 68.into()),
        ("insert_write_seconds", 10.into()),
    ]));
    let t5: [(&str, [u32; 6], [u32; 6]); 3] = [
        ("AS", [61, 36, 34, 34, 31, 31], [56, 30, 28, 27, 27, 27]),
        ("B-tree", [78, 49, 46, 46, 46, 46], [56, 31, 28, 28, 28, 28]),
        (
            "BFTL",
            [143, 128, 117, 117, 117, 117],
            [88, 51, 44, 44, 44, 44],
        ),
    ];
    for (tree, ins, srch) in t5 {
        for (i, c) in [0, 16, 32, 48, 64, 80].into_iter().enumerate() {
            v.push(row([
                ("table", "P1 Tables 5-6: LRU cache".into()),
                ("tree", tree.into()),
                ("cache_nodes", c.into()),
                ("insert_seconds", ins[i].into()),
                ("search_seconds", srch[i].into()),
            ]));
        }
    }
    for (tree, mb) in [("B-tree", 22.4), ("BFTL", 1615.0), ("AS", 642.0)] {
        v.push(row([
            ("table", "P1 Table 7: file size MB (F=256)".into()),
            ("tree", tree.into()),
            ("file_mb", json!(mb)),
        ]));
    }
    v
}

fn paper_t2(tree: TreeKind, ms: usize, f: usize) -> String {
    let i = match f {
        64 => 0,
        128 => 1,
        _ => 2,
    };
    let v = match (tree, ms) {
        (TreeKind::InPlace, _) => [109, 81, 78],
        (TreeKind::Bftl, _) => [184, 149, 143],
        (TreeKind::As, 1) => [108, 76, 68],
        (TreeKind::As, 8) => [94, 66, 65],
        (TreeKind::As, 16) => [91, 65, 63],
        _ => [90, 63, 61],
    };
    v[i].to_string()
}

fn tables(ms: &[Measured], p: &Plan) -> Vec<Table> {
    // Ours scaled to seconds per 100,000 operations, the unit of P1's tables.
    let k = 100_000.0 / p.measured as f64;
    let mut t = Table::new(
        "Tables 2-4: seconds per 100,000 operations (ours scaled from the measured count; file = wall, sim = device time; paper: P1 on a real SSD)",
        &["device", "tree", "F", "MS", "insert s", "paper insert s", "read s", "write s", "search s", "buf hit %", "file MB"],
    );
    let mut c = Table::new(
        "Tables 5-6: LRU node cache, seconds per 100,000 (F=256; AS with MS=32)",
        &[
            "device",
            "tree",
            "cache",
            "insert s",
            "search s",
            "cache hit %",
        ],
    );
    for m in ms {
        let r = &m.case;
        let hit = |h: u64, l: u64| {
            fmt_f(
                if l == 0 {
                    0.0
                } else {
                    100.0 * h as f64 / l as f64
                },
                1,
            )
        };
        if r.cache == 0 {
            t.push(vec![
                m.device.into(),
                tree_name(r.tree).into(),
                r.f.to_string(),
                r.ms.to_string(),
                fmt_f(k * m.insert_s, 1),
                paper_t2(r.tree, r.ms, r.f),
                fmt_f(k * m.insert.read_ns as f64 / 1e9, 1),
                fmt_f(k * m.insert.write_ns as f64 / 1e9, 1),
                fmt_f(k * m.search_s, 1),
                hit(m.insert.buffer_hits, m.insert.buffer_lookups),
                fmt_f(m.file_bytes as f64 / 1e6, 1),
            ]);
        } else {
            c.push(vec![
                m.device.into(),
                tree_name(r.tree).into(),
                r.cache.to_string(),
                fmt_f(k * m.insert_s, 1),
                fmt_f(k * m.search_s, 1),
                hit(
                    m.insert.cache_hits + m.search.cache_hits,
                    m.insert.cache_lookups + m.search.cache_lookups,
                ),
            ]);
        }
    }
    vec![t, c]
}

fn notes(ms: &[Measured], p: &Plan) -> Vec<String> {
    let mut n = vec![
        format!("scale: {} preloaded keys, {} timed inserts and {} timed searches (P1: 400,000 / 100,000 / 100,000)", p.preload, p.measured, p.measured),
        format!("AS B-tree: segments of {} MB, sliding window of {} segments; in-place B-tree write-through (P1's), one 8 KiB node per device page", p.segment_bytes >> 20, p.window),
        "BFTL: one sector = one 8 KiB device page, reservation buffer of 256 index units, compaction past C = 3 sectors; sectors are never reclaimed (file grows, as P1 saw)".into(),
        "file device: O_DIRECT through io_uring-capable FileDevice; seconds are wall time including CPU; read/write seconds are time inside device calls".into(),
    ];
    for m in ms
        .iter()
        .filter(|m| m.case.tree == TreeKind::Bftl && m.case.f == 256 && m.case.cache == 0)
    {
        let loaded = (m.insert.nodes_loaded + m.search.nodes_loaded).max(1) as f64;
        n.push(format!(
            "{}: BFTL (F=256) reads {:.2} sectors per node (paper 1.49); file {:.1} MB (paper 1615 MB at 400k+100k keys)",
            m.device,
            (m.insert.node_reads + m.search.node_reads
                - m.insert.compaction_reads
                - m.search.compaction_reads) as f64
                / loaded,
            m.file_bytes as f64 / 1e6
        ));
    }
    for dev in ["file", "sim"] {
        let find = |t: TreeKind, ms_: usize| {
            ms.iter().find(|m| {
                m.device == dev
                    && m.case.tree == t
                    && m.case.f == 256
                    && m.case.cache == 0
                    && m.case.ms == ms_
            })
        };
        if let (Some(b), Some(a)) = (find(TreeKind::InPlace, 0), find(TreeKind::As, 32)) {
            n.push(format!(
                "{dev}, F=256: AS (MS=32) insert {:.2} s vs in-place {:.2} s ({:+.0} %; paper -21 %); write time {:+.0} % (paper -50 %); search {:+.0} % (paper ~0 %)",
                a.insert_s,
                b.insert_s,
                100.0 * (a.insert_s / b.insert_s.max(1e-12) - 1.0),
                100.0 * (a.insert.write_ns as f64 / (b.insert.write_ns as f64).max(1.0) - 1.0),
                100.0 * (a.search_s / b.search_s.max(1e-12) - 1.0)
            ));
        }
    }
    n
}

pub fn run(opts: &ReproduceOptions) -> Result<Output> {
    let p = plan(opts.scale);
    let devices: Vec<&'static str> = match opts.device.as_str() {
        "file" => vec!["file"],
        "sim" => vec!["sim"],
        "all" => vec!["file", "sim"],
        other => {
            bail!("--device {other}: as-btree runs on file, sim or all (P1 measures SSDs only)")
        }
    };
    let tmp = match &opts.dir {
        Some(d) => tempfile::tempdir_in(d).with_context(|| format!("--dir {}", d.display()))?,
        None => tempfile::tempdir_in(".")
            .context("creating a temporary directory here for the device files")?,
    };
    let mut measured = Vec::new();
    for device in devices {
        for (i, case) in cases(&p).into_iter().enumerate() {
            opts.progress(format!(
                "as-btree: {device} {} F={} MS={} cache={}",
                tree_name(case.tree),
                case.f,
                case.ms,
                case.cache
            ));
            let dev = open_device(device, &p, opts, tmp.path(), i)?;
            measured.push(run_case(device, case, &p, dev, opts.seed)?);
            let _ = std::fs::remove_file(tmp.path().join(format!("as-btree-{i}.dev")));
        }
    }
    let config = json!({
        "node_bytes": NODE_BYTES, "preload_keys": p.preload, "measured_ops": p.measured,
        "keys_per_node": p.fanouts, "write_buffer_nodes": p.buffers, "cache_nodes": p.caches,
        "device_bytes": p.device_bytes, "segment_bytes": p.segment_bytes, "window_segments": p.window,
        "sim_preset": opts.preset,
    });
    let mut report = Report::new("as-btree", opts, config);
    report.rows = measured.iter().map(|m| to_row(m, &p)).collect();
    report.paper = paper_rows();
    report.notes = notes(&measured, &p);
    Ok(Output {
        tables: tables(&measured, &p),
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Plan {
        Plan {
            preload: 3000,
            measured: 600,
            fanouts: &[64],
            buffers: &[32],
            caches: &[16],
            device_bytes: 512 << 20,
            segment_bytes: 2 << 20,
            window: 8,
        }
    }

    #[test]
    fn as_btree_writes_less_than_in_place_and_rows_carry_the_keys() {
        let p = tiny();
        let opts = ReproduceOptions::default();
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        for device in ["sim", "file"] {
            let run = |case: Case, i| {
                run_case(
                    device,
                    case,
                    &p,
                    open_device(device, &p, &opts, dir.path(), i).unwrap(),
                    1,
                )
                .unwrap()
            };
            let inplace = run(
                Case {
                    tree: TreeKind::InPlace,
                    f: 64,
                    ms: 0,
                    cache: 0,
                },
                0,
            );
            let as_ = run(
                Case {
                    tree: TreeKind::As,
                    f: 64,
                    ms: 32,
                    cache: 0,
                },
                1,
            );
            assert!(
                as_.insert.node_writes < inplace.insert.node_writes,
                "{device}: {} vs {}",
                as_.insert.node_writes,
                inplace.insert.node_writes
            );
            if device == "sim" {
                assert!(
                    as_.insert.write_ns < inplace.insert.write_ns,
                    "sequential batches are cheaper on the SSD"
                );
            }
            let r = to_row(&as_, &p);
            for k in [
                "device",
                "tree",
                "keys_per_node",
                "write_buffer_nodes",
                "cache_nodes",
                "insert_seconds",
                "search_seconds",
                "insert_read_seconds",
                "insert_write_seconds",
                "file_bytes",
            ] {
                assert!(r.contains_key(k), "{k}");
            }
        }
    }
}
