//! A sweep spec and its runs. The spec (TOML, or JSON for a `.json` file):
//!
//! ```toml
//! name = "waf"                  # optional; default: the file's stem
//! command = "sim"               # or "buffer-sim"; default sim
//! mode = "grid"                 # every combination of [vary] (default), or "zip" (lists side by side)
//! seeds = 3                     # optional: every point with seeds seed, seed+1, seed+2 (or a list: [1, 7])
//! summary = ["waf", "waf_model"] # result keys averaged in the summary table
//! [base]                        # options of every run, named as flashlab.sim's keywords
//! capacity = "64MiB"
//! timing = "off"
//! [vary]                        # lists, or ranges {from, to, step} (inclusive of `to`)
//! op = [0.07, 0.14, 0.28]
//! gc = ["greedy", "cost-benefit"]
//! ```
//!
//! Each run's identity is its effective config (`lab::spec::effective_config`: every option, given or
//! defaulted) and `config_hash`, the FNV-1a 64 of the canonical JSON of command and config: two
//! runs with one hash are the same run, whichever sweep or spelling described them.

use crate::spec::Command;
use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// Most runs one sweep may plan (a typo in a range should not plan a billion runs).
pub const MAX_RUNS: usize = 1_000_000;
/// Most values one range may give.
const MAX_RANGE_VALUES: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Grid,
    Zip,
}

#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    /// Where the spec came from (its file), for messages.
    pub origin: String,
    pub command: Command,
    pub mode: Mode,
    pub base: Map<String, Value>,
    /// Varied options and their values, in key order.
    pub vary: Vec<(String, Vec<Value>)>,
    pub seeds: Option<Vec<u64>>,
    pub summary: Vec<String>,
}

/// One planned run.
#[derive(Clone, Debug)]
pub struct Run {
    /// Position in the plan (0-based).
    pub index: usize,
    /// The varied options' values of this run (with `seed` when `seeds` is given).
    pub vary: Map<String, Value>,
    /// Base and varied options, as given.
    pub options: Map<String, Value>,
    pub config: BTreeMap<String, Value>,
    pub config_hash: String,
}

