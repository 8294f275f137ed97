//! The report's notes for `reproduce ioa-ftl`: the setup, and what each of P4's switches
//! (workload, DFTL's setup, aging, the log schemes' layout) changes, as the run measured it.

use super::*;

pub(super) fn notes(runs: &[Run], p: &Plan) -> Vec<String> {
    let mut n = vec![
        format!(
            "scale: sizes are the paper's divided by {} (device, file, host caches, log space); P4's workload: fio random writes with fio's random map (every page of the file once per pass, random order) for one pass (fio's loops = 1); rows with workload = uniform_4x use the earlier model (uniform with replacement, 4 passes)",
            p.factor
        ),
        format!("host page cache: flusher writes back {FLUSH_BATCH_PAGES} dirty pages at a time in ascending order; contiguous pages merged into one request; queue depth {QUEUE_DEPTH}"),
        "aging (not measured): the whole device written once sequentially, then the file rewritten once page by page in a random order (P4 ran its cache sizes one after another on one file: each run starts where random writes left the file); the aging leaves open log blocks, whose merges fall in the measured phase of the log schemes; rows with aging = sequential skip the random rewrite (the earlier model)".into(),
        "simulated device: preset jasmine-openssd (8 dies, 256 pages/block, MLC timings); P4 ran on the real Jasmine board, so absolute MB/s differ; compare ratios".into(),
        "merge kinds: P4's switch merge (\"copy only the remaining pages from the data block into the log block\") is our BAST partial merge as well as our switch merge, so Table 1's log-block switch count is judged against our switch + partial; IOA's bitmap merges are switch merges, as P4 counts them".into(),
    ];
    if p.factor > 1 {
        n.push(format!("quick scale: device, file, caches and log space are ÷ {0}, so the run writes ÷ {0} of the pages and Table 1's whole-run counts (merges, erases) come out near ÷ {0} of paper scale's, below P4's within-2x band by construction; Table 1 is judged at paper scale (`--scale paper`), where the counts are P4's size", p.factor));
    }
    n.extend(switch_notes(runs, p));
    n.extend(layout_notes(runs, p));
    n
}

/// What striping the log schemes over the dies changes, per cache: their MB/s and merges in
/// both layouts, and DFTL / IOA in both.
fn layout_notes(runs: &[Run], p: &Plan) -> Vec<String> {
    let mut out = vec!["log layout: P4's board places BAST-like logs per bank (the Jasmine firmware's log-block FTL, ftl_faster: bank = lpn % NUM_BANKS, data, log and free blocks per bank) but runs one bank's merge loop to completion before its next command, so merges never overlap; our P4 rows keep a logical block in one block of one pool (a merge holds one die, the others idle: dies busy 12-15 %); rows `[striped]` stripe pages and logs over the dies and let merges on different dies overlap, which the board's firmware does not".to_string()];
    for &c in &p.caches_mb {
        let at = |k, layout| {
            find(
                runs,
                Variant {
                    layout,
                    ..p4_variant(k, c)
                },
            )
        };
        let line = |k| -> Option<String> {
            let (s, o) = (at(k, LogLayout::Striped)?, at(k, LogLayout::OneDie)?);
            Some(format!(
                "{} striped {:.2} MB/s ({} full, {} erases, dies busy {:.0} %), one die {:.2} MB/s ({} full, {} erases, dies busy {:.0} %)",
                k.name(), tput(s) / 1e6, s.stats.merges_full, s.stats.erases, 100.0 * s.die_busy_seconds / s.sim_seconds.max(1e-9),
                tput(o) / 1e6, o.stats.merges_full, o.stats.erases, 100.0 * o.die_busy_seconds / o.sim_seconds.max(1e-9)
            ))
        };
        let dftl = at(FtlKind::Dftl, P4_LOG_LAYOUT);
        let ratio = |l| Some(tput(dftl?) / tput(at(FtlKind::Ioa, l)?));
        if let (Some(b), Some(i), Some(rs), Some(ro)) = (
            line(FtlKind::Bast),
            line(FtlKind::Ioa),
            ratio(LogLayout::Striped),
            ratio(LogLayout::OneDie),
        ) {
            out.push(format!("switch log layout at {c} MB: {b}; {i}; DFTL / IOA {rs:.2} striped, {ro:.2} one die"));
        }
    }
    out
}

/// What each of P4's switches changes, as this run measured it (middle cache), and P4's DFTL
/// trend.
fn switch_notes(runs: &[Run], p: &Plan) -> Vec<String> {
    let c = p.caches_mb[1];
    let mut n = Vec::new();
    let merges = |r: &Run| {
        format!(
            "{} full / {} switch+partial, {} erases, {:.2} MB/s",
            r.stats.merges_full,
            r.stats.merges_switch + r.stats.merges_partial,
            r.stats.erases,
            tput(r) / 1e6
        )
    };
    for k in [FtlKind::Bast, FtlKind::Ioa] {
        let (a, b) = (
            find(runs, p4_variant(k, c)),
            find(
                runs,
                Variant {
                    workload: EARLIER_WORKLOAD,
                    ..p4_variant(k, c)
                },
            ),
        );
        if let (Some(a), Some(b)) = (a, b) {
            n.push(format!(
                "switch workload ({} at {c} MB): fio random map, 1 pass: {}; uniform, 4 passes: {}",
                k.name(),
                merges(a),
                merges(b)
            ));
        }
    }
    let dftl = |setup: DftlSetup, aging: Aging| -> Vec<String> {
        p.caches_mb
            .iter()
            .filter_map(|&c| {
                let at = |k| Variant {
                    setup,
                    aging,
                    ..p4_variant(k, c)
                };
                let d = find(runs, at(FtlKind::Dftl))?;
                let i = find(runs, at(FtlKind::Ioa))?;
                Some(format!(
                    "{c} MB: {:.2}x IOA ({:.2} MB/s, {} GC copies, {} erases = one per {:.0} host pages, {} translation writes, CMT {} entries)",
                    tput(d) / tput(i),
                    tput(d) / 1e6,
                    d.stats.gc_pages_copied,
                    d.stats.erases,
                    d.stats.host_pages_written as f64 / d.stats.erases.max(1) as f64,
                    d.stats.translation_writes,
                    d.cmt_entries
                ))
            })
            .collect()
    };
    n.push(format!(
        "switch DFTL setup: P4's (spare = the log space, CMT = the new scheme's memory): {}",
        dftl(DftlSetup::P4, P4_AGING).join("; ")
    ));
    n.push(format!(
        "switch DFTL setup: the earlier one (the preset's 7 % spare, 46 KiB / 4 B CMT): {}",
        dftl(DftlSetup::PresetSpare, P4_AGING).join("; ")
    ));
    n.push(format!(
        "switch DFTL pools: one free pool, open block and 2-block GC reserve for the device (writes fill one block, on one die, at a time), the same spare: {}",
        dftl(DftlSetup::P4OnePool, P4_AGING).join("; ")
    ));
    n.push(format!(
        "switch aging: sequential fill only (the earlier model: the file's old copies in logical order, so each flusher sweep invalidates whole blocks and DFTL's GC victims are nearly empty): {}",
        dftl(DftlSetup::P4, Aging::Sequential).join("; ")
    ));
    n
}
