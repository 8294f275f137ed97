//! P1 (AS B-tree), Tables 2–6: insert and search time vs keys per node F, vs the write-buffer
//! size, and vs the LRU cache size. Our runs are 10× smaller than P1's and on other devices,
//! so every time is drawn relative to the in-place B-tree's (the paper's to its own B-tree's):
//! the shapes compare, the seconds are in the tables.

use super::BTreeRow;
use crate::devices::DeviceKind;
use crate::papers::chart::{distinct, relative, relative_each, typed, xy, Figure};
use crate::Report;
use render::plot::{Chart, Line, Plot};
use serde::Deserialize;

/// A row of the paper's Tables 2–6 (`paper.toml`).
#[derive(Deserialize)]
struct PaperRow {
    table: String,
    tree: Option<String>,
    keys_per_node: Option<f64>,
    cache_nodes: Option<f64>,
    insert_seconds: Option<f64>,
    search_seconds: Option<f64>,
}

/// What a chart measures: insert or search time, ours and the paper's.
#[derive(Clone, Copy)]
struct Measure {
    /// `insert seconds`, for the axis.
    name: &'static str,
    ours: fn(&BTreeRow) -> f64,
    paper: fn(&PaperRow) -> Option<f64>,
}

const INSERT: Measure = Measure {
    name: "insert seconds",
    ours: |q| q.insert_seconds,
    paper: |q| q.insert_seconds,
};
const SEARCH: Measure = Measure {
    name: "search seconds",
    ours: |q| q.search_seconds,
    paper: |q| q.search_seconds,
};

/// The paper's rows of the tables whose title starts with `prefix`.
fn paper_table<'a>(paper: &'a [PaperRow], prefix: &str) -> Vec<&'a PaperRow> {
    paper
        .iter()
        .filter(|p| p.table.starts_with(prefix))
        .collect()
}

fn is_tree(q: &PaperRow, tree: &str) -> bool {
    q.tree.as_deref() == Some(tree)
}

pub fn figures(r: &Report) -> Vec<Figure> {
    let all: Vec<BTreeRow> = typed(&r.rows);
    let all: Vec<BTreeRow> = all
        .into_iter()
        .filter(|q| !q.reads_fifo_comparison && !q.bftl_compaction_comparison)
        .collect();
    let paper: Vec<PaperRow> = typed(&r.paper);
    let mut devices: Vec<Option<DeviceKind>> = distinct(all.iter().map(|q| q.device))
        .into_iter()
        .map(Some)
        .collect();
    if devices.is_empty() {
        devices.push(None);
    }
    let mut out = Vec::new();
    for dev in devices {
        let rows: Vec<&BTreeRow> = all
            .iter()
            .filter(|q| dev.is_none_or(|d| q.device == d))
            .collect();
        out.extend(device_figures(&rows, &paper, dev));
    }
    out
}

/// The figures of the runs on one device.
fn device_figures(rows: &[&BTreeRow], paper: &[PaperRow], dev: Option<DeviceKind>) -> Vec<Figure> {
    let no_cache: Vec<&BTreeRow> = rows
        .iter()
        .copied()
        .filter(|x| x.cache_nodes == 0)
        .collect();
    let id = |what: &str| match dev {
        Some(d) => format!("as-btree-{what}-{d}"),
        None => format!("as-btree-{what}"),
    };
    let suffix = dev.map(|d| format!(" — device {d}")).unwrap_or_default();
    let mut out = Vec::new();
    for (what, m, table) in [
        ("insert", INSERT, "P1 Table 2"),
        ("search", SEARCH, "P1 Table 3"),
    ] {
        out.push(Figure {
            id: id(&format!("{what}-vs-f")),
            title: format!("{table}: {what} time vs keys per node F{suffix}"),
            caption: format!("{what} time of each tree ÷ the in-place B-tree's at the same F (no cache); solid: ours, dashed: the paper's {table} ÷ its B-tree's."),
            plot: Plot::Lines(vs_f(&no_cache, &paper_table(paper, table), m)),
        });
    }
    out.push(Figure {
        id: id("write-buffer"),
        title: format!("P1 Table 2: AS B-tree insert time vs write-buffer size{suffix}"),
        caption: "AS B-tree insert time ÷ the in-place B-tree's at the same F, per F; dashed: the paper's AS buffer 1/8/16/32 ÷ its B-tree's.".into(),
        plot: Plot::Lines(write_buffer(&no_cache, &paper_table(paper, "P1 Table 2"))),
    });
    for (what, m, table) in [
        ("insert", INSERT, "P1 Table 5"),
        ("search", SEARCH, "P1 Table 6"),
    ] {
        out.push(Figure {
            id: id(&format!("{what}-vs-cache")),
            title: format!("{table}: {what} time vs LRU cache size{suffix}"),
            caption: format!("{what} time ÷ the in-place B-tree's without cache (F of the cache runs); dashed: the paper's {table} ÷ its B-tree's without cache."),
            plot: Plot::Lines(vs_cache(rows, &paper_table(paper, "P1 Tables 5-6"), m)),
        });
    }
    out
}

