//! What runs the tools beyond a single call: `sim`'s summary and plot, the YCSB key-value
//! bench, sweeps of runs, and `reproduce all` (the orchestration and provenance in
//! [`reproduce_all`], its `results.json` in [`results`], the page's views in [`page`], drawn
//! by the `report` crate, which knows no experiment).

pub mod kv_bench;
pub mod memory_limit;
pub mod page;
pub mod reproduce_all;
pub mod results;
pub mod sim_plot;
pub mod sim_summary;
pub mod sweep;

/// An error and its causes, `: `-separated, each cause printed once: a cause whose text its
/// parent already shows (an OS error inside "open on PATH failed: ...") is not repeated.
/// The CLI prints it after `error: `; the Python package raises it; a sweep records it.
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