impl Spec {
    pub fn from_file(path: &Path) -> Result<Spec> {
        let text = bounded::read_text(path, bounded::CONFIG_BYTES_MAX, "a sweep spec")
            .with_context(|| format!("sweep spec {}", path.display()))?;
        let value: Value = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text)
                .with_context(|| format!("sweep spec {} (JSON)", path.display()))?
        } else {
            toml::from_str(&text)
                .with_context(|| format!("sweep spec {} (TOML)", path.display()))?
        };
        let stem = path
            .file_stem()
            .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
        let mut spec = Spec::from_value(&value, &stem)
            .with_context(|| format!("sweep spec {}", path.display()))?;
        spec.origin = format!("sweep spec {}", path.display());
        Ok(spec)
    }

    /// A spec from its JSON value; `default_name` names it when it has no `name`.
    pub fn from_value(v: &Value, default_name: &str) -> Result<Spec> {
        let Some(top) = v.as_object() else {
            bail!("expected a table with [base] and [vary]");
        };
        const KEYS: [&str; 7] = [
            "name", "command", "mode", "seeds", "summary", "base", "vary",
        ];
        if let Some(k) = top.keys().find(|k| !KEYS.contains(&k.as_str())) {
            bail!("unknown key `{k}`; expected {}", KEYS.join(", "));
        }
        let text = |k: &str| -> Result<Option<String>> {
            match top.get(k) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => bail!("`{k}`: expected a string, got {other}"),
            }
        };
        let command = match text("command")? {
            None => Command::Sim,
            Some(c) => Command::parse(&c)
                .with_context(|| format!("`command = \"{c}\"`: expected sim or buffer-sim"))?,
        };
        let mode = match text("mode")?.as_deref() {
            None | Some("grid") => Mode::Grid,
            Some("zip") => Mode::Zip,
            Some(m) => bail!("`mode = \"{m}\"`: expected grid or zip"),
        };
        let base = table(top, "base")?;
        let mut vary = Vec::new();
        for (k, v) in table(top, "vary")? {
            vary.push((k.clone(), values(&k, &v)?));
        }
        let seeds = seeds(top.get("seeds"), &base)?;
        if seeds.is_some() && vary.iter().any(|(k, _)| k == "seed") {
            bail!("`seeds` and [vary] seed both set the seed: keep one");
        }
        let summary = match top.get("summary") {
            None => default_summary(command),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_str().map(String::from))
                .collect::<Option<_>>()
                .context("`summary`: expected a list of result keys")?,
            Some(other) => bail!("`summary`: expected a list of result keys, got {other}"),
        };
        Ok(Spec {
            name: text("name")?.unwrap_or_else(|| default_name.to_string()),
            origin: "sweep spec".into(),
            command,
            mode,
            base,
            vary,
            seeds,
            summary,
        })
    }

    /// The varied points (before seeds), each a map of option → value.
    fn points(&self) -> Result<Vec<Map<String, Value>>> {
        let mut points = vec![Map::new()];
        match self.mode {
            Mode::Grid => {
                for (k, vals) in &self.vary {
                    let n = points.len().saturating_mul(vals.len());
                    if n > MAX_RUNS {
                        bail!("the grid has more than {MAX_RUNS} points");
                    }
                    let mut next = Vec::with_capacity(n);
                    for p in &points {
                        for v in vals {
                            let mut q = p.clone();
                            q.insert(k.clone(), v.clone());
                            next.push(q);
                        }
                    }
                    points = next;
                }
            }
            Mode::Zip => {
                if let Some((k0, v0)) = self.vary.first() {
                    if let Some((k, v)) = self.vary.iter().find(|(_, v)| v.len() != v0.len()) {
                        bail!("mode zip: [vary] {k} has {} values but {k0} has {}: zipped lists must be as long", v.len(), v0.len());
                    }
                    points = (0..v0.len())
                        .map(|i| {
                            self.vary
                                .iter()
                                .map(|(k, v)| (k.clone(), v[i].clone()))
                                .collect()
                        })
                        .collect();
                }
            }
        }
        Ok(points)
    }

    /// Every run of the sweep, in order; points that resolve to the same config run once.
    /// A run the subcommand's flags refuse (an unknown option, a value that is not a number)
    /// fails the whole plan before anything runs.
    pub fn plan(&self) -> Result<Vec<Run>> {
        self.plan_runs().with_context(|| self.origin.clone())
    }

    fn plan_runs(&self) -> Result<Vec<Run>> {
        let mut runs = Vec::new();
        let mut seen = HashSet::new();
        for point in self.points()? {
            let seeds: Vec<Option<u64>> = match &self.seeds {
                Some(s) => s.iter().map(|&x| Some(x)).collect(),
                None => vec![None],
            };
            for seed in seeds {
                let mut vary = point.clone();
                if let Some(s) = seed {
                    vary.insert("seed".into(), Value::from(s));
                }
                let mut options = self.base.clone();
                options.extend(vary.clone());
                let run = self.resolve(runs.len(), vary, options)?;
                if seen.insert(run.config_hash.clone()) {
                    runs.push(run);
                }
                if runs.len() > MAX_RUNS {
                    bail!("the sweep has more than {MAX_RUNS} runs");
                }
            }
        }
        Ok(runs)
    }
}

/// Options are single values: lists belong under [vary].
fn check_scalars(options: &Map<String, Value>) -> Result<()> {
    for (name, v) in options {
        if matches!(v, Value::Array(_) | Value::Object(_)) {
            bail!("option {name}: expected a string, a number or a boolean, got {v} (lists of values go under [vary])");
        }
    }
    Ok(())
}

impl Spec {
    /// Run `index` of this spec with these varied values and options (base and varied).
    pub fn resolve(
        &self,
        index: usize,
        vary: Map<String, Value>,
        options: Map<String, Value>,
    ) -> Result<Run> {
        let label = || {
            let parts: Vec<String> = vary.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("run {index} ({})", parts.join(", "))
        };
        let config = check_scalars(&options)
            .and_then(|()| self.command.effective_config(&options))
            .with_context(label)?;
        let config_hash = config_hash(self.command, &config);
        Ok(Run {
            index,
            vary,
            options,
            config,
            config_hash,
        })
    }
}

