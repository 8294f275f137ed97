//! Where a command's output goes (`--output FILE` or stdout) and its CSV form (`--csv`).

use anyhow::{Context, Result};
use lab::render::csv_field;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::Path;

/// `println!` that returns the error (a full disk, a closed stdout) instead of panicking:
/// `outln!("{x}")?`.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::emit(None, &format!("{}\n", format_args!($($arg)*)))
    };
}

/// Refuse, before a run, an `--output` that cannot be written (a directory, a missing
/// parent directory), so a long run does not end by losing its output.
pub fn check_output(path: Option<&Path>) -> Result<()> {
    let Some(p) = path else { return Ok(()) };
    if p.is_dir() {
        anyhow::bail!("--output {}: a directory; give a file name", p.display());
    }
    match p.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => anyhow::bail!(
            "--output {}: the directory {} does not exist",
            p.display(),
            dir.display()
        ),
        _ => Ok(()),
    }
}

/// Write `text` to `path`, or to stdout.
pub fn emit(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        Some(p) => std::fs::write(p, text).with_context(|| format!("--output {}", p.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|_| out.flush())
                .context("writing to stdout")
        }
    }
}

/// Rows of flat keys as CSV: the header is every key in first-seen order; a row without a
/// key leaves its cell empty; nested values are written as JSON.
pub fn csv(rows: &[Map<String, Value>]) -> String {
    let mut keys: Vec<&str> = Vec::new();
    for r in rows {
        for k in r.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    let mut out = keys
        .iter()
        .map(|k| csv_field(k))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in rows {
        let cells: Vec<String> = keys
            .iter()
            .map(|k| match r.get(*k) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => csv_field(s),
                Some(v) => csv_field(&v.to_string()),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A text table as CSV: its headers, then its rows (cells as printed).
pub fn table_csv(t: &lab::Table) -> String {
    lab::harness::page::table_view(t).csv()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_quotes_and_fills_missing_cells() {
        let rows: Vec<Map<String, Value>> = vec![
            json!({"a": 1, "b": "x,y"}).as_object().unwrap().clone(),
            json!({"a": 2.5, "c": "say \"hi\""})
                .as_object()
                .unwrap()
                .clone(),
        ];
        assert_eq!(csv(&rows), "a,b,c\n1,\"x,y\",\n2.5,,\"say \"\"hi\"\"\"\n");
    }
}
