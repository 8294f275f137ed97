//! The flashlab command line as a library: clap parsing (the flags derive from `lab::spec`'s
//! run specs), progress display, signals and output formatting. The runs themselves are
//! `lab`'s, which the Python package (`crates/py`) calls with the same specs.

pub mod bench;
pub mod buffer_sim;
pub mod capture;
pub mod lifetime;
pub mod output;
pub mod progress;
pub mod reproduce;
pub mod reproduce_all;
pub mod signals;
pub mod sim;
pub mod sweep;

pub use lab::harness::error_chain;
