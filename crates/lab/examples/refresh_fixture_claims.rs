//! Re-judge the claims of a `results.json` in place from its saved rows (each paper's
//! registry entry): `cargo run -p lab --example refresh_fixture_claims -- FILE`.
//! Used to keep `tests/fixtures/results.json` in the current shape.

use lab::harness::results::Results;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path: PathBuf = std::env::args_os()
        .nth(1)
        .ok_or("usage: refresh_fixture_claims FILE")?
        .into();
    let mut results = Results::load(&path)?;
    for r in results
        .experiments
        .iter_mut()
        .filter_map(|e| e.report.as_mut())
    {
        r.claims = lab::papers::claims_of(r);
    }
    let dir = path.parent().ok_or("FILE has no directory")?;
    let file = path.file_name().ok_or("FILE has no name")?;
    let text = serde_json::to_string_pretty(&results)? + "\n";
    render::write_file(dir, &file.to_string_lossy(), text.as_bytes())?;
    Ok(())
}
