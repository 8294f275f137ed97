//! P1 (AS B-tree), Tables 2–6: insert and search time vs keys per node F, vs the write-buffer
//! size, and vs the LRU cache size. Our runs are 10× smaller than P1's and on other devices,
//! so every time is drawn relative to the in-place B-tree's (the paper's to its own B-tree's):
//! the shapes compare, the seconds are in the tables.

use crate::papers::chart::{
    device_suffix, devices, distinct, is, num, on_device, paper_table, points, relative_each, text,
    Figure,
};
use crate::{Report, Row};
use render::plot::{Chart, Line, Plot};

pub fn figures(r: &Report) -> Vec<Figure> {
    let mut out = Vec::new();
    for dev in devices(&r.rows) {
        let rows = on_device(&r.rows, &dev);
        let no_cache: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|x| num(x, "cache_nodes") == Some(0.0))
            .collect();
        let id = |what: &str| match &dev {
            Some(d) => format!("as-btree-{what}-{d}"),
            None => format!("as-btree-{what}"),
        };
        let suffix = device_suffix(&dev);
        for (what, key, table) in [
            ("insert", "insert_seconds", "P1 Table 2"),
            ("search", "search_seconds", "P1 Table 3"),
        ] {
            out.push(Figure {
                id: id(&format!("{what}-vs-f")),
                title: format!("{table}: {what} time vs keys per node F{suffix}"),
                caption: format!("{what} time of each tree ÷ the in-place B-tree's at the same F (no cache); solid: ours, dashed: the paper's {table} ÷ its B-tree's."),
                plot: Plot::Lines(vs_f(&no_cache, r, key, table)),
            });
        }
        out.push(Figure {
            id: id("write-buffer"),
            title: format!("P1 Table 2: AS B-tree insert time vs write-buffer size{suffix}"),
            caption: "AS B-tree insert time ÷ the in-place B-tree's at the same F, per F; dashed: the paper's AS buffer 1/8/16/32 ÷ its B-tree's.".into(),
            plot: Plot::Lines(write_buffer(&no_cache, r)),
        });
        for (what, key, table) in [
            ("insert", "insert_seconds", "P1 Table 5"),
            ("search", "search_seconds", "P1 Table 6"),
        ] {
            out.push(Figure {
                id: id(&format!("{what}-vs-cache")),
                title: format!("{table}: {what} time vs LRU cache size{suffix}"),
                caption: format!("{what} time ÷ the in-place B-tree's without cache (F of the cache runs); dashed: the paper's {table} ÷ its B-tree's without cache."),
                plot: Plot::Lines(vs_cache(&rows, r, key)),
            });
        }
    }
    out
}

/// One of our lines: a tree (AS: at one write-buffer size).
struct OurTree {
    label: String,
    color: String,
    tree: &'static str,
    write_buffer_nodes: Option<f64>,
}

impl OurTree {
    fn keeps(&self, r: &Row) -> bool {
        is(r, "tree", self.tree)
            && (self.write_buffer_nodes.is_none()
                || num(r, "write_buffer_nodes") == self.write_buffer_nodes)
    }
}

