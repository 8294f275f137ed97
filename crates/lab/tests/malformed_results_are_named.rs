//! `flashlab report` on a malformed or partial `results.json`: the error names the file, the
//! key path, the line and column, and says what to do — never a panic.

use lab::harness::results::Results;
use render::ReportError;
use serde_json::Value;
use std::path::Path;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results.json");

fn fixture_value() -> Value {
    serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap()
}

fn parse(v: &Value) -> Result<Results, ReportError> {
    Results::parse(
        &serde_json::to_string_pretty(v).unwrap(),
        Path::new("dir/results.json"),
    )
}

#[test]
fn a_truncated_file_gives_its_line_and_column() {
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let cut = &text[..text.len() / 2];
    let e = Results::parse(cut, Path::new("dir/results.json")).unwrap_err();
    let ReportError::Parse { line, column, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(*line > 1 && *column > 0);
    let msg = e.to_string();
    assert!(msg.starts_with("dir/results.json: line "), "{msg}");
    assert!(msg.contains("reproduce all"), "says what to do: {msg}");
}

#[test]
fn a_missing_key_is_named_by_its_path() {
    let mut v = fixture_value();
    v["experiments"][1]["report"]
        .as_object_mut()
        .unwrap()
        .remove("rows");
    let e = parse(&v).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ReportError::Parse { .. }), "{e:?}");
    assert!(msg.contains("experiments[1].report"), "{msg}");
    assert!(msg.contains("missing field `rows`"), "{msg}");
}

#[test]
fn a_wrong_type_is_named_by_its_path() {
    let mut v = fixture_value();
    v["run"]["seed"] = Value::String("one".into());
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("at `run.seed`"), "{msg}");
    v = fixture_value();
    v["experiments"][0]["status"] = Value::String("maybe".into());
    let msg = parse(&v).unwrap_err().to_string();
    assert!(
        msg.contains("experiments[0].status") && msg.contains("maybe"),
        "{msg}"
    );
}

#[test]
fn a_partial_file_is_refused_with_what_is_missing() {
    let mut v = fixture_value();
    v["experiments"][2]["report"] = Value::Null;
    let msg = parse(&v).unwrap_err().to_string();
    assert!(
        msg.contains("experiments[2].report") && msg.contains("status is ok"),
        "{msg}"
    );

    let mut v = fixture_value();
    v["experiments"][0]["status"] = "failed".into();
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("experiments[0].error"), "{msg}");

    let mut v = fixture_value();
    v.as_object_mut().unwrap().remove("run");
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("missing field `run`"), "{msg}");
}

#[test]
fn another_format_or_a_mismatched_entry_is_refused() {
    let mut v = fixture_value();
    v["format"] = "flashlab-results/99".into();
    let msg = parse(&v).unwrap_err().to_string();
    assert!(
        msg.contains("at `format`") && msg.contains("flashlab-results/1"),
        "{msg}"
    );
    let mut v = fixture_value();
    v["experiments"][0]["report"]["experiment"] = "as-btree".into();
    let msg = parse(&v).unwrap_err().to_string();
    assert!(msg.contains("experiments[0].report.experiment"), "{msg}");
}

#[test]
fn a_missing_file_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let e = lab::harness::reproduce_all::render_dir(dir.path()).unwrap_err();
    assert!(matches!(e, ReportError::Read { .. }));
    assert!(e.to_string().contains("flashlab reproduce all"), "{e}");
}

#[test]
fn odd_numbers_in_rows_do_not_panic() {
    // Rows are free-form: strings where numbers are expected, empty series, no paper rows.
    let mut v = fixture_value();
    for e in v["experiments"].as_array_mut().unwrap() {
        let r = &mut e["report"];
        for row in r["rows"].as_array_mut().unwrap() {
            for (_, cell) in row.as_object_mut().unwrap().iter_mut() {
                if cell.is_number() {
                    *cell = Value::String("n/a".into());
                }
            }
        }
        r["paper"] = Value::Array(Vec::new());
    }
    let results = parse(&v).unwrap();
    let page = render::html::page(&lab::harness::page::page(&results)).unwrap();
    assert!(page.contains("id=\"run\""));
}
