//! A run named by its tool and described by options (a Python dict, a sweep row): the options
//! deserialize into the tool's spec, and the result is the object `flashlab TOOL --json`
//! prints.

use super::{effective_config, from_options, BufferSimSpec, SimSpec};
use anyhow::Result;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The tools a run from options can be (what the Python package and `sweep` start).
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

    /// The run these options describe, quietly; the object `flashlab TOOL --json` prints.
    pub fn run(self, options: &Map<String, Value>) -> Result<Value> {
        Ok(match self {
            Command::Sim => serde_json::to_value(sim(options)?)?,
            Command::BufferSim => {
                let spec = from_options::<BufferSimSpec>(options)?;
                crate::buffer_sim::run(&spec, &crate::Watch::default())?.to_json()
            }
        })
    }

    /// Every option of the run, given or defaulted (see [`effective_config`]).
    pub fn effective_config(self, options: &Map<String, Value>) -> Result<BTreeMap<String, Value>> {
        match self {
            Command::Sim => effective_config::<SimSpec>(options),
            Command::BufferSim => effective_config::<BufferSimSpec>(options),
        }
    }
}

/// A quiet `sim` run from options.
pub fn sim(options: &Map<String, Value>) -> Result<crate::sim::SimResult> {
    let opts = from_options::<SimSpec>(options)?.resolve()?;
    crate::sim::run(&opts, &mut |_, _| {})
}

/// Every shipped preset's whole SSD configuration, by name.
pub fn presets() -> Result<Value> {
    let mut all = Map::new();
    for name in ssd::config::preset_names() {
        all.insert(
            name.to_string(),
            serde_json::to_value(ssd::SsdConfig::preset(name)?)?,
        );
    }
    Ok(Value::Object(all))
}