/// FNV-1a 64 (hex) of the canonical JSON (sorted keys) of command and config.
pub fn config_hash(command: Command, config: &BTreeMap<String, Value>) -> String {
    let canonical = serde_json::json!({ "command": command.name(), "config": config }).to_string();
    format!("{:016x}", seed::stable_hash(canonical.as_bytes()))
}

fn default_summary(command: Command) -> Vec<String> {
    match command {
        Command::Sim => vec!["waf".into(), "waf_model".into()],
        Command::BufferSim => Vec::new(),
    }
}

fn table(top: &Map<String, Value>, key: &str) -> Result<Map<String, Value>> {
    match top.get(key) {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => bail!("[{key}]: expected a table, got {other}"),
    }
}

/// A [vary] entry: a list, or a range {from, to, step}.
fn values(key: &str, v: &Value) -> Result<Vec<Value>> {
    match v {
        Value::Array(a) if a.is_empty() => bail!("[vary] {key}: an empty list plans no run"),
        Value::Array(a) => Ok(a.clone()),
        Value::Object(r) => range(key, r),
        other => bail!("[vary] {key}: expected a list or a range {{from, to, step}}, got {other} (single values go under [base])"),
    }
}

fn range(key: &str, r: &Map<String, Value>) -> Result<Vec<Value>> {
    let get = |k: &str| -> Result<&Value> {
        r.get(k)
            .with_context(|| format!("[vary] {key}: a range needs from, to and step (missing {k})"))
    };
    let (from, to, step) = (get("from")?, get("to")?, get("step")?);
    if let Some(k) = r
        .keys()
        .find(|k| !["from", "to", "step"].contains(&k.as_str()))
    {
        bail!("[vary] {key}: unknown range key `{k}` (expected from, to, step)");
    }
    let number = |v: &Value, k: &str| {
        v.as_f64()
            .with_context(|| format!("[vary] {key}: range {k} must be a number, got {v}"))
    };
    let (a, b, s) = (
        number(from, "from")?,
        number(to, "to")?,
        number(step, "step")?,
    );
    if !(s > 0.0 && s.is_finite() && a.is_finite() && b.is_finite() && b >= a) {
        bail!("[vary] {key}: expected from <= to and a positive step (got from {a}, to {b}, step {s})");
    }
    let count = ((b - a) / s + 1e-9).floor() as usize + 1;
    if count > MAX_RANGE_VALUES {
        bail!("[vary] {key}: the range gives {count} values (at most {MAX_RANGE_VALUES})");
    }
    let integers = [from, to, step].iter().all(|v| v.is_i64() || v.is_u64());
    Ok((0..count)
        .map(|i| {
            if integers {
                Value::from(a as i64 + i as i64 * s as i64)
            } else {
                // Rounded to 12 decimals so that 0.05 + 2 x 0.05 is 0.15, not 0.15000000000000002.
                let x = ((a + i as f64 * s) * 1e12).round() / 1e12;
                Value::from(x)
            }
        })
        .collect())
}

