//! The PostgreSQL trace reader (format `pg`): the committed capture decodes with the counts its
//! header states; a truncated file, a wrong header, a huge line and arbitrary lines give an
//! error naming the file and line, never a panic or unbounded memory.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use workload::cache_trace::{decode_bytes, PageRef, PageRefs, PageTraceFormat};
use workload::pg_trace::{page_id, read_header, MAGIC};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pg-tpcc-w1-30s.zst")
}

fn header_number(h: &workload::pg_trace::PgTraceHeader, key: &str) -> u64 {
    h.get(key)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("header has no number {key}"))
}

#[test]
fn the_committed_capture_matches_its_header() {
    let h = read_header(&fixture()).unwrap();
    assert_eq!(h.get("warehouses"), Some("1"));
    assert!(h.get("method").unwrap().starts_with("uprobes"));
    assert!(h.get("postgres").unwrap().starts_with("PostgreSQL "));
    let (mut refs, mut dirty) = (0u64, 0u64);
    for r in PageRefs::open(&fixture(), PageTraceFormat::Pg, 8192).unwrap() {
        let r = r.unwrap();
        refs += 1;
        dirty += r.write as u64;
    }
    assert_eq!(refs, header_number(&h, "references"));
    assert_eq!(dirty, header_number(&h, "dirty_references"));
    assert!(
        header_number(&h, "database_bytes") > 100_000_000,
        "one warehouse is ~130 MB"
    );
}

fn write_temp(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    (dir, p)
}

#[test]
fn a_truncated_capture_is_an_error_naming_the_file() {
    let bytes = std::fs::read(fixture()).unwrap();
    let (_d, p) = write_temp("cut.zst", &bytes[..bytes.len() / 2]);
    let last = PageRefs::open(&p, PageTraceFormat::Pg, 8192)
        .unwrap()
        .last()
        .unwrap();
    let e = last.unwrap_err().to_string();
    assert!(e.contains("cut.zst"), "{e}");
}

#[test]
fn a_file_without_the_magic_line_is_refused() {
    let e = decode_bytes(b"R 1 0 0\n", PageTraceFormat::Pg, 8192).unwrap_err();
    assert!(
        e.to_string()
            .contains(":1: not a flashlab PostgreSQL trace"),
        "{e}"
    );
    let (_d, p) = write_temp("other.txt", b"R 5\nW 6\n");
    assert!(read_header(&p).unwrap_err().to_string().contains(MAGIC));
}

#[test]
fn a_huge_line_is_refused_with_bounded_memory() {
    let mut text = format!("{MAGIC}\n").into_bytes();
    text.extend(std::iter::repeat_n(b'7', 3 << 20));
    let e = decode_bytes(&text, PageTraceFormat::Pg, 8192).unwrap_err();
    assert!(e.to_string().contains("line-length cap"), "{e}");
}

#[test]
fn a_bad_record_names_its_line() {
    let text = format!("{MAGIC}\n# warehouses: 1\nR 1 0 0\nX 0/10\nW 1 7 0\n");
    let e = decode_bytes(text.as_bytes(), PageTraceFormat::Pg, 8192).unwrap_err();
    assert!(e.to_string().contains("<bytes>:5: fork 7"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn pg_like_lines_never_panic(lines in prop::collection::vec("[RWX#/ 0-9a-f-]{0,30}", 0..20)) {
        let text = format!("{MAGIC}\n{}", lines.join("\n"));
        let input = Box::new(std::io::Cursor::new(text.into_bytes()));
        for r in PageRefs::from_reader(Path::new("fuzz"), input, PageTraceFormat::Pg, 8192).take(1000) {
            if r.is_err() {
                break;
            }
        }
    }

    #[test]
    fn records_decode_back_to_their_page_ids(recs in prop::collection::vec((any::<u32>(), 0u32..4, 0u32..(1 << 30), any::<bool>()), 0..50)) {
        let mut text = format!("{MAGIC}\n");
        for &(rel, fork, block, dirty) in &recs {
            text.push_str(&format!("{} {rel} {fork} {block}\nX 0/{block:x}\n", if dirty { 'W' } else { 'R' }));
        }
        let want: Vec<PageRef> = recs.iter().map(|&(rel, fork, block, write)| PageRef { page: page_id(rel, fork, block).unwrap(), write }).collect();
        prop_assert_eq!(decode_bytes(text.as_bytes(), PageTraceFormat::Pg, 8192).unwrap(), want);
    }
}
