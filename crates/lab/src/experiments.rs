//! The name the CLI and tools have always used for the registry: [`crate::papers`] holds it.

pub use crate::papers::{find, names, Experiment, REGISTRY as EXPERIMENTS};
