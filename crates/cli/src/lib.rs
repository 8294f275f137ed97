//! The flashlab command line as a library: the subcommands' flag definitions (clap) and the
//! functions that turn parsed flags into a run. The `flashlab` binary, the Python package
//! (`crates/py`) and `flashlab sweep` all go through the same path — option names → the CLI's
//! long flags → the same clap definitions → the same run function (`api`) — so a run's result
//! does not depend on which of them started it.

pub mod api;
pub mod bench;
pub mod buffer_sim;
pub mod lifetime;
pub mod memory_limit;
pub mod output;
pub mod progress;
pub mod reproduce;
pub mod reproduce_all;
pub mod sim;
pub mod sweep;

/// An error and its causes, `: `-separated, each cause printed once: a cause whose text its
/// parent already shows (an OS error inside "open on PATH failed: ...") is not repeated.
/// The CLI prints it after `error: `; the Python package raises it.
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
