//! The papers' figures as data: one TOML file per paper (`crates/lab/src/papers/pN_name/paper.toml`),
//! compiled in and parsed once. Each file is `id`, `title` and `[[rows]]` of flat keys; those rows are
//! the `paper` rows of a report verbatim, and the tables' "paper" columns look their figures
//! up with [`Paper::find`] — no paper figure is typed in code.

use crate::report::Row;
use serde::Deserialize;
use serde_json::Value;
use std::sync::OnceLock;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    pub id: String,
    pub title: String,
    pub rows: Vec<Row>,
    /// Figures the paper states in its text rather than a table (`[stated]`), for its claims;
    /// not part of the report's `paper` rows.
    #[serde(default)]
    pub stated: std::collections::BTreeMap<String, f64>,
}

impl Paper {
    fn parse(file: &str, text: &str) -> Paper {
        // The files are part of the source (include_str!): a parse error is a bug, and the
        // `every_paper_file_parses` test catches it before a build ships.
        toml::from_str(text).unwrap_or_else(|e| panic!("crates/lab/src/papers/{file}: {e}"))
    }

    /// The first row whose keys hold every `(key, value)` of `want`.
    pub fn find(&self, want: &[(&str, Value)]) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| want.iter().all(|(k, v)| r.get(*k) == Some(v)))
    }

    /// The number under `key` of the first row matching `want` (see [`Paper::find`]).
    pub fn figure(&self, want: &[(&str, Value)], key: &str) -> Option<f64> {
        self.find(want)?.get(key)?.as_f64()
    }

    /// A figure of the paper's text (`[stated]` of its file).
    pub fn stated(&self, key: &str) -> Option<f64> {
        self.stated.get(key).copied()
    }

    /// Rows whose `table` starts with `prefix`.
    pub fn table<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
        self.rows.iter().filter(move |r| {
            r.get("table")
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with(prefix))
        })
    }
}

macro_rules! paper {
    ($fn:ident, $file:literal) => {
        pub fn $fn() -> &'static Paper {
            static P: OnceLock<Paper> = OnceLock::new();
            P.get_or_init(|| Paper::parse($file, include_str!($file)))
        }
    };
}

paper!(p1, "p1_as_btree/paper.toml");
paper!(p2, "p2_async_scan/paper.toml");
paper!(p3, "p3_ext_buffer/paper.toml");
paper!(p4, "p4_ioa_ftl/paper.toml");
paper!(p5, "p5_multistream/paper.toml");
paper!(p6, "p6_fdp/paper.toml");

/// A figure of a row as text for a table cell ("" if absent).
pub fn cell(row: Option<&Row>, key: &str) -> String {
    match row.and_then(|r| r.get(key)) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_paper_file_parses_and_rows_are_labelled_with_their_table() {
        for (p, id) in [
            (p1(), "P1"),
            (p2(), "P2"),
            (p3(), "P3"),
            (p4(), "P4"),
            (p5(), "P5"),
            (p6(), "P6"),
        ] {
            assert_eq!(p.id, id);
            assert!(!p.rows.is_empty());
            for r in &p.rows {
                let t = r["table"]
                    .as_str()
                    .expect("every paper row names its table");
                assert!(t.starts_with(id), "{t}");
            }
        }
    }

    #[test]
    fn find_matches_every_key() {
        let r = p1().find(&[("tree", json!("B-tree")), ("keys_per_node", json!(128))]);
        assert_eq!(cell(r, "insert_seconds"), "81");
        assert!(p1().find(&[("tree", json!("no such tree"))]).is_none());
    }
}