/// One of our lines: a tree (AS: at one write-buffer size).
struct OurTree {
    label: String,
    color: String,
    tree: &'static str,
    write_buffer_nodes: Option<usize>,
}

impl OurTree {
    fn keeps(&self, r: &BTreeRow) -> bool {
        r.tree == self.tree
            && self
                .write_buffer_nodes
                .is_none_or(|ms| r.write_buffer_nodes == ms)
    }
}

/// Our lines: the in-place B-tree, BFTL, and AS at each write-buffer size run.
fn our_trees(rows: &[&BTreeRow]) -> Vec<OurTree> {
    let tree = |label: &str, color: &str, tree, ms| OurTree {
        label: label.to_string(),
        color: color.to_string(),
        tree,
        write_buffer_nodes: ms,
    };
    let mut out = vec![
        tree("ours: in-place B-tree", "btree", "in_place", None),
        tree("ours: BFTL", "bftl", "bftl", None),
    ];
    let as_rows = rows.iter().filter(|r| r.tree == "as_btree");
    for ms in distinct(as_rows.map(|r| r.write_buffer_nodes)) {
        out.push(tree(
            &format!("ours: AS, buffer {ms}"),
            &format!("as{ms}"),
            "as_btree",
            Some(ms),
        ));
    }
    out
}

/// The paper's tree names and our colour keys (`AS buffer N` -> `asN`).
fn paper_key(tree: &str) -> String {
    match tree {
        "B-tree" => "btree".into(),
        "BFTL" => "bftl".into(),
        "AS" => "as".into(),
        t => match t.strip_prefix("AS buffer ") {
            Some(n) => format!("as{n}"),
            None => t.to_string(),
        },
    }
}

/// The paper's `(x, measure)` points of `tree`, in x order.
fn paper_points(
    paper: &[&PaperRow],
    tree: &str,
    x: fn(&PaperRow) -> Option<f64>,
    m: Measure,
) -> Vec<(f64, f64)> {
    let of = paper.iter().filter(|q| is_tree(q, tree));
    xy(of.filter_map(|q| Some((x(q)?, (m.paper)(q)?))))
}

fn vs_f(rows: &[&BTreeRow], paper: &[&PaperRow], m: Measure) -> Chart {
    let base = |x: f64| {
        rows.iter()
            .find(|q| q.tree == "in_place" && q.keys_per_node as f64 == x)
            .map(|q| (m.ours)(q))
    };
    let mut lines = Vec::new();
    let trees = our_trees(rows);
    for t in &trees {
        let of = rows.iter().filter(|q| t.keeps(q));
        let p = xy(of.map(|q| (q.keys_per_node as f64, (m.ours)(q))));
        lines.push(Line::ours(
            t.label.clone(),
            &t.color,
            relative_each(p, base),
        ));
    }
    let pbase = |x: f64| {
        paper
            .iter()
            .find(|q| is_tree(q, "B-tree") && q.keys_per_node == Some(x))
            .and_then(|q| (m.paper)(q))
    };
    for tree in distinct(paper.iter().filter_map(|q| q.tree.as_deref())) {
        let k = paper_key(tree);
        if !trees.iter().any(|t| t.color == k) {
            continue; // a write-buffer size we did not run: its own chart shows it
        }
        let p = paper_points(paper, tree, |q| q.keys_per_node, m);
        lines.push(Line::paper(
            format!("paper: {tree}"),
            &k,
            relative_each(p, pbase),
        ));
    }
    Chart {
        x_label: "keys per node F".into(),
        y_label: format!("{} ÷ in-place B-tree's", m.name),
        lines,
        ..Chart::default()
    }
}