/// Our lines: the in-place B-tree, BFTL, and AS at each write-buffer size run.
fn our_trees(rows: &[&Row]) -> Vec<OurTree> {
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
    let as_rows: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| is(r, "tree", "as_btree"))
        .collect();
    for ms in distinct(&as_rows, "write_buffer_nodes") {
        let Some(ms) = ms.as_f64() else { continue };
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

fn vs_f(rows: &[&Row], r: &Report, key: &str, table: &str) -> Chart {
    let base = |x: f64| {
        rows.iter()
            .find(|q| is(q, "tree", "in_place") && num(q, "keys_per_node") == Some(x))
            .and_then(|q| num(q, key))
    };
    let mut lines = Vec::new();
    let trees = our_trees(rows);
    for t in &trees {
        let p = points(
            rows.iter().copied().filter(|q| t.keeps(q)),
            "keys_per_node",
            key,
        );
        lines.push(Line::ours(
            t.label.clone(),
            &t.color,
            relative_each(p, base),
        ));
    }
    let paper = paper_table(r, table);
    let pbase = |x: f64| {
        paper
            .iter()
            .find(|q| is(q, "tree", "B-tree") && num(q, "keys_per_node") == Some(x))
            .and_then(|q| num(q, key))
    };
    for tree in distinct(&paper, "tree") {
        let Some(tree) = tree.as_str() else { continue };
        let k = paper_key(tree);
        if !trees.iter().any(|t| t.color == k) {
            continue; // a write-buffer size we did not run: its own chart shows it
        }
        let p = points(
            paper.iter().copied().filter(|q| is(q, "tree", tree)),
            "keys_per_node",
            key,
        );
        lines.push(Line::paper(
            format!("paper: {tree}"),
            &k,
            relative_each(p, pbase),
        ));
    }
    Chart {
        x_label: "keys per node F".into(),
        y_label: format!("{} ÷ in-place B-tree's", key.replace('_', " ")),
        lines,
        ..Chart::default()
    }
}

fn write_buffer(rows: &[&Row], r: &Report) -> Chart {
    let mut lines = Vec::new();
    for f in distinct(rows, "keys_per_node") {
        let Some(f) = f.as_f64() else { continue };
        let base = rows
            .iter()
            .find(|q| is(q, "tree", "in_place") && num(q, "keys_per_node") == Some(f))
            .and_then(|q| num(q, "insert_seconds"));
        let p = points(
            rows.iter()
                .copied()
                .filter(|q| is(q, "tree", "as_btree") && num(q, "keys_per_node") == Some(f)),
            "write_buffer_nodes",
            "insert_seconds",
        );
        lines.push(Line::ours(
            format!("ours: AS, F={f}"),
            &format!("f{f}"),
            render::figures::relative(p, base),
        ));
    }
    let paper = paper_table(r, "P1 Table 2");
    for f in distinct(&paper, "keys_per_node") {
        let Some(f) = f.as_f64() else { continue };
        let at_f: Vec<&Row> = paper
            .iter()
            .copied()
            .filter(|q| num(q, "keys_per_node") == Some(f))
            .collect();
        let base = at_f
            .iter()
            .find(|q| is(q, "tree", "B-tree"))
            .and_then(|q| num(q, "insert_seconds"));
        let mut p: Vec<(f64, f64)> = at_f
            .iter()
            .filter_map(|q| {
                let n: f64 = text(q, "tree")?.strip_prefix("AS buffer ")?.parse().ok()?;
                Some((n, num(q, "insert_seconds")?))
            })
            .collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        lines.push(Line::paper(
            format!("paper: AS, F={f}"),
            &format!("f{f}"),
            render::figures::relative(p, base),
        ));
    }
    Chart {
        x_label: "write buffer (nodes)".into(),
        y_label: "insert time ÷ in-place B-tree's".into(),
        lines,
        ..Chart::default()
    }
}

fn vs_cache(rows: &[&Row], r: &Report, key: &str) -> Chart {
    let cached: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|q| num(q, "cache_nodes").unwrap_or(0.0) > 0.0)
        .collect();
    let Some(f) = cached.first().and_then(|q| num(q, "keys_per_node")) else {
        return Chart::default();
    };
    let at_f: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|q| num(q, "keys_per_node") == Some(f))
        .collect();
    // AS runs with the cache use one write-buffer size; its no-cache point is the same size.
    let as_ms = cached
        .iter()
        .find(|q| is(q, "tree", "as_btree"))
        .and_then(|q| num(q, "write_buffer_nodes"));
    let base = at_f
        .iter()
        .find(|q| is(q, "tree", "in_place") && num(q, "cache_nodes") == Some(0.0))
        .and_then(|q| num(q, key));
    let mut lines = Vec::new();
    for (tree, label, color) in [
        ("in_place", "ours: in-place B-tree", "btree"),
        ("bftl", "ours: BFTL", "bftl"),
        ("as_btree", "ours: AS B-tree", "as"),
    ] {
        let p = points(
            at_f.iter().copied().filter(|q| {
                is(q, "tree", tree) && (tree != "as_btree" || num(q, "write_buffer_nodes") == as_ms)
            }),
            "cache_nodes",
            key,
        );
        let label = match (tree, as_ms) {
            ("as_btree", Some(ms)) => format!("{label} (buffer {ms})"),
            _ => label.to_string(),
        };
        lines.push(Line::ours(label, color, render::figures::relative(p, base)));
    }
    let paper = paper_table(r, "P1 Tables 5-6");
    let pbase = paper
        .iter()
        .find(|q| is(q, "tree", "B-tree") && num(q, "cache_nodes") == Some(0.0))
        .and_then(|q| num(q, key));
    for tree in distinct(&paper, "tree") {
        let Some(tree) = tree.as_str() else { continue };
        let p = points(
            paper.iter().copied().filter(|q| is(q, "tree", tree)),
            "cache_nodes",
            key,
        );
        lines.push(Line::paper(
            format!("paper: {tree}"),
            &paper_key(tree),
            render::figures::relative(p, pbase),
        ));
    }
    Chart {
        x_label: format!("LRU cache (nodes), F={f}"),
        y_label: format!("{} ÷ in-place B-tree's, no cache", key.replace('_', " ")),
        lines,
        ..Chart::default()
    }
}
