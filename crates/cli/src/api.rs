//! Option names → a run. The Python package (`flashlab.sim(op=0.28, ...)`) and `flashlab sweep`
//! describe a run as `(name, value)` pairs, names as the CLI's long flags with `_` for `-`; this
//! module turns them into those flags (`--name=value`, or `--name` for a true flag), parses them
//! with the subcommand's own clap definitions and calls the subcommand's `execute`, so a run
//! from Python or a sweep is the same run as on the command line, refused with the same
//! message.
//!
//! `--json`, `--output` and `--quiet` are the command line's business (a caller gets the result
//! as a value, and runs are quiet) and are refused here.

use crate::{buffer_sim, reproduce, sim};
use anyhow::{anyhow, bail, Result};
use clap::{ArgMatches, CommandFactory, Parser};
use serde_json::Value;
use std::collections::BTreeMap;

/// One option's value: text as on the command line (numbers as their decimal text), or a
/// flag (true: given; false: left out).
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    Text(String),
    Flag(bool),
}

impl OptionValue {
    /// A JSON value as an option value: strings and numbers as text, booleans as flags.
    /// `name` only labels the error.
    pub fn from_json(name: &str, v: &Value) -> Result<OptionValue> {
        Ok(match v {
            Value::String(s) => OptionValue::Text(s.clone()),
            Value::Number(n) => OptionValue::Text(n.to_string()),
            Value::Bool(b) => OptionValue::Flag(*b),
            other => bail!(
                "option {name}: expected a string, a number or a boolean, got {other} (lists of values go under [vary])"
            ),
        })
    }
}

/// Options in the order given.
pub type Options = [(String, OptionValue)];

/// The subcommands a run can be: what the Python package and `sweep` start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Sim,
    BufferSim,
}

impl Command {
    pub fn parse(name: &str) -> Option<Command> {
        match name {
            "sim" => Some(Command::Sim),
            "buffer-sim" | "buffer_sim" => Some(Command::BufferSim),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Command::Sim => "sim",
            Command::BufferSim => "buffer-sim",
        }
    }
}

#[derive(Parser)]
#[command(name = "flashlab sim", no_binary_name = true)]
struct SimCommand {
    #[command(flatten)]
    args: sim::SimArgs,
}

#[derive(Parser)]
#[command(name = "flashlab buffer-sim", no_binary_name = true)]
struct BufferSimCommand {
    #[command(flatten)]
    args: buffer_sim::BufferSimArgs,
}

#[derive(Parser)]
#[command(name = "flashlab reproduce", no_binary_name = true)]
struct ReproduceCommand {
    #[command(flatten)]
    args: reproduce::ReproduceArgs,
}

/// Flags that only shape the command line's output.
const CLI_ONLY: [&str; 3] = ["json", "output", "quiet"];

/// The long flags for `options`, then `--quiet`.
pub fn long_flags(options: &Options) -> Result<Vec<String>> {
    let mut argv = Vec::with_capacity(options.len() + 1);
    for (name, value) in options {
        let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            bail!("option `{name}`: expected a name like the command line's long flags, with _ for - (e.g. write_volume for --write-volume)");
        }
        if CLI_ONLY.contains(&name.as_str()) {
            bail!("option {name}: --{name} shapes the command line's output; here the result is returned as a value and runs are quiet");
        }
        let flag = format!("--{}", name.replace('_', "-"));
        match value {
            OptionValue::Text(t) => argv.push(format!("{flag}={t}")),
            OptionValue::Flag(true) => argv.push(flag),
            OptionValue::Flag(false) => {}
        }
    }
    argv.push("--quiet".into());
    Ok(argv)
}

/// Parse `argv` with `P`'s clap definitions; a refusal carries clap's message (its first line,
/// as the command line prints it after `error: `).
fn parse<P: Parser>(argv: &[String]) -> Result<(P, ArgMatches)> {
    let matches = P::command()
        .try_get_matches_from(argv)
        .map_err(clap_error)?;
    let parsed = P::from_arg_matches(&matches).map_err(clap_error)?;
    Ok((parsed, matches))
}

fn clap_error(e: clap::Error) -> anyhow::Error {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    anyhow!("{}", first.strip_prefix("error: ").unwrap_or(first))
}

/// A `sim` run: the object `flashlab sim --json` prints, as a value.
pub fn sim(options: &Options) -> Result<lab::sim::SimResult> {
    let (cmd, _) = parse::<SimCommand>(&long_flags(options)?)?;
    sim::execute(&cmd.args)
}

/// A `buffer-sim` run: the object `flashlab buffer-sim --json` prints.
pub fn buffer_sim(options: &Options) -> Result<Value> {
    let (cmd, _) = parse::<BufferSimCommand>(&long_flags(options)?)?;
    Ok(buffer_sim::execute(&cmd.args)?.to_json())
}

/// The JSON text (one line, no newline) `flashlab COMMAND --json` prints for these options.
pub fn run_json(command: Command, options: &Options) -> Result<String> {
    Ok(match command {
        Command::Sim => serde_json::to_string(&sim(options)?)?,
        Command::BufferSim => buffer_sim(options)?.to_string(),
    })
}