fn seeds(v: Option<&Value>, base: &Map<String, Value>) -> Result<Option<Vec<u64>>> {
    let first = match base.get("seed") {
        None => 1,
        Some(s) => s
            .as_u64()
            .with_context(|| format!("[base] seed: expected a whole number, got {s}"))?,
    };
    match v {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(k) if k >= 1 && (k as usize) <= MAX_RANGE_VALUES => {
                Ok(Some((0..k).map(|i| first.wrapping_add(i)).collect()))
            }
            _ => bail!(
                "`seeds = {n}`: expected a count from 1 to {MAX_RANGE_VALUES}, or a list of seeds"
            ),
        },
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|x| x.as_u64())
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .context("`seeds`: expected whole numbers"),
        Some(other) => bail!("`seeds`: expected a count or a non-empty list of seeds, got {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: Value) -> Result<Spec> {
        Spec::from_value(&v, "t")
    }

    #[test]
    fn the_grid_is_every_combination_times_the_seeds() {
        let s = spec(json!({"seeds": 2, "base": {"capacity": "64MiB", "seed": 5},
            "vary": {"op": [0.07, 0.28], "gc": ["greedy", "fifo", "cost-benefit"]}}))
        .unwrap();
        let runs = s.plan().unwrap();
        assert_eq!(runs.len(), 2 * 3 * 2);
        let hashes: HashSet<_> = runs.iter().map(|r| &r.config_hash).collect();
        assert_eq!(hashes.len(), runs.len());
        assert_eq!(runs[0].vary["seed"], json!(5));
        assert_eq!(runs[1].vary["seed"], json!(6));
        assert_eq!(runs[0].config["capacity"], json!("64MiB"));
    }

    #[test]
    fn zip_pairs_lists_and_refuses_unequal_ones() {
        let s =
            spec(json!({"mode": "zip", "vary": {"op": [0.07, 0.28], "gc": ["greedy", "fifo"]}}))
                .unwrap();
        let runs = s.plan().unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].vary["gc"], json!("fifo"));
        assert_eq!(runs[1].vary["op"], json!(0.28));
        let s =
            spec(json!({"mode": "zip", "vary": {"op": [0.07], "gc": ["greedy", "fifo"]}})).unwrap();
        assert!(format!("{:#}", s.plan().unwrap_err()).contains("as long"));
    }

    #[test]
    fn ranges_are_inclusive_and_clean() {
        let s = spec(
            json!({"vary": {"op": {"from": 0.05, "to": 0.2, "step": 0.05},
            "queue_depth": {"from": 1, "to": 7, "step": 3}}}),
        )
        .unwrap();
        assert_eq!(
            s.vary[0].1,
            vec![json!(0.05), json!(0.1), json!(0.15), json!(0.2)]
        );
        assert_eq!(s.vary[1].1, vec![json!(1), json!(4), json!(7)]);
        assert!(spec(json!({"vary": {"op": {"from": 1, "to": 0, "step": 1}}})).is_err());
        assert!(spec(json!({"vary": {"op": {"from": 0, "to": 1e9, "step": 1}}})).is_err());
    }

    #[test]
    fn one_config_spelled_twice_runs_once_with_one_hash() {
        // `workload` defaults to uniform-write: giving it explicitly is the same run.
        let s = spec(json!({"vary": {"workload": ["uniform-write"]}})).unwrap();
        let t = spec(json!({"vary": {"seed": [1]}})).unwrap();
        assert_eq!(
            s.plan().unwrap()[0].config_hash,
            t.plan().unwrap()[0].config_hash
        );
        let dup = spec(json!({"vary": {"seed": [1, 1, 2]}})).unwrap();
        assert_eq!(dup.plan().unwrap().len(), 2);
    }

    #[test]
    fn bad_specs_are_refused_before_running() {
        for (v, want) in [
            (
                json!({"vary": {"bogus": [1]}}),
                "unexpected argument '--bogus'",
            ),
            (json!({"vary": {"op": ["abc"]}}), "invalid value 'abc'"),
            (json!({"vary": {"op": []}}), "empty list"),
            (
                json!({"vary": {"op": 0.1}}),
                "single values go under [base]",
            ),
            (
                json!({"base": {"op": [0.1]}}),
                "lists of values go under [vary]",
            ),
            (json!({"seeds": 2, "vary": {"seed": [1]}}), "keep one"),
            (json!({"command": "kv"}), "expected sim or buffer-sim"),
            (json!({"bases": {}}), "unknown key `bases`"),
            (json!({"base": {"json": true}}), "--json shapes"),
        ] {
            let e = spec(v.clone()).and_then(|s| s.plan()).unwrap_err();
            let msg = format!("{e:#}");
            assert!(msg.contains(want), "{v}: {msg}");
        }
    }
}
