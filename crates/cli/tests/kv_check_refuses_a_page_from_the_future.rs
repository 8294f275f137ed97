//! `flashlab kv check` on a store where a page of the newest commit was planted with a good
//! checksum but a future version (or another kind): exit 1, naming the page and its byte
//! offset; opening the store for a read fails too (never returns the page as data).

mod common;
use common::{flashlab, path_str as s, stderr};
use engine::page::{self, PageKind};

const PB: usize = 4096;

/// Pages of `kind` written by the newest commit (every one is reached from it), and that
/// commit's number.
fn newest_pages(img: &[u8], kind: PageKind) -> (Vec<usize>, u64) {
    let headers: Vec<page::Header> = (0..img.len() / PB)
        .filter_map(|p| page::open(&img[p * PB..(p + 1) * PB], p as u64).ok())
        .collect();
    let newest = headers.iter().map(|h| h.version).max().expect("a store");
    let pages = headers
        .iter()
        .filter(|h| h.kind == kind && h.version == newest)
        .map(|h| h.id as usize)
        .collect();
    (pages, newest)
}

fn plant(img: &[u8], p: usize, change: impl Fn(&mut page::Header)) -> Vec<u8> {
    let mut bad = img.to_vec();
    let buf = &mut bad[p * PB..(p + 1) * PB];
    let mut h = page::open(buf, p as u64).unwrap();
    change(&mut h);
    page::seal(buf, &h);
    bad
}

#[test]
fn check_exits_1_on_a_page_from_a_future_commit_or_of_another_kind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kv.db");
    let load = flashlab(&[
        "kv",
        "load",
        "--path",
        &s(&db),
        "--records",
        "2000",
        "--file-mib",
        "8",
    ]);
    assert!(load.status.success(), "{}", stderr(&load));
    let img = std::fs::read(&db).unwrap();
    let (index, newest) = newest_pages(&img, PageKind::KvIndex);
    let (data, _) = newest_pages(&img, PageKind::KvData);
    assert!(!index.is_empty() && !data.is_empty());
    let plants = [
        (index[0], plant(&img, index[0], |h| h.version = newest + 1)),
        (data[0], plant(&img, data[0], |h| h.version = newest + 1)),
        (
            data[0],
            plant(&img, data[0], |h| h.kind = PageKind::KvIndex),
        ),
    ];
    for (p, bad) in &plants {
        std::fs::write(&db, bad).unwrap();
        let check = flashlab(&["kv", "check", "--path", &s(&db)]);
        let out = String::from_utf8_lossy(&check.stdout);
        assert_eq!(
            check.status.code(),
            Some(1),
            "page {p}: {out}{}",
            stderr(&check)
        );
        assert!(out.contains(&format!("page {p} (byte ")), "page {p}: {out}");
        // The first damage named is in the planted page's header, at its byte offset.
        let at: usize = out
            .strip_prefix("damaged at byte ")
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
            .expect("an offset");
        assert_eq!(at / PB, *p, "{out}");
        assert!(!stderr(&check).contains("panicked"), "{}", stderr(&check));
    }
    // The index page from the future: the store does not open.
    std::fs::write(&db, &plants[0].1).unwrap();
    let stat = flashlab(&["kv", "stat", "--path", &s(&db)]);
    assert!(!stat.status.success());
    assert!(
        stderr(&stat).contains(&format!("page {}", index[0])),
        "{}",
        stderr(&stat)
    );
}