/// `flashlab reproduce NAME --json` with these options, as JSON text.
pub fn reproduce_json(name: &str, options: &Options) -> Result<String> {
    let mut argv = vec![name.to_string()];
    argv.extend(long_flags(options)?);
    let (cmd, _) = parse::<ReproduceCommand>(&argv)?;
    Ok(reproduce::execute(name, &cmd.args)?.report.to_json())
}

/// Every shipped preset's whole SSD configuration, by name, as JSON text.
pub fn presets_json() -> Result<String> {
    let mut all = serde_json::Map::new();
    for name in ssd::config::preset_names() {
        all.insert(
            name.to_string(),
            serde_json::to_value(ssd::SsdConfig::preset(name)?)?,
        );
    }
    Ok(Value::Object(all).to_string())
}

/// Every option of the run as the subcommand resolved it — the given ones and the defaults —
/// without the output-only flags; options with neither a value nor a default are left out.
/// Values are typed as they read: `true`/`false` as booleans, decimal numbers as numbers, the
/// rest (`256MiB`, `1x`, `greedy`) as text. Keys are sorted, so its JSON is canonical.
pub fn effective_config(command: Command, options: &Options) -> Result<BTreeMap<String, Value>> {
    let argv = long_flags(options)?;
    let (cmd, matches) = match command {
        Command::Sim => (SimCommand::command(), parse::<SimCommand>(&argv)?.1),
        Command::BufferSim => (
            BufferSimCommand::command(),
            parse::<BufferSimCommand>(&argv)?.1,
        ),
    };
    let mut config = BTreeMap::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if CLI_ONLY.contains(&id) || id == "help" || id == "version" {
            continue;
        }
        let Some(raw) = matches.get_raw(id) else {
            continue;
        };
        let mut values: Vec<Value> = raw.map(|v| typed(&v.to_string_lossy())).collect();
        let value = match values.len() {
            0 => continue,
            1 => values.remove(0),
            _ => Value::Array(values),
        };
        config.insert(id.to_string(), value);
    }
    Ok(config)
}

/// A command-line value as JSON: a boolean, a number, or text.
fn typed(raw: &str) -> Value {
    match raw {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    let numeric = !raw.is_empty()
        && raw
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && raw.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    if numeric {
        if let Ok(i) = raw.parse::<i64>() {
            return Value::from(i);
        }
        if let Ok(u) = raw.parse::<u64>() {
            return Value::from(u);
        }
        if let Some(n) = raw
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            return Value::Number(n);
        }
    }
    Value::String(raw.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(name: &str, v: &str) -> (String, OptionValue) {
        (name.into(), OptionValue::Text(v.into()))
    }

    #[test]
    fn options_become_long_flags() {
        let argv = long_flags(&[
            text("write_volume", "1x"),
            text("op", "-0.5"),
            ("check_invariants".into(), OptionValue::Flag(true)),
            ("trace_timing".into(), OptionValue::Flag(false)),
        ])
        .unwrap();
        assert_eq!(
            argv,
            [
                "--write-volume=1x",
                "--op=-0.5",
                "--check-invariants",
                "--quiet"
            ]
        );
    }

    #[test]
    fn output_flags_and_odd_names_are_refused() {
        for bad in ["json", "output", "quiet", "Op", "--op", "op-x", ""] {
            let e = long_flags(&[text(bad, "1")]).unwrap_err().to_string();
            assert!(e.contains(bad) || bad.is_empty(), "{e}");
        }
    }

    #[test]
    fn an_unknown_option_is_refused_with_clap_s_message() {
        let e = effective_config(Command::Sim, &[text("bogus", "1")]).unwrap_err();
        assert_eq!(e.to_string(), "unexpected argument '--bogus' found");
    }

    #[test]
    fn the_effective_config_holds_defaults_and_typed_values() {
        let c = effective_config(
            Command::Sim,
            &[text("op", "0.28"), text("capacity", "64MiB")],
        )
        .unwrap();
        assert_eq!(c["op"], serde_json::json!(0.28));
        assert_eq!(c["capacity"], serde_json::json!("64MiB"));
        assert_eq!(c["seed"], serde_json::json!(1));
        assert_eq!(c["workload"], serde_json::json!("uniform-write"));
        assert_eq!(c["payloads"], serde_json::json!(false));
        assert!(!c.contains_key("quiet") && !c.contains_key("json"));
        assert!(!c.contains_key("ftl"), "no value and no default: left out");
    }

    #[test]
    fn typed_reads_numbers_booleans_and_text() {
        assert_eq!(typed("3"), serde_json::json!(3));
        assert_eq!(typed("-2"), serde_json::json!(-2));
        assert_eq!(typed("0.07"), serde_json::json!(0.07));
        assert_eq!(typed("1e3"), serde_json::json!(1000.0));
        assert_eq!(typed("true"), serde_json::json!(true));
        for t in ["1x", "256MiB", "e5", "inf", "NaN", "full:2", "-", ""] {
            assert_eq!(typed(t), serde_json::json!(t));
        }
    }
}