fn write_buffer(rows: &[&BTreeRow], paper: &[&PaperRow]) -> Chart {
    let mut lines = Vec::new();
    for f in distinct(rows.iter().map(|q| q.keys_per_node)) {
        let at_f = || rows.iter().filter(move |q| q.keys_per_node == f);
        let base = at_f()
            .find(|q| q.tree == "in_place")
            .map(|q| q.insert_seconds);
        let of = at_f().filter(|q| q.tree == "as_btree");
        let p = xy(of.map(|q| (q.write_buffer_nodes as f64, q.insert_seconds)));
        lines.push(Line::ours(
            format!("ours: AS, F={f}"),
            &format!("as F={f}"),
            relative(p, base),
        ));
    }
    for f in distinct(paper.iter().filter_map(|q| q.keys_per_node)) {
        let at_f: Vec<&PaperRow> = paper
            .iter()
            .copied()
            .filter(|q| q.keys_per_node == Some(f))
            .collect();
        let base = at_f
            .iter()
            .find(|q| is_tree(q, "B-tree"))
            .and_then(|q| q.insert_seconds);
        let p = xy(at_f.iter().filter_map(|q| {
            let n: f64 = q
                .tree
                .as_deref()?
                .strip_prefix("AS buffer ")?
                .parse()
                .ok()?;
            Some((n, q.insert_seconds?))
        }));
        lines.push(Line::paper(
            format!("paper: AS, F={f}"),
            &format!("as F={f}"),
            relative(p, base),
        ));
    }
    Chart {
        x_label: "write buffer (nodes)".into(),
        y_label: "insert time ÷ in-place B-tree's".into(),
        lines,
        ..Chart::default()
    }
}

fn vs_cache(rows: &[&BTreeRow], paper: &[&PaperRow], m: Measure) -> Chart {
    let cached: Vec<&BTreeRow> = rows.iter().copied().filter(|q| q.cache_nodes > 0).collect();
    let Some(f) = cached.first().map(|q| q.keys_per_node) else {
        return Chart::default();
    };
    let at_f: Vec<&BTreeRow> = rows
        .iter()
        .copied()
        .filter(|q| q.keys_per_node == f)
        .collect();
    // AS runs with the cache use one write-buffer size; its no-cache point is the same size.
    let as_ms = cached
        .iter()
        .find(|q| q.tree == "as_btree")
        .map(|q| q.write_buffer_nodes);
    let base = at_f
        .iter()
        .find(|q| q.tree == "in_place" && q.cache_nodes == 0)
        .map(|q| (m.ours)(q));
    let mut lines = Vec::new();
    for (tree, label, color) in [
        ("in_place", "ours: in-place B-tree", "btree"),
        ("bftl", "ours: BFTL", "bftl"),
        ("as_btree", "ours: AS B-tree", "as"),
    ] {
        let of = at_f.iter().filter(|q| {
            q.tree == tree && (tree != "as_btree" || Some(q.write_buffer_nodes) == as_ms)
        });
        let p = xy(of.map(|q| (q.cache_nodes as f64, (m.ours)(q))));
        let label = match (tree, as_ms) {
            ("as_btree", Some(ms)) => format!("{label} (buffer {ms})"),
            _ => label.to_string(),
        };
        lines.push(Line::ours(label, color, relative(p, base)));
    }
    let pbase = paper
        .iter()
        .find(|q| is_tree(q, "B-tree") && q.cache_nodes == Some(0.0))
        .and_then(|q| (m.paper)(q));
    for tree in distinct(paper.iter().filter_map(|q| q.tree.as_deref())) {
        let p = paper_points(paper, tree, |q| q.cache_nodes, m);
        lines.push(Line::paper(
            format!("paper: {tree}"),
            &paper_key(tree),
            relative(p, pbase),
        ));
    }
    Chart {
        x_label: format!("LRU cache (nodes), F={f}"),
        y_label: format!("{} ÷ in-place B-tree's, no cache", m.name),
        lines,
        ..Chart::default()
    }
}
